/// Strata: SwiftData's model of persistence on SQLite.
public enum StrataInfo {
    public static let version = "0.1.0"
}

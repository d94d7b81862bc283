/// The kind of a value: the type of an attribute, as written in schema JSON.
/// (The value model decides how each kind is read, stored and written.)
public enum AttributeType: String, CaseIterable, Sendable {
    case string, int, double, bool, date, data, uuid, url, decimal, json
}

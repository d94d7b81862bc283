/// The kind of a value: the type of an attribute, as written in schema JSON.
/// (The value model decides how each kind is read, stored and written.)
public enum AttributeType: String, CaseIterable, Sendable {
    case string, int, double, bool, date, data, uuid, url, decimal, json
    /// A structured value of named fields (SwiftData's Codable struct, Core Data's composite
    /// attribute): each field is stored as an attribute of its own (`address.city`); the
    /// composite's own column says whether it has a value.
    case composite
}

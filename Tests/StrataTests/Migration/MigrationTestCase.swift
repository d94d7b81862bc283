import XCTest
@testable import Strata

/// Stores made at one schema version, opened at another.
class MigrationTestCase: StoreTestCase {
    /// A schema of `version` with these entity declarations (JSON objects, comma-separated).
    func schema(_ version: String, _ entities: String) -> String {
        #"{"version": "\#(version)", "entities": [\#(entities)]}"#
    }

    /// Creates the store at `path` with `schemaJSON` and inserts `objects` ((entity, object JSON) pairs),
    /// returning their identifiers in order.
    @discardableResult
    func makeStore(_ schemaJSON: String, _ objects: [(String, String)], path: String? = nil) throws -> [String] {
        let container = try openFile(schemaJSON, path: path ?? storePath())
        let context = try container.makeContext()
        var ids: [String] = []
        for (entity, json) in objects { ids.append(try context.insert(entity: entity, json: json).description) }
        _ = try context.save()
        return ids
    }

    /// Opens the store at `path` with `configJSON` (a whole configuration).
    func open(config configJSON: String, path: String? = nil,
              _ configure: (inout StoreConfiguration) throws -> Void = { _ in }) throws -> ModelContainer {
        var c = try StoreConfiguration.decode(configJSON)
        try configure(&c)
        return try ModelContainer(path: path ?? storePath(), configuration: c)
    }

    /// Every object of `entity` (with subentities), by identifier.
    func objects(_ container: ModelContainer, _ entity: String) throws -> [String: JSONValue] {
        let context = try container.makeContext()
        var out: [String: JSONValue] = [:]
        for o in try fetch(context, entity) {
            guard let id = o["_id"]?.stringValue else { XCTFail("object without _id: \(o)"); continue }
            out[id] = o
        }
        return out
    }

    /// The value of `key` in object `id` of `all`.
    func value(_ all: [String: JSONValue], _ id: String, _ key: String) -> JSONValue? { all[id]?[key] }

    /// The error opening throws.
    func openError(config configJSON: String, path: String? = nil, file: StaticString = #filePath, line: UInt = #line,
                   _ configure: (inout StoreConfiguration) throws -> Void = { _ in }) -> StrataError? {
        do {
            _ = try open(config: configJSON, path: path, configure)
            XCTFail("the open succeeded", file: file, line: line)
            return nil
        } catch let e as StrataError {
            return e
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }
}

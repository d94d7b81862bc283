import ArgumentParser
import Strata

/// The STORE argument every command takes: a store file or a PostgreSQL URI.
struct StoreArgument: ParsableArguments {
    @Argument(help: ArgumentHelp("The store: a store file, or a PostgreSQL URI (postgresql://…).", valueName: "store"))
    var location: String

    /// How messages name the store (never a URI, which may hold a password).
    var displayName: String { StoreLocation(location).displayName }

    /// What the store holds about itself, read without writing.
    ///
    /// - Throws: the library's error for a missing, foreign or damaged file; a
    ///   ``CommandFailure`` for an empty database or one that holds no schema.
    func storedState() throws -> StoredState {
        guard let stored = try ModelContainer.storedState(at: location) else {
            throw CommandFailure("\(displayName) holds no Strata store (an empty database)")
        }
        guard stored.schemaJSON != nil else {
            throw CommandFailure("\(displayName) holds no stored schema (not a Strata store, or a damaged one)")
        }
        return stored
    }

    /// The store opened read-only with the schema it carries.
    func open() throws -> OpenedStore {
        let stored = try storedState()
        let configuration: StoreConfiguration
        do {
            configuration = try StoreConfiguration.decode("{\"schema\": \(stored.schemaJSON ?? "null"), \"readOnly\": true}")
        } catch let e as StrataError {
            throw CommandFailure("\(displayName) is damaged: its stored schema cannot be read (\(e.message))")
        }
        return OpenedStore(stored: stored, container: try ModelContainer(path: location, configuration: configuration))
    }
}

/// A store opened to be looked at: read-only, with the schema it carries.
struct OpenedStore {
    let stored: StoredState
    let container: ModelContainer
    var schema: Schema { container.schema }

    func makeContext() throws -> ModelContext { try container.makeContext() }

    /// The entity named `name`, or a failure listing the schema's entities.
    func entity(_ name: String) throws -> Entity {
        guard let entity = schema.entity(named: name) else {
            let names = schema.entities.map(\.name).joined(separator: ", ")
            throw CommandFailure("the store's schema (version \(schema.version)) has no entity '\(name)' (its entities: \(names))")
        }
        return entity
    }
}

extension String {
    /// Runs `body` on the string's UTF-8 bytes (the library's calls take JSON as bytes).
    func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        var copy = self
        return try copy.withUTF8(body)
    }
}

import XCTest
@testable import Strata

/// Decoding and validating a migration plan: schemas and stages, errors at JSON paths.
final class MigrationPlanTests: XCTestCase {
    static func schema(_ version: String, _ attribute: String = "a") -> String {
        #"{"version": "\#(version)", "entities": [{"name": "Thing", "attributes": [{"name": "\#(attribute)", "type": "string"}]}]}"#
    }

    static let threeSchemas = [schema("1.0.0"), schema("2.0.0", "b"), schema("3.0.0", "c")].joined(separator: ", ")

    func plan(_ schemas: String = threeSchemas, stages: String) throws -> MigrationPlan {
        let config = try StoreConfiguration.decode(#"{"migrationPlan": {"schemas": [\#(schemas)], "stages": [\#(stages)]}}"#)
        return try XCTUnwrap(config.migrationPlan)
    }

    @discardableResult
    func assertInvalid(_ schemas: String = threeSchemas, stages: String, path: String, _ words: String,
                       file: StaticString = #filePath, line: UInt = #line) -> StrataError? {
        let e = assertThrows(file: file, line: line) { _ = try self.plan(schemas, stages: stages) }
        XCTAssertEqual(e?.code, .invalid, file: file, line: line)
        XCTAssertEqual(e?.path, path, e?.message ?? "", file: file, line: line)
        XCTAssertTrue(e?.message.contains(words) == true, e?.message ?? "", file: file, line: line)
        return e
    }

    func assertThrows(file: StaticString, line: UInt, _ body: () throws -> Void) -> StrataError? {
        do { try body() } catch let e as StrataError { return e } catch {
            XCTFail("unexpected error \(error)", file: file, line: line); return nil
        }
        XCTFail("no error", file: file, line: line)
        return nil
    }

    static func stage(_ name: String, _ kind: String = "lightweight", _ from: String, _ to: String) -> String {
        #"{"name": "\#(name)", "kind": "\#(kind)", "from": "\#(from)", "to": "\#(to)"}"#
    }

    func testAPlanIsDecodedWhole() throws {
        let p = try plan(stages: Self.stage("v1toV2", "custom", "1.0.0", "2.0.0") + ", " + Self.stage("v2toV3", "lightweight", "2.0.0", "3.0.0"))
        XCTAssertEqual(p.schemas.map(\.version), ["1.0.0", "2.0.0", "3.0.0"])
        XCTAssertEqual(p.currentSchema.version, "3.0.0")
        XCTAssertEqual(p.stages, [MigrationStage(name: "v1toV2", kind: .custom, fromVersion: "1.0.0", toVersion: "2.0.0"),
                                  MigrationStage(name: "v2toV3", kind: .lightweight, fromVersion: "2.0.0", toVersion: "3.0.0")])
        XCTAssertEqual(p.stage(from: "2.0.0")?.name, "v2toV3")
        XCTAssertEqual(p.schema(withVersionHash: p.schemas[0].versionHash)?.version, "1.0.0")
        // Stages may leave pairs out, and may be missing altogether.
        XCTAssertEqual(try plan(stages: Self.stage("v2toV3", "lightweight", "2.0.0", "3.0.0")).stages.count, 1)
        let bare = try StoreConfiguration.decode(#"{"migrationPlan": {"schemas": [\#(Self.threeSchemas)]}}"#)
        XCTAssertEqual(bare.migrationPlan?.stages, [])
        XCTAssertEqual(bare.schema.version, "3.0.0")
    }

    func testConsecutiveSchemasWithTheSameStorageAreValid() throws {
        let p = try plan([Self.schema("1.0.0"), Self.schema("1.1.0")].joined(separator: ", "),
                         stages: Self.stage("relabel", "lightweight", "1.0.0", "1.1.0"))
        XCTAssertEqual(p.schemas[0].versionHash, p.schemas[1].versionHash)
        XCTAssertEqual(p.schema(withVersionHash: p.schemas[0].versionHash)?.version, "1.1.0", "the newest with that storage")
    }

    func testVersionsAreUnique() {
        assertInvalid([Self.schema("1.0.0"), Self.schema("2.0.0", "b"), Self.schema("1.0.0", "c")].joined(separator: ", "), stages: "",
                      path: "/migrationPlan/schemas/2/version", "version '1.0.0' appears twice")
    }

    func testStageNamesAreUnique() {
        assertInvalid(stages: Self.stage("step", "lightweight", "1.0.0", "2.0.0") + ", " + Self.stage("step", "lightweight", "2.0.0", "3.0.0"),
                      path: "/migrationPlan/stages/1/name", "stage name 'step' is used by stages 0 and 1")
    }

    func testStagesChainConsecutiveSchemasInOrder() {
        assertInvalid(stages: Self.stage("a", "lightweight", "1.0.0", "2.0.0") + ", " + Self.stage("b", "lightweight", "2.0.0", "1.0.0"),
                      path: "/migrationPlan/stages/1/to", "the schema after '2.0.0' in the plan is '3.0.0'")
        assertInvalid(stages: Self.stage("skip", "lightweight", "1.0.0", "3.0.0"),
                      path: "/migrationPlan/stages/0/to", "a stage goes from one schema to the next")
        assertInvalid(stages: Self.stage("b", "lightweight", "2.0.0", "3.0.0") + ", " + Self.stage("a", "lightweight", "1.0.0", "2.0.0"),
                      path: "/migrationPlan/stages/1/from", "stages must follow the order of the schemas")
        assertInvalid(stages: Self.stage("a", "lightweight", "1.0.0", "2.0.0") + ", " + Self.stage("again", "lightweight", "1.0.0", "2.0.0"),
                      path: "/migrationPlan/stages/1/from", "stages must follow the order of the schemas")
        assertInvalid(stages: Self.stage("a", "lightweight", "0.9.0", "1.0.0"),
                      path: "/migrationPlan/stages/0/from", "'0.9.0', which is not a schema of the plan (versions: 1.0.0, 2.0.0, 3.0.0)")
        assertInvalid(stages: Self.stage("a", "lightweight", "3.0.0", "4.0.0"),
                      path: "/migrationPlan/stages/0/from", "the plan's current (last) schema")
    }

    func testStageShapes() {
        assertInvalid(stages: #"{"kind": "lightweight", "from": "1.0.0", "to": "2.0.0"}"#, path: "/migrationPlan/stages/0/name", "name")
        assertInvalid(stages: #"{"name": "", "kind": "lightweight", "from": "1.0.0", "to": "2.0.0"}"#, path: "/migrationPlan/stages/0/name", "non-empty")
        assertInvalid(stages: #"{"name": "a", "from": "1.0.0", "to": "2.0.0"}"#, path: "/migrationPlan/stages/0/kind", "kind")
        assertInvalid(stages: Self.stage("a", "heavy", "1.0.0", "2.0.0"), path: "/migrationPlan/stages/0/kind",
                      "unknown kind 'heavy' (known kinds: lightweight, custom)")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "to": "2.0.0"}"#, path: "/migrationPlan/stages/0/from", "from")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "from": "1.0.0", "to": 2}"#, path: "/migrationPlan/stages/0/to", "must be a string")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "typo": 1}"#,
                      path: "/migrationPlan/stages/0/typo", "unknown key 'typo'")
        assertInvalid(stages: #""v1toV2""#, path: "/migrationPlan/stages/0", "must be a JSON object")
        assertInvalid(stages: #"{"name": "a", "kind": "lightweight", "from": "1.0.0", "to": "2.0.0", "willMigrate": []}"#,
                      path: "/migrationPlan/stages/0/willMigrate", "stage 'a' is lightweight: operations run only in a stage of \"kind\": \"custom\"")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "didMigrate": []}"#,
                      path: "/migrationPlan/stages/0/didMigrate", "declarative operations run in 'willMigrate' only")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "onDuplicates": "keepAll"}"#,
                      path: "/migrationPlan/stages/0/onDuplicates", "unknown onDuplicates 'keepAll' (known: error, keepFirst, keepLast)")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "willMigrate": [{"op": "merge"}]}"#,
                      path: "/migrationPlan/stages/0/willMigrate/0/op", "unknown operation 'merge' (known: deduplicate)")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "willMigrate": [{"op": "deduplicate", "entity": "Nope", "by": ["x"]}]}"#,
                      path: "/migrationPlan/stages/0/willMigrate/0/entity", "deduplicate names entity 'Nope', which version 1.0.0 does not have")
        assertInvalid(stages: #"{"name": "a", "kind": "custom", "from": "1.0.0", "to": "2.0.0", "willMigrate": [{"op": "deduplicate", "entity": "Trip", "by": []}]}"#,
                      path: "/migrationPlan/stages/0/willMigrate/0/by", "non-empty 'by'")
        let e = assertThrows(file: #filePath, line: #line) {
            _ = try StoreConfiguration.decode(#"{"migrationPlan": {"schemas": [\#(Self.threeSchemas)], "stages": {}}}"#)
        }
        XCTAssertEqual(e?.code, .invalid)
        XCTAssertEqual(e?.path, "/migrationPlan/stages")
    }
}

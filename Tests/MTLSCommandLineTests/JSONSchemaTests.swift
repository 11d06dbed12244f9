import Foundation
import XCTest

@testable import MTLSCommandLine

/// Every `--json` output validates against its committed, versioned schema in docs/schemas/:
/// probe, fleet lines, verify, pin --check, inspect, import, export and the error envelope.
enum SchemaFiles {
    /// The schema `docs/schemas/NAME.schema.json`.
    static func schema(_ name: String) throws -> [String: Any] {
        let url = Fixtures.packageRoot.appendingPathComponent("docs/schemas/\(name).schema.json")
        let data = try Data(contentsOf: url)
        guard let schema = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw HarnessError.notJSON(url.path) }
        return schema
    }

    /// The problems of `value` against the schema NAME (empty when it validates).
    static func problems(_ value: Any, schema name: String) -> [String] {
        guard let schema = try? schema(name) else { return ["docs/schemas/\(name).schema.json is missing or not JSON"] }
        var problems: [String] = []
        JSONSchemaSubset.validate(value, against: schema, root: schema, at: "$", problems: &problems)
        return problems
    }
}

final class JSONSchemaTests: XCTestCase {
    /// The command lines whose output each schema describes (successes, refusals, bad input).
    private func invocations(_ directory: TemporaryDirectory) throws -> [(schema: String, arguments: [String])] {
        let pinFile = try directory.write("pins.txt", text: try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem")) + "\n")
        let wrongPins = try directory.write("wrong.txt", text: try OpenSSL.spkiPin(certificate: Fixtures.path("client-other.pem")) + "\n")
        let root = Fixtures.path("root-ca.pem")
        return [
            ("verify", ["verify", Fixtures.path("server.pem"), "--intermediates", Fixtures.path("intermediate-ca.pem"), "--anchors", root, "--at", fixedTime, "--json"]),
            ("verify", ["verify", Fixtures.path("client-other.pem"), "--anchors", root, "--at", fixedTime, "--json"]),
            ("verify", ["verify", Fixtures.path("client-alice.pem"), Fixtures.path("server.pem"), "--anchors", root, "--at", fixedTime, "--json"]),
            (
                "verify-platform",
                [
                    "verify", Fixtures.path("server.pem"), "--intermediates", Fixtures.path("intermediate-ca.pem"), "--anchors", root, "--host", "localhost", "--platform", "all",
                    "--at", fixedTime, "--json",
                ]
            ),
            (
                "verify-platform",
                ["verify", Fixtures.path("client-alice.pem"), Fixtures.path("server.pem"), "--anchors", root, "--platform", "apple,java", "--at", fixedTime, "--json"]
            ),
            ("pin-check", ["pin", Fixtures.path("server.pem"), "--check", pinFile, "--json"]),
            ("pin-check", ["pin", Fixtures.path("server.pem"), "--check", wrongPins, "--json"]),
            ("inspect", ["inspect", Fixtures.path("client-alice.pem"), "--json"]),
            ("inspect", ["inspect", Fixtures.path("server-chain.pem"), "--json"]),
            ("inspect", ["inspect", Fixtures.path("p12/client-alice-legacy-rc2.p12"), "--password", "pass:mtls", "--json"]),
            ("inspect", ["inspect", Fixtures.path("client-alice.key"), "--json"]),
            ("import", ["import", Fixtures.path("p12/client-alice-modern.p12"), "--password", "pass:mtls", "--json"]),
            ("import", ["import", Fixtures.path("p12/client-alice-legacy-rc2.p12"), "--password", "pass:mtls", "--out-dir", directory.file("alice"), "--json"]),
            (
                "export",
                [
                    "export", "--cert", Fixtures.path("client-alice.pem"), "--key", Fixtures.path("client-alice.key"), "--chain", Fixtures.path("intermediate-ca.pem"), "--out",
                    directory.file("alice.p12"), "--password", "pass:mtls", "--json",
                ]
            ),
            ("error", ["verify", Fixtures.path("bad/garbage.bin"), "--json"]),
            ("error", ["inspect", Fixtures.path("bad/truncated.p12"), "--password", "pass:x", "--json"]),
            ("error", ["import", Fixtures.path("p12/client-alice-modern.p12"), "--password", "pass:wrong", "--json"]),
            ("error", ["verify", "--no-such-option", "--json"]),
            ("error", ["probe", "https://127.0.0.1:1/", "-H", "X: a\nb", "--json"]),
        ]
    }

    func testEveryJSONOutputValidatesAgainstItsVersionedSchema() throws {
        let directory = try TemporaryDirectory(self)
        var schemasSeen = Set<String>()
        for (schema, arguments) in try invocations(directory) {
            let result = mtls(arguments, environment: ["MTLS_QUIET_PASS_WARNING": "1"])
            let object = try result.json()
            XCTAssertEqual(SchemaFiles.problems(object, schema: schema), [], "\(arguments.joined(separator: " ")):\n\(result.stdout)")
            let declared = try SchemaFiles.schema(schema)
            if schema == "error" {
                // The envelope's shape is fixed by CLI.md: its version is in the schema's $id.
                XCTAssertEqual(Array(object.keys), ["error"])
                XCTAssertTrue((declared["$id"] as? String)?.hasSuffix("error-1.json") == true)
            } else {
                XCTAssertNotNil(object["schemaVersion"] as? Int, "\(arguments): schemaVersion")
                let allowed = ((declared["properties"] as? [String: Any])?["schemaVersion"] as? [String: Any])?["enum"] as? [Int]
                XCTAssertEqual(allowed, [object["schemaVersion"] as? Int ?? -1], "\(schema): the output's version is the schema's")
            }
            schemasSeen.insert(schema)
        }
        XCTAssertEqual(schemasSeen, ["verify", "verify-platform", "pin-check", "inspect", "import", "export", "error"])
    }

    func testFleetLinesValidateAgainstTheFleetLineSchema() throws {
        let directory = try TemporaryDirectory(self)
        let targets = try directory.write("targets.txt", text: "https://127.0.0.1:1/\nftp://not-https/\n")
        let result = mtls(["probe", "--targets", targets, "--json"])
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, result.stdout)
        for line in lines {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            XCTAssertEqual(SchemaFiles.problems(object, schema: "fleet-line"), [], String(line))
        }
    }

    func testTheValidatorRejectsWhatTheSchemasForbid() throws {
        XCTAssertFalse(SchemaFiles.problems(["error": ["code": 2]], schema: "error").isEmpty, "a missing message")
        XCTAssertFalse(SchemaFiles.problems(["error": ["code": 2, "message": "m"], "extra": true], schema: "error").isEmpty, "an undocumented key")
        XCTAssertFalse(SchemaFiles.problems(["error": ["code": 7, "message": "m"]], schema: "error").isEmpty, "an exit code outside the contract")
        XCTAssertFalse(SchemaFiles.problems(["schemaVersion": 9, "file": "x", "items": []], schema: "inspect").isEmpty, "another version")
    }
}

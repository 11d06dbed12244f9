import Foundation
import XCTest

@testable import MTLSCommandLine

/// The parts of the contract every subcommand shares: secret specifications (`pass:`, `env:`,
/// `file:`, `fd:`, `stdin`), the `--json` envelope, exit codes, help and version.
final class SecretsAndOutputTests: XCTestCase {
    private let p12 = Fixtures.path("p12/client-alice-modern.p12")
    /// A password no fixture or message contains, to prove that secrets are never echoed.
    private let distinctiveSecret = "Zebra-7731-not-the-password"

    /// Imports (shows) alice's PKCS#12 with a password spec and returns the run.
    private func importAlice(_ spec: String, environment: [String: String] = [:], stdin: [UInt8] = []) -> CLIResult {
        mtls(["import", p12, "--password", spec, "--json"], environment: environment, stdin: stdin)
    }

    private func assertOpened(_ result: CLIResult, _ spec: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertExit(result, 0, spec, file: file, line: line)
        let leaf = try result.json(file: file, line: line)["leaf"] as? [String: Any]
        XCTAssertEqual(leaf?["subject"] as? String, "CN=client-alice,O=mtls test,C=US", spec, file: file, line: line)
    }

    // MARK: - Secret specifications

    func testPassSpecWorksAndWarnsOnStandardErrorWithoutEchoingTheSecret() throws {
        let result = importAlice("pass:mtls")
        try assertOpened(result, "pass:")
        XCTAssertContains(result.stderr, "warning")
        XCTAssertContains(result.stderr, "pass:")
        XCTAssertNotContains(result.stdout, "warning", "the warning is not part of the JSON on stdout")

        let wrong = importAlice("pass:\(distinctiveSecret)")
        XCTAssertExit(wrong, 3)
        XCTAssertNotContains(wrong.stderr, distinctiveSecret)
        XCTAssertNotContains(wrong.stdout, distinctiveSecret)
    }

    func testEnvSpecReadsTheVariableAndDoesNotWarn() throws {
        let result = importAlice("env:ALICE_P12", environment: ["ALICE_P12": "mtls"])
        try assertOpened(result, "env:")
        XCTAssertTrue(result.stderr.isEmpty, "no warning for env:\n\(result.stderr)")

        // A missing secret is bad input (3), as an unreadable file: never an empty password.
        let unset = importAlice("env:NOT_SET_ANYWHERE")
        XCTAssertExit(unset, 3)
        XCTAssertContains(unset.stderr, "NOT_SET_ANYWHERE")
        try XCTAssertJSONError(unset, code: 3)
    }

    func testFileSpecReadsTheFirstLineOnly() throws {
        let directory = try TemporaryDirectory(self)
        let lf = try directory.write("password.txt", text: "mtls\nsecond line is ignored\n")
        try assertOpened(importAlice("file:\(lf)"), "file: LF")
        let crlf = try directory.write("password-crlf.txt", text: "mtls\r\n")
        try assertOpened(importAlice("file:\(crlf)"), "file: CRLF")
        let noNewline = try directory.write("password-bare.txt", text: "mtls")
        try assertOpened(importAlice("file:\(noNewline)"), "file: no newline")

        let wrong = try directory.write("wrong.txt", text: "\(distinctiveSecret)\n")
        let result = importAlice("file:\(wrong)")
        XCTAssertExit(result, 3)
        XCTAssertNotContains(result.stderr, distinctiveSecret)

        let missing = importAlice("file:\(directory.file("missing.txt"))")
        XCTAssertExit(missing, 3)
        XCTAssertContains(missing.stderr, directory.file("missing.txt"))
    }

    func testFdSpecReadsFromAPipe() throws {
        let fd = try pipeHolding("mtls", self)
        let result = importAlice("fd:\(fd)")
        try assertOpened(result, "fd:")
        XCTAssertTrue(result.stderr.isEmpty, result.stderr)

        XCTAssertExit(importAlice("fd:not-a-number"), 3)
    }

    func testStdinSpecReadsTheFirstLineOfStandardInput() throws {
        try assertOpened(importAlice("stdin", stdin: Array("mtls\nrest\n".utf8)), "stdin")
    }

    func testEmptyPasswordsAreSecretsToo() throws {
        let file = Fixtures.path("p12/client-alice-emptypass.p12")
        XCTAssertExit(mtls(["import", file, "--password", "pass:"]), 0)
        // A variable set to nothing is an explicit empty password, with a note (issue 38).
        let empty = mtls(["import", file, "--password", "env:EMPTY"], environment: ["EMPTY": ""])
        XCTAssertExit(empty, 0)
        XCTAssertContains(empty.stderr, "set but empty")
        XCTAssertExit(mtls(["import", Fixtures.path("p12/client-alice-nopass.p12"), "--password", "pass:"]), 0)
    }

    func testAnUnknownSecretFormIsAUsageErrorWithTheFormsListed() throws {
        let result = importAlice("mtls")
        XCTAssertExit(result, 2)
        XCTAssertContains(result.stderr, "pass:")
        XCTAssertContains(result.stderr, "env:")
        XCTAssertContains(result.stderr, "fd:")
        try XCTAssertJSONError(result, code: 2)
    }

    func testSecretSpecsWorkForEveryPasswordOption() throws {
        // verify --password for a PKCS#12 input
        let verify = mtls(
            ["verify", Fixtures.path("p12/server.p12"), "--password", "env:P", "--anchors", Fixtures.path("root-ca.pem"), "--at", fixedTime], environment: ["P": "mtls"])
        XCTAssertExit(verify, 0)
        // inspect and pin
        XCTAssertExit(mtls(["inspect", p12, "--password", "stdin"], stdin: Array("mtls\n".utf8)), 0)
        let fd = try pipeHolding("mtls", self)
        XCTAssertExit(mtls(["pin", Fixtures.path("p12/server.p12"), "--password", "fd:\(fd)"]), 0)
    }

    // MARK: - JSON envelope and exit codes

    func testJSONIsExactlyOneObjectForEveryOutcome() throws {
        let root = Fixtures.path("root-ca.pem")
        let runs: [(String, CLIResult, Int32)] = [
            ("trusted", mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors", root, "--at", fixedTime, "--json"]), 0),
            ("not trusted", mtls(["verify", Fixtures.path("server-expired.pem"), Fixtures.path("intermediate-ca.pem"), "--anchors", root, "--at", fixedTime, "--json"]), 1),
            ("usage", mtls(["verify", Fixtures.path("server.pem"), "--bogus", "--json"]), 2),
            ("bad input", mtls(["verify", Fixtures.path("bad/garbage.bin"), "--anchors", root, "--json"]), 3),
            ("inspect", mtls(["inspect", Fixtures.path("server.pem"), "--json"]), 0),
            ("import usage", mtls(["import", "--json"]), 2),
            ("import bad", mtls(["import", p12, "--password", "pass:wrong", "--json"]), 3),
        ]
        for (name, result, code) in runs {
            XCTAssertExit(result, code, name)
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: true)
            XCTAssertEqual(lines.count, 1, "\(name): one JSON object on one line\n\(result)")
            let json = try result.json()
            if code >= 2 {
                try XCTAssertJSONError(result, code: code)
            } else {
                XCTAssertNil(json["error"], "\(name): no error envelope for an answer")
            }
        }
    }

    func testUsageErrorsFollowTheArgumentParserShape() throws {
        let result = mtls(["verify", Fixtures.path("server.pem"), "--hots", "localhost"])
        XCTAssertExit(result, 2)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "Error: Unknown option '--hots'. Did you mean '--host'?")
        XCTAssertTrue(lines.contains { $0.hasPrefix("Usage: mtls verify") }, result.stderr)
        XCTAssertEqual(lines.last, "  See 'mtls verify --help' for more information.")
        XCTAssertTrue(result.stdout.isEmpty)
    }

    func testUnknownSubcommandSuggestsTheClosestOne() throws {
        let result = mtls(["verfy", Fixtures.path("server.pem")])
        XCTAssertExit(result, 2)
        XCTAssertContains(result.stderr, "Did you mean 'verify'?")
        try XCTAssertJSONError(mtls(["inpsect", "--json"]), code: 2)
    }

    func testOptionsAcceptAnAttachedValue() throws {
        let result = mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors=\(Fixtures.path("root-ca.pem"))", "--at=\(fixedTime)", "--host=localhost"])
        XCTAssertExit(result, 0)
    }

    // MARK: - Help and version

    func testVersionPrintsTheVersionAndTheOpenSSLInUse() throws {
        let result = mtls(["--version"])
        XCTAssertExit(result, 0)
        XCTAssertTrue(result.stdout.hasPrefix("mtls \(MTLSCommand.version) "), result.stdout)
        XCTAssertContains(result.stdout, "OpenSSL 3.")
        XCTAssertTrue(result.stderr.isEmpty)
    }

    func testEverySubcommandHasHelpOnStandardOutput() throws {
        for command in ["verify", "inspect", "convert", "import", "export", "pin"] {
            let result = mtls([command, "--help"])
            XCTAssertExit(result, 0, command)
            XCTAssertContains(result.stdout, "OVERVIEW:", command)
            XCTAssertContains(result.stdout, "USAGE: mtls \(command)", command)
            XCTAssertTrue(result.stderr.isEmpty, command)
            XCTAssertEqual(mtls(["help", command]).stdout, result.stdout, "`mtls help \(command)` is `mtls \(command) --help`")
        }
        let root = mtls(["--help"])
        XCTAssertExit(root, 0)
        XCTAssertContains(root.stdout, "SUBCOMMANDS:")
        for command in ["verify", "inspect", "convert", "import", "export", "pin"] { XCTAssertContains(root.stdout, command) }
        XCTAssertContains(root.stdout, "Exit codes")
    }
}

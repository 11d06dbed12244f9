import Foundation
import XCTest

@testable import MTLSCommandLine

/// A few runs of the BUILT `mtls` executable (found in the build products directory beside the
/// test bundle): what `main.swift` wires up — real streams, real exit status — behaves as in-process.
final class EndToEndTests: XCTestCase {
    private func run(_ arguments: [String], stdin: [UInt8] = []) throws -> ProcessResult {
        try runProcess(try BuiltBinary.path(), arguments, stdin: stdin)
    }

    func testVersionExitsZeroAndNamesTheOpenSSLVersion() throws {
        let result = try run(["--version"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertTrue(result.stdoutText.hasPrefix("mtls \(MTLSCommand.version) ("), result.stdoutText)
        let openssl = try OpenSSL.run(["version"]).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        // `openssl version` prints "OpenSSL 3.0.19 27 Jan 2026 (Library: …)": the library part must agree.
        let library = openssl.components(separatedBy: "(Library: ").last?.trimmingCharacters(in: CharacterSet(charactersIn: ")")) ?? openssl
        XCTAssertContains(result.stdoutText, library)
        XCTAssertTrue(result.stderr.isEmpty, result.stderr)
    }

    func testTheRealConsoleReadsSecretsFromStdinAndTheProcessEnvironment() throws {
        // The process console reads `stdin` secrets from descriptor 0 into a wiped buffer and
        // `env:` from the environment block by name; both must still give the password.
        let p12 = Fixtures.path("p12/client-alice-modern.p12")
        let fromStdin = try run(["import", p12, "--password", "stdin"], stdin: Array("mtls\nnot this line\n".utf8))
        XCTAssertEqual(fromStdin.status, 0, "\(fromStdin)")
        var environment = ProcessInfo.processInfo.environment
        environment["MTLS_E2E_PASSWORD"] = "mtls"
        let fromEnvironment = try runProcess(try BuiltBinary.path(), ["import", p12, "--password", "env:MTLS_E2E_PASSWORD"], environment: environment)
        XCTAssertEqual(fromEnvironment.status, 0, "\(fromEnvironment)")
        environment["MTLS_E2E_PASSWORD"] = "Zq9-not-it"
        let wrong = try runProcess(try BuiltBinary.path(), ["import", p12, "--password", "env:MTLS_E2E_PASSWORD"], environment: environment)
        XCTAssertEqual(wrong.status, 3, "\(wrong)")
        XCTAssertContains(wrong.stderr, "password")
        XCTAssertNotContains(wrong.stderr + wrong.stdoutText, "Zq9-not-it")
        environment.removeValue(forKey: "MTLS_E2E_PASSWORD")
        let unset = try runProcess(try BuiltBinary.path(), ["import", p12, "--password", "env:MTLS_E2E_PASSWORD"], environment: environment)
        XCTAssertEqual(unset.status, 3, "\(unset)")  // a missing secret is bad input (issue 38)
        XCTAssertContains(unset.stderr, "MTLS_E2E_PASSWORD is not set")
    }

    func testHelpGoesToStandardOutputWithExitZero() throws {
        let result = try run(["--help"])
        XCTAssertEqual(result.status, 0, "\(result)")
        for fragment in ["OVERVIEW:", "USAGE:", "SUBCOMMANDS:", "verify", "pin", "import", "export"] {
            XCTAssertContains(result.stdoutText, fragment)
        }
        XCTAssertTrue(result.stderr.isEmpty, result.stderr)
        XCTAssertNotContains(result.stdoutText, "\u{1B}[", "no colour into a pipe")
    }

    func testUsageErrorExitsTwoWithASuggestionOnStandardError() throws {
        let result = try run(["verify", Fixtures.path("server.pem"), "--ancors", Fixtures.path("root-ca.pem")])
        XCTAssertEqual(result.status, 2, "\(result)")
        XCTAssertContains(result.stderr, "Unknown option '--ancors'")
        XCTAssertContains(result.stderr, "Did you mean '--anchors'?")
        XCTAssertContains(result.stderr, "See 'mtls verify --help'")
        XCTAssertTrue(result.stdout.isEmpty, result.stdoutText)

        let json = try run(["verify", Fixtures.path("server.pem"), "--ancors", Fixtures.path("root-ca.pem"), "--json"])
        XCTAssertEqual(json.status, 2)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any]
        XCTAssertEqual(((object?["error"] as? [String: Any])?["code"] as? NSNumber)?.intValue, 2, json.stdoutText)
    }

    func testVerifyOfAGoodChainAndAnExpiredLeafMatchesOpenSSL() throws {
        let root = Fixtures.path("root-ca.pem")
        let intermediate = Fixtures.path("intermediate-ca.pem")
        let good = try run(["verify", Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost", "--at", fixedTime])
        XCTAssertEqual(good.status, 0, "\(good)")
        XCTAssertContains(good.stdoutText, "Verdict: trusted")
        XCTAssertTrue(try OpenSSL.verify(["-CAfile", root, "-untrusted", intermediate, "-verify_hostname", "localhost", Fixtures.path("server.pem")]).ok)

        let expired = try run(["verify", Fixtures.path("server-expired.pem"), intermediate, "--anchors", root, "--at", fixedTime, "--json"])
        XCTAssertEqual(expired.status, 1, "\(expired)")
        let object = try JSONSerialization.jsonObject(with: Data(expired.stdout)) as? [String: Any]
        XCTAssertEqual(object?["trusted"] as? Bool, false)
        let codes = (object?["findings"] as? [[String: Any]] ?? []).compactMap { ($0["code"] as? NSNumber)?.intValue }
        XCTAssertEqual(try OpenSSL.verify(["-CAfile", root, "-untrusted", intermediate, Fixtures.path("server-expired.pem")]).code.map { codes.contains($0) }, true, "\(codes)")
    }
}

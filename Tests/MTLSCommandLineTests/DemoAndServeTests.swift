import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSHTTP
import MTLSTestServer

/// `mtls demo` runs the whole tour in-process and exits 0; `mtls serve` starts, logs, serves and
/// stops; its config file is parsed strictly.
final class DemoAndServeTests: XCTestCase {
    func testDemoRunsTheTourAndExitsZero() {
        let result = mtls(["demo"])
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertTrue(result.stdout.contains("IIS 403.7"), result.stdout)
        XCTAssertTrue(result.stdout.contains("logged in with the client certificate"), result.stdout)
        XCTAssertTrue(result.stdout.contains("sha256/"), result.stdout)
        XCTAssertTrue(result.stdout.contains("Demo complete."), result.stdout)
        XCTAssertFalse(result.stdout.contains("unexpected exit code"), result.stdout)
    }

    func testServeMakesItsPKIListensLogsAndStops() throws {
        let directory = try TemporaryDirectory(self)
        let pki = directory.file("pki")
        let result = mtls(["serve", "--port", "0", "--pki-dir", pki, "--duration", "0.5", "--tls-max", "1.2", "--no-ca-names"])
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertTrue(result.stdout.contains("mtls serve listening on https://127.0.0.1:"), result.stdout)
        XCTAssertTrue(result.stdout.contains("mtls serve stopped"), result.stdout)
        for name in ["ca.pem", "server.pem", "server.key", "client.pem", "client.key", "client.p12"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: pki + "/" + name), name)
        }
        XCTAssertEqual(try permissions(pki + "/server.key"), 0o600)
        XCTAssertEqual(try permissions(pki + "/client.p12"), 0o600)
        // The second start reuses the PKI.
        let again = mtls(["serve", "--port", "0", "--pki-dir", pki, "--duration", "0.2"])
        XCTAssertTrue(again.stderr.contains("using the test PKI"), again.stderr)
    }

    func testServeConfigFilesAreParsedStrictly() throws {
        let rules = try PathRule.parse("/ \n/payroll cert=require auth=basic handler=echo-cert  # IIS: Require SSL + client certs\n/old handler=redirect:/new\n")
        XCTAssertEqual(rules.map(\.path), ["/", "/payroll", "/old"])
        XCTAssertEqual(rules[1].clientCertificate, .require)
        XCTAssertEqual(rules[1].authentication, .basic)
        for bad in ["payroll cert=require", "/x cert=sometimes", "/x colour=blue", "/x handler=teapot", "/x cert"] {
            XCTAssertThrowsError(try PathRule.parse(bad), bad)
        }
        let directory = try TemporaryDirectory(self)
        let config = try directory.write("rules.conf", text: "/x cert=maybe\n")
        let result = mtls(["serve", "--port", "0", "--pki-dir", directory.file("pki"), "--config", config, "--duration", "0.1"])
        XCTAssertEqual(result.exitCode, 3, result.description)
        XCTAssertTrue(result.stderr.contains("line 1"), result.stderr)
    }
}

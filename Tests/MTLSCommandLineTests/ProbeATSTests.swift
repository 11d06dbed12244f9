import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls probe URL --platform apple`: App Transport Security diagnostics against real
/// `openssl s_server` peers on loopback (scripts/peers/s_server.sh), each configured to break one
/// ATS requirement, with `openssl s_client` as the independent judge of what the server allows.
final class ProbeATSTests: XCTestCase {
    private typealias Server = SServerPeer

    private func probe(_ server: Server, json: Bool = true) -> CLIResult {
        mtls(
            [
                "probe", "https://platform.test:\(server.port)/", "--connect-to", "127.0.0.1:\(server.port)", "--anchors", Fixtures.path("platform/root-ca.pem"),
                "--platform", "apple", "--at", fixedTime,
            ] + (json ? ["--json"] : []))
    }

    /// `openssl s_client` against the server with these options: true when the handshake completes.
    private func sClientConnects(_ server: Server, _ options: [String]) throws -> Bool {
        try OpenSSL.run(["s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "platform.test"] + options).status == 0
    }

    private func trials(_ json: [String: Any]) -> [[String: Any]] { json["trials"] as? [[String: Any]] ?? [] }

    func testACompliantTLS13ServerNeedsNoException() throws {
        let server = try Server(platform: "compliant", [])
        defer { server.stop() }
        let result = probe(server)
        XCTAssertExit(result, 0)
        let json = try result.json()
        XCTAssertEqual(json["atsAllows"] as? Bool, true)
        XCTAssertEqual(json["violations"] as? [String], [])
        XCTAssertEqual(trials(json).first?["passed"] as? Bool, true)
        XCTAssertEqual((json["infoPlistExceptions"] as? [String: Any])?.count, 0)
        XCTAssertEqual((json["certificate"] as? [String: Any])?["verdict"] as? String, "accepted")
        let text = probe(server, json: false)
        XCTAssertContains(text.stdout, "PASS  ATS default (TLS 1.2+, forward secrecy)")
        XCTAssertContains(text.stdout, "Verdict: ATS allows connections to platform.test with no exception")
    }

    func testATLS11OnlyServerNeedsNSExceptionMinimumTLSVersion() throws {
        let server = try Server(platform: "compliant", ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"])
        defer { server.stop() }
        XCTAssertFalse(try sClientConnects(server, ["-tls1_2"]), "the judge: no TLS 1.2")
        XCTAssertTrue(try sClientConnects(server, ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]), "the judge: TLS 1.1 works")
        let result = probe(server)
        XCTAssertExit(result, 1)
        let json = try result.json()
        XCTAssertEqual(trials(json).first?["passed"] as? Bool, false)
        let exceptions = try XCTUnwrap(json["infoPlistExceptions"] as? [String: Any])
        XCTAssertEqual(exceptions["NSExceptionMinimumTLSVersion"] as? String, "TLSv1.1")
        XCTAssertEqual(json["violations"] as? [String], ["MTLS_APPLE_ATS_TLS_VERSION"])
        XCTAssertNil(exceptions["NSExceptionRequiresForwardSecrecy"], "the server has ECDHE suites at TLS 1.1")
        XCTAssertContains(json["infoPlist"] as? String ?? "", "<key>platform.test</key>")
        XCTAssertContains(probe(server, json: false).stdout, "Verdict: ATS blocks connections to platform.test: needs NSExceptionMinimumTLSVersion")
    }

    func testAServerWithoutForwardSecrecyNeedsNSExceptionRequiresForwardSecrecy() throws {
        let server = try Server(platform: "compliant", ["-tls1_2", "-cipher", "AES128-GCM-SHA256"])
        defer { server.stop() }
        let ecdhe = ProbeATS.forwardSecretSuites.map(\.openssl).joined(separator: ":")
        XCTAssertFalse(try sClientConnects(server, ["-tls1_2", "-cipher", ecdhe]), "the judge: no ECDHE suite")
        XCTAssertTrue(try sClientConnects(server, ["-tls1_2", "-cipher", "AES128-GCM-SHA256"]), "the judge: RSA key exchange works")
        let result = probe(server)
        XCTAssertExit(result, 1)
        let json = try result.json()
        let exceptions = try XCTUnwrap(json["infoPlistExceptions"] as? [String: Any])
        XCTAssertEqual(exceptions["NSExceptionRequiresForwardSecrecy"] as? Bool, false)
        XCTAssertEqual(json["violations"] as? [String], ["MTLS_APPLE_ATS_FORWARD_SECRECY"])
        XCTAssertNil(exceptions["NSExceptionMinimumTLSVersion"])
        XCTAssertEqual(trials(json)[1]["cipher"] as? String, "AES128-GCM-SHA256")
    }

    func testANonCompliantCertificateIsRefusedAndNoKeyFixesIt() throws {
        let server = try Server(platform: "days-826", [])
        defer { server.stop() }
        let result = probe(server)
        XCTAssertExit(result, 1)
        let json = try result.json()
        XCTAssertEqual(trials(json).first?["passed"] as? Bool, true, "the transport is fine")
        let certificate = try XCTUnwrap(json["certificate"] as? [String: Any])
        XCTAssertEqual(certificate["verdict"] as? String, "refused")
        XCTAssertEqual((certificate["failures"] as? [[String: Any]])?.first?["code"] as? String, "MTLS_APPLE_VALIDITY_825")
        XCTAssertEqual(json["violations"] as? [String], ["MTLS_APPLE_VALIDITY_825"])
        let text = probe(server, json: false).stdout
        XCTAssertContains(text, "refused — valid 826 days, more than 825 for a certificate issued after 2019-07-01; reissue with `-days 825`")
        XCTAssertContains(text, "no key makes this certificate acceptable")
    }

    func testNoServerIsANetworkErrorAndOtherPlatformsAreAUsageError() throws {
        let server = try Server(platform: "compliant", [])
        let port = server.port
        server.stop()
        let closed = mtls(["probe", "https://127.0.0.1:\(port)/", "--platform", "apple", "--timeout", "2"])
        XCTAssertExit(closed, 4)
        XCTAssertContains(closed.stdout, "no TLS connection")
        let java = mtls(["probe", "https://127.0.0.1:\(port)/", "--platform", "java"])
        XCTAssertExit(java, 2)
        XCTAssertContains(java.stderr, "mtls verify FILE --platform all")
    }
}

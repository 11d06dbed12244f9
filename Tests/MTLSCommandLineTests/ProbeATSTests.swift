import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls probe URL --platform apple`: App Transport Security diagnostics against real
/// `openssl s_server` peers on loopback (scripts/peers/s_server.sh), each configured to break one
/// ATS requirement, with `openssl s_client` as the independent judge of what the server allows.
final class ProbeATSTests: XCTestCase {
    /// One s_server on 127.0.0.1 with a TestCerts/platform/ certificate; stopped by PID.
    private final class Server {
        let port: Int
        private let directory: String
        private let script = Fixtures.packageRoot.appendingPathComponent("scripts/peers/s_server.sh").path

        init(certificate: String, _ extra: [String]) throws {
            let cert = Fixtures.path("platform/\(certificate).pem")
            let key = Fixtures.path("platform/\(certificate).key")
            // Foundation's Process leaves the parent's pipe descriptors open in the child; s_server
            // would inherit them and keep our stdout pipe open forever. Close all but 0-2 first.
            let closeInherited = "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done; exec /bin/bash \"$0\" \"$@\""
            let result = try runProcess("/bin/bash", ["-c", closeInherited, script, "start", "--no-verify", "-cert", cert, "-key", key] + extra)
            var values: [String: String] = [:]
            for line in result.stdoutText.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { values[parts[0]] = parts[1] }
            }
            guard result.status == 0, let port = values["PORT"].flatMap(Int.init), let directory = values["DIR"] else {
                throw XCTSkip("openssl s_server \(extra.joined(separator: " ")) did not start here: \(result.stderr)")
            }
            self.port = port
            self.directory = directory
        }

        func stop() { _ = try? runProcess("/bin/bash", [script, "stop", "--dir", directory]) }
    }

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
        let server = try Server(certificate: "compliant", [])
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
        let server = try Server(certificate: "compliant", ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"])
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
        let server = try Server(certificate: "compliant", ["-tls1_2", "-cipher", "AES128-GCM-SHA256"])
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
        let server = try Server(certificate: "days-826", [])
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
        let server = try Server(certificate: "compliant", [])
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

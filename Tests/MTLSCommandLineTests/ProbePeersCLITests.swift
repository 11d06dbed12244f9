import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTestSupport

/// `mtls probe` (the built binary) against Apache and nginx: each outcome asserted on the human and
/// the JSON output — after-request requests on TLS 1.2 and 1.3, handshake requests, CA names sent or
/// not, no certificate, an expired one, and a good one.
final class ProbePeersCLITests: XCTestCase {
    nonisolated(unsafe) static var apache: InteropPeer?
    nonisolated(unsafe) static var nginx: InteropPeer?
    nonisolated(unsafe) static var startError: Error?

    override class func setUp() {
        super.setUp()
        do {
            apache = try InteropPeer("apache.sh")
            nginx = try InteropPeer("nginx.sh")
        } catch {
            startError = error
        }
    }

    /// The peer, or a skip when its server is not installed; a peer that is installed but did not
    /// start is a failure, not a skip.
    private static func started(_ peer: InteropPeer?, _ name: String) throws -> InteropPeer {
        if let peer { return peer }
        let binary = name == "apache" ? "/usr/sbin/apache2" : "/usr/sbin/nginx"
        guard FileManager.default.isExecutableFile(atPath: binary) else { throw XCTSkip("\(binary) is not installed (scripts/install-deps.sh)") }
        return try XCTUnwrap(peer, "\(name) is installed but did not start")
    }

    override class func tearDown() {
        apache?.stop()
        nginx?.stop()
        super.tearDown()
    }

    private func mtls(_ arguments: [String]) throws -> Subprocess.Result {
        if let error = Self.startError { throw error }
        let path = SupportFixtures.mtlsExecutable
        guard FileManager.default.isExecutableFile(atPath: path) else { throw XCTSkip("build the mtls executable first: \(path)") }
        return Subprocess.run(path, arguments + ["--anchors", SupportFixtures.path("root-ca.pem")])
    }

    private func json(_ result: Subprocess.Result) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout)
    }

    private func requests(_ object: [String: Any]) -> [[String: Any]] {
        ((object["clientCertificate"] as? [String: Any])?["requests"] as? [[String: Any]]) ?? []
    }

    private let alice = ["--cert", SupportFixtures.path("client-alice.pem"), "--key", SupportFixtures.path("client-alice.key")]

    func testApacheAfterRequestOnBothVersionsWithAndWithoutTheIdentity() throws {
        let port = try Self.started(Self.apache, "apache").port()
        for (version, phase) in [("1.2", "renegotiation"), ("1.3", "post-handshake")] {
            let url = "https://localhost:\(port)/secure"
            let good = try mtls(["probe", url, "--tls-max", version] + alice)
            XCTAssertEqual(good.status, 0, good.stdout)
            XCTAssertTrue(good.stdout.contains("Verdict: OK"), good.stdout)
            let goodJSON = try json(try mtls(["probe", url, "--tls-max", version, "--json"] + alice))
            XCTAssertEqual(requests(goodJSON).first?["phase"] as? String, phase)

            let none = try mtls(["probe", url, "--tls-max", version])
            XCTAssertEqual(none.status, 1, none.stdout)
            XCTAssertTrue(none.stdout.contains("we had none"), none.stdout)
            let noneJSON = try json(try mtls(["probe", url, "--tls-max", version, "--json"]))
            XCTAssertEqual(requests(noneJSON).first?["hadNoIdentity"] as? Bool, true)
            XCTAssertEqual(noneJSON["exitCode"] as? Int, 1)

            let expired = try mtls([
                "probe", url, "--tls-max", version, "--cert", SupportFixtures.path("client-alice-expired.pem"), "--key", SupportFixtures.path("client-alice-expired.key"),
            ])
            // The server refusing our certificate is 1 (issue 15's policy), whatever the TLS version.
            XCTAssertEqual(expired.status, 1, expired.stdout)
            XCTAssertTrue(expired.stdout.contains("certificate expired"), expired.stdout)
            XCTAssertTrue(expired.stdout.contains("refused our client certificate"), expired.stdout)
        }
    }

    func testApacheCANamesAreShownWhenTheyDoNotFitOurIdentity() throws {
        let port = try Self.started(Self.apache, "apache").port("CADN_PORT")
        let result = try mtls(["probe", "https://localhost:\(port)/cadn", "--json"] + alice)
        let request = try XCTUnwrap(requests(try json(result)).first)
        XCTAssertEqual(request["acceptedCANames"] as? [String], ["CN=mtls Other Root CA,O=mtls test,C=US"])
        XCTAssertEqual(request["identityFits"] as? Bool, false)
        let human = try mtls(["probe", "https://localhost:\(port)/cadn"] + alice)
        XCTAssertTrue(human.stdout.contains("issuer NOT among the accepted CAs"), human.stdout)
    }

    func testNginxHandshakeRequestAndNoCANames() throws {
        let nginx = try Self.started(Self.nginx, "nginx")
        let good = try json(try mtls(["probe", "https://localhost:\(nginx.port())/", "--json"] + alice))
        XCTAssertEqual(requests(good).first?["phase"] as? String, "handshake")
        XCTAssertEqual((good["http"] as? [[String: Any]])?.last?["status"] as? Int, 200)
        let none = try mtls(["probe", "https://localhost:\(nginx.port())/"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stdout.contains("yes, during the TLS handshake"), none.stdout)
        let noCA = try json(try mtls(["probe", "https://localhost:\(nginx.port("OPTIONAL_NO_CA_PORT"))/", "--json"] + alice))
        XCTAssertEqual(requests(noCA).first?["acceptedCANames"] as? [String], [])
    }

    func testApacheBasicAndDigestThroughTheCLI() throws {
        let port = try Self.started(Self.apache, "apache").port()
        for path in ["/basic", "/digest"] {
            let ok = try mtls(["probe", "https://localhost:\(port)\(path)", "--user", "mtls", "--user-password", "pass:mtls"])
            XCTAssertEqual(ok.status, 0, ok.stdout)
            let wrong = try mtls(["probe", "https://localhost:\(port)\(path)", "--user", "mtls", "--user-password", "pass:wrong"])
            XCTAssertEqual(wrong.status, 1, wrong.stdout)
        }
    }
}

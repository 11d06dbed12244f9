import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestSupport

/// The client against Apache (per-location `SSLVerifyClient require`: renegotiation on TLS 1.2,
/// post-handshake auth on TLS 1.3 — the IIS per-path behaviour) and nginx (certificate in the
/// handshake), with curl as the independent judge of each outcome.
final class PeerInteropTests: XCTestCase {
    nonisolated(unsafe) static var apache13: InteropPeer?
    nonisolated(unsafe) static var apache12: InteropPeer?
    nonisolated(unsafe) static var nginx: InteropPeer?
    nonisolated(unsafe) static var startError: Error?

    override class func setUp() {
        super.setUp()
        do {
            apache13 = try InteropPeer("apache.sh")
            apache12 = try InteropPeer("apache.sh", ["--tls-max", "1.2"])
            nginx = try InteropPeer("nginx.sh")
        } catch {
            startError = error
        }
    }

    override class func tearDown() {
        apache13?.stop()
        apache12?.stop()
        nginx?.stop()
        super.tearDown()
    }

    private func peer(_ peer: InteropPeer?) throws -> InteropPeer {
        if let error = PeerInteropTests.startError { throw error }
        return try XCTUnwrap(peer)
    }

    private func client(_ identity: (String, String)? = nil) throws -> HTTPSClient {
        var identities: [ClientIdentity] = []
        if let identity { identities.append(try ClientIdentity.files(certificatePath: HTTPFixtures.path(identity.0), keyPath: HTTPFixtures.path(identity.1))) }
        return try HTTPSClient(
            configuration: TLSClientConfiguration(
                trust: TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime), identities: identities,
                timeouts: Timeouts.uniform(.seconds(15))))
    }

    private let alice = ("client-alice.pem", "client-alice.key")

    private func get(_ client: HTTPSClient, _ port: Int, _ path: String, method: String = "GET", body: [UInt8]? = nil, expectsContinue: Bool = false) throws -> HTTPResponse {
        defer { client.closeIdleConnections() }
        return try client.send(HTTPRequest(method: method, url: try HTTPSURL("https://localhost:\(port)\(path)"), body: body, expectsContinue: expectsContinue))
    }

    /// curl's view of the same request: (exit code, HTTP status or 0).
    private func curl(_ port: Int, _ path: String, _ extra: [String] = []) throws -> (Int32, Int) {
        let result = Subprocess.run(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", "root-ca.pem", "https://localhost:\(port)\(path)"] + extra,
            directory: HTTPFixtures.testCerts.path)
        return (result.status, Int(result.stdout) ?? 0)
    }

    func testApachePerLocationCertificateIsRequestedAfterTheRequestOnBothVersions() throws {
        for (peer, phase, version) in [(try peer(Self.apache12), CertificateRequestPhase.renegotiation, "TLSv1.2"), (try peer(Self.apache13), .postHandshake, "TLSv1.3")] {
            let response = try get(try client(alice), peer.port(), "/secure")
            XCTAssertEqual(response.status, 200, version)
            XCTAssertEqual(response.tls.version, version)
            XCTAssertEqual(response.tls.certificateRequests.map(\.phase), [phase], version)
            XCTAssertEqual(response.headers["X-Client-Subject"]?.contains("CN=client-alice"), true, "\(response.headers)")
            XCTAssertEqual(try curl(peer.port(), "/secure", ["--cert", "client-alice.pem", "--key", "client-alice.key"]).1, 200, "curl agrees")
        }
    }

    func testApacheRefusesAMissingCertificateWithAnAlertWeNameAndCurlAlsoFails() throws {
        for (peer, alert) in [(try peer(Self.apache12), "handshake failure"), (try peer(Self.apache13), "certificate required")] {
            XCTAssertThrowsError(try get(try client(), peer.port(), "/secure")) { error in
                let failure = error as? HTTPSError
                XCTAssertEqual(failure?.alert, alert, "\(error)")
                XCTAssertEqual(failure?.report?.certificateRequests.first?.hadNoIdentity, true, "\(error)")
            }
            XCTAssertEqual(try curl(peer.port(), "/secure").0, 56, "curl fails the same way (exit 56)")
            XCTAssertEqual(try get(try client(), peer.port(), "/secure-403").status, 403)
        }
    }

    func testApacheRefusesAnExpiredClientCertificateWithCertificateExpired() throws {
        let peer = try peer(Self.apache13)
        XCTAssertThrowsError(try get(try client(("client-alice-expired.pem", "client-alice-expired.key")), peer.port(), "/secure")) { error in
            XCTAssertEqual((error as? HTTPSError)?.alert, "certificate expired", "\(error)")
        }
    }

    func testApacheSelectedCANamesAreReportedAndTheIdentityIsStillSent() throws {
        let peer = try peer(Self.apache13)
        let response = try get(try client(alice), peer.port("CADN_PORT"), "/cadn")
        XCTAssertEqual(response.status, 200)
        let request = try XCTUnwrap(response.tls.certificateRequests.first)
        XCTAssertEqual(request.acceptedCANames, ["CN=mtls Other Root CA,O=mtls test,C=US"])
        XCTAssertFalse(request.identityFits, "alice is not issued under the only CA named")
        XCTAssertEqual(request.sentCertificate?.commonName, "client-alice")
    }

    func testApacheBuffersABodyDuringRenegotiationOnlyWithinItsLimitUnlessExpectContinue() throws {
        let peer = try peer(Self.apache12)
        let big = [UInt8](repeating: 0x41, count: 2 << 20)
        XCTAssertEqual(try get(try client(alice), peer.port(), "/secure", method: "POST", body: big, expectsContinue: false).status, 413)
        let accepted = try get(try client(alice), peer.port(), "/secure", method: "POST", body: big, expectsContinue: true)
        XCTAssertEqual(accepted.status, 200)
        XCTAssertTrue(String(decoding: accepted.body, as: UTF8.self).contains("body_bytes=\(big.count)"), String(decoding: accepted.body, as: UTF8.self))
    }

    func testApacheCRLCheckedLocationAcceptsAGoodCertificateAndRefusesARevokedOne() throws {
        for peer in [try peer(Self.apache12), try peer(Self.apache13)] {
            XCTAssertEqual(try get(try client(alice), peer.port("CRL_PORT"), "/secure-crl").status, 200)
            XCTAssertThrowsError(try get(try client(("client-revoked.pem", "client-revoked.key")), peer.port("CRL_PORT"), "/secure-crl")) { error in
                XCTAssertEqual((error as? HTTPSError)?.alert, "certificate revoked", "\(error)")
            }
            XCTAssertEqual(try curl(peer.port("CRL_PORT"), "/secure-crl", ["--cert", "client-revoked.pem", "--key", "client-revoked.key"]).0, 56, "curl is refused too")
        }
    }

    func testApacheRefusesAClientCertificateWithoutClientAuthEKU() throws {
        for peer in [try peer(Self.apache12), try peer(Self.apache13)] {
            XCTAssertThrowsError(try get(try client(("client-serverauth-only.pem", "client-serverauth-only.key")), peer.port(), "/secure")) { error in
                XCTAssertNotNil((error as? HTTPSError)?.alert, "\(error)")
            }
        }
    }

    func testGoodCertificateWithItsChainLogsInOnBothVersions() throws {
        for peer in [try peer(Self.apache12), try peer(Self.apache13)] {
            let response = try get(try client(("client-alice-chain.pem", "client-alice.key")), peer.port(), "/secure")
            XCTAssertEqual(response.status, 200)
            XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("verify=SUCCESS"))
        }
    }

    func testNginxAsksInTheHandshakeAndAnswers400WithoutACertificate() throws {
        let peer = try peer(Self.nginx)
        let response = try get(try client(alice), peer.port(), "/")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.certificateRequests.map(\.phase), [.handshake])
        XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("verify=SUCCESS"))
        XCTAssertEqual(response.tls.certificateRequests.first?.acceptedCANames.count, 2)
        let refused = try get(try client(), peer.port(), "/")
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try curl(peer.port(), "/").1, 400, "curl agrees")
    }

    func testNginxOptionalNoCASendsNoCANames() throws {
        let peer = try peer(Self.nginx)
        let response = try get(try client(alice), peer.port("OPTIONAL_NO_CA_PORT"), "/")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.certificateRequests.first?.acceptedCANames, [])
        let optional = try get(try client(), peer.port("OPTIONAL_PORT"), "/")
        XCTAssertTrue(String(decoding: optional.body, as: UTF8.self).contains("verify=NONE"))
    }

    func testApacheShiftJISPageBytesArriveIntact() throws {
        let peer = try peer(Self.apache13)
        let response = try get(try client(), peer.port(), "/sjis")
        XCTAssertEqual(response.headers["Content-Type"], "text/html; charset=Shift_JIS")
        XCTAssertNotNil(response.body.firstRange(of: Array("日本語".data(using: .shiftJIS) ?? Data())))
    }
}

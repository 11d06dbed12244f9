import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestServer
import MTLSTestSupport

/// A server-initiated TLS 1.2 renegotiation is a full handshake from our side: a server that
/// resumes sessions in renegotiations (Node.js, OpenSSL servers by default) still gets to send its
/// CertificateRequest and receives our certificate.
final class RenegotiationResumptionTests: XCTestCase {
    /// The IIS-like server with resumption in renegotiation allowed (`mtls serve --allow-renegotiation-resumption`).
    private func startResumingServer(allowsResumption: Bool = true) throws -> TestServer {
        let configuration = TLSServerConfiguration(
            certificate: try HTTPFixtures.certificates("server.pem")[0], privateKey: try HTTPFixtures.key("server.key"),
            chain: try HTTPFixtures.certificates("intermediate-ca.pem"), clientCAs: try HTTPFixtures.certificates("root-ca.pem") + HTTPFixtures.certificates("intermediate-ca.pem"),
            maximumVersion: .tls1_2, allowsResumptionInRenegotiation: allowsResumption)
        let server = try TestServer(configuration: TestServerConfiguration(tls: configuration, bindAddress: "127.0.0.1", port: 0))
        try server.start()
        return server
    }

    func testARenegotiationIsAFullHandshakeWhenTheServerWouldResume() throws {
        let server = try startResumingServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        let response = try client.send(HTTPRequest(method: "GET", url: try HTTPFixtures.url(server, "/secure"), headers: ["Connection": "close"]))
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
        XCTAssertEqual(response.tls.renegotiations, 1)
        XCTAssertEqual(response.tls.resumedRenegotiations, 0)
        let request = try XCTUnwrap(response.tls.certificateRequests.first, "no certificate request in the renegotiation")
        XCTAssertEqual(request.phase, .renegotiation)
        XCTAssertEqual(request.sentCertificate?.commonName, "client-alice")
        client.closeIdleConnections()
    }

    /// The switch is real: OpenSSL's own client (`s_client`, which answers a HelloRequest with an
    /// abbreviated handshake) is resumed and so sends no certificate; without the switch it does.
    func testTheServeSwitchLetsAResumingClientSkipTheCertificateRequest() throws {
        for allows in [true, false] {
            let server = try startResumingServer(allowsResumption: allows)
            defer { server.stop() }
            let script = """
                (printf 'GET /secure HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n'; sleep 1) | timeout 10 openssl s_client -quiet -tls1_2 -connect 127.0.0.1:\(server.boundPort) \
                -servername localhost -CAfile root-ca.pem -cert client-alice.pem -key client-alice.key 2>/dev/null | head -c 4000
                """
            let result = Subprocess.run("/bin/sh", ["-c", script], directory: HTTPFixtures.testCerts.path)
            if allows {
                XCTAssertTrue(result.stdout.contains("403.7"), "a resumed renegotiation carries no CertificateRequest: \(result.stdout)")
            } else {
                XCTAssertTrue(result.stdout.hasPrefix("HTTP/1.1 200"), "a full renegotiation gets the certificate: \(result.stdout)")
            }
        }
    }

    /// Node.js `req.socket.renegotiate({requestCert: true})` with default options (scripts/peers/node.sh).
    func testNodeRenegotiationPerPathGetsOurCertificate() throws {
        let peer = try InteropPeer("node.sh")
        defer { peer.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        for round in 0..<2 {
            let response = try client.send(
                HTTPRequest(method: "GET", url: try HTTPSURL("https://localhost:\(peer.port("RENEG_PORT"))/secure"), headers: ["Connection": "close"]))
            XCTAssertEqual(response.status, 200, "round \(round): \(String(decoding: response.body, as: UTF8.self))")
            XCTAssertEqual(response.tls.certificateRequests.first?.phase, .renegotiation)
            XCTAssertEqual(response.tls.resumedRenegotiations, 0)
        }
        client.closeIdleConnections()
    }
}

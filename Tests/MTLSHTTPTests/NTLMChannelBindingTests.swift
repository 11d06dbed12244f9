import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestSupport

/// IIS Extended Protection: the NTLMv2 response carries the TLS channel binding (RFC 5929
/// tls-server-end-point as MS-NLMP MsvAvChannelBindings), and the NTLM peer's /epa path (IIS
/// tokenChecking="Require") refuses a login without it, or with one for another certificate.
final class NTLMChannelBindingTests: XCTestCase {
    private func credentials(_ peer: LoginPeer) -> Credentials {
        Credentials(user: "\(peer["NTLM_DOMAIN"])\\\(peer["NTLM_USER"])", password: Secret(peer["NTLM_PASSWORD"]))
    }

    /// The end-point hash is openssl's SHA-256 over the DER of an ECDSA-with-SHA256 certificate.
    func testTheEndPointHashIsTheCertificatesSignatureHash() throws {
        let certificate = try HTTPFixtures.certificates("server.pem")[0]
        let script = "openssl x509 -in server.pem -outform DER | openssl dgst -sha256 -binary | od -An -v -tx1 | tr -d ' \\n'"
        let expected = Subprocess.run("/bin/sh", ["-c", script], directory: HTTPFixtures.testCerts.path).stdout
        XCTAssertEqual(expected.count, 64)
        XCTAssertEqual(AuthHash.hex(NTLM.tlsServerEndPoint(certificate)), expected)
        // P-384 server: still ECDSA-with-SHA256 or -SHA384; the hash follows the signature.
        let p384 = try HTTPFixtures.certificates("server-p384.pem")[0]
        XCTAssertEqual(NTLM.tlsServerEndPoint(p384).count, 32)
    }

    /// MD5 over the 20-byte gss_channel_bindings_struct header and the application data.
    func testTheBindingsHashAndTheAVPairInTheResponse() throws {
        let data = Array("tls-server-end-point:".utf8) + [UInt8](repeating: 0xAB, count: 32)
        let hash = NTLM.channelBindingsHash(applicationData: data)
        XCTAssertEqual(hash, AuthHash.md5([UInt8](repeating: 0, count: 16) + [UInt8(data.count), 0, 0, 0] + data))
        // targetInfo: MsvAvNbDomainName "D" then EOL; the binding goes before EOL, once.
        let info: [UInt8] = [2, 0, 2, 0, 0x44, 0, 0, 0, 0, 0]
        let bound = NTLM.targetInfo(NTLM.targetInfo(info, settingChannelBindings: hash), settingChannelBindings: hash)
        XCTAssertEqual(bound, [2, 0, 2, 0, 0x44, 0, 10, 0, 16, 0] + hash + [0, 0, 0, 0])
    }

    func testLoginWithTheBindingSucceedsWhereExtendedProtectionIsRequired() throws {
        guard OpenSSLInfo.legacyProviderAvailable else { throw XCTSkip("OpenSSL's legacy provider (MD4) is not installed") }
        let ntlm = try LoginPeers.shared.ntlm()
        for path in ["/epa", "/ntlm"] {
            let session = try LoginFixtures.session(credentials: credentials(ntlm))
            let result = try session.get("https://localhost:\(ntlm.port)\(path)")
            XCTAssertEqual(result.status, 200, "\(path): \(result.text.text)")
            XCTAssertEqual(LoginFixtures.fields(result.text.text)["channel_binding"], "yes", "the peer found the right binding")
            XCTAssertTrue(result.sentChannelBinding)
            XCTAssertEqual(result.hops.map { $0.channelBindingSent == true }, [false, false, true])
            XCTAssertTrue(result.hops.last?.description.contains("TLS channel binding sent") ?? false)
        }
    }

    /// The peer really checks: no binding, or the binding of another certificate, gets 401.
    func testAClientWithoutTheRightBindingGets401() throws {
        guard OpenSSLInfo.legacyProviderAvailable else { throw XCTSkip("OpenSSL's legacy provider (MD4) is not installed") }
        let ntlm = try LoginPeers.shared.ntlm()
        let other = NTLM.httpsChannelBindingsHash(serverCertificate: try HTTPFixtures.certificates("server-p384.pem")[0])
        for (bindings, refusal) in [(nil as [UInt8]?, "carries no TLS channel binding"), (other, "does not match")] {
            let client = try HTTPSClient(configuration: try LoginFixtures.configuration())
            defer { client.closeIdleConnections() }
            let url = try HTTPSURL("https://localhost:\(ntlm.port)/epa")
            let first = try client.send(HTTPRequest(url: url, headers: ["Authorization": "NTLM " + Data(NTLM.negotiateMessage()).base64EncodedString()]))
            XCTAssertEqual(first.status, 401)
            let token = try XCTUnwrap(first.headers.values("WWW-Authenticate").first { $0.hasPrefix("NTLM ") }).dropFirst(5)
            let challenge = try NTLM.Challenge(bytes: Array(try XCTUnwrap(Data(base64Encoded: String(token)))))
            let message = try NTLM.authenticateMessage(challenge: challenge, credentials: credentials(ntlm), channelBindings: bindings)
            let second = try client.send(HTTPRequest(url: url, headers: ["Authorization": "NTLM " + Data(message).base64EncodedString()]))
            XCTAssertEqual(second.status, 401)
            XCTAssertTrue(String(decoding: second.body, as: UTF8.self).contains(refusal), String(decoding: second.body, as: UTF8.self))
            XCTAssertTrue(second.reusedConnection)
        }
        // curl's NTLM sends no channel binding either.
        let curl = Subprocess.run(
            "/usr/bin/curl",
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", HTTPFixtures.path("root-ca.pem"), "--ntlm", "-u", "MTLS\\alice:x", "https://localhost:\(ntlm.port)/epa"])
        XCTAssertEqual(curl.stdout, "401")
    }

    /// `ntlm.sh --require-channel-binding`: /ntlm itself then requires the binding.
    func testThePeerSwitchRequiresTheBindingOnEveryPath() throws {
        guard OpenSSLInfo.legacyProviderAvailable else { throw XCTSkip("OpenSSL's legacy provider (MD4) is not installed") }
        let peer = try InteropPeer("ntlm/ntlm.sh", ["--require-channel-binding"])
        defer { peer.stop() }
        XCTAssertEqual(peer["EPA"], "1")
        let session = try LoginFixtures.session(
            credentials: Credentials(user: "\(peer["NTLM_DOMAIN"])\\\(peer["NTLM_USER"])", password: Secret(peer["NTLM_PASSWORD"])))
        let result = try session.get("https://localhost:\(peer["PORT"])/ntlm")
        XCTAssertEqual(result.status, 200, result.text.text)
        XCTAssertTrue(result.sentChannelBinding)
        let curl = Subprocess.run(
            "/usr/bin/curl", ["-s", "--cacert", HTTPFixtures.path("root-ca.pem"), "--ntlm", "-u", "MTLS\\alice:x", "https://localhost:\(peer["PORT"])/ntlm"])
        XCTAssertTrue(curl.stdout.contains("carries no TLS channel binding"), curl.stdout)
    }
}

import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestServer
import MTLSTestSupport

/// The TLS transport and HTTP client against a real server: the in-process IIS-like `TestServer`
/// (an OpenSSL server of this package) and `openssl s_server` as an independent peer.
final class TransportTests: XCTestCase {
    private var descriptorsAtStart = 0

    override func setUp() {
        descriptorsAtStart = HTTPFixtures.openDescriptorCount()
    }

    private func get(_ client: HTTPSClient, _ server: TestServer, _ path: String, method: String = "GET", body: [UInt8]? = nil, expectsContinue: Bool = false) throws
        -> HTTPResponse
    {
        try client.send(HTTPRequest(method: method, url: try HTTPFixtures.url(server, path), body: body, expectsContinue: expectsContinue))
    }

    func testTLS12PerPathCertificateIsRequestedAfterTheRequestByRenegotiation() throws {
        let server = try HTTPFixtures.startServer(maximumVersion: .tls1_2)
        defer { server.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        let response = try get(client, server, "/secure")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.version, "TLSv1.2")
        let request = try XCTUnwrap(response.tls.certificateRequests.first)
        XCTAssertEqual(request.phase, .renegotiation)
        XCTAssertEqual(request.sentCertificate?.commonName, "client-alice")
        XCTAssertTrue(request.acceptedCANames.contains("CN=mtls Test Root CA,O=mtls test,C=US"))
        XCTAssertEqual(response.tls.renegotiations, 1)
        XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("subject: CN=client-alice"))
        client.closeIdleConnections()
    }

    func testTLS13PerPathCertificateIsRequestedByPostHandshakeAuth() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-legacy-rc2.p12")
        let response = try get(client, server, "/secure")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.version, "TLSv1.3")
        XCTAssertEqual(response.tls.certificateRequests.map(\.phase), [.postHandshake])
        XCTAssertEqual(response.tls.renegotiations, 0)
        client.closeIdleConnections()
    }

    func testNoIdentityGets403Point7OnBothVersions() throws {
        for version in [TLSVersion.tls1_2, .tls1_3] {
            let server = try HTTPFixtures.startServer(maximumVersion: version)
            defer { server.stop() }
            let client = try HTTPFixtures.client()
            let response = try get(client, server, "/secure")
            XCTAssertEqual(response.status, 403, "\(version)")
            XCTAssertEqual(response.headers["X-MTLS-Substatus"], "403.7")
            XCTAssertTrue(String(decoding: response.body, as: UTF8.self).contains("HTTP Error 403.7"))
            XCTAssertEqual(response.tls.certificateRequests.first?.hadNoIdentity, true)
            XCTAssertNil(response.tls.certificateRequests.first?.sentCertificate)
            client.closeIdleConnections()
        }
    }

    func testTheIdentityIssuedByAnAcceptedCAIsChosenAmongSeveral() throws {
        let server = try HTTPFixtures.startServer(maximumVersion: .tls1_2)
        defer { server.stop() }
        let other = try ClientIdentity.files(certificatePath: HTTPFixtures.path("client-other.pem"), keyPath: HTTPFixtures.path("client-other.key"))
        let alice = try ClientIdentity.pkcs12(path: HTTPFixtures.path("p12/client-alice-modern.p12"), password: "mtls")
        let configuration = TLSClientConfiguration(
            trust: TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime), identities: [other, alice])
        let client = try HTTPSClient(configuration: configuration)
        let response = try get(client, server, "/secure")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.certificateRequests.first?.sentCertificate?.commonName, "client-alice", "the second identity fits the CA names")
        XCTAssertEqual(response.tls.certificateRequests.first?.identityFits, true)
        client.closeIdleConnections()
    }

    func testBodiesCanStreamToASinkInsteadOfMemory() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client()
        let collected = LogLines()
        let response = try client.send(HTTPRequest(url: try HTTPFixtures.url(server, "/sjis")), bodySink: { chunk in collected.append(String(chunk.count)) })
        XCTAssertTrue(response.body.isEmpty, "nothing is kept in memory when a sink is given")
        XCTAssertEqual(collected.lines.compactMap(Int.init).reduce(0, +), response.wireBodyLength)
        XCTAssertGreaterThan(response.wireBodyLength, 0)
        client.closeIdleConnections()
    }

    func testHandshakeTimeRequestIsRecordedAsSuch() throws {
        let server = try HTTPFixtures.startServer(atHandshake: true)
        defer { server.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-3des.p12")
        let response = try get(client, server, "/secure")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.certificateRequests.map(\.phase), [.handshake])
        client.closeIdleConnections()
    }

    func testServerWithoutCANamesIsSeenSendingNone() throws {
        let server = try HTTPFixtures.startServer(maximumVersion: .tls1_2, sendsCANames: false)
        defer { server.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        let response = try get(client, server, "/secure")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.certificateRequests.first?.acceptedCANames, [])
        XCTAssertEqual(response.tls.certificateRequests.first?.identityFits, true)
        client.closeIdleConnections()
    }

    func testUntrustedAndExpiredClientCertificatesGet403Point16And403Point17() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let cases: [(String, String, String)] = [("client-other.pem", "client-other.key", "403.16"), ("client-alice-expired.pem", "client-alice-expired.key", "403.17")]
        for (cert, key, expected) in cases {
            let identity = try ClientIdentity.files(certificatePath: HTTPFixtures.path(cert), keyPath: HTTPFixtures.path(key))
            let configuration = TLSClientConfiguration(
                trust: TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime), identities: [identity])
            let client = try HTTPSClient(configuration: configuration)
            let response = try get(client, server, "/secure")
            XCTAssertEqual(response.status, 403, cert)
            XCTAssertEqual(response.headers["X-MTLS-Substatus"], expected, cert)
            client.closeIdleConnections()
        }
    }

    func testHTTPSysModeAnswersTLS13PerPathRequestsWith0x80070032AndTLS12Works() throws {
        let server = try HTTPFixtures.startServer(httpSys: true)
        defer { server.stop() }
        let tls13 = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        let failed = try get(tls13, server, "/secure")
        XCTAssertEqual(failed.status, 500)
        XCTAssertTrue(String(decoding: failed.body, as: UTF8.self).contains("0x80070032"))
        let tls12 = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12", maximumVersion: .tls1_2)
        XCTAssertEqual(try get(tls12, server, "/secure").status, 200)
        tls12.closeIdleConnections()
    }

    func testTLS13ClientWithoutPostHandshakeAuthGets403Point7() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12", offersPHA: false)
        let response = try get(client, server, "/secure")
        XCTAssertEqual(response.status, 403)
        XCTAssertTrue(response.tls.certificateRequests.isEmpty)
        client.closeIdleConnections()
    }

    func testUntrustedServerFailsInTheHandshakeWithTheReasonAndInsecureModeRecordsIt() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let strict = try HTTPSClient(
            configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: try HTTPFixtures.certificates("other-root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime)))
        XCTAssertThrowsError(try get(strict, server, "/")) { error in
            let failure = error as? HTTPSError
            XCTAssertEqual(failure?.phase, .serverCertificate)
            XCTAssertEqual(failure?.trust?.isTrusted, false)
            XCTAssertTrue(failure?.message.contains("not trusted") ?? false, "\(error)")
        }
        let insecure = try HTTPSClient(
            configuration: TLSClientConfiguration(
                trust: TrustPolicy(anchors: try HTTPFixtures.certificates("other-root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime), continuesOnTrustFailure: true))
        let response = try get(insecure, server, "/")
        XCTAssertEqual(response.status, 200)
        XCTAssertFalse(response.tls.overriddenProblems.isEmpty)
        insecure.closeIdleConnections()
    }

    func testWrongHostNameIsRefusedBySANMatching() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client(options: HTTPClientOptions(connectTo: ["wrong.example.com": ("127.0.0.1", server.boundPort)]))
        XCTAssertThrowsError(try client.send(HTTPRequest(url: try HTTPSURL("https://wrong.example.com:\(server.boundPort)/")))) { error in
            XCTAssertEqual((error as? HTTPSError)?.phase, .serverCertificate)
            XCTAssertTrue((error as? HTTPSError)?.message.contains("not for wrong.example.com") ?? false, "\(error)")
        }
    }

    func testPinMismatchListsExpectedAndPresentedPins() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let wrong = try Pin(parsing: "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        let configuration = TLSClientConfiguration(
            trust: TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime), pins: PinSet(pins: [wrong]))
        let client = try HTTPSClient(configuration: configuration)
        XCTAssertThrowsError(try get(client, server, "/")) { error in
            let message = (error as? HTTPSError)?.message ?? ""
            XCTAssertTrue(message.contains("expected one of sha256/AAAA"), message)
            XCTAssertTrue(message.contains((try? HTTPFixtures.certificates("server.pem")[0].spkiPin) ?? "?"), message)
        }
        let right = Pin.publicKey(of: try HTTPFixtures.certificates("intermediate-ca.pem")[0])
        let pinned = try HTTPSClient(
            configuration: TLSClientConfiguration(
                trust: TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime), pins: PinSet(pins: [right])))
        XCTAssertEqual(try get(pinned, server, "/").status, 200)
        pinned.closeIdleConnections()
    }

    func testAPinDocumentIsEnforcedForItsHostOnlyAndReportOnlyNeverRefuses() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let wrong = try Pin(parsing: "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        let trust = TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime)
        func document(_ host: String, enforced: Bool = true) -> PinDocument {
            PinDocument(
                format: "test", domains: [PinDomain(pattern: host, matching: .domain, requirements: [PinRequirement(scope: .chain, pins: [wrong])], enforced: enforced)])
        }
        // The server is reached as localhost: a document pinning another host does not apply.
        let elsewhere = try HTTPSClient(configuration: TLSClientConfiguration(trust: trust, pinning: document("api.example.com")))
        let response = try get(elsewhere, server, "/")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.pinEvaluation?.verdict, .notPinned)
        elsewhere.closeIdleConnections()

        let enforced = try HTTPSClient(configuration: TLSClientConfiguration(trust: trust, pinning: document("localhost")))
        XCTAssertThrowsError(try get(enforced, server, "/")) { error in
            let message = (error as? HTTPSError)?.message ?? ""
            XCTAssertTrue(message.contains("no pin matched for localhost"), message)
        }

        let reportOnly = try HTTPSClient(configuration: TLSClientConfiguration(trust: trust, pinning: document("localhost", enforced: false)))
        let reported = try get(reportOnly, server, "/")
        XCTAssertEqual(reported.status, 200)
        XCTAssertEqual(reported.tls.pinEvaluation?.verdict, .drift)
        XCTAssertEqual(reported.tls.pinEvaluation?.refusesConnection, false)
        reportOnly.closeIdleConnections()
    }

    func testKeepAliveReusesTheConnectionAndSessionsResume() throws {
        for version in [TLSVersion.tls1_2, .tls1_3] {
            let server = try HTTPFixtures.startServer(maximumVersion: version)
            defer { server.stop() }
            let client = try HTTPFixtures.client()
            let first = try get(client, server, "/")
            let second = try get(client, server, "/")
            XCTAssertFalse(first.reusedConnection)
            XCTAssertTrue(second.reusedConnection, "\(version)")
            client.closeIdleConnections()
            let third = try get(client, server, "/")
            XCTAssertFalse(third.reusedConnection)
            XCTAssertTrue(third.tls.resumed, "\(version): a new connection resumes the session")
            client.closeIdleConnections()
        }
    }

    func testBodySentWithExpectContinueSurvivesRenegotiationAndALargeBodyWithoutItIsRefused() throws {
        let server = try HTTPFixtures.startServer(maximumVersion: .tls1_2)
        defer { server.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        let large = [UInt8](repeating: 0x61, count: 200_000)
        XCTAssertEqual(try get(client, server, "/secure", method: "POST", body: large, expectsContinue: true).status, 200)
        client.closeIdleConnections()
        // A resumed session keeps its client certificate (as IIS does), so use a client with no session.
        let fresh = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        let refused = try get(fresh, server, "/secure", method: "POST", body: large, expectsContinue: false)
        XCTAssertEqual(refused.status, 413)
        fresh.closeIdleConnections()
    }

    func testAsyncRequestIsCancelledPromptly() async throws {
        // A TCP listener that never answers the TLS handshake.
        let (listener, port) = try TCP.listen(address: "127.0.0.1", port: 0)
        defer { listener.close() }
        let client = try HTTPSClient(
            configuration: TLSClientConfiguration(
                trust: TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem")),
                timeouts: Timeouts(connect: .seconds(30), handshake: .seconds(30), idleRead: .seconds(30), total: .seconds(30))))
        let started = Date()
        let task = Task { try await client.send(HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(port)/"))) }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("the request should not succeed")
        } catch let error as HTTPSError {
            XCTAssertEqual(error.phase, .cancelled)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "cancellation must not wait for the 30 s timeout")
    }

    func testOpenSSLServerRequiringACertificateInTheHandshakeIsAnsweredWithTheIdentity() throws {
        let peer = try OpenSSLServer(["-naccept", "20", "-www", "-Verify", "2", "-CAfile", SupportFixtures.path("root-ca.pem"), "-verify_return_error"])
        defer { peer.stop() }
        let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
        let response = try client.send(HTTPRequest(url: try HTTPSURL("https://localhost:\(peer.port)/")))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.certificateRequests.map(\.phase), [.handshake])
        XCTAssertEqual(response.tls.certificateRequests.first?.sentCertificate?.commonName, "client-alice")
        client.closeIdleConnections()
        let anonymous = try HTTPFixtures.client()
        XCTAssertThrowsError(try anonymous.send(HTTPRequest(url: try HTTPSURL("https://localhost:\(peer.port)/")))) { error in
            let failure = error as? HTTPSError
            XCTAssertEqual(failure?.report?.certificateRequests.first?.hadNoIdentity, true, "\(error)")
        }
    }

    func testTLS10OnlyServerIsRefusedUnlessAskedFor() throws {
        let peer = try OpenSSLServer(["-naccept", "20", "-www", "-tls1", "-cipher", "DEFAULT@SECLEVEL=0"])
        defer { peer.stop() }
        let client = try HTTPFixtures.client()
        XCTAssertThrowsError(try client.send(HTTPRequest(url: try HTTPSURL("https://localhost:\(peer.port)/")))) { error in
            XCTAssertEqual((error as? HTTPSError)?.phase, .tlsHandshake, "\(error)")
        }
    }

    /// A connection waiting for its answer holds no read buffer: the async read sizes the
    /// caller's buffer only once the socket is readable (a fleet has a thousand such waits).
    func testAnAsyncReadWaitingForItsAnswerMakesNoBuffer() async throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client()
        // An unfinished head: the server waits for the rest and never answers.
        let waiting = try await client.tls.connect(host: "localhost", port: server.boundPort)
        defer { waiting.close() }
        try await waiting.write(Array("GET / HTTP/1.1\r\nHost: localhost\r\n".utf8), deadline: .after(.seconds(5)))
        var empty: [UInt8] = []
        var phase: HTTPSError.Phase? = nil
        do throws(HTTPSError) {
            _ = try await waiting.read(into: &empty, deadline: .after(.milliseconds(300)), idle: nil)
        } catch {
            phase = error.phase
        }
        XCTAssertEqual(phase, .timeout)
        XCTAssertEqual(empty.capacity, 0, "the read made a buffer while it waited")
        // A whole request is answered: the same read sizes the buffer once the answer is there.
        let answered = try await client.tls.connect(host: "localhost", port: server.boundPort)
        defer { answered.close() }
        try await answered.write(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), deadline: .after(.seconds(5)))
        var buffer: [UInt8] = []
        let n = try await answered.read(into: &buffer, deadline: .after(.seconds(10)), idle: nil)
        XCTAssertGreaterThan(n, 0)
        XCTAssertEqual(buffer.count, 16384)
    }

    /// Clients sharing a context (`probe --targets`) share the SSL_CTX and trust evaluators, not
    /// sessions or connections: each resumes only its own session.
    func testClientsSharingAContextKeepTheirOwnSessionsAndConnections() throws {
        let server = try HTTPFixtures.startServer(maximumVersion: .tls1_3)
        defer { server.stop() }
        let first = try HTTPFixtures.client()
        let second = HTTPSClient(sharingContextWith: first)
        XCTAssertTrue(second.tls.sharesContext(with: first.tls))
        XCTAssertFalse(try HTTPFixtures.client().tls.sharesContext(with: first.tls))
        let a = try get(first, server, "/")
        XCTAssertEqual(a.status, 200)
        XCTAssertEqual(a.tls.trust?.isTrusted, true)
        first.closeIdleConnections()
        let b = try get(second, server, "/")
        XCTAssertEqual(b.status, 200)
        XCTAssertEqual(b.tls.trust?.isTrusted, true)
        XCTAssertFalse(b.reusedConnection, "a connection of another client was reused")
        XCTAssertFalse(b.tls.resumed, "a session of another client was resumed")
        second.closeIdleConnections()
        let c = try get(first, server, "/")
        XCTAssertTrue(c.tls.resumed, "the client's own session resumes")
        first.closeIdleConnections()
    }

    /// An error is one reference (its fields are boxed): every `try await` of a
    /// `throws(HTTPSError)` function keeps room for one in the caller's task frame. And the box
    /// is copied on write: a copy changed does not change the original.
    func testAnErrorIsOneReferenceAndCopiesOnWrite() {
        XCTAssertEqual(MemoryLayout<HTTPSError>.size, MemoryLayout<Int>.size)
        let original = HTTPSError(.io, host: "a.test:443", "first", alert: "bad record mac")
        var copy = original
        copy.message = "second"
        copy.host = "b.test:443"
        copy.report = TLSSessionReport(host: "b.test", port: 443)
        XCTAssertEqual(original.message, "first")
        XCTAssertEqual(original.host, "a.test:443")
        XCTAssertNil(original.report)
        XCTAssertEqual(copy.message, "second")
        XCTAssertEqual(copy.alert, "bad record mac")
        XCTAssertEqual(copy.report?.host, "b.test")
    }

    func testNoDescriptorIsLeftOpen() throws {
        let before = HTTPFixtures.openDescriptorCount()
        do {
            let server = try HTTPFixtures.startServer(maximumVersion: .tls1_2)
            let client = try HTTPFixtures.client(identity: "p12/client-alice-modern.p12")
            for path in ["/", "/secure", "/optional", "/nothing"] { _ = try get(client, server, path) }
            let anonymous = try HTTPFixtures.client()
            _ = try get(anonymous, server, "/secure")
            XCTAssertThrowsError(try anonymous.send(HTTPRequest(url: try HTTPSURL("https://localhost:1/"))))
            client.closeIdleConnections()
            anonymous.closeIdleConnections()
            server.stop()
        }
        usleep(200_000)
        XCTAssertEqual(HTTPFixtures.openDescriptorCount(), before)
    }
}

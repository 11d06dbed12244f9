import COpenSSL
import Foundation
import MTLSTrust
import XCTest

@testable import MTLSHTTP
import MTLSTestServer
import MTLSTestSupport

/// The client against a scripted hostile server on loopback (``HostileServer``): every scenario
/// must end in a clear ``HTTPSError`` — the phase and a fragment of the message are asserted —
/// within a bound derived from the configured timeouts, without a crash, and with every file
/// descriptor closed again (checked after each test in `tearDown`).
final class HostileServerTests: XCTestCase {
    /// Short timeouts, so that "no hang" is proven quickly.
    static let timeouts = Timeouts(connect: .seconds(3), handshake: .seconds(3), idleRead: .seconds(2), total: .seconds(8))
    /// The longest any one exchange may take: twice the total deadline plus slack for a loaded machine.
    static let bound = timeouts.total.inSeconds * 2 + 5

    private var descriptorsAtStart = 0

    override class func setUp() {
        super.setUp()
        // Warm up lazily opened descriptors (resolver, OpenSSL configuration) before counting.
        if let server = try? HostileServer(script: { connection in
            guard connection.handshake(), connection.readRequest() != nil else { return }
            connection.respond(text: "warm")
            connection.awaitClose(2)
        }), let client = try? HostileServerTests.makeClient() {
            _ = try? client.send(HTTPRequest(url: try server.url()))
            client.closeIdleConnections()
            server.stop()
        }
    }

    override func setUp() {
        super.setUp()
        descriptorsAtStart = HTTPFixtures.openDescriptorCount()
    }

    override func tearDown() {
        // Every server is stopped and every client released by now; give the kernel a moment.
        var now = HTTPFixtures.openDescriptorCount()
        let deadline = Date().addingTimeInterval(2)
        while now != descriptorsAtStart && Date() < deadline {
            usleep(20_000)
            now = HTTPFixtures.openDescriptorCount()
        }
        XCTAssertEqual(now, descriptorsAtStart, "file descriptors left open: \(openDescriptors())")
        super.tearDown()
    }

    private func openDescriptors() -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { "\($0)→\((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "?")" }
            .joined(separator: ", ")
    }

    // MARK: Helpers

    static func makeClient(
        timeouts: Timeouts = HostileServerTests.timeouts, minimumVersion: TLSVersion? = .tls1_2, identities: [ClientIdentity] = [], anchors: String = "root-ca.pem",
        options: HTTPClientOptions = HTTPClientOptions()
    ) throws -> HTTPSClient {
        let configuration = TLSClientConfiguration(
            trust: TrustPolicy(anchors: try HTTPFixtures.certificates(anchors), evaluationTime: HTTPFixtures.fixedTime), identities: identities,
            minimumVersion: minimumVersion, timeouts: timeouts)
        return try HTTPSClient(configuration: configuration, options: options)
    }

    private func client(
        timeouts: Timeouts = HostileServerTests.timeouts, minimumVersion: TLSVersion? = .tls1_2, identities: [ClientIdentity] = [],
        options: HTTPClientOptions = HTTPClientOptions()
    ) throws -> HTTPSClient {
        try Self.makeClient(timeouts: timeouts, minimumVersion: minimumVersion, identities: identities, options: options)
    }

    /// Runs `operation`, which must throw an ``HTTPSError`` of `phase` whose message contains
    /// `fragment`, within `bound` seconds.
    @discardableResult
    private func expectError(
        _ phase: HTTPSError.Phase, _ fragment: String, bound: Double = HostileServerTests.bound, file: StaticString = #filePath, line: UInt = #line, _ operation: () throws -> Void
    ) -> HTTPSError? {
        let started = Date()
        do {
            try operation()
            XCTFail("expected a \(phase.rawValue) error containing '\(fragment)', but the exchange succeeded", file: file, line: line)
            return nil
        } catch let error as HTTPSError {
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertEqual(error.phase, phase, "\(error)", file: file, line: line)
            XCTAssertTrue(error.message.contains(fragment), "the message \"\(error.message)\" lacks \"\(fragment)\"", file: file, line: line)
            XCTAssertLessThan(elapsed, bound, "took \(elapsed) s: \(error)", file: file, line: line)
            return error
        } catch {
            XCTFail("not an HTTPSError: \(error)", file: file, line: line)
            return nil
        }
    }

    /// A TLS server that reads one request and then runs `then`.
    private func serverAnswering(_ options: HostileTLSOptions? = nil, _ then: @escaping @Sendable (HostileConnection) -> Void) throws -> HostileServer {
        try HostileServer(tls: try options ?? HostileTLSOptions.standard()) { connection in
            guard connection.handshake(), connection.readRequest() != nil else { return }
            then(connection)
        }
    }

    /// A TLS server that answers one request with `bytes` verbatim and sends close_notify.
    private func serverSending(_ bytes: [UInt8], closeNotify: Bool = true) throws -> HostileServer {
        try serverAnswering { connection in
            connection.send(bytes)
            if closeNotify { connection.closeNotify() }
            connection.awaitClose(5)
        }
    }

    private func serverSending(_ text: String) throws -> HostileServer { try serverSending(Array(text.utf8)) }

    private func get(_ client: HTTPSClient, _ server: HostileServer, _ path: String = "/", method: String = "GET", headers: HTTPHeaders = [:], body: [UInt8]? = nil) throws {
        _ = try client.send(HTTPRequest(method: method, url: try server.url(path), headers: headers, body: body))
    }

    private static func options(maximumVersion: Int32) throws -> HostileTLSOptions {
        var options = try HostileTLSOptions.standard()
        options.maximumVersion = maximumVersion
        return options
    }

    // MARK: Redirects and authentication (LoginSession)

    func testRedirectLoopEndsWithARedirectErrorAtTheLimit() throws {
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            var hop = 0
            while connection.readRequest() != nil {
                hop += 1
                connection.respond("302 Found", headers: ["Location: /loop/\(hop % 2)"])
            }
        }
        defer { server.stop() }
        let session = LoginSession(client: try client(), options: LoginOptions(maximumRedirects: 5))
        expectError(.redirect, "more than 5 redirects", bound: 7 * Self.bound) {
            _ = try session.send(HTTPRequest(url: try server.url("/loop/0")))
        }
        XCTAssertEqual(server.requestHeads.count, 6, "the first request and five redirects, no more")
        XCTAssertEqual(session.hops.count, 6)
    }

    func testCredentialsAreDroppedOnACrossOriginRedirectAndTheOtherOriginsChallengeIsRefused() throws {
        let other = try HostileServer { connection in
            guard connection.handshake() else { return }
            while connection.readRequest() != nil {
                connection.respond("401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"phish\""], text: "give me your password")
            }
        }
        defer { other.stop() }
        let otherURL = try other.url("/collect", host: "localhost")
        let first = try HostileServer { connection in
            guard connection.handshake() else { return }
            while connection.readRequest() != nil {
                connection.respond("302 Found", headers: ["Location: \(otherURL)"])
            }
        }
        defer { first.stop() }
        let session = LoginSession(client: try client(), options: LoginOptions(credentials: Credentials(user: "alice", password: "hunter2")))
        let request = HTTPRequest(
            url: try first.url("/start"), headers: ["Authorization": "Bearer top-secret", "Cookie": "session=abc", "X-Api-Key": "k"], firstOriginOnlyHeaders: ["X-Api-Key"])
        expectError(.auth, "only https://127.0.0.1:\(first.port) may receive them", bound: 3 * Self.bound) {
            _ = try session.send(request)
        }
        let leaked = other.requestHeads.joined(separator: "\n").lowercased()
        XCTAssertEqual(other.requestHeads.count, 1, "the other origin is asked once and never answered")
        for secret in ["authorization", "top-secret", "session=abc", "x-api-key", "hunter2", "basic "] {
            XCTAssertFalse(leaked.contains(secret), "the other origin received \(secret): \(leaked)")
        }
        XCTAssertEqual(Set(session.hops.last?.droppedHeaders ?? []), ["Authorization", "Cookie", "X-Api-Key"])
    }

    func test401LoopEndsAfterOneAnswer() throws {
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            while connection.readRequest() != nil {
                connection.respond("401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"loop\""])
            }
        }
        defer { server.stop() }
        let session = LoginSession(client: try client(), options: LoginOptions(credentials: Credentials(user: "alice", password: "wrong")))
        expectError(.auth, "401 again after one answer", bound: 3 * Self.bound) {
            _ = try session.send(HTTPRequest(url: try server.url("/private")))
        }
        XCTAssertEqual(server.requestHeads.count, 2, "the challenge is answered once, never in a loop")
    }

    func testStaleDigestNonceIsRetriedOnceAndThenRefused() throws {
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            var round = 0
            while connection.readRequest() != nil {
                round += 1
                let stale = round > 1 ? ", stale=true" : ""
                connection.respond("401 Unauthorized", headers: ["WWW-Authenticate: Digest realm=\"r\", qop=\"auth\", algorithm=SHA-256, nonce=\"n\(round)\"\(stale)"])
            }
        }
        defer { server.stop() }
        let session = LoginSession(client: try client(), options: LoginOptions(credentials: Credentials(user: "alice", password: "secret")))
        expectError(.auth, "refused the Digest credentials", bound: 4 * Self.bound) {
            _ = try session.send(HTTPRequest(url: try server.url("/digest")))
        }
        XCTAssertEqual(server.requestHeads.count, 3, "first request, one answer, one stale retry: \(server.requestHeads)")
        XCTAssertTrue(server.requestHeads.last?.contains("nonce=\"n2\"") ?? false, "the retry uses the new nonce")
    }

    func testTracesNeverShowTheSecretsOfAFailedLogin() throws {
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            guard connection.readRequest() != nil else { return }
            connection.respond("302 Found", headers: ["Location: /private", "Set-Cookie: sid=COOKIE-SECRET-1; Path=/; Secure"])
            while connection.readRequest() != nil {
                connection.respond("401 Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"r\"", "Set-Cookie: sid=COOKIE-SECRET-2; Path=/; Secure"])
            }
        }
        defer { server.stop() }
        let lines = TraceLines()
        let client = try client(options: HTTPClientOptions(trace: { lines.append($0) }))
        let session = LoginSession(
            client: client, options: LoginOptions(credentials: Credentials(user: "alice", password: "PASSWORD-SECRET"), trace: { lines.append($0) }))
        expectError(.auth, "401 again after one answer", bound: 4 * Self.bound) {
            _ = try session.send(HTTPRequest(url: try server.url("/start"), headers: ["Cookie": "token=TOKEN-SECRET"]))
        }
        let trace = lines.text
        XCTAssertTrue(trace.contains("[redacted]"), trace)
        let basic = Data("alice:PASSWORD-SECRET".utf8).base64EncodedString()
        for secret in ["PASSWORD-SECRET", basic, "TOKEN-SECRET", "COOKIE-SECRET-1", "COOKIE-SECRET-2"] {
            XCTAssertFalse(trace.contains(secret), "the trace shows \(secret):\n\(trace)")
        }
        XCTAssertTrue(server.requestHeads.contains { $0.contains(basic) }, "the password did go to the server that asked")
    }

    func testSelfPostingSAMLFormLoopEndsAtTheFormLimit() throws {
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            while connection.readRequest() != nil {
                let page =
                    "<html><body onload=\"document.forms[0].submit()\"><form method=\"post\" action=\"/acs\"><input type=\"hidden\" name=\"SAMLResponse\" value=\"PHNhbWw+\"/></form></body></html>"
                connection.respond(headers: ["Content-Type: text/html; charset=utf-8"], text: page)
            }
        }
        defer { server.stop() }
        let session = LoginSession(client: try client(), options: LoginOptions(submitsPostBindingForms: true, maximumFormSubmissions: 3))
        expectError(.redirect, "more than 3 POST-binding forms", bound: 5 * Self.bound) {
            _ = try session.send(HTTPRequest(url: try server.url("/sso")))
        }
        XCTAssertEqual(server.requestHeads.count, 4)
    }

    func testRedirectToPlainHTTPIsRefused() throws {
        let server = try serverAnswering { connection in
            connection.respond("301 Moved Permanently", headers: ["Location: http://127.0.0.1:1/downgrade"])
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let session = LoginSession(client: try client())
        expectError(.redirect, "would leave TLS") { _ = try session.send(HTTPRequest(url: try server.url())) }
    }

    func testMalformedRedirectLocationIsAURLError() throws {
        let server = try serverAnswering { connection in
            connection.respond("302 Found", headers: ["Location: https://[::1/unclosed"])
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let session = LoginSession(client: try client())
        expectError(.url, "no closing bracket") { _ = try session.send(HTTPRequest(url: try server.url())) }
    }

    // MARK: Oversized and malformed heads

    func testOneMebibyteHeaderLineIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: 1 << 20) + "\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "longer than 65536 bytes") { try get(client, server) }
    }

    func testOneHundredThousandHeadersAreRefused() throws {
        var head = "HTTP/1.1 200 OK\r\n"
        head.reserveCapacity(1_200_000)
        for index in 0..<100_000 { head += "X-\(index): v\r\n" }
        let server = try serverSending(head + "Content-Length: 0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "more than 1000 header fields") { try get(client, server) }
    }

    func testHeadersLargerThanTheirBudgetAreRefused() throws {
        let line = "X-Filler: " + String(repeating: "f", count: 4000) + "\r\n"
        let server = try serverSending("HTTP/1.1 200 OK\r\n" + String(repeating: line, count: 100) + "\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "headers are larger than 262144 bytes") { try get(client, server) }
    }

    func testHeaderValueWithABareCRIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nX-Smuggle: a\rSet-Cookie: injected=1\r\nContent-Length: 0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "a header field is malformed") { try get(client, server) }
    }

    func testHeaderValueWithANULIsRefused() throws {
        let server = try serverSending(Array("HTTP/1.1 200 OK\r\nX-Nul: a".utf8) + [0] + Array("b\r\nContent-Length: 0\r\n\r\n".utf8))
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "a header field is malformed") { try get(client, server) }
    }

    /// Obsolete line folding is read as RFC 9112 5.2 tells a user agent to read it (as curl and
    /// browsers do): the folded line continues the previous value, after one space. A fold that
    /// would continue a field framing the body is refused: it could be read two ways.
    func testObsoleteLineFoldingContinuesTheValueUnlessItFramesTheBody() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nX-Folded: a\r\n Content-Length: 5\r\nContent-Length: 2\r\n\r\nok")
        defer { server.stop() }
        let client = try client()
        let response = try client.send(HTTPRequest(method: "GET", url: try server.url("/")))
        XCTAssertEqual(response.headers["X-Folded"], "a Content-Length: 5")
        XCTAssertEqual(response.body, Array("ok".utf8))

        let framing = try serverSending("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n 5\r\n\r\nhello")
        defer { framing.stop() }
        expectError(.httpParse, "a header field is malformed") { try get(client, framing) }
    }

    func testRequestSideRefusesCRLFInjectionBeforeSendingAnything() throws {
        let server = try serverAnswering { connection in
            connection.respond(text: "should never be asked")
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.request, "header injection refused") {
            try get(client, server, headers: ["X-Name": "alice\r\nX-Admin: true"])
        }
        expectError(.request, "header injection refused") {
            try get(client, server, headers: ["X-Name": "alice\nX-Admin: true"])
        }
        expectError(.request, "is not a valid HTTP token") {
            try get(client, server, method: "GET / HTTP/1.1\r\nX-Admin: true\r\n\r\nGET")
        }
        // A URL is read as a browser reads it: its line breaks are dropped and its space encoded,
        // so no line of its own reaches the request; a target set by hand with one is refused.
        XCTAssertEqual(try HTTPSURL("https://127.0.0.1:\(server.port)/a\r\nX-Admin: true").target, "/aX-Admin:%20true")
        var handMade = try HTTPSURL("https://127.0.0.1:\(server.port)/")
        handMade.target = "/a\r\nX-Admin: true"
        expectError(.request, "white space or control characters") { _ = try client.send(HTTPRequest(url: handMade)) }
        XCTAssertEqual(server.requestHeads, [], "nothing reached the server")
    }

    func testBadStatusLineIsRefused() throws {
        let server = try serverSending("HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "the status line is not HTTP/1.x") { try get(client, server) }
    }

    func testHTTP2StatusLineIsRefused() throws {
        let server = try serverSending("HTTP/2 200\r\ncontent-length: 0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "the status line is not HTTP/1.x") { try get(client, server) }
    }

    func testHTTP09ResponseIsRefused() throws {
        let server = try serverSending("<html><body>It works (HTTP/0.9)</body></html>\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "the status line is not HTTP/1.x") { try get(client, server) }
    }

    func testNonHTTPGarbageIsRefused() throws {
        var generator = SplitMix64(seed: 9)
        let garbage = (0..<4096).map { _ in UInt8(truncatingIfNeeded: generator.next()) } + [0x0A]
        let server = try serverSending(garbage)
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "the status line is not HTTP/1.x") { try get(client, server) }
    }

    func testEmptyResponseIsReportedAsNoResponse() throws {
        let server = try serverSending([])
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "no response at all") { try get(client, server) }
    }

    func testInformationalFloodIsRefused() throws {
        let server = try serverAnswering { connection in
            let continues = Array(String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 1000).utf8)
            for _ in 0..<100 where connection.send(continues) {}
            connection.awaitClose(10)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "informational") { try get(client, server) }
    }

    // MARK: Framing of the body

    func testTwoDifferentContentLengthsAreRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 50\r\n\r\nhello")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "two different Content-Length values") { try get(client, server) }
    }

    func testContentLengthOverflowIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999999\r\n\r\nhello")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "is not a number") { try get(client, server) }
    }

    func testNegativeContentLengthIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nhello")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "is not a number") { try get(client, server) }
    }

    func testChunkSizeOverflowIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "a chunk size is too large") { try get(client, server) }
    }

    func testMalformedChunkSizeIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "a chunk size line is malformed") { try get(client, server) }
    }

    func testHugeChunkExtensionIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=" + String(repeating: "x", count: 1 << 20) + "\r\nhello\r\n0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "longer than 65536 bytes") { try get(client, server) }
    }

    func testUnknownTransferCodingIsRefused() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "is not supported") { try get(client, server) }
    }

    func testBodyCutShortWithContentLengthAndCloseNotifyIsTruncation() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "90 more body bytes announced by Content-Length") { try get(client, server) }
    }

    func testBodyCutShortWithContentLengthWithoutCloseNotifyIsTruncation() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
            connection.pause(0.2)
            connection.hangUp()
        }
        defer { server.stop() }
        let client = try client()
        expectError(.io, "close_notify") { try get(client, server) }
    }

    func testBodyWithoutLengthEndedWithoutCloseNotifyIsTruncationNotSuccess() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nthe body runs until the close, which never comes cleanly")
            connection.pause(0.2)
            connection.hangUp()
        }
        defer { server.stop() }
        let client = try client()
        expectError(.io, "close_notify") { try get(client, server) }
    }

    func testChunkedBodyCutShortIsTruncation() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly ")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "no final 0-size chunk") { try get(client, server) }
    }

    func testBodyLargerThanTheLimitIsRefused() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 209715200\r\n\r\n")
            let block = [UInt8](repeating: 0x62, count: 1 << 16)
            for _ in 0..<64 where connection.send(block) {}
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client(options: HTTPClientOptions(maximumBodySize: 1 << 20))
        expectError(.httpParse, "larger than 1 MiB") { try get(client, server) }
    }

    func testGzipBombIsStoppedAtTheBodyLimit() throws {
        let bomb = Raw.gzipZeros(256 << 20)
        XCTAssertLessThan(bomb.count, 1 << 20, "256 MiB of zeros compress to \(bomb.count) bytes")
        let server = try serverAnswering { connection in
            connection.respond(headers: ["Content-Encoding: gzip"], body: bomb)
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()  // the default limit, 64 MiB
        expectError(.httpParse, "a decompression bomb") { try get(client, server) }
        let streaming = try self.client()
        expectError(.httpParse, "a decompression bomb") {
            _ = try streaming.send(HTTPRequest(url: try server.url()), bodySink: { _ in })
        }
    }

    func testCorruptGzipIsRefused() throws {
        let server = try serverAnswering { connection in
            connection.respond(headers: ["Content-Encoding: gzip"], body: [0x1f, 0x8b, 0x08, 0x00] + [UInt8](repeating: 0xff, count: 64))
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "the compressed body is corrupt") { try get(client, server) }
    }

    func testStackedContentCodingsAreRefused() throws {
        let server = try serverAnswering { connection in
            connection.respond(headers: ["Content-Encoding: gzip, br"], body: Raw.gzipZeros(10))
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "is not supported") { try get(client, server) }
    }

    // MARK: Slow and stalled peers

    func testBodyAtOneBytePerSecondEndsAtTheTotalDeadline() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            connection.drip(Array(repeating: 0x61, count: 1000), every: 1.0)
        }
        defer { server.stop() }
        let timeouts = Timeouts(connect: .seconds(3), handshake: .seconds(3), idleRead: .seconds(2), total: .seconds(5))
        let client = try client(timeouts: timeouts)
        let started = Date()
        expectError(.timeout, "the deadline passed", bound: timeouts.total.inSeconds * 2 + 5) { try get(client, server) }
        XCTAssertGreaterThan(Date().timeIntervalSince(started), timeouts.total.inSeconds - 1, "the drip kept the idle timer alive; only the total deadline ends it")
    }

    /// A read sleeps in `recv` under a shorter `SO_RCVTIMEO` and `poll` waits out the rest: the
    /// idle timeout still counts from when the read began (2 s, not the 1 s slept plus 2 s more).
    func testStalledBodyEndsAtTheIdleTimeoutCountedFromTheRead() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nsome")
            connection.awaitClose(30)
        }
        defer { server.stop() }
        let client = try client()
        let started = Date()
        expectError(.timeout, "no data for 2 s (idle timeout)", bound: Self.timeouts.idleRead.inSeconds * 2 + 5) { try get(client, server) }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, Self.timeouts.idleRead.inSeconds - 0.1)
        XCTAssertLessThan(elapsed, Self.timeouts.idleRead.inSeconds + 0.8, "the idle timeout ran \(elapsed) s")
    }

    func testHeadDrippedOneBytePerSecondEndsAtTheTotalDeadline() throws {
        let server = try serverAnswering { connection in
            connection.drip(Array("HTTP/1.1 200 OK\r\nX-Slow: ".utf8) + Array(repeating: 0x73, count: 1000), every: 0.5)
        }
        defer { server.stop() }
        let timeouts = Timeouts(connect: .seconds(3), handshake: .seconds(3), idleRead: .seconds(2), total: .seconds(4))
        let client = try client(timeouts: timeouts)
        expectError(.timeout, "the deadline passed", bound: timeouts.total.inSeconds * 2 + 5) { try get(client, server) }
    }

    func testServerThatNeverReadsTheUploadEndsAtTheDeadline() throws {
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            connection.awaitClose(30)  // never reads
        }
        defer { server.stop() }
        let timeouts = Timeouts(connect: .seconds(3), handshake: .seconds(3), idleRead: .seconds(2), total: .seconds(4))
        let client = try client(timeouts: timeouts)
        expectError(.timeout, "request: the deadline passed", bound: timeouts.total.inSeconds * 2 + 5) {
            try get(client, server, method: "POST", body: [UInt8](repeating: 0x75, count: 64 << 20))
        }
    }

    func testServerThatResetsDuringTheUploadFailsTheRequestWithoutSIGPIPE() throws {
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            _ = connection.receive()
            connection.reset()
        }
        defer { server.stop() }
        let client = try client()
        // SIGPIPE's default action (kill the process) for this test, whatever an earlier test of the
        // same process set (the CLI harness ignores it): the library must not rely on either.
        let previous = signal(SIGPIPE, SIG_DFL)
        defer { signal(SIGPIPE, previous) }
        let error = expectError(.io, "the connection failed") {
            try get(client, server, method: "PUT", body: [UInt8](repeating: 0x75, count: 32 << 20))
        }
        XCTAssertNotNil(error, "the process is still alive: a write on the reset socket did not raise SIGPIPE")
    }

    // MARK: TLS misbehaviour during the handshake

    func testSilentServerEndsAtTheHandshakeTimeout() throws {
        let server = try HostileServer(tls: nil) { connection in connection.awaitClose(30) }
        defer { server.stop() }
        let client = try client()
        expectError(.timeout, "TLS handshake: the deadline passed", bound: Self.timeouts.handshake.inSeconds * 2 + 5) { try get(client, server) }
    }

    func testServerHelloDrippedOneBytePerHalfSecondEndsAtTheHandshakeTimeout() throws {
        let server = try HostileServer(tls: nil) { connection in
            _ = connection.receive()
            connection.drip([0x16, 0x03, 0x03, 0x40, 0x00] + [UInt8](repeating: 0x02, count: 100), every: 0.5, raw: true)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.timeout, "TLS handshake: the deadline passed", bound: Self.timeouts.handshake.inSeconds * 2 + 5) { try get(client, server) }
    }

    func testCloseDuringTheHandshakeIsAHandshakeError() throws {
        let server = try HostileServer(tls: nil) { connection in
            _ = connection.receive()
            connection.hangUp()
        }
        defer { server.stop() }
        let client = try client()
        expectError(.tlsHandshake, "without a TLS close_notify during the handshake") { try get(client, server) }
    }

    func testResetDuringTheHandshakeIsAHandshakeError() throws {
        let server = try HostileServer(tls: nil) { connection in
            _ = connection.receive()
            connection.reset()
        }
        defer { server.stop() }
        let client = try client()
        expectError(.tlsHandshake, "reset by peer") { try get(client, server) }
    }

    func testPlainHTTPOnTheTLSPortIsAHandshakeError() throws {
        let server = try HostileServer(tls: nil) { connection in
            _ = connection.receive()
            connection.sendRaw(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.tlsHandshake, "did not answer with TLS") { try get(client, server) }
    }

    func testTLS10OnlyServerIsRefusedUnlessAskedFor() throws {
        var options = try HostileTLSOptions.standard()
        options.minimumVersion = TLS1_VERSION
        options.maximumVersion = TLS1_VERSION
        options.legacySecurityLevel = true
        let server = try serverAnswering(options) { connection in
            connection.respond(text: "legacy")
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.tlsHandshake, "protocol version") { try get(client, server) }
        let legacy = try self.client(minimumVersion: .tls1_0)
        let response = try legacy.send(HTTPRequest(url: try server.url()))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.version, "TLSv1")
        legacy.closeIdleConnections()
    }

    func testOneMegabyteCertificateIsRefused() throws {
        var options = try HostileTLSOptions.standard()
        options.leaf = try Raw.padded(options.leaf, padding: 1_000_000, issuerKey: try HTTPFixtures.key("intermediate-ca.key"))
        XCTAssertGreaterThan(options.leaf.derBytes.count, 1_000_000)
        let server = try serverAnswering(options) { connection in
            connection.respond(text: "big")
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.tlsHandshake, "excessive message size") { try get(client, server) }
    }

    func testHundredCertificateChainToAnUntrustedRootIsRefused() throws {
        // Hostile Root → 98 intermediates → leaf: 100 certificates, all sent.
        let validity = (notBefore: Date(timeIntervalSince1970: 1_735_689_600), notAfter: Date(timeIntervalSince1970: 2_051_222_400))
        let rootKey = try CertificateIssuer.generateKey()
        var issuer = (
            certificate: try CertificateIssuer.issue(
                .init(role: .rootCA, commonName: "Hostile Root", notBefore: validity.notBefore, notAfter: validity.notAfter), key: rootKey, issuer: nil, serial: 1), key: rootKey
        )
        var sent = [issuer.certificate]
        for index in 1...98 {
            let key = try CertificateIssuer.generateKey()
            let ca = try CertificateIssuer.issue(
                .init(role: .rootCA, commonName: "Hostile CA \(index)", notBefore: validity.notBefore, notAfter: validity.notAfter), key: key, issuer: issuer,
                serial: UInt64(index + 1))
            sent.insert(ca, at: 0)
            issuer = (ca, key)
        }
        let leafKey = try CertificateIssuer.generateKey()
        let leaf = try CertificateIssuer.issue(
            .init(role: .server, commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], notBefore: validity.notBefore, notAfter: validity.notAfter),
            key: leafKey, issuer: issuer, serial: 1000)
        XCTAssertEqual(sent.count + 1, 100)
        let server = try serverAnswering(HostileTLSOptions(leaf: leaf, key: leafKey, chain: sent)) { connection in
            connection.respond(text: "deep")
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        let error = expectError(.serverCertificate, "not trusted") { try get(client, server) }
        XCTAssertEqual(error?.report?.peerChainAsSent.count, 100)
    }

    func testTenThousandCANamesInTheCertificateRequestAreHandled() throws {
        var options = try Self.options(maximumVersion: TLS1_2_VERSION)
        options.requestsCertificateAtHandshake = true
        options.requiresCertificate = true
        // The CA-name list has a 16-bit length: 9,999 empty names and one real one fit in it.
        options.caNames = Array(repeating: Raw.nameDER(commonName: ""), count: 9_999) + [try Raw.subjectDER(try HTTPFixtures.certificates("intermediate-ca.pem")[0])]
        let server = try serverAnswering(options) { connection in
            connection.respond(text: "welcome")
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let anonymous = try client()
        let error = expectError(.tlsHandshake, "handshake failure") { try get(anonymous, server) }
        XCTAssertEqual(error?.report?.certificateRequests.first?.acceptedCANames.count, 10_000)
        // A client with an identity from that CA finds the one fitting name among them.
        let identity = try ClientIdentity.pkcs12(path: HTTPFixtures.path("p12/client-alice-modern.p12"), password: "mtls")
        let alice = try self.client(identities: [identity])
        let started = Date()
        let response = try alice.send(HTTPRequest(url: try server.url()))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.tls.certificateRequests.first?.identityFits, true)
        XCTAssertLessThan(Date().timeIntervalSince(started), Self.bound)
        alice.closeIdleConnections()
    }

    // MARK: TLS misbehaviour after the handshake

    func testCertificateChangeDuringRenegotiationIsRefused() throws {
        let other = try HTTPFixtures.certificates("server-p384.pem")[0]
        let otherKey = try HTTPFixtures.key("server-p384.key")
        let server = try serverAnswering(try Self.options(maximumVersion: TLS1_2_VERSION)) { connection in
            connection.renegotiate(certificate: other, key: otherKey)
            connection.respond(text: "now you are talking to someone else")
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        let error = expectError(.serverCertificate, "presented a different certificate during renegotiation") { try get(client, server) }
        XCTAssertTrue(error?.message.contains("server-p384") == true || error?.message.contains("localhost") == true, "\(String(describing: error))")
    }

    func testRenegotiationFloodIsRefused() throws {
        let server = try serverAnswering(try Self.options(maximumVersion: TLS1_2_VERSION)) { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            while !connection.isStopping, connection.renegotiate(), connection.send([0x61]) {}
        }
        defer { server.stop() }
        let client = try client()
        expectError(.tlsHandshake, "renegotiated more than") { try get(client, server) }
    }

    func testFatalAlertMidBodyTLS13IsReportedWithItsName() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst part")
            connection.requestCertificatePostHandshake()  // no certificate comes: fatal "certificate required"
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        let error = expectError(.io, "the server sent the TLS alert \"certificate required\"") { try get(client, server) }
        XCTAssertEqual(error?.alert, "certificate required")
    }

    func testFatalAlertMidBodyTLS12IsReportedWithItsName() throws {
        let server = try serverAnswering(try Self.options(maximumVersion: TLS1_2_VERSION)) { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst part")
            connection.renegotiate(requireClientCertificate: true)  // fatal "handshake failure"
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        let error = expectError(.io, "the server sent the TLS alert \"handshake failure\"") { try get(client, server) }
        XCTAssertEqual(error?.alert, "handshake failure")
    }

    func testPlaintextAlertInjectedMidBodyIsAnError() throws {
        let server = try serverAnswering(try Self.options(maximumVersion: TLS1_2_VERSION)) { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst part")
            connection.pause(0.1)
            // A record of type alert that the client cannot decrypt: forged, not from the TLS session.
            connection.sendRaw([0x15, 0x03, 0x03, 0x00, 0x1A] + [UInt8](repeating: 0x28, count: 26))
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try client()
        expectError(.io, "bad record mac") { try get(client, server) }
    }

    /// ThreadSanitizer finding: `cancel()` set a plain Bool that the reading thread read. The
    /// connection stays on this thread; only its `Sendable` canceller goes to the other one.
    func testCancelFromAnotherThreadEndsABlockedReadPromptly() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhal")
            connection.awaitClose(30)
        }
        defer { server.stop() }
        let client = try client(timeouts: Timeouts(connect: .seconds(3), handshake: .seconds(3), idleRead: .seconds(30), total: .seconds(30)))
        let connection = try client.tls.connect(host: "127.0.0.1", port: server.port)
        defer { connection.close() }
        try connection.write(Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), deadline: .after(3))
        let canceller = connection.canceller
        Thread {
            usleep(300_000)
            canceller.cancel()
        }.start()
        let started = Date()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var outcome = ""
        do throws(HTTPSError) {
            while try connection.read(into: &buffer, deadline: .after(30), idle: .seconds(30)) > 0 {}
            outcome = "closed"
        } catch {
            outcome = "\(error.phase.rawValue): \(error.message)"
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "the read did not end after cancel()")
        XCTAssertEqual(outcome, "cancelled: the operation was cancelled")
    }

    func testTCPResetMidBodyIsAnIOError() throws {
        let server = try serverAnswering { connection in
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 1000))
            connection.pause(0.2)
            connection.reset()
        }
        defer { server.stop() }
        let client = try client()
        expectError(.io, "reset by peer") { try get(client, server) }
    }
}

// MARK: The other way round: a hostile client against the package's own test server

extension HostileServerTests {
    /// Fuzzing finding (http-request): `Int("-5", radix: 16)` is -5, and a negative chunk size made
    /// `HTTPRequestParser` slice a negative range — a client could crash `mtls serve`.
    func testTestServerAnswersANegativeChunkSizeWith400InsteadOfCrashing() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try client()
        for size in ["-5", "+5", "-ced", "\u{FF15}"] {
            let response = try client.send(
                HTTPRequest(method: "PUT", url: try HTTPFixtures.url(server, "/"), headers: ["Transfer-Encoding": "chunked"], body: Array("\(size)\r\nhello\r\n0\r\n\r\n".utf8)))
            XCTAssertEqual(response.status, 400, size)
        }
        client.closeIdleConnections()
        // The server is still up.
        let after = try self.client()
        XCTAssertEqual(try after.send(HTTPRequest(url: try HTTPFixtures.url(server, "/"))).status, 200)
        after.closeIdleConnections()
    }

    /// Found next to the finding above: full-width digits pass `Character.isHexDigit` but not
    /// `Int(_:radix:)`, and were reported as "a chunk size is too large".
    func testFullWidthChunkSizeIsMalformedNotTooLarge() throws {
        let server = try serverSending("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\u{FF15}\r\nhello\r\n0\r\n\r\n")
        defer { server.stop() }
        let client = try client()
        expectError(.httpParse, "a chunk size line is malformed") { try get(client, server) }
    }
}

/// Collects trace lines from any thread.
final class TraceLines: @unchecked Sendable {
    // @unchecked Sendable: guarded by `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return lines.joined(separator: "\n")
    }
}

/// A small deterministic generator for garbage bytes.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestSupport

/// The transport's event log against the in-process server: every handshake message in order with
/// its direction and phase, the ServerHello's choice, finished handshakes, HTTP heads, and the
/// live observer that `-v` streams.
final class TLSEventLogTests: XCTestCase {
    private final class Collected: @unchecked Sendable {
        // @unchecked Sendable: guarded by `lock`.
        private let lock = NSLock()
        private var stored: [TLSEvent] = []
        func append(_ event: TLSEvent) {
            lock.lock()
            stored.append(event)
            lock.unlock()
        }
        var events: [TLSEvent] {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
    }

    func testARenegotiationForACertificateIsLoggedAfterTheRequestThatTriggeredIt() throws {
        let server = try HTTPFixtures.startServer(maximumVersion: .tls1_2)
        defer { server.stop() }
        let client = try HTTPFixtures.client()
        let live = Collected()
        client.tls.eventObserver = { live.append($0) }
        let response = try client.send(HTTPRequest(url: try HTTPFixtures.url(server, "/secure")))
        client.closeIdleConnections()
        let events = response.tls.events.events
        XCTAssertEqual(events.first, .message(sentByUs: true, name: "ClientHello", phase: .handshake))
        XCTAssertTrue(events.contains { if case .serverHello("TLSv1.2", .some) = $0 { true } else { false } }, "\(events)")
        let request = try XCTUnwrap(events.firstIndex(of: .httpRequest(method: "GET", target: "/secure")))
        let helloRequest = try XCTUnwrap(events.firstIndex(of: .message(sentByUs: false, name: "HelloRequest", phase: .renegotiation)))
        let certificateRequest = try XCTUnwrap(events.firstIndex(of: .message(sentByUs: false, name: "CertificateRequest", phase: .renegotiation)))
        let empty = try XCTUnwrap(events.firstIndex(of: .message(sentByUs: true, name: "Certificate (empty)", phase: .renegotiation)))
        let response403 = try XCTUnwrap(events.firstIndex(of: .httpResponse(status: 403, reason: "Forbidden")))
        XCTAssertLessThan(request, helloRequest)
        XCTAssertLessThan(helloRequest, certificateRequest)
        XCTAssertLessThan(certificateRequest, empty)
        XCTAssertLessThan(empty, response403)
        XCTAssertTrue(events.contains { if case .handshakeFinished(.renegotiation, "TLSv1.2", _, false) = $0 { true } else { false } }, "a full renegotiation")
        // The observer saw the same events as they happened.
        XCTAssertEqual(live.events.prefix(events.count).map(\.line), events.map(\.line))
        // The s_client-style summary holds the same handshake messages, in order, with their sizes.
        let trace = response.tls.messageTrace
        let messages = events.compactMap { event -> String? in
            if case .message(let ours, let name, _) = event { return "\(ours ? ">>>" : "<<<") \(name == "Certificate (empty)" ? "Certificate" : name)" }
            return nil
        }
        XCTAssertEqual(trace.map { String($0[..<($0.range(of: " (")?.lowerBound ?? $0.endIndex)]) }, messages)
        XCTAssertTrue(trace.allSatisfy { $0.range(of: #"^(>>>|<<<) [A-Za-z ]+ \([1-9][0-9]* bytes\)$"#, options: .regularExpression) != nil }, "\(trace)")
        var edited = response.tls
        edited.messageTrace = ["a line"]
        XCTAssertEqual(edited.messageTrace, ["a line"])
        XCTAssertEqual(response.tls.messageTrace, trace, "a report is a value")
    }

    func testARefusedServerLeavesTheServerHelloChoiceButNoFinishedHandshake() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        var configuration = TLSClientConfiguration(trust: TrustPolicy(anchors: try HTTPFixtures.certificates("other-root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime))
        configuration.timeouts = Timeouts(connect: .seconds(5), handshake: .seconds(5), idleRead: .seconds(5), total: .seconds(10))
        let client = try HTTPSClient(configuration: configuration)
        do {
            _ = try client.send(HTTPRequest(url: try HTTPFixtures.url(server, "/")))
            XCTFail("the server is not trusted")
        } catch let error as HTTPSError {
            let events = try XCTUnwrap(error.report?.events.events)
            XCTAssertTrue(events.contains { if case .serverHello("TLSv1.3", .some) = $0 { true } else { false } }, "\(events)")
            XCTAssertFalse(events.contains { if case .handshakeFinished = $0 { true } else { false } })
            XCTAssertTrue(events.contains { if case .alert(true, "fatal", _) = $0 { true } else { false } }, "we refused the server: \(events)")
            XCTAssertNotNil(error.report?.address, "the address is known from the connect")
        }
    }

    /// gnutls-serv requiring a certificate under TLS 1.3 reads our empty Certificate after our
    /// handshake is done, sends "certificate required" and closes with our Finished unread, so
    /// its reset makes our request's write fail. The alert is in the receive buffer before the
    /// reset: the write error must name it, not "Broken pipe" (waiting before the write makes the
    /// reset certain to have arrived, the ordering the matrix met by chance).
    func testAWriteThatMeetsTheServersResetReportsTheAlertItSentFirst() throws {
        let peer = try InteropPeer("gnutls.sh")
        defer { peer.stop() }
        var configuration = TLSClientConfiguration(trust: TrustPolicy(anchors: try HTTPFixtures.certificates("root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime))
        configuration.minimumVersion = .tls1_3
        let client = try TLSClient(configuration: configuration)
        let connection = try client.connect(host: "localhost", port: peer.port("REQUIRE_PORT"))
        defer { connection.close() }
        usleep(300_000)
        do {
            try connection.write(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), deadline: .after(5))
            var buffer: [UInt8] = []
            _ = try connection.read(into: &buffer, deadline: .after(5), idle: .seconds(5))
            XCTFail("the server requires a certificate")
        } catch {
            XCTAssertEqual(error.alert, "certificate required", "\(error.message); \(connection.report.events.events.map(\.line))")
            XCTAssertTrue(error.message.contains("certificate required"), error.message)
            let events = connection.report.events.events
            XCTAssertTrue(events.contains(.alert(sentByUs: false, level: "fatal", description: "certificate required")), "\(events.map(\.line))")
        }
    }

    func testTheLogIsBounded() {
        var log = TLSEventLog()
        for _ in 0..<(TLSEventLog.capacity + 5) { log.append(.peerClosed(closeNotify: false)) }
        XCTAssertEqual(log.events.count, TLSEventLog.capacity)
        XCTAssertEqual(log.dropped, 5)
    }
}

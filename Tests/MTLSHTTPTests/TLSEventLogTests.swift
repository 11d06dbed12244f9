import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust

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
    }

    func testARefusedServerLeavesTheServerHelloChoiceButNoFinishedHandshake() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        var configuration = TLSClientConfiguration(trust: TrustPolicy(anchors: try HTTPFixtures.certificates("other-root-ca.pem"), evaluationTime: HTTPFixtures.fixedTime))
        configuration.timeouts = Timeouts(connect: 5, handshake: 5, idleRead: 5, total: 10)
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

    func testTheLogIsBounded() {
        var log = TLSEventLog()
        for _ in 0..<(TLSEventLog.capacity + 5) { log.append(.peerClosed(closeNotify: false)) }
        XCTAssertEqual(log.events.count, TLSEventLog.capacity)
        XCTAssertEqual(log.dropped, 5)
    }
}

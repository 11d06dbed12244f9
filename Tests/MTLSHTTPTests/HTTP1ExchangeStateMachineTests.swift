import XCTest

@testable import MTLSHTTP
import MTLSTestSupport

/// The exchange state machine, event by event, with no sockets.
final class HTTP1ExchangeStateMachineTests: XCTestCase {
    private typealias Machine = HTTP1ExchangeStateMachine

    private func head(_ status: Int, version: String = "HTTP/1.1", _ headers: [(String, String)] = []) -> HTTPResponseHead {
        HTTPResponseHead(version: version, status: status, reason: "", headers: HTTPHeaders(headers))
    }

    /// Start, write, receive a complete response, and return the final action.
    private func complete(
        _ machine: inout Machine, reused: Bool = false, head response: HTTPResponseHead, readsUntilClose: Bool = false
    ) -> Machine.Action {
        XCTAssertEqual(machine.handle(.start(reusedConnection: reused)), .writeHead(includingBody: true))
        XCTAssertEqual(machine.handle(.headWritten), .read(.response))
        XCTAssertEqual(machine.handle(.bytesReceived), .read(.response))
        XCTAssertEqual(machine.handle(.head(response)), .read(.response))
        XCTAssertEqual(machine.handle(.body), .deliverBody)
        return machine.handle(.end(readsUntilClose: readsUntilClose))
    }

    func testASimpleExchangeKeepsAnHTTP11Connection() {
        var machine = Machine(method: "get", hasBody: false, expectsContinue: false)
        XCTAssertEqual(machine.state, .idle)
        XCTAssertEqual(complete(&machine, head: head(200, [("Content-Length", "2")])), .finish(reuseConnection: true))
        XCTAssertEqual(machine.state, .finished)
        XCTAssertEqual(machine.head?.status, 200)
    }

    func testKeepAliveDecision() {
        let cases: [(HTTPResponseHead, Bool, Bool, String)] = [
            (head(200, [("Connection", "keep-alive, CLOSE")]), false, false, "close among the tokens"),
            (head(200, [("Connection", " Upgrade ,\tclose ")]), false, false, "close with whitespace"),
            (head(200, [("Connection", "x-closed")]), false, true, "a token containing close"),
            (head(200, version: "HTTP/1.0", [("Connection", "keep-alive")]), false, false, "HTTP/1.0"),
            (head(200), true, false, "framed by the end of stream"),
            (head(101, [("Upgrade", "websocket")]), false, false, "an upgrade"),
        ]
        for (response, untilClose, reusable, label) in cases {
            var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
            XCTAssertEqual(complete(&machine, head: response, readsUntilClose: untilClose), .finish(reuseConnection: reusable), label)
        }
    }

    func testInformationalStatusesAreRecordedAndIgnored() {
        var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: false))
        _ = machine.handle(.headWritten)
        XCTAssertEqual(machine.handle(.informational(status: 103)), .read(.response))
        XCTAssertEqual(machine.handle(.informational(status: 100)), .read(.response), "a 100 nobody waits for changes nothing")
        XCTAssertEqual(machine.handle(.head(head(204))), .read(.response))
        XCTAssertEqual(machine.handle(.end(readsUntilClose: false)), .finish(reuseConnection: true))
        XCTAssertEqual(machine.informational, [103, 100])
    }

    // MARK: - Expect: 100-continue

    private func waitingForContinue(method: String = "POST", reused: Bool = false) -> Machine {
        var machine = Machine(method: method, hasBody: true, expectsContinue: true)
        XCTAssertEqual(machine.handle(.start(reusedConnection: reused)), .writeHead(includingBody: false))
        XCTAssertEqual(machine.handle(.headWritten), .read(.untilContinue))
        XCTAssertEqual(machine.state, .waitingForContinue)
        return machine
    }

    func testAnEmptyBodyDoesNotWaitForContinue() {
        var machine = Machine(method: "POST", hasBody: false, expectsContinue: true)
        XCTAssertEqual(machine.handle(.start(reusedConnection: false)), .writeHead(includingBody: true))
        XCTAssertEqual(machine.handle(.headWritten), .read(.response))
    }

    func testA100SendsTheBody() {
        var machine = waitingForContinue()
        XCTAssertEqual(machine.handle(.bytesReceived), .read(.untilContinue))
        XCTAssertEqual(machine.handle(.informational(status: 100)), .writeBody)
        XCTAssertEqual(machine.handle(.bodyWritten), .read(.response))
        XCTAssertEqual(machine.handle(.head(head(200))), .read(.response))
        XCTAssertEqual(machine.handle(.end(readsUntilClose: false)), .finish(reuseConnection: true))
        XCTAssertEqual(machine.informational, [100])
    }

    func testAnotherInformationalStatusKeepsWaiting() {
        var machine = waitingForContinue()
        XCTAssertEqual(machine.handle(.informational(status: 103)), .read(.untilContinue))
        XCTAssertEqual(machine.handle(.informational(status: 100)), .writeBody)
    }

    func testTheContinueTimeoutSendsTheBodyAnyway() {
        var machine = waitingForContinue()
        XCTAssertEqual(machine.handle(.readFailed(.timeout)), .writeBody)
        XCTAssertEqual(machine.handle(.bodyWritten), .read(.response))
        XCTAssertEqual(machine.handle(.readFailed(.timeout)), .fail(.asReported), "after the body, a timeout is a timeout")
    }

    func testAFinalStatusInsteadOf100LeavesTheBodyUnsentAndTheConnectionClosed() {
        for status in [401, 413, 200] {
            var machine = waitingForContinue()
            XCTAssertEqual(machine.handle(.bytesReceived), .read(.untilContinue))
            XCTAssertEqual(machine.handle(.head(head(status, [("Content-Length", "5")]))), .read(.response), "the continue timeout no longer applies")
            XCTAssertEqual(machine.handle(.bytesReceived), .read(.response))
            XCTAssertEqual(machine.handle(.body), .deliverBody)
            XCTAssertEqual(machine.handle(.end(readsUntilClose: false)), .finish(reuseConnection: false), "\(status): the server would read the next request as our body")
            XCTAssertFalse(machine.bodySent)
        }
    }

    func testAnEarlyAnswerAfterABrokenWriteIsReadAndTheConnectionNotKept() {
        var machine = Machine(method: "POST", hasBody: true, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: false))
        XCTAssertEqual(machine.handle(.writeFailed(.broken(alert: false))), .read(.response))
        _ = machine.handle(.bytesReceived)
        _ = machine.handle(.head(head(413)))
        XCTAssertEqual(machine.handle(.end(readsUntilClose: false)), .finish(reuseConnection: false))
    }

    func testABrokenWriteWithNoAnswerReportsTheWriteUnlessAnAlertExplainsIt() {
        var machine = Machine(method: "POST", hasBody: true, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: false))
        _ = machine.handle(.writeFailed(.broken(alert: false)))
        XCTAssertEqual(machine.handle(.readFailed(.broken(alert: false))), .fail(.earlierWriteFailure))

        var alerted = Machine(method: "POST", hasBody: true, expectsContinue: false)
        _ = alerted.handle(.start(reusedConnection: false))
        _ = alerted.handle(.writeFailed(.broken(alert: false)))
        XCTAssertEqual(alerted.handle(.readFailed(.broken(alert: true))), .fail(.asReported))
    }

    func testAWriteTimeoutEndsTheExchange() {
        var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: true))
        XCTAssertEqual(machine.handle(.writeFailed(.timeout)), .fail(.asReported))
        XCTAssertEqual(machine.state, .failed)
    }

    // MARK: - Retry once on a stale kept-alive connection

    func testAStaleKeptAliveConnectionIsRetriedOnceOnAFreshOne() {
        var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: true))
        _ = machine.handle(.headWritten)
        XCTAssertEqual(machine.handle(.readFailed(.closed)), .retryOnFreshConnection)
        XCTAssertEqual(machine.state, .idle)
        XCTAssertEqual(complete(&machine, head: head(200)), .finish(reuseConnection: true))
    }

    func testOnlyOneRetry() {
        var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: true))
        _ = machine.handle(.headWritten)
        XCTAssertEqual(machine.handle(.readFailed(.broken(alert: false))), .retryOnFreshConnection)
        _ = machine.handle(.start(reusedConnection: true))
        _ = machine.handle(.headWritten)
        XCTAssertEqual(machine.handle(.readFailed(.closed)), .fail(.staleConnection))
    }

    func testAFreshConnectionIsNeverRetried() {
        var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: false))
        _ = machine.handle(.headWritten)
        XCTAssertEqual(machine.handle(.readFailed(.closed)), .fail(.asReported))
    }

    func testNoRetryOnceAnyByteWasReceived() {
        var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: true))
        _ = machine.handle(.headWritten)
        _ = machine.handle(.bytesReceived)
        XCTAssertEqual(machine.handle(.readFailed(.closed)), .fail(.asReported))
    }

    func testNoRetryOnTimeoutOrCancellation() {
        for failure in [Machine.IOFailure.timeout, .cancelled] {
            var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
            _ = machine.handle(.start(reusedConnection: true))
            _ = machine.handle(.headWritten)
            XCTAssertEqual(machine.handle(.readFailed(failure)), .fail(.asReported), "\(failure)")
        }
    }

    func testANonIdempotentRequestIsRetriedOnlyWhenItsBodyWasNeverSent() {
        var sent = Machine(method: "POST", hasBody: true, expectsContinue: false)
        _ = sent.handle(.start(reusedConnection: true))
        _ = sent.handle(.headWritten)
        XCTAssertEqual(sent.handle(.readFailed(.closed)), .fail(.staleConnection))

        var heldBack = waitingForContinue(reused: true)
        XCTAssertEqual(heldBack.handle(.readFailed(.closed)), .retryOnFreshConnection)

        var idempotent = Machine(method: "PUT", hasBody: true, expectsContinue: false)
        _ = idempotent.handle(.start(reusedConnection: true))
        _ = idempotent.handle(.headWritten)
        XCTAssertEqual(idempotent.handle(.readFailed(.broken(alert: false))), .retryOnFreshConnection)
    }

    func testAStaleConnectionWhoseWriteFailedIsRetried() {
        var machine = Machine(method: "GET", hasBody: false, expectsContinue: false)
        _ = machine.handle(.start(reusedConnection: true))
        XCTAssertEqual(machine.handle(.writeFailed(.broken(alert: false))), .read(.response))
        XCTAssertEqual(machine.handle(.readFailed(.closed)), .retryOnFreshConnection)
    }
}

/// The client driving the machine, against scripted servers: the behaviours the machine exists for.
final class HTTP1ExchangeDriverTests: XCTestCase {
    private final class Box<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        init(_ value: Value) { stored = value }
        var value: Value {
            get {
                lock.lock()
                defer { lock.unlock() }
                return stored
            }
            set {
                lock.lock()
                stored = newValue
                lock.unlock()
            }
        }
    }

    private struct SinkFailure: Error {}

    func testABodySinkFailureOnAKeptAliveConnectionIsNotRetried() throws {
        // Bytes were received: repeating the request would hand the sink the body a second time.
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            while connection.readRequest() != nil {
                guard connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") else { return }
            }
        }
        defer { server.stop() }
        let client = try HostileServerTests.makeClient()
        defer { client.closeIdleConnections() }
        XCTAssertEqual(try client.send(HTTPRequest(method: "GET", url: try server.url("/"))).status, 200)
        let calls = Box(0)
        XCTAssertThrowsError(
            try client.send(
                HTTPRequest(method: "GET", url: try server.url("/")),
                bodySink: { _ in
                    calls.value += 1
                    throw SinkFailure()
                })
        ) { error in
            XCTAssertTrue((error as? HTTPSError)?.message.contains("writing the body failed") == true, "\(error)")
        }
        XCTAssertEqual(calls.value, 1)
        XCTAssertEqual(server.requestHeads.count, 2)
    }

    func testAFinalStatusInsteadOf100IsReadToItsEndWithoutSendingTheBody() throws {
        // The 401's body arrives after the continue timeout: those bytes are the response's, and
        // the held-back body must not be sent into a connection the server answered.
        let received = Box<[UInt8]?>(nil)
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            var head: [UInt8] = []
            while !String(decoding: head, as: UTF8.self).contains("\r\n\r\n") {
                guard let more = connection.receive(), !more.isEmpty else { return }
                head += more
            }
            guard connection.send("HTTP/1.1 401 Unauthorized\r\nContent-Length: 4\r\n\r\nno"), connection.pause(1.6), connection.send("pe") else { return }
            received.value = connection.receive() ?? []
        }
        defer { server.stop() }
        let client = try HostileServerTests.makeClient()
        let response = try client.send(HTTPRequest(method: "POST", url: try server.url("/"), body: Array("secret=1".utf8), expectsContinue: true))
        client.closeIdleConnections()
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "nope")
        let deadline = Date().addingTimeInterval(5)
        while received.value == nil && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(received.value, [], "the server saw the body it had refused")
    }

    /// The byte scan of `Connection` values agrees with the comparison by `Character` it stands in for.
    func testConnectionCloseIsFoundAsByTheCharacterComparison() {
        let values = [
            "close", "Close", "CLOSE", " close ", "\tclose", "keep-alive", "keep-alive, close", "close, keep-alive", "keep-alive,close",
            "closed", "x-close", "clo se", "", ",", ",,close,,", "upgrade, CLOSE\t", "close;x", "élan, close", "élan", "cl\u{0301}ose", "close\u{00A0}",
        ]
        for value in values {
            let expected = value.split(separator: ",").contains { HTTPHeaders.sameName(HTTPResponseParser.trimmingWhitespace($0), "close") }
            XCTAssertEqual(HTTP1ExchangeStateMachine.listNamesClose(value), expected, value.debugDescription)
        }
    }
}

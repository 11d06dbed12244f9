import Foundation
import MTLSTestServer
import MTLSTrust  // Locked
import XCTest

@testable import MTLSHTTP

/// What may cross threads is `Sendable` and checked by the compiler; what may not (a connection)
/// hands out a `Sendable` canceller instead; configuration is given at init.
final class ConcurrencyTests: XCTestCase {
    private func requireSendable<T: Sendable>(_: T.Type) {}

    func testSharedTypesAreSendableWithoutUncheckedConformances() {
        requireSendable(CookieJar.self)
        requireSendable(TestServer.self)
        requireSendable(TLSClient.self)
        requireSendable(TLSServerContext.self)
        requireSendable(SocketHandle.self)
        requireSendable(CancellationToken.self)
        requireSendable(TLSConnection.Canceller.self)
        requireSendable(Timeouts.self)
    }

    /// The server's log is part of its configuration: every worker thread sees it from the start,
    /// with no unguarded property to set after `init`.
    func testTheServerLogGivenAtInitReceivesEachRequest() throws {
        let lines = Locked<[String]>([])
        let server = try HTTPFixtures.startServer(log: { line in lines.withLock { $0.append(line) } })
        let client = try HTTPFixtures.client()
        XCTAssertEqual(try client.send(HTTPRequest(url: try HTTPFixtures.url(server, "/"))).status, 200)
        server.stop()
        let logged = lines.withLock { $0 }
        XCTAssertTrue(logged.contains { $0.contains("GET /") && $0.contains("200") }, "\(logged)")
    }

    /// One client shared by threads: each response's TLS record ends with its own exchange, never
    /// with a request another thread sent after the connection went back to the pool.
    func testEachResponsesReportEndsWithItsOwnExchangeWhenThreadsShareAClient() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client()
        let url = try HTTPFixtures.url(server, "/")
        let problems = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<40 {
                do {
                    let response = try client.send(HTTPRequest(url: url))
                    let exchanges = response.tls.events.events.filter {
                        switch $0 {
                        case .httpRequest, .httpResponse: true
                        default: false
                        }
                    }
                    guard case .httpResponse = exchanges.last, exchanges.count >= 2, case .httpRequest = exchanges[exchanges.count - 2] else {
                        problems.withLock { $0.append("thread \(thread), request \(index): \(exchanges.suffix(3))") }
                        continue
                    }
                } catch {
                    problems.withLock { $0.append("thread \(thread), request \(index): \(error)") }
                }
            }
        }
        let found = problems.withLock { $0 }
        XCTAssertTrue(found.isEmpty, "\(found.count) responses: \(found.prefix(5))")
    }

    /// A canceller sent to another task ends a read blocked on this thread, and later operations
    /// on the connection throw `.cancelled`.
    func testACancellerInAnotherTaskEndsABlockedReadAndLaterCalls() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client()
        let connection = try client.tls.connect(host: "localhost", port: server.boundPort)
        defer { connection.close() }
        let canceller = connection.canceller
        let task = Task.detached {
            try? await Task.sleep(for: .milliseconds(300))
            canceller.cancel()
        }
        defer { task.cancel() }
        let started = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 4096)
        var phase: HTTPSError.Phase? = nil
        do throws(HTTPSError) {
            // No request was sent: the server waits, so only the canceller can end this read.
            _ = try connection.read(into: &buffer, deadline: .after(.seconds(30)), idle: .seconds(30))
        } catch {
            phase = error.phase
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "the read did not end after cancel()")
        XCTAssertEqual(phase, .cancelled)
        var again: HTTPSError.Phase? = nil
        do throws(HTTPSError) {
            try connection.write(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), deadline: .after(.seconds(3)))
        } catch {
            again = error.phase
        }
        XCTAssertEqual(again, .cancelled)
    }

    func testCookieLimitsAreGivenAtInit() throws {
        let jar = CookieJar(maximumPerDomain: 2, maximumTotal: 10)
        let url = try HTTPSURL("https://example.com/")
        for (offset, name) in ["a", "b", "c"].enumerated() {
            _ = jar.store("\(name)=1", from: url, now: Date(timeIntervalSince1970: 1_700_000_000 + Double(offset)))
        }
        XCTAssertEqual(jar.all.map(\.name).sorted(), ["b", "c"])
    }

    func testTimeoutsAreDurations() {
        let timeouts = Timeouts.uniform(.milliseconds(1500))
        XCTAssertEqual(timeouts.connect, .milliseconds(1500))
        XCTAssertEqual(timeouts.idleRead, .milliseconds(1500))
        XCTAssertEqual(timeouts.total, .seconds(6))
        XCTAssertEqual(Timeouts().idleRead, .seconds(30))
        XCTAssertEqual(Duration.milliseconds(2500).inSeconds, 2.5)
    }
}

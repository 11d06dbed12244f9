import Foundation
import MTLSTrust
import Synchronization
import XCTest

@testable import MTLSHTTP
import MTLSTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The async API: `try await` picks the async overloads, their errors are typed `HTTPSError` as in
/// the blocking API, and cancelling the task closes the connection at once instead of waiting for a
/// timeout. The server is a loopback TCP listener that never answers, so the client waits for the
/// ServerHello until something stops it: cancellation (phase `.cancelled`) or, if cancellation did
/// not reach the socket, the 60 s timeout (phase `.timeout`, which fails the test).
final class AsyncCancellationTests: XCTestCase {
    private final class SilentListener {
        let fd: Int32
        let port: Int

        init(backlog: Int32 = 8) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw XCTSkip("no socket") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard bound == 0, listen(fd, backlog) == 0 else {
                close(fd)
                throw XCTSkip("cannot listen on loopback")
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }

    private func client() throws -> HTTPSClient {
        let anchors = try HTTPFixtures.certificates("root-ca.pem")
        return try HTTPSClient(configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors), timeouts: .uniform(.seconds(60))))
    }

    func testCancellingTheTaskClosesTheConnectionWithATypedCancelledError() async throws {
        let listener = try SilentListener()
        let client = try client()
        let request = HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/"))
        let task = Task { () -> HTTPSError.Phase? in
            do throws(HTTPSError) {
                _ = try await client.send(request)
                return nil
            } catch {
                return error.phase  // typed: HTTPSError, as the blocking overload throws
            }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let phase = await task.value
        XCTAssertEqual(phase, .cancelled)
    }

    func testALoginFlowStopsWhenItsTaskIsCancelled() async throws {
        let listener = try SilentListener()
        let session = LoginSession(client: try client())
        let request = HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/login"))
        let task = Task { () -> HTTPSError.Phase? in
            do throws(HTTPSError) {
                _ = try await session.send(request)
                return nil
            } catch {
                return error.phase
            }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let phase = await task.value
        XCTAssertEqual(phase, .cancelled)
    }

    func testATaskCancelledBeforeItStartsNeverConnects() async throws {
        let listener = try SilentListener()
        let client = try client()
        let request = HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/"))
        let task = Task { () -> HTTPSError.Phase? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(HTTPSError) {
                _ = try await client.send(request)
                return nil
            } catch {
                return error.phase
            }
        }
        let phase = await task.value
        XCTAssertEqual(phase, .cancelled)
    }

    /// Seconds since `start`.
    private func seconds(since start: Deadline) -> Double { Double(Deadline.now.nanoseconds - start.nanoseconds) / 1e9 }

    /// Cancelled while it waits for the response (handshake done, request sent, the server
    /// silent): the send ends within 100 ms with `.cancelled`, and the connection is closed, not
    /// pooled: the next request opens a fresh one.
    func testCancellingDuringTheResponseWaitEndsWithin100msAndTheConnectionIsNotReused() async throws {
        let connections = SharedCount()
        let server = try HostileServer { connection in
            let number = connections.value.withLock {
                $0 += 1
                return $0
            }
            guard connection.handshake(), connection.readRequest() != nil else { return }
            if number == 1 {
                connection.awaitClose(30)  // stalls: never answers
            } else {
                _ = connection.respond(text: "second")
                connection.awaitClose(5)
            }
        }
        defer { server.stop() }
        let client = try HostileServerTests.makeClient(timeouts: .uniform(.seconds(60)))
        let url = try server.url()
        let task = Task { () -> (HTTPSError.Phase?, Deadline) in
            do throws(HTTPSError) {
                _ = try await client.send(HTTPRequest(url: url))
                return (nil, .now)
            } catch {
                return (error.phase, .now)
            }
        }
        try await Task.sleep(nanoseconds: 500_000_000)
        let cancelledAt = Deadline.now
        task.cancel()
        let (phase, endedAt) = await task.value
        XCTAssertEqual(phase, .cancelled)
        let latency = Double(endedAt.nanoseconds - cancelledAt.nanoseconds) / 1e9
        XCTAssertLessThan(latency, 0.1, "the send ended \(Int(latency * 1000)) ms after its task was cancelled")
        let next = try await client.send(HTTPRequest(url: url))
        XCTAssertEqual(next.status, 200)
        XCTAssertFalse(next.reusedConnection, "a cancelled exchange's connection is never pooled")
        XCTAssertEqual(connections.value.withLock { $0 }, 2)
    }

    /// A server that trickles its body (a byte every 50 ms, idle timeout never reached) is stopped
    /// by cancellation as promptly as a silent one: the per-phase timeouts are not what ends it.
    func testCancellingADripFedBodyEndsPromptly() async throws {
        let server = try HostileServer { connection in
            guard connection.handshake(), connection.readRequest() != nil else { return }
            _ = connection.send("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            _ = connection.drip(Array(repeating: UInt8(ascii: "x"), count: 1000), every: 0.05)
        }
        defer { server.stop() }
        let client = try HostileServerTests.makeClient(timeouts: .uniform(.seconds(60)))
        let url = try server.url()
        let task = Task { () -> (HTTPSError.Phase?, Deadline) in
            do throws(HTTPSError) {
                _ = try await client.send(HTTPRequest(url: url))
                return (nil, .now)
            } catch {
                return (error.phase, .now)
            }
        }
        try await Task.sleep(nanoseconds: 400_000_000)
        let cancelledAt = Deadline.now
        task.cancel()
        let (phase, endedAt) = await task.value
        XCTAssertEqual(phase, .cancelled)
        XCTAssertLessThan(Double(endedAt.nanoseconds - cancelledAt.nanoseconds) / 1e9, 0.1)
    }

    /// The per-phase timeouts keep their meaning on the engine: a silent server ends the
    /// handshake at the handshake timeout with `.timeout`, not sooner and not at the total.
    func testTheHandshakeTimeoutStillEndsASilentHandshake() async throws {
        let listener = try SilentListener()
        let anchors = try HTTPFixtures.certificates("root-ca.pem")
        let client = try HTTPSClient(
            configuration: TLSClientConfiguration(
                trust: TrustPolicy(anchors: anchors), timeouts: Timeouts(connect: .seconds(5), handshake: .milliseconds(400), idleRead: .seconds(30), total: .seconds(30))))
        let start = Deadline.now
        do throws(HTTPSError) {
            _ = try await client.send(HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/")))
            XCTFail("a silent server answered")
        } catch {
            XCTAssertEqual(error.phase, .timeout, "\(error)")
        }
        let waited = seconds(since: start)
        XCTAssertGreaterThanOrEqual(waited, 0.39)
        XCTAssertLessThan(waited, 5)
    }

    /// Two hundred sends stalled on a silent server hold no thread each (they wait on the
    /// engine's loops), and cancelling them all ends every one with `.cancelled`.
    func testStalledSendsHoldNoThreadAndAllEndOnCancellation() async throws {
        let listener = try SilentListener(backlog: 512)
        let client = try client()
        let request = HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/"))
        func threads() -> Int {
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
            return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? -1
        }
        let before = threads()
        let tasks = (0..<200).map { _ in
            Task { () -> HTTPSError.Phase? in
                do throws(HTTPSError) {
                    _ = try await client.send(request)
                    return nil
                } catch {
                    return error.phase
                }
            }
        }
        try await Task.sleep(nanoseconds: 700_000_000)
        let during = threads()
        if before > 0 {
            XCTAssertLessThan(during - before, 16, "200 stalled sends took threads: \(before) before, \(during) during")
        }
        let start = Deadline.now
        tasks.forEach { $0.cancel() }
        var phases: [HTTPSError.Phase?] = []
        for task in tasks { phases.append(await task.value) }
        XCTAssertEqual(phases, [HTTPSError.Phase?](repeating: .cancelled, count: 200))
        XCTAssertLessThan(seconds(since: start), 2, "200 cancellations took \(seconds(since: start)) s")
    }
}

/// A count shared with escaping closures.
final class SharedCount: Sendable {
    let value = Locked(0)
}

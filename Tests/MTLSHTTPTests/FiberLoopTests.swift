import Foundation
import MTLSTestServer
import Synchronization
import XCTest

@testable import MTLSHTTP

/// The event loop of `probe --targets`: many blocking-style jobs parked on a few threads' epoll,
/// woken by readiness, by their deadline or by a helper thread, and the real TLS client on it.
final class FiberLoopTests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipUnless(FiberLoop.isSupported, "fibers are Linux-only; elsewhere the fleet keeps a thread per worker")
    }

    /// Readers wait on sockets whose writer is another job of the same run: only a loop that parks
    /// the reader and runs the writer on the same thread can finish (one thread, all jobs at once).
    func testAParkedReaderIsWokenByAWriterOnTheSameThread() throws {
        let pairs = 200
        var sockets: [(SocketHandle, SocketHandle)] = []
        for _ in 0..<pairs {
            var fds: [Int32] = [0, 0]
            XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            sockets.append((SocketHandle(fd: fds[0]), SocketHandle(fd: fds[1])))
        }
        let shared = sockets
        let received = Mutex([UInt8?](repeating: nil, count: pairs))
        // Readers are the even jobs and start first; each writer comes after its reader parked.
        let statistics = try XCTUnwrap(
            FiberLoop.run(count: 2 * pairs, concurrency: 2 * pairs, threads: 1) { job in
                let (reader, writer) = shared[job / 2]
                if job % 2 == 0 {
                    guard reader.wait(forRead: true, forWrite: false, until: .after(.seconds(30))) else { return }
                    var byte: UInt8 = 0
                    if recv(reader.fd, &byte, 1, 0) == 1 { received.withLock { $0[job / 2] = byte } }
                } else {
                    var byte = UInt8(truncatingIfNeeded: job / 2)
                    _ = send(writer.fd, &byte, 1, Int32(MSG_NOSIGNAL))
                }
            })
        XCTAssertEqual(received.withLock { $0 }, (0..<pairs).map { UInt8(truncatingIfNeeded: $0) })
        XCTAssertEqual(statistics.loopThreads, 1)
        XCTAssertEqual(statistics.peakFibers, 2 * pairs, "every job was alive at once")
        XCTAssertGreaterThanOrEqual(statistics.parks, pairs, "each reader parked at least once")
    }

    /// A wait with nothing to read ends at its deadline and says so; the other fibers' timers are
    /// independent (each job its own deadline, all at once on two threads).
    func testAWaitEndsAtItsDeadlineWithFalse() throws {
        let count = 300
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[1]) }
        let silent = SocketHandle(fd: fds[0])
        let outcomes = Mutex([Bool?](repeating: nil, count: count))
        let statistics = try XCTUnwrap(
            FiberLoop.run(count: count, concurrency: count, threads: 2) { job in
                let deadline = Deadline.after(.milliseconds(20 + job % 7))
                let ready = silent.wait(forRead: true, forWrite: false, until: deadline)
                // False, and not before the deadline (nil marks either fault).
                outcomes.withLock { $0[job] = ready || Deadline.now < deadline ? nil : false }
            })
        XCTAssertEqual(outcomes.withLock { $0 }, [Bool?](repeating: false, count: count))
        XCTAssertLessThanOrEqual(statistics.loopThreads, 2)
        // At least one loop held its whole share at once (the other may start after some finished).
        XCTAssertGreaterThanOrEqual(statistics.peakFibers, count / 2)
    }

    /// Work offloaded from a fiber (a name lookup) runs on a helper thread and its value comes back
    /// to the fiber that asked; off a fiber it runs in place.
    func testOffloadedWorkReturnsItsValueToTheFiberThatAsked() throws {
        let count = 100
        let values = Mutex([Int?](repeating: nil, count: count))
        let statistics = try XCTUnwrap(
            FiberLoop.run(count: count, concurrency: 50, threads: 2) { job in
                let caller = pthread_self()
                let value = FiberLoop.offload { () -> Int in
                    // Not the loop thread: a helper.
                    pthread_equal(pthread_self(), caller) == 0 ? job * 3 : -1
                }
                values.withLock { $0[job] = value }
            })
        XCTAssertEqual(values.withLock { $0 }, (0..<count).map { $0 * 3 })
        // Each loop's peak, summed: a loop that started late may find fewer jobs left.
        XCTAssertLessThanOrEqual(statistics.peakFibers, 50, "never more than the concurrency")
        XCTAssertGreaterThan(statistics.helperThreads, 0)
        XCTAssertLessThanOrEqual(statistics.helperThreads, 4)
        XCTAssertEqual(FiberLoop.offload { 7 }, 7)
    }

    /// The real client on fibers: 120 HTTPS requests at once (TLS 1.2, then TLS 1.3 with the
    /// certificate asked for after the request), every one answered, on two loop threads.
    func testHTTPSRequestsAllRunAtOnceOnTwoThreads() throws {
        for version in [TLSVersion.tls1_2, .tls1_3] {
            let server = try HTTPFixtures.startServer(maximumVersion: version)
            defer { server.stop() }
            let count = 120
            let url = try HTTPFixtures.url(server, "/secure")
            let statuses = Mutex([Int?](repeating: nil, count: count))
            let statistics = try XCTUnwrap(
                FiberLoop.run(count: count, concurrency: count, threads: 2) { job in
                    // A client per job, as each probe of a fleet has its own.
                    guard let client = try? HTTPFixtures.client(identity: "p12/client-alice-legacy-rc2.p12") else { return }
                    let status = try? client.send(HTTPRequest(url: url)).status
                    statuses.withLock { $0[job] = status }
                })
            XCTAssertEqual(statuses.withLock { $0 }, [Int?](repeating: 200, count: count), "\(version)")
            XCTAssertLessThanOrEqual(statistics.loopThreads, 2)
            XCTAssertGreaterThan(statistics.peakFibers, 1, "requests overlapped")
            XCTAssertGreaterThanOrEqual(statistics.parks, count, "each request waited for its server at least once")
        }
    }
}

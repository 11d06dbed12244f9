import Foundation
import MTLSTrust  // Locked
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

@testable import MTLSHTTP

/// The I/O engine (Transport/Engine.swift): a wait ends when its descriptor is ready or its
/// deadline passes, many waits share a few loop threads, the blocking API is the same code
/// waited for, and a library user's fan-out of real HTTPS requests overlaps on those threads.
final class EngineTests: XCTestCase {
    /// A connected pair of non-blocking sockets, owned by handles.
    private func socketPair() throws -> (SocketHandle, SocketHandle) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw XCTSkip("socketpair failed")
        }
        return (SocketHandle(fd: fds[0]), SocketHandle(fd: fds[1]))
    }

    /// The threads of this process now.
    private func threadCount() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return -1 }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? -1
    }

    func testAWaitEndsWhenItsDescriptorBecomesReadable() async throws {
        let (reader, writer) = try socketPair()
        let start = Deadline.now
        async let ready = reader.wait(forRead: true, forWrite: false, until: .after(30))
        try await Task.sleep(nanoseconds: 50_000_000)
        var byte: UInt8 = 1
        XCTAssertEqual(send(writer.fd, &byte, 1, 0), 1)
        let wasReady = await ready
        XCTAssertTrue(wasReady)
        let waited = Double(Deadline.now.nanoseconds - start.nanoseconds) / 1e9
        XCTAssertLessThan(waited, 5, "the wait ended on readiness, not on its 30 s deadline")
    }

    /// A thousand waits with nothing to read, on a handful of loop threads: each ends at its own
    /// deadline, says so, and none holds a thread while it waits.
    func testManyWaitsEndAtTheirDeadlinesWithoutAThreadEach() async throws {
        var pairs: [(SocketHandle, SocketHandle)] = []
        for _ in 0..<500 { pairs.append(try socketPair()) }
        let threadsBefore = threadCount()
        let peak = Locked(0)
        let start = Deadline.now
        let results = await withTaskGroup(of: (Bool, Double, Double).self) { group in
            for (index, pair) in pairs.enumerated() {
                let reader = pair.0
                // Deadlines spread over 200–700 ms.
                let seconds = 0.2 + Double(index % 50) / 100
                group.addTask {
                    let ready = await reader.wait(forRead: true, forWrite: false, until: .after(seconds))
                    return (ready, seconds, Double(Deadline.now.nanoseconds - start.nanoseconds) / 1e9)
                }
            }
            try? await Task.sleep(nanoseconds: 100_000_000)
            let now = threadCount()
            peak.withLock { $0 = now }
            var all: [(Bool, Double, Double)] = []
            for await result in group { all.append(result) }
            return all
        }
        XCTAssertEqual(results.count, 500)
        XCTAssertTrue(results.allSatisfy { !$0.0 }, "nothing was readable: every wait ends on its deadline")
        for (_, asked, ended) in results {
            XCTAssertGreaterThanOrEqual(ended, asked - 0.01, "a wait ended before its deadline")
            XCTAssertLessThan(ended, asked + 2.0, "a wait overran its deadline by seconds")
        }
        let during = peak.withLock { $0 }
        if threadsBefore > 0, during > 0 {
            XCTAssertLessThan(during - threadsBefore, 16, "500 waits at once took threads: \(threadsBefore) before, \(during) during")
        }
        withExtendedLifetime(pairs) {}
    }

    /// Shutting a socket down (what a cancellation does) ends the wait on it at once.
    func testShuttingASocketDownEndsItsWait() async throws {
        let (reader, writer) = try socketPair()
        let start = Deadline.now
        async let ready = reader.wait(forRead: true, forWrite: false, until: .after(30))
        try await Task.sleep(nanoseconds: 50_000_000)
        reader.shutdownBoth()
        _ = await ready
        XCTAssertLessThan(Double(Deadline.now.nanoseconds - start.nanoseconds) / 1e9, 1.0)
        withExtendedLifetime(writer) {}
    }

    /// The blocking form is the same wait, driven: ready when there is data, false at the deadline.
    func testTheBlockingFormIsTheSameWait() throws {
        let (reader, writer) = try socketPair()
        let start = Deadline.now
        XCTAssertFalse(reader.wait(forRead: true, forWrite: false, until: .after(0.15)))
        XCTAssertGreaterThanOrEqual(Double(Deadline.now.nanoseconds - start.nanoseconds) / 1e9, 0.14)
        var byte: UInt8 = 1
        XCTAssertEqual(send(writer.fd, &byte, 1, 0), 1)
        XCTAssertTrue(reader.wait(forRead: true, forWrite: false, until: .after(5)))
        XCTAssertTrue(writer.wait(forRead: false, forWrite: true, until: .after(5)))
    }

    /// A cancellation from another thread (``SocketHandle/shutdownBoth()``) ends a blocking wait
    /// at once, as it ends an async one: the blocking form polls the socket on its own thread.
    func testShuttingASocketDownEndsABlockingWait() throws {
        let (reader, writer) = try socketPair()
        let start = Deadline.now
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { reader.shutdownBoth() }
        _ = reader.wait(forRead: true, forWrite: false, until: .after(30))
        XCTAssertLessThan(Double(Deadline.now.nanoseconds - start.nanoseconds) / 1e9, 1.0, "the shutdown did not end the blocking wait")
        withExtendedLifetime(writer) {}
    }

    /// Inside a blocking call, a wait for a socket is the thread's own `poll` while the call's
    /// task is alone on its driven loop (no suspension and resumption around it), and it ends as
    /// the loop's wait would: ready, at its deadline, or by a shutdown from another thread. With a
    /// second task queued on the loop, the wait goes through the loop, so that task runs meanwhile
    /// (here it is the one that makes the socket readable: polled in place, the wait would end at
    /// its deadline instead).
    func testABlockingCallsWaitIsItsThreadsOwnPollOnlyWhileItsTaskIsAlone() throws {
        let (reader, writer) = try socketPair()
        XCTAssertTrue(Engine.blocking { () async -> Bool in EventLoop.current?.hasOnlyTheCallingTask == true })
        XCTAssertFalse(Engine.blocking { () async -> Bool in await reader.wait(forRead: true, forWrite: false, until: .after(0.05)) })
        let (shutReader, shutWriter) = try socketPair()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { shutReader.shutdownBoth() }
        XCTAssertTrue(
            Engine.blocking { () async -> Bool in await shutReader.wait(forRead: true, forWrite: false, until: .after(20)) },
            "the shutdown did not end the wait (it ran to its deadline)")
        let (alone, ready) = Engine.blocking { () async -> (Bool, Bool) in
            guard let loop = EventLoop.current else { return (true, false) }
            let other = Task(executorPreference: loop) {
                var byte: UInt8 = 1
                _ = send(writer.fd, &byte, 1, 0)
            }
            let alone = loop.hasOnlyTheCallingTask
            let ready = await reader.wait(forRead: true, forWrite: false, until: .after(20))
            await other.value
            return (alone, ready)
        }
        XCTAssertFalse(alone, "a second task was queued on the loop")
        XCTAssertTrue(ready, "the task that writes did not run during the wait")
        withExtendedLifetime(shutWriter) {}
    }

    /// A thread keeps its driven loop between blocking calls (a blocking `send` in a row costs a
    /// task, not a new loop), and a blocking call made inside another gets a loop of its own, so
    /// the outer one is not turned from inside itself.
    func testABlockingCallReusesItsThreadsLoopAndANestedOneGetsAnother() throws {
        func currentLoop() -> ObjectIdentifier? { EventLoop.current.map(ObjectIdentifier.init) }
        let first = Engine.blocking { () async -> ObjectIdentifier? in currentLoop() }
        let (outer, nested) = Engine.blocking { () async -> (ObjectIdentifier?, ObjectIdentifier?) in
            (currentLoop(), Engine.blocking { () async -> ObjectIdentifier? in currentLoop() })
        }
        let after = Engine.blocking { () async -> ObjectIdentifier? in currentLoop() }
        let again = Engine.blocking { () async -> ObjectIdentifier? in currentLoop() }
        XCTAssertNotNil(first)
        XCTAssertEqual(first, outer, "the thread's loop was not reused")
        XCTAssertNotNil(after)
        XCTAssertEqual(after, again, "the thread kept no loop after a nested call")
        XCTAssertNotNil(nested)
        XCTAssertNotEqual(outer, nested, "a nested blocking call ran on the loop that was waiting for it")
        XCTAssertNil(EventLoop.current, "the thread is no loop's once the call returned")
        // The loop carries nothing over: a wait with a deadline in one call does not end a later one early.
        let (reader, writer) = try socketPair()
        XCTAssertFalse(Engine.blocking { () async -> Bool in await reader.wait(forRead: true, forWrite: false, until: .after(0.05)) })
        var byte: UInt8 = 1
        XCTAssertEqual(send(writer.fd, &byte, 1, 0), 1)
        XCTAssertTrue(Engine.blocking { () async -> Bool in await reader.wait(forRead: true, forWrite: false, until: .after(5)) })
    }

    /// A blocking call returns its task's answer, a thrown error as thrown, and nothing of the
    /// caller's closure outlives the call (`withoutActuallyEscaping` traps if the task still held
    /// it): many calls in a row, on a driven loop and from the global executor (the CLI's form),
    /// with a closure that captures a class, so that it has a context to hold.
    /// A driven loop's worker task keeps its loop alive while it waits for the next call, so a
    /// loop that is let go must end its worker: the loop a nested call left unkept, and the
    /// loop a thread kept when the thread ends. Each is freed, not leaked with its task.
    func testALoopLetGoEndsItsWorkerAndIsFreed() {
        final class WeakLoop: @unchecked Sendable {
            // @unchecked Sendable: written by the thread below before it ends, read after the join.
            weak var loop: EventLoop?
        }
        @Sendable func currentLoop(into box: WeakLoop) -> Int {
            box.loop = EventLoop.current
            return 1
        }
        // Weak references only to loops that must go: one to a loop the thread keeps would leave
        // its side table to the end of the process, which LeakSanitizer reports.
        @Sendable func currentLoopID() -> ObjectIdentifier? { EventLoop.current.map(ObjectIdentifier.init) }
        let outer = WeakLoop()
        let (outerSum, nested) = Engine.blocking { () async -> (Int, ObjectIdentifier?) in
            (currentLoop(into: outer), Engine.blocking { () async -> ObjectIdentifier? in currentLoopID() })
        }
        XCTAssertEqual(outerSum, 1)
        XCTAssertNil(outer.loop, "the outer call's loop, not kept (the thread keeps the nested one), was not freed")
        XCTAssertNotNil(nested)
        XCTAssertEqual(Engine.blocking { () async -> ObjectIdentifier? in currentLoopID() }, nested, "the thread did not keep the nested call's loop for its next call")

        let threads = WeakLoop()
        let ended = DispatchSemaphore(value: 0)
        Thread {
            XCTAssertEqual(Engine.blocking { () async -> Int in currentLoop(into: threads) }, 1)
            ended.signal()
        }.start()
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success)
        // The thread-specific destructors run as the thread ends, after its body: allow them a moment.
        for _ in 0..<400 where threads.loop != nil { usleep(5000) }
        XCTAssertNil(threads.loop, "the loop kept by a thread that ended was not freed")
    }

    func testABlockingCallAnswersAndLeavesNothingOfItsClosureBehind() {
        final class Captured: Sendable {
            let value: Int
            init(_ value: Int) { self.value = value }
        }
        struct Refused: Error, Equatable { let value: Int }
        for round in 0..<2000 {
            let captured = Captured(round)
            let onLoop = round.isMultiple(of: 2)
            XCTAssertEqual(Engine.blocking(onLoop: onLoop) { () async -> Int in captured.value }, round)
            XCTAssertThrowsError(
                try Engine.blocking(onLoop: onLoop) { () async throws(Refused) -> Int in
                    await Task.yield()  // a suspension: the answer comes from a later job
                    throw Refused(value: captured.value)
                }
            ) { XCTAssertEqual($0 as? Refused, Refused(value: round)) }
        }
    }

    /// A library user's fan-out: 120 `await client.send` at once in a task group (TLS 1.2, then
    /// TLS 1.3 with the certificate asked for after the request), every one answered, and they
    /// overlap on the engine's loops.
    func testAFanOutOfRealHTTPSRequestsOverlapsOnTheLoops() async throws {
        for version in [TLSVersion.tls1_2, .tls1_3] {
            let server = try HTTPFixtures.startServer(maximumVersion: version)
            defer { server.stop() }
            let count = 120
            let url = try HTTPFixtures.url(server, "/secure")
            let inFlight = InFlight()
            let statuses = await withTaskGroup(of: Int?.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        // A client per request, as each probe of a fleet has its own.
                        guard let client = try? HTTPFixtures.client(identity: "p12/client-alice-legacy-rc2.p12") else { return nil }
                        inFlight.counts.withLock {
                            $0.now += 1
                            $0.peak = max($0.peak, $0.now)
                        }
                        defer { inFlight.counts.withLock { $0.now -= 1 } }
                        do throws(HTTPSError) {
                            return try await client.send(HTTPRequest(url: url)).status
                        } catch {
                            return nil
                        }
                    }
                }
                var all: [Int?] = []
                for await status in group { all.append(status) }
                return all
            }
            XCTAssertEqual(statuses, [Int?](repeating: 200, count: count), "\(version)")
            XCTAssertGreaterThan(inFlight.counts.withLock { $0.peak }, 1, "requests overlapped")
        }
    }

    /// The engine's timer heap keeps deadlines in order, also after stale entries are dropped.
    func testTheTimerHeapPopsInDeadlineOrder() {
        var heap = TimerHeap()
        let base = Deadline.now.nanoseconds
        let offsets: [UInt64] = (0..<200).map { UInt64(($0 * 7919) % 200) }
        for (index, offset) in offsets.enumerated() { heap.push(.init(deadline: Deadline(nanoseconds: base + offset), fd: Int32(index), id: UInt64(index))) }
        heap.keep { $0.id % 2 == 0 }
        var popped: [UInt64] = []
        while let first = heap.first {
            popped.append(first.deadline.nanoseconds - base)
            heap.pop()
        }
        XCTAssertEqual(popped, offsets.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).sorted())
    }
}

/// Requests in flight now and at most, shared with a task group's children.
private final class InFlight: Sendable {
    let counts = Locked((now: 0, peak: 0))
}

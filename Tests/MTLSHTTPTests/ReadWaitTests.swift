import XCTest

@testable import MTLSHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The bound a blocking read sleeps under (`ReadWait`): what `SO_RCVTIMEO` is set to, when it is
/// left alone, and when a read must not sleep at all — on a real socket, read back with
/// `getsockopt`.
final class ReadWaitTests: XCTestCase {
    private var pair: [Int32] = [-1, -1]

    override func setUpWithError() throws {
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
    }

    override func tearDown() {
        pair.forEach { _ = close($0) }
    }

    private var fd: Int32 { pair[0] }

    /// `SO_RCVTIMEO` as the kernel holds it, in milliseconds (0: none), rounded to the nearest 10 ms:
    /// the kernel keeps it in clock ticks (4 ms at 250 Hz) and reads back 12,348 for 12,345.
    private func receiveTimeout() -> Int {
        var value = timeval()
        var length = socklen_t(MemoryLayout<timeval>.size)
        XCTAssertEqual(getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, &length), 0)
        return (value.tv_sec * 1000 + value.tv_usec / 1000 + 5) / 10 * 10
    }

    private func setReceiveTimeout(milliseconds: Int) {
        var value = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        XCTAssertEqual(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)), 0)
    }

    func testTheSleepIsBoundedByTheIdleTimeoutFromALadderBelowIt() {
        let wait = ReadWait(fd: fd)
        wait.begin(until: .after(120), idle: .seconds(30))
        XCTAssertEqual(wait.prepare(), 0, "time enough: the read sleeps")
        XCTAssertEqual(receiveTimeout(), 20_000, "the largest step under 30 s")
        XCTAssertEqual(wait.armedNanoseconds, 20_000_000_000)
    }

    func testTheTotalDeadlineBoundsTheSleepWhenItComesFirst() {
        let wait = ReadWait(fd: fd)
        wait.begin(until: .after(1.2), idle: .seconds(30))
        XCTAssertEqual(wait.prepare(), 0)
        XCTAssertEqual(receiveTimeout(), 1_000)
        let bound = try! XCTUnwrap(wait.waitBound)
        XCTAssertLessThanOrEqual(bound, Deadline.after(1.2))
        XCTAssertGreaterThan(bound, Deadline.after(1.0))
    }

    func testAKeptAliveConnectionSetsTheTimeoutOnce() {
        let wait = ReadWait(fd: fd)
        wait.begin(until: .after(120), idle: .seconds(30))
        _ = wait.prepare()
        // A value the ReadWait did not set: if a later read set the option again, it would be gone.
        setReceiveTimeout(milliseconds: 12_340)
        for _ in 0..<3 {
            wait.begin(until: .after(120), idle: .seconds(30))
            XCTAssertEqual(wait.prepare(), 0)
        }
        XCTAssertEqual(receiveTimeout(), 12_340, "the same bounds: no system call")
        // Too long for a shorter deadline: set again, lower.
        wait.begin(until: .after(3), idle: .seconds(30))
        XCTAssertEqual(wait.prepare(), 0)
        XCTAssertEqual(receiveTimeout(), 2_000)
        // Much too short for a long wait: set again, higher.
        wait.begin(until: .after(120), idle: .seconds(60))
        XCTAssertEqual(wait.prepare(), 0)
        XCTAssertEqual(receiveTimeout(), 20_000)
    }

    func testLittleTimeLeftOrNeverBlockReadsWithoutSleeping() {
        let wait = ReadWait(fd: fd)
        wait.begin(until: .after(0.05), idle: .seconds(30))
        XCTAssertEqual(wait.prepare(), Int32(MSG_DONTWAIT), "50 ms left: poll waits, to the millisecond")
        XCTAssertEqual(receiveTimeout(), 0, "nothing set")
        wait.begin(until: .after(60), idle: .seconds(30))
        wait.neverBlock = true
        XCTAssertEqual(wait.prepare(), Int32(MSG_DONTWAIT))
        XCTAssertNotNil(wait.waitBound)
    }

    func testNoDeadlineAndNoIdleTimeoutSleepsWithoutALimit() {
        let wait = ReadWait(fd: fd)
        wait.begin(until: .after(5), idle: nil)
        _ = wait.prepare()
        XCTAssertEqual(receiveTimeout(), 2_000)
        wait.begin(until: .distantFuture, idle: nil)
        XCTAssertEqual(wait.prepare(), 0)
        XCTAssertEqual(receiveTimeout(), 0, "none, as the caller asked")
        XCTAssertEqual(wait.waitBound, .distantFuture)
    }

    /// The kernel keeps the bound: a blocking `recv` with nothing to read returns `EAGAIN` within
    /// it, instead of sleeping for ever.
    func testABlockingReceiveReturnsWithinTheBound() {
        let wait = ReadWait(fd: fd)
        wait.begin(until: .after(0.4), idle: .seconds(30))
        let flags = wait.prepare()
        XCTAssertEqual(flags, 0)
        XCTAssertEqual(receiveTimeout(), 250)
        let started = Deadline.now
        var byte: UInt8 = 0
        let received = recv(fd, &byte, 1, flags)
        let savedErrno = errno
        let elapsed = Double(Deadline.now.nanoseconds - started.nanoseconds) / 1e9
        XCTAssertEqual(received, -1)
        XCTAssertTrue(savedErrno == EAGAIN || savedErrno == EWOULDBLOCK, "errno \(savedErrno)")
        XCTAssertGreaterThan(elapsed, 0.2)
        XCTAssertLessThan(elapsed, 5, "the receive slept past its bound")
    }
}

internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// A socket BIO that writes with `send(2)` and `MSG_NOSIGNAL`, and reads with `recv(2)` bounded by
/// a ``ReadWait``.
///
/// OpenSSL's own socket BIO writes with `write(2)`: a write on a connection the peer has reset (an
/// `SSL_write`, a renegotiation answer inside `SSL_read`, the close_notify sent on close) raises
/// SIGPIPE, whose default action kills the whole process. Blocking the signal around every SSL
/// call costs three system calls per call; this BIO makes the write fail with `EPIPE` instead,
/// which becomes an ``HTTPSError``, and touches no signal state. Writes never block
/// (`MSG_DONTWAIT`): a full send buffer is waited for with `poll`, as before. Control, creation and
/// destruction are OpenSSL's socket BIO's own functions.
enum SocketBIO {
    /// The method, made once per process (like OpenSSL's static methods, never freed).
    nonisolated(unsafe) private static let method: OpaquePointer? = makeMethod()

    private static func makeMethod() -> OpaquePointer? {
        guard let socket = BIO_s_socket(),
            let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "mtls socket (MSG_NOSIGNAL)")
        else { return nil }
        let write: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = { bio, data, length in
            guard let bio, let data, length > 0 else { return 0 }
            let fd = SocketBIO.descriptor(of: bio)
            errno = 0
            let written = send(fd, data, Int(length), Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)  // BIO_clear_retry_flags
            if written <= 0 && BIO_sock_should_retry(Int32(written)) != 0 { BIO_set_flags(bio, BIO_FLAGS_WRITE | BIO_FLAGS_SHOULD_RETRY) }
            return Int32(written)
        }
        // OpenSSL's `sock_read`, with the wait bounded first when the connection has a ReadWait.
        let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = { bio, data, length in
            guard let bio, let data, length > 0 else { return 0 }
            // With a ReadWait, its descriptor and its bound for this `recv`; without, OpenSSL's.
            let wait = SocketBIO.readWait(of: bio)
            let fd = wait?.fd ?? SocketBIO.descriptor(of: bio)
            let flags = wait?.prepare() ?? 0
            errno = 0
            let received = recv(fd, data, Int(length), flags)
            BIO_clear_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)  // BIO_clear_retry_flags
            if received <= 0 {
                if BIO_sock_should_retry(Int32(received)) != 0 {
                    BIO_set_flags(bio, BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY)
                } else if received == 0 {
                    BIO_set_flags(bio, BIO_FLAGS_IN_EOF)  // what BIO_eof reports: an end of stream, not an error
                }
            }
            return Int32(received)
        }
        guard BIO_meth_set_write(method, write) == 1,
            BIO_meth_set_read(method, read) == 1,
            BIO_meth_set_ctrl(method, BIO_meth_get_ctrl(socket)) == 1,
            BIO_meth_set_create(method, BIO_meth_get_create(socket)) == 1,
            BIO_meth_set_destroy(method, BIO_meth_get_destroy(socket)) == 1
        else {
            BIO_meth_free(method)
            return nil
        }
        return method
    }

    /// The ReadWait lent to the BIO by ``attach(_:fd:readWait:)``, if any.
    private static func readWait(of bio: OpaquePointer) -> ReadWait? {
        BIO_get_data(bio).map { Unmanaged<ReadWait>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The BIO's descriptor: kept by its ReadWait, when it has one, rather than asked for through
    /// `BIO_ctrl` on every read and write.
    private static func descriptor(of bio: OpaquePointer) -> Int32 {
        readWait(of: bio)?.fd ?? Int32(truncatingIfNeeded: BIO_ctrl(bio, BIO_C_GET_FD, 0, nil))
    }

    /// Attaches `fd` to `ssl` for reading and writing (the descriptor stays the caller's to close).
    ///
    /// - Parameter readWait: Bounds every `recv` on a blocking descriptor; it must outlive `ssl`
    ///   (the BIO holds it unretained). Nil for a non-blocking descriptor.
    /// - Returns: false when OpenSSL could not allocate the BIO.
    static func attach(_ ssl: OpaquePointer, fd: Int32, readWait: ReadWait? = nil) -> Bool {
        guard let method, let bio = BIO_new(method) else { return false }
        _ = BIO_int_ctrl(bio, BIO_C_SET_FD, Int(BIO_NOCLOSE), fd)
        if let readWait { BIO_set_data(bio, Unmanaged.passUnretained(readWait).toOpaque()) }
        SSL_set_bio(ssl, bio, bio)  // one reference, owned by the SSL from here on
        return true
    }
}

/// How long a read may sleep inside `recv` on a connection whose descriptor is blocking.
///
/// A client connection made outside a fiber loop has a blocking descriptor, so a read that finds
/// nothing sleeps in `recv` itself: one system call where a non-blocking descriptor takes `poll`
/// and then `read` (a kept-alive request makes two system calls instead of three; the C client's
/// blocking `read` is the model). The deadlines stay what they were. Before each `recv`, the BIO
/// asks ``prepare()``, which bounds the sleep by `SO_RCVTIMEO` to no more than the time left
/// (the operation's deadline, and the idle timeout counted from this `recv`): OpenSSL may call
/// `recv` many times inside one `SSL_read`, and each call is bounded again, so a server that
/// trickles bytes cannot stretch the deadline. `SO_RCVTIMEO` is set from a ladder of values a
/// little under the time left and changed only when the ladder moves, so a kept-alive connection
/// sets it once: when it runs out first, `recv` fails with `EAGAIN` and the connection's `poll`
/// waits out the exact rest (``waitBound``). Under 110 ms left, or when asked not to block, the
/// read does not sleep at all (`MSG_DONTWAIT`), and `poll` does the waiting as on a non-blocking
/// descriptor.
///
/// One thread at a time drives a connection, and with it this object.
final class ReadWait {
    /// The descriptor read from.
    let fd: Int32
    /// The operation's deadline.
    private var deadline = Deadline.distantFuture
    /// The idle timeout in nanoseconds, counted from each `recv`; 0 for none.
    private var idleNanoseconds: UInt64 = 0
    /// When true, a read never sleeps (reading only what is already buffered).
    var neverBlock = false
    /// `SO_RCVTIMEO` as set on the descriptor, in nanoseconds; `UInt64.max` for none (the default).
    private(set) var armedNanoseconds = UInt64.max
    /// The bound of the wait the last `recv` stood for (nil when none was made since ``begin``).
    private(set) var waitBound: Deadline?

    /// The values `SO_RCVTIMEO` takes (ms): a sleep is cut short at most once per step.
    private static let ladder: [UInt64] = [100, 250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 60_000, 300_000, 3_600_000].map { $0 * 1_000_000 }
    /// Kept between the ladder's value and the time left, for the kernel rounding a timeout up
    /// to its clock tick.
    private static let marginNanoseconds: UInt64 = 10_000_000

    init(fd: Int32) { self.fd = fd }

    /// Starts an SSL operation bounded by `deadline` and, per wait, `idle`.
    func begin(until deadline: Deadline, idle: Duration?) {
        self.deadline = deadline
        idleNanoseconds = idle.map { UInt64(max(0, $0.inSeconds) * 1_000_000_000) } ?? 0
        waitBound = nil
    }

    /// The `recv` flags for the next read, after bounding its sleep.
    func prepare() -> Int32 {
        let now = Deadline.now
        var bound = deadline
        if idleNanoseconds > 0 { bound = Deadline.earliest(bound, Deadline(nanoseconds: now.nanoseconds + idleNanoseconds)) }
        waitBound = bound
        // Made off a fiber loop, a connection may still be read on one (a client shared with it):
        // its thread must never sleep in `recv` there.
        if neverBlock || FiberLoop.isOnFiber { return Int32(MSG_DONTWAIT) }
        if bound == .distantFuture { return arm(UInt64.max) ? 0 : Int32(MSG_DONTWAIT) }
        let left = bound.nanoseconds > now.nanoseconds ? bound.nanoseconds - now.nanoseconds : 0
        guard left >= Self.ladder[0] + Self.marginNanoseconds else { return Int32(MSG_DONTWAIT) }
        let usable = left - Self.marginNanoseconds
        // Set again only when what is set is too long for the time left, or so short that a long
        // wait would wake many times.
        if armedNanoseconds > usable || armedNanoseconds < usable / 8 {
            let step = Self.ladder.last { $0 <= usable } ?? Self.ladder[0]
            guard arm(step) else { return Int32(MSG_DONTWAIT) }
        }
        return 0
    }

    /// Sets `SO_RCVTIMEO` (`UInt64.max`: none); false when the kernel refused.
    private func arm(_ nanoseconds: UInt64) -> Bool {
        if nanoseconds == armedNanoseconds { return true }
        var value = timeval()
        if nanoseconds != UInt64.max {
            value.tv_sec = Int(nanoseconds / 1_000_000_000)
            value.tv_usec = Int(nanoseconds % 1_000_000_000 / 1_000)
        }
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else { return false }
        armedNanoseconds = nanoseconds
        return true
    }
}

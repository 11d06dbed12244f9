internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// A socket BIO that writes with `send(2)` and `MSG_NOSIGNAL`, and reads with `recv(2)`, on a
/// non-blocking descriptor.
///
/// OpenSSL's own socket BIO writes with `write(2)`: a write on a connection the peer has reset (an
/// `SSL_write`, a renegotiation answer inside `SSL_read`, the close_notify sent on close) raises
/// SIGPIPE, whose default action kills the whole process. Blocking the signal around every SSL
/// call costs three system calls per call; this BIO makes the write fail with `EPIPE` instead,
/// which becomes an ``HTTPSError``, and touches no signal state. Neither call ever sleeps: "not
/// now" is `SSL_ERROR_WANT_READ`/`WANT_WRITE`, which the connection awaits on the engine loop.
/// Control, creation and destruction are OpenSSL's socket BIO's own functions.
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
        // OpenSSL's `sock_read`.
        let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = { bio, data, length in
            guard let bio, let data, length > 0 else { return 0 }
            let fd = SocketBIO.descriptor(of: bio)
            errno = 0
            let received = recv(fd, data, Int(length), Int32(MSG_DONTWAIT))
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

    /// The BIO's descriptor, kept in its data pointer by ``attach(_:fd:)`` rather than asked for
    /// through `BIO_ctrl` on every read and write.
    private static func descriptor(of bio: OpaquePointer) -> Int32 {
        Int32(truncatingIfNeeded: Int(bitPattern: BIO_get_data(bio)) - 1)
    }

    /// Attaches `fd` to `ssl` for reading and writing (the descriptor stays the caller's to close).
    ///
    /// - Returns: false when OpenSSL could not allocate the BIO.
    static func attach(_ ssl: OpaquePointer, fd: Int32) -> Bool {
        guard let method, let bio = BIO_new(method) else { return false }
        _ = BIO_int_ctrl(bio, BIO_C_SET_FD, Int(BIO_NOCLOSE), fd)
        // The descriptor plus one (never a null pointer), for the read and write callbacks.
        BIO_set_data(bio, UnsafeMutableRawPointer(bitPattern: Int(fd) + 1))
        SSL_set_bio(ssl, bio, bio)  // one reference, owned by the SSL from here on
        return true
    }
}

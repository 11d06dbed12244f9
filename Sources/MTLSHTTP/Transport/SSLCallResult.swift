internal import COpenSSL

/// What an SSL call that did not succeed asks for: `SSL_get_error`, read in this one place.
///
/// Every loop of SSL calls (the connection's handshakes, reads and writes; the server's wait for a
/// client certificate) switches over this, so "not now", "closed cleanly" and "failed" are told
/// apart the same way everywhere. `SSL_get_error` reads OpenSSL's error queue: the caller clears
/// the queue before the call it classifies.
enum SSLCallResult: Equatable {
    /// Not now: call again once the socket is readable (`SSL_ERROR_WANT_READ`).
    case wantRead
    /// Not now: call again once the socket is writable (`SSL_ERROR_WANT_WRITE`).
    case wantWrite
    /// The peer sent close_notify (`SSL_ERROR_ZERO_RETURN`).
    case closedCleanly
    /// A system call failed, or the peer closed without close_notify (`SSL_ERROR_SYSCALL`):
    /// `errno`, saved right after the call, says which (0: the end of the stream).
    case systemCall
    /// A TLS failure (`SSL_ERROR_SSL`, or a callback state the transport never sets up): the
    /// reasons are in OpenSSL's error queue.
    case failed

    /// Classifies `result`, the non-positive return of an SSL call on `ssl`.
    init(_ ssl: OpaquePointer, returned result: Int32) {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: self = .wantRead
        case SSL_ERROR_WANT_WRITE: self = .wantWrite
        case SSL_ERROR_ZERO_RETURN: self = .closedCleanly
        case SSL_ERROR_SYSCALL: self = .systemCall
        default: self = .failed
        }
    }

    /// True for the two "not now" answers, after which the socket is awaited.
    var wantsSocket: Bool { self == .wantRead || self == .wantWrite }
}

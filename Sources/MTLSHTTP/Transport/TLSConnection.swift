internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MTLSTrust
import Synchronization

/// Owns one `SSL_CTX*`.
final class SSLContextReference: @unchecked Sendable {
    // @unchecked Sendable: the SSL_CTX is configured in its owner's init, before it is shared, and
    // only read afterwards (SSL_new); OpenSSL locks the context's own session cache and counters.
    let pointer: OpaquePointer
    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { SSL_CTX_free(pointer) }
}

/// A TLS connection over a socket: handshake, read and write with deadlines, and a
/// record of everything that happened (``report``).
///
/// Not thread-safe, so not `Sendable`: one task at a time drives it (its async methods await the
/// engine loop; the blocking ones run the same steps and poll the socket on the calling thread).
/// Another task or thread stops it through its ``canceller``.
public final class TLSConnection {
    /// Aborts a connection from any thread: wakes a blocked read, write or handshake, and makes the
    /// connection's next operation throw `.cancelled`. Holds only the socket and a flag, never the
    /// `SSL*`, so that it is safe to send to another task.
    public struct Canceller: Sendable {
        fileprivate let socket: SocketHandle
        fileprivate let flag: CancelFlag

        /// Cancels the connection (idempotent; harmless after it closed).
        public func cancel() {
            flag.set()
            socket.shutdownBoth()
        }
    }

    fileprivate final class CancelFlag: Sendable {
        // An atomic, not a lock: every SSL call of every request reads it (twice).
        private let value = Atomic(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    let ssl: OpaquePointer
    let socket: SocketHandle
    let context: SSLContextReference
    let state: TLSConnectionState
    private let cancelFlag = CancelFlag()
    private var cancelled: Bool { cancelFlag.isSet || token?.isCancelled == true }
    /// A token whose cancellation aborts this connection's operations.
    var token: CancellationToken? {
        didSet { token?.register(socket) }
    }
    private var closed = false
    /// True after a write until the next read (see `read(into:count:deadline:idle:)`).
    private var wroteSinceRead = false
    /// True once the client stored this connection's session after a response (TLS 1.3 tickets).
    var sessionRefreshed = false
    /// Where the client keeps this connection's session for resumption (host, port and server
    /// name), set when it connects; nil on a server's connection.
    var sessionKey: String?
    /// A read buffer kept between the exchanges of a kept-alive connection.
    private var spareReadBuffer: [UInt8] = []
    package let label: String

    init(ssl: OpaquePointer, socket: SocketHandle, context: SSLContextReference, state: TLSConnectionState, label: String) {
        self.ssl = ssl
        self.socket = socket
        self.context = context
        self.state = state
        self.label = label
        SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(state).toOpaque())
    }

    deinit {
        SSL_set_ex_data(ssl, 0, nil)
        SSL_free(ssl)
        socket.close()
    }

    /// What has been observed so far.
    public var report: TLSSessionReport { state.report }

    /// Server side: the evaluation of the client's certificate, when one was presented.
    public var clientTrust: TrustEvaluation? { state.clientTrust }

    /// The peer's certificate (server: the client's), if any.
    public var peerCertificate: Certificate? {
        guard let x509 = SSL_get1_peer_certificate(ssl) else { return nil }
        return Certificate(takingX509: x509)
    }

    /// The negotiated version.
    public var version: TLSVersion? {
        switch SSL_version(ssl) {
        case TLSVersion.tls1_3.openSSLValue: .tls1_3
        case TLSVersion.tls1_2.openSSLValue: .tls1_2
        case TLSVersion.tls1_1.openSSLValue: .tls1_1
        case TLSVersion.tls1_0.openSSLValue: .tls1_0
        default: nil
        }
    }

    /// What another thread uses to abort this connection.
    public var canceller: Canceller { Canceller(socket: socket, flag: cancelFlag) }

    /// Aborts any later operation (the next call throws `.cancelled`); from another thread, use
    /// ``canceller``.
    public func cancel() { canceller.cancel() }

    // MARK: The loop of SSL calls and waits

    enum IOOutcome {
        case done
        case closedCleanly
    }

    /// The most renegotiations a client accepts on one connection (a server asking for a
    /// certificate needs one; a flood of them burns CPU until the total deadline).
    static let maximumRenegotiations = 32

    /// What one SSL call came to: its outcome, or the wait OpenSSL asks for before the next call.
    enum IOStep {
        case finished(IOOutcome)
        case awaitSocket(read: Bool, write: Bool)
    }

    /// Runs an SSL call until it completes, waiting on the socket as OpenSSL asks: the call is
    /// tried first and the socket awaited only when OpenSSL says "not now". (Reads and writes
    /// of application data take the same steps one call at a time: ``readStep(into:count:)``.)
    nonisolated(nonsending) func drive(_ phase: HTTPSError.Phase, until deadline: Deadline, idle: Duration? = nil, _ operation: () -> Int32)
        async throws(HTTPSError)
        -> IOOutcome
    {
        while true {
            switch try step(phase, operation) {
            case .finished(let outcome): return outcome
            case .awaitSocket(let read, let write): try await awaitSocket(read: read, write: write, phase, until: deadline, idle: idle)
            }
        }
    }

    /// The blocking form of ``drive(_:until:idle:_:)``: the same steps, and the waits on this
    /// thread (the test server's threads). No task, no loop.
    func drive(_ phase: HTTPSError.Phase, until deadline: Deadline, idle: Duration? = nil, _ operation: () -> Int32) throws(HTTPSError) -> IOOutcome {
        while true {
            switch try step(phase, operation) {
            case .finished(let outcome): return outcome
            case .awaitSocket(let read, let write): try awaitSocket(read: read, write: write, phase, until: deadline, idle: idle)
            }
        }
    }

    /// One SSL call and what it means: the state machine under both forms of `drive`.
    private func step(_ phase: HTTPSError.Phase, _ operation: () -> Int32) throws(HTTPSError) -> IOStep {
        if cancelled { throw HTTPSError(.cancelled, host: label, "the operation was cancelled") }
        OpenSSLErrorQueue.clear()  // SSL_get_error reads the queue: it must hold nothing older
        // No SIGPIPE can come of this: the socket BIO writes with MSG_NOSIGNAL (SocketBIO).
        errno = 0
        let result = operation()
        let savedErrno = errno  // before anything else can change it
        if let failure = state.trustFailure {
            state.trustFailure = nil
            throw failure
        }
        if !state.isServer && state.report.renegotiations > TLSConnection.maximumRenegotiations {
            throw HTTPSError(
                .tlsHandshake, host: label,
                "the server renegotiated more than \(TLSConnection.maximumRenegotiations) times on one connection; refused (a renegotiation flood?)",
                hint: "a server that wants a client certificate renegotiates once; this one does not stop")
        }
        if result > 0 { return .finished(.done) }
        let status = SSLCallResult(ssl, returned: result)
        // A cancellation shuts the socket down: the call it cut short (a read, a write) fails
        // as if the peer had ended the stream. It is the cancellation.
        if !status.wantsSocket && cancelled {
            throw HTTPSError(.cancelled, host: label, "the operation was cancelled")
        }
        switch status {
        case .wantRead:
            return .awaitSocket(read: true, write: false)
        case .wantWrite:
            return .awaitSocket(read: false, write: true)
        case .closedCleanly:
            return .finished(.closedCleanly)
        case .systemCall:
            let entries = drainErrors()
            let code = savedErrno
            state.log(code == 0 ? .peerClosed(closeNotify: false) : .socketError(operation: phase == .request ? "write" : "read", reason: String(cString: strerror(code))))
            if code != 0, phase == .request, let alert = pendingAlertAfterWriteFailure() { throw alert }
            if code == 0 {
                throw HTTPSError(
                    phase == .tlsHandshake ? .tlsHandshake : .io, host: label,
                    "the server closed the connection without a TLS close_notify\(phase == .tlsHandshake ? " during the handshake" : "")\(entries.isEmpty ? "" : " (\(entries))")",
                    hint: phase == .tlsHandshake ? "the server may not speak TLS on this port, or refuses our TLS version or SNI; try \(setting: .maximumTLSVersion) 1.2" : nil,
                    alert: lastAlert)
            }
            throw HTTPSError(
                phase == .tlsHandshake ? .tlsHandshake : .io, host: label,
                "the connection failed\(phase == .tlsHandshake ? " during the handshake" : ""): \(String(cString: strerror(code)))", alert: lastAlert)
        case .failed:
            let entries = OpenSSLErrorQueue.drain()
            throw classify(entries, phase: phase)
        }
    }

    /// Waits for the socket as OpenSSL asked, up to the deadline and the idle timeout.
    nonisolated(nonsending) private func awaitSocket(read: Bool, write: Bool, _ phase: HTTPSError.Phase, until deadline: Deadline, idle: Duration?) async throws(HTTPSError) {
        let wait = idle.map { Deadline.earliest(deadline, .after($0)) } ?? deadline
        if await !socket.wait(forRead: read, forWrite: write, until: wait) { throw waitEnded(phase, until: deadline, idle: idle, wait: wait) }
    }

    /// The blocking form of ``awaitSocket(read:write:_:until:idle:)``, on this thread.
    private func awaitSocket(read: Bool, write: Bool, _ phase: HTTPSError.Phase, until deadline: Deadline, idle: Duration?) throws(HTTPSError) {
        let wait = idle.map { Deadline.earliest(deadline, .after($0)) } ?? deadline
        if !socket.wait(forRead: read, forWrite: write, until: wait) { throw waitEnded(phase, until: deadline, idle: idle, wait: wait) }
    }

    /// Why a wait for the socket ended unready: a cancellation, or which timeout passed.
    private func waitEnded(_ phase: HTTPSError.Phase, until deadline: Deadline, idle: Duration?, wait: Deadline) -> HTTPSError {
        if cancelled { return HTTPSError(.cancelled, host: label, "the operation was cancelled") }
        let idleSeconds = idle?.inSeconds ?? 0
        let which = idle != nil && wait < deadline ? "no data for \(Int(idleSeconds)) s (idle timeout)" : "the deadline passed"
        let limits = state.clientConfiguration?.timeouts
        let seconds = idle != nil && wait < deadline ? idleSeconds : (phase == .tlsHandshake ? limits?.handshake : limits?.total)?.inSeconds ?? 0
        state.log(.timeout(during: phase == .io ? "the wait for the response" : phase.rawValue, seconds: seconds))
        return HTTPSError(.timeout, host: label, "\(phase.rawValue): \(which)", hint: "the server is slow or stalled; raise \(setting: .timeout)")
    }

    /// After a failed write, the alert the peer sent before it closed (and before its reset made
    /// our write fail) is still in the socket's receive queue: read it, so that the error names
    /// the alert and not whichever of alert, reset or `EPIPE` the timing let us see first. Reads
    /// only what is already buffered; nil when no alert was there.
    private func pendingAlertAfterWriteFailure() -> HTTPSError? {
        guard SSL_is_init_finished(ssl) == 1 else { return nil }
        let alertsBefore = state.report.alerts.count
        var scratch = [UInt8](repeating: 0, count: 16384)
        // Bounded: application data before the alert is discarded (the request failed anyway).
        for _ in 0..<64 {
            ERR_clear_error()
            var count = 0
            let ok = scratch.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, $0.count, &count) }
            if ok != 1 { break }
        }
        guard state.report.alerts.count > alertsBefore, state.report.alerts.last?.received == true else {
            ERR_clear_error()
            return nil
        }
        return classify(OpenSSLErrorQueue.drain(), phase: .request)
    }

    private var lastAlert: String? { state.report.alerts.last.map { "\($0.received ? "received" : "sent") \($0.description)" } }

    private func drainErrors() -> String { OpenSSLErrorQueue.drain().map(\.reason).joined(separator: "; ") }

    private func classify(_ entries: [OpenSSLErrorEntry], phase: HTTPSError.Phase) -> HTTPSError {
        let reasons = entries.map(\.reason)
        let text = reasons.joined(separator: "; ")
        let alert = state.report.alerts.last(where: { $0.received })
        if reasons.contains("unexpected eof while reading") {
            state.log(.peerClosed(closeNotify: false))
            if phase == .tlsHandshake {
                return HTTPSError(
                    .tlsHandshake, host: label, "the server closed the connection without a TLS close_notify during the handshake",
                    hint: "the server may not speak TLS on this port, or refuses our TLS version or SNI; try \(setting: .maximumTLSVersion) 1.2", alert: lastAlert)
            }
            return HTTPSError(.io, host: label, "the connection ended without a TLS close_notify: the data may be truncated", hint: "the server or a middlebox cut the connection")
        }
        if let alert {
            var hint: Hint? = nil
            switch alert.description {
            case "handshake failure": hint = "no common TLS version or cipher, or the server required a client certificate we did not send"
            case "protocol version": hint = "the server refuses our TLS version; try \(setting: .maximumTLSVersion) 1.2 or \(setting: .minimumTLSVersion) 1.2"
            case "certificate required": hint = "the server requires a client certificate: pass \(setting: .clientIdentity)"
            case "unknown ca", "bad certificate", "certificate unknown": hint = "the server does not trust our client certificate: it must be issued by a CA the server accepts"
            case "certificate expired": hint = "our client certificate has expired"
            case "certificate revoked": hint = "our client certificate has been revoked"
            case "no renegotiation": hint = "the server refused to renegotiate"
            default: break
            }
            return HTTPSError(
                phase == .tlsHandshake ? .tlsHandshake : .io, host: label, "the server sent the TLS alert \"\(alert.description)\"\(text.isEmpty ? "" : " (\(text))")", hint: hint,
                alert: alert.description)
        }
        if reasons.contains("unsafe legacy renegotiation disabled") {
            return HTTPSError(
                .tlsHandshake, host: label, "the server asked to renegotiate without RFC 5746 secure renegotiation; refused",
                hint: "only if you trust the network, allow it with \(setting: .legacyRenegotiation)", alert: lastAlert)
        }
        if reasons.contains("wrong version number") || reasons.contains("packet length too long") || reasons.contains("record layer failure") {
            return HTTPSError(
                .tlsHandshake, host: label, "the server did not answer with TLS (\(text))", hint: "is this an HTTPS port? plain HTTP or another protocol answers here")
        }
        if reasons.contains("unsupported protocol") || reasons.contains("no protocols available") {
            return HTTPSError(
                .tlsHandshake, host: label, "no TLS version in common with the server (\(text))",
                hint: "the server may only speak TLS 1.0/1.1, which is refused unless asked for with \(setting: .minimumTLSVersion) 1.0")
        }
        return HTTPSError(phase == .request || phase == .httpParse ? .io : phase, host: label, text.isEmpty ? "TLS failure" : text, alert: lastAlert)
    }

    // MARK: Reading and writing

    /// Reads up to `count` bytes; an empty result means the peer closed cleanly (close_notify).
    ///
    /// `buffer` may be empty: it is sized only once the socket is readable, so that a connection
    /// waiting for its answer (a fleet's thousand probes, each waiting for a slow server) holds no
    /// read buffer while it waits.
    public func read(into buffer: inout [UInt8], count: Int = 16384, deadline: Deadline, idle: Duration?) async throws(HTTPSError) -> Int {
        try await readHere(into: &buffer, count: count, deadline: deadline, idle: idle)
    }

    /// ``read(into:count:deadline:idle:)`` on the caller's executor (the exchange's loop): no
    /// executor switch on entry.
    nonisolated(nonsending) func readHere(into buffer: inout [UInt8], count: Int = 16384, deadline: Deadline, idle: Duration?) async throws(HTTPSError) -> Int {
        if waitsForDataFirst() { try await awaitSocket(read: true, write: false, .io, until: deadline, idle: idle) }
        // The loop of `drive`, except that a buffer this call made is dropped again while it
        // waits: what woke it may hold nothing for the caller (a TLS 1.3 session ticket, part of
        // a record). A buffer the caller brought is kept.
        let callersBuffer = buffer.count >= count
        while true {
            switch try readStep(into: &buffer, count: count) {
            case (.finished(.done), let readCount): return readCount
            case (.finished(.closedCleanly), _): return 0
            case (.awaitSocket(let read, let write), _):
                if !callersBuffer { buffer = [] }
                try await awaitSocket(read: read, write: write, .io, until: deadline, idle: idle)
            }
        }
    }

    /// One `SSL_read_ex` into `buffer` (sized first): the step, and the bytes read when it is
    /// `.done`. Synchronous, like ``writeStep(_:from:)``, so that its locals live on the thread's
    /// stack: in the async caller, a local whose address is taken costs a task allocation on
    /// every call.
    private func readStep(into buffer: inout [UInt8], count: Int) throws(HTTPSError) -> (IOStep, read: Int) {
        sizeReadBuffer(&buffer, count: count)
        var readCount = 0
        let ssl = self.ssl
        let step = try step(.io, { TLSConnection.readOnce(ssl, into: &buffer, count: count, readCount: &readCount) })
        return (step, readCount)
    }

    /// The blocking form of ``read(into:count:deadline:idle:)``: the same steps, waiting on this thread.
    public func read(into buffer: inout [UInt8], count: Int = 16384, deadline: Deadline, idle: Duration?) throws(HTTPSError) -> Int {
        if waitsForDataFirst() { try awaitSocket(read: true, write: false, .io, until: deadline, idle: idle) }
        while true {
            switch try readStep(into: &buffer, count: count) {
            case (.finished(.done), let readCount): return readCount
            case (.finished(.closedCleanly), _): return 0
            case (.awaitSocket(let read, let write), _): try awaitSocket(read: read, write: write, .io, until: deadline, idle: idle)
            }
        }
    }

    /// True when the read should wait for the socket before its first call.
    private func waitsForDataFirst() -> Bool {
        // Right after our request nothing can be buffered yet: wait for data instead of reading
        // into EAGAIN first (one system call less per request on a kept-alive connection).
        let readableFirst = wroteSinceRead && SSL_has_pending(ssl) == 0
        wroteSinceRead = false
        return readableFirst
    }

    private func sizeReadBuffer(_ buffer: inout [UInt8], count: Int) {
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
    }

    /// One `SSL_read_ex`, as `drive` wants it: 1 when bytes were read.
    private static func readOnce(_ ssl: OpaquePointer, into buffer: inout [UInt8], count: Int, readCount: inout Int) -> Int32 {
        buffer.withUnsafeMutableBytes { raw in
            var n = 0
            let ok = SSL_read_ex(ssl, raw.baseAddress, count, &n)
            readCount = n
            return ok == 1 ? Int32(1) : ok
        }
    }

    /// The connection's read buffer kept from its previous exchange, or an empty one that the
    /// first read sizes once data is there; hand it back with `keepReadBuffer`.
    func takeReadBuffer() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &spareReadBuffer)
        return taken
    }

    func keepReadBuffer(_ buffer: [UInt8]) { spareReadBuffer = buffer }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8], deadline: Deadline) async throws(HTTPSError) {
        try await writeHere(bytes, deadline: deadline)
    }

    /// ``write(_:deadline:)`` on the caller's executor (the exchange's loop): no executor switch
    /// on entry.
    nonisolated(nonsending) func writeHere(_ bytes: [UInt8], deadline: Deadline) async throws(HTTPSError) {
        var offset = 0
        while offset < bytes.count {
            switch try writeStep(bytes, from: offset) {
            case (.finished(.done), let written): offset += written
            case (.finished(.closedCleanly), _): throw closedWhileSending()
            case (.awaitSocket(let read, let write), _): try await awaitSocket(read: read, write: write, .request, until: deadline, idle: nil)
            }
        }
        wroteSinceRead = true
    }

    /// One `SSL_write_ex` of `bytes` from `start`: the step, and the bytes written when it is
    /// `.done`. Synchronous, for the reason ``readStep(into:count:)`` is.
    private func writeStep(_ bytes: [UInt8], from start: Int) throws(HTTPSError) -> (IOStep, written: Int) {
        var written = 0
        let ssl = self.ssl
        let step = try step(.request, { TLSConnection.writeOnce(ssl, bytes, from: start, written: &written) })
        return (step, written)
    }

    /// The blocking form of ``write(_:deadline:)``: the same steps, waiting on this thread.
    public func write(_ bytes: [UInt8], deadline: Deadline) throws(HTTPSError) {
        var offset = 0
        while offset < bytes.count {
            switch try writeStep(bytes, from: offset) {
            case (.finished(.done), let written): offset += written
            case (.finished(.closedCleanly), _): throw closedWhileSending()
            case (.awaitSocket(let read, let write), _): try awaitSocket(read: read, write: write, .request, until: deadline, idle: nil)
            }
        }
        wroteSinceRead = true
    }

    /// One `SSL_write_ex` of what is left from `start`.
    private static func writeOnce(_ ssl: OpaquePointer, _ bytes: [UInt8], from start: Int, written: inout Int) -> Int32 {
        bytes.withUnsafeBytes { raw in SSL_write_ex(ssl, raw.baseAddress! + start, raw.count - start, &written) }
    }

    private func closedWhileSending() -> HTTPSError {
        HTTPSError(.io, host: label, "the server closed the connection while we were sending")
    }

    /// Sends close_notify (best effort: only when the send buffer takes it at once, so a close
    /// never waits) and closes the socket.
    public func close() {
        guard !closed else { return }
        closed = true
        if !cancelled { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
        socket.close()
    }

    /// Server side: sends close_notify, stops writing, and drains what the client still sends for a
    /// moment before closing, so that an early answer (413, 403) is not lost to a TCP reset.
    public func lingeringClose(seconds: Double = 1.0, maximumBytes: Int = 4 << 20) {
        guard !closed else { return }
        closed = true
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        _ = Glibc.shutdown(socket.fd, Int32(SHUT_WR))
        let deadline = Deadline.after(seconds)
        var drained = 0
        var buffer = [UInt8](repeating: 0, count: 16384)
        while drained < maximumBytes, socket.wait(forRead: true, forWrite: false, until: deadline) {
            let n = recv(socket.fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            drained += n
        }
        socket.close()
    }

    /// When the connection went back to the idle pool (keep-alive), for ``HTTPSClient``.
    var idleSince: Deadline?

    /// True when OpenSSL holds decrypted or buffered bytes not read yet (no system call).
    var hasPendingTLSData: Bool { SSL_has_pending(ssl) == 1 }

    /// True when the socket has data waiting, or the peer closed (for keep-alive reuse checks).
    var isReadableNow: Bool {
        if SSL_has_pending(ssl) == 1 { return true }
        var pfd = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 0) > 0
    }

    func fillSessionFacts() {
        if let cipher = SSL_get_current_cipher(ssl), let name = SSL_CIPHER_get_name(cipher) { state.report.cipher = String(cString: name) }
        if let version = SSL_get_version(ssl) { state.report.version = String(cString: version) }
        var alpnPointer: UnsafePointer<UInt8>? = nil
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpnPointer, &alpnLength)
        if let alpnPointer, alpnLength > 0 {
            state.report.alpn = String(decoding: UnsafeBufferPointer(start: alpnPointer, count: Int(alpnLength)), as: UTF8.self)
        }
        state.report.resumed = SSL_session_reused(ssl) == 1
        state.report.secureRenegotiation = mtls_SSL_get_secure_renegotiation_support(ssl) == 1
        // A client recorded the address at connect (after a reset the socket has no peer any
        // more); a server's connection asks once.
        if state.report.address == nil { state.report.address = socket.peerAddress }
        if !state.isServer, state.report.serverCertificate == nil, let x509 = SSL_get1_peer_certificate(ssl) {
            state.report.serverCertificate = Certificate(takingX509: x509)
        }
    }
}

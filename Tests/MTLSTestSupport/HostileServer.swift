import COpenSSL
import COpenSSLShims
import CZlib
import Foundation
import MTLSTrust
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

@testable import MTLSHTTP

// A scripted server on loopback that misbehaves on purpose, for HostileServerTests.
//
// It is written on raw OpenSSL (not on the package's TLSServerContext) because a hostile peer must
// be able to do what a well-behaved server never does: change its certificate in a renegotiation,
// renegotiate in a loop, send 10,000 CA names, fail a handshake with a fatal alert mid-body, or
// write plaintext bytes into the TLS stream. Server sockets are blocking with receive and send
// timeouts, each connection runs its script on its own thread, and SIGPIPE is blocked on those
// threads only, so that the client under test still sees the process's real signal disposition.

/// How the hostile server's TLS side is set up.
public struct HostileTLSOptions {
    /// The leaf and its key (default: TestCerts `server.pem` / `server.key`).
    public var leaf: Certificate
    public var key: PrivateKey
    /// Sent after the leaf.
    public var chain: [Certificate]
    /// `TLS1_2_VERSION` …; 0 = OpenSSL's default.
    public var minimumVersion: Int32 = 0
    public var maximumVersion: Int32 = 0
    /// Lower the security level to 0 (TLS 1.0 with SHA-1 signatures).
    public var legacySecurityLevel = false
    /// Ask for a client certificate in the first handshake.
    public var requestsCertificateAtHandshake = false
    /// …and fail the handshake when none comes.
    public var requiresCertificate = false
    /// The CA names sent with the certificate request, as DER `Name`s.
    public var caNames: [[UInt8]] = []

    public init(leaf: Certificate, key: PrivateKey, chain: [Certificate]) {
        self.leaf = leaf
        self.key = key
        self.chain = chain
    }

    /// The TestCerts server identity with its intermediate.
    public static func standard() throws -> HostileTLSOptions {
        HostileTLSOptions(
            leaf: try SupportFixtures.certificates("server.pem")[0], key: try SupportFixtures.key("server.key"), chain: try SupportFixtures.certificates("intermediate-ca.pem"))
    }
}

/// OpenSSL objects owned by the hostile server (freed in `deinit`).
public final class HostileTLSContext: @unchecked Sendable {
    // @unchecked Sendable: configured in init, read-only afterwards; OpenSSL locks the SSL_CTX.
    public let context: OpaquePointer

    public init(_ options: HostileTLSOptions) throws {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw HostileError("SSL_CTX_new failed") }
        context = ctx
        if options.legacySecurityLevel {
            SSL_CTX_set_security_level(ctx, 0)
            _ = SSL_CTX_set_cipher_list(ctx, "DEFAULT@SECLEVEL=0")
        }
        if options.minimumVersion != 0 { _ = mtls_SSL_CTX_set_min_proto_version(ctx, options.minimumVersion) }
        if options.maximumVersion != 0 { _ = mtls_SSL_CTX_set_max_proto_version(ctx, options.maximumVersion) }
        // A renegotiation is a full handshake, so that a changed certificate is really sent.
        SSL_CTX_set_options(ctx, mtls_SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION() | mtls_SSL_OP_NO_TICKET())
        let leaf = try Raw.x509(options.leaf)
        defer { X509_free(leaf) }
        let key = try Raw.key(options.key)
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_certificate(ctx, leaf) == 1, SSL_CTX_use_PrivateKey(ctx, key) == 1 else {
            throw HostileError("the hostile server's key does not fit its certificate: \(Raw.errors())")
        }
        if !options.chain.isEmpty, let stack = mtls_sk_X509_new_null() {
            for certificate in options.chain {
                let x509 = try Raw.x509(certificate)
                _ = mtls_sk_X509_push(stack, x509)  // the stack owns it; freed by pop_free below
            }
            _ = mtls_SSL_CTX_set1_chain(ctx, stack)  // set1: the context takes its own references
            mtls_sk_X509_pop_free(stack)
        }
        if !options.caNames.isEmpty, let names = mtls_sk_X509_NAME_new_null() {
            for der in options.caNames {
                var pointer: UnsafePointer<UInt8>? = nil
                let name: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                    pointer = buffer.baseAddress
                    return d2i_X509_NAME(nil, &pointer, buffer.count)
                }
                if let name { _ = mtls_sk_X509_NAME_push(names, name) }
            }
            SSL_CTX_set_client_CA_list(ctx, names)  // set0: the context owns `names`
        }
        if options.requestsCertificateAtHandshake {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (options.requiresCertificate ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), { _, _ in 1 })
        }
    }

    deinit { SSL_CTX_free(context) }
}

public struct HostileError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Raw OpenSSL helpers for the test side.
public enum Raw {
    /// A new `X509*` (the caller frees it) from a certificate's DER.
    public static func x509(_ certificate: Certificate) throws -> OpaquePointer {
        try x509(der: certificate.derBytes)
    }

    public static func x509(der: [UInt8]) throws -> OpaquePointer {
        var pointer: UnsafePointer<UInt8>? = nil
        let x509: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            pointer = buffer.baseAddress
            return d2i_X509(nil, &pointer, buffer.count)
        }
        guard let x509 else { throw HostileError("d2i_X509 failed: \(errors())") }
        return x509
    }

    /// A new `EVP_PKEY*` (the caller frees it).
    public static func key(_ key: PrivateKey) throws -> OpaquePointer {
        let der = try key.pkcs8DER()
        var pointer: UnsafePointer<UInt8>? = nil
        let evp: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            pointer = buffer.baseAddress
            return d2i_AutoPrivateKey(nil, &pointer, buffer.count)
        }
        guard let evp else { throw HostileError("d2i_AutoPrivateKey failed: \(errors())") }
        return evp
    }

    public static func der(of x509: OpaquePointer) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(x509, &out)
        guard length > 0, let out else { return [] }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    public static func errors() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            reasons.append(ERR_reason_error_string(code).map { String(cString: $0) } ?? "\(code)")
        }
        return reasons.joined(separator: "; ")
    }

    /// A copy of `certificate` with a non-critical private extension holding `padding` bytes,
    /// re-signed by `issuerKey` (a well-formed certificate, just enormous).
    public static func padded(_ certificate: Certificate, padding: Int, issuerKey: PrivateKey) throws -> Certificate {
        let x509 = try x509(certificate)
        defer { X509_free(x509) }
        guard let object = OBJ_txt2obj("1.3.6.1.4.1.55555.1", 1), let octets = ASN1_OCTET_STRING_new() else { throw HostileError("OBJ_txt2obj failed") }
        defer {
            ASN1_OBJECT_free(object)
            ASN1_OCTET_STRING_free(octets)
        }
        let content = [UInt8](repeating: 0x41, count: padding)
        _ = ASN1_OCTET_STRING_set(octets, content, Int32(content.count))
        guard let extensionPointer = X509_EXTENSION_create_by_OBJ(nil, object, 0, octets) else { throw HostileError("X509_EXTENSION_create_by_OBJ failed") }
        defer { X509_EXTENSION_free(extensionPointer) }
        X509_add_ext(x509, extensionPointer, -1)
        let signer = try key(issuerKey)
        defer { EVP_PKEY_free(signer) }
        guard X509_sign(x509, signer, EVP_sha256()) > 0 else { throw HostileError("X509_sign failed: \(errors())") }
        return try Certificate(derBytes: der(of: x509))
    }

    /// The DER of a `Name` with one CN (empty `cn` gives the empty name `30 00`).
    public static func nameDER(commonName cn: String) -> [UInt8] {
        guard let name = X509_NAME_new() else { return [0x30, 0x00] }
        defer { X509_NAME_free(name) }
        if !cn.isEmpty { X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, cn, -1, -1, 0) }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_NAME(name, &out)
        guard length > 0, let out else { return [0x30, 0x00] }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The subject `Name` of a certificate, as DER.
    public static func subjectDER(_ certificate: Certificate) throws -> [UInt8] {
        let x509 = try x509(certificate)
        defer { X509_free(x509) }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_NAME(X509_get_subject_name(x509), &out)
        guard length > 0, let out else { throw HostileError("i2d_X509_NAME failed") }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// gzip of `count` zero bytes (a decompression bomb when `count` is large).
    public static func gzipZeros(_ count: Int) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        let block = [UInt8](repeating: 0, count: 1 << 20)
        var output: [UInt8] = []
        var out = [UInt8](repeating: 0, count: 1 << 16)
        var left = count
        repeat {
            let take = min(left, block.count)
            left -= take
            let flush = left == 0 ? Z_FINISH : Z_NO_FLUSH
            block.withUnsafeBufferPointer { input in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = UInt32(take)
                repeat {
                    let produced = out.withUnsafeMutableBufferPointer { buffer -> Int in
                        stream.next_out = buffer.baseAddress
                        stream.avail_out = UInt32(buffer.count)
                        _ = deflate(&stream, flush)
                        return buffer.count - Int(stream.avail_out)
                    }
                    output += out[0..<produced]
                } while stream.avail_out == 0
            }
        } while left > 0
        return output
    }
}

/// One accepted connection, driven by a scenario script on the server's thread.
public final class HostileConnection: @unchecked Sendable {
    // @unchecked Sendable: used by the one thread that runs its script; `shutdown` (from `stop`) only
    // touches the descriptor.
    public let fd: Int32
    private(set) var ssl: OpaquePointer?
    private let server: HostileServer
    private var closed = false
    private var pending: [UInt8] = []
    /// Handshake messages seen (through OpenSSL's message callback).
    public let messages = HandshakeMessageCounter()
    /// Request heads read so far on this connection.
    private(set) var requests: [String] = []

    public init(fd: Int32, server: HostileServer) {
        self.fd = fd
        self.server = server
    }

    deinit { finish() }

    public var isStopping: Bool { server.isStopping }

    /// Completes the TLS handshake with the server's context; false when it fails.
    @discardableResult
    public func handshake() -> Bool {
        guard let context = server.tls, let ssl = SSL_new(context.context) else { return false }
        self.ssl = ssl
        SSL_set_msg_callback(ssl, hostileMessageCallback)
        _ = SSL_ctrl(ssl, SSL_CTRL_SET_MSG_CALLBACK_ARG, 0, Unmanaged.passUnretained(messages).toOpaque())  // the connection keeps `messages` alive
        SSL_set_fd(ssl, fd)
        ERR_clear_error()
        return SSL_accept(ssl) == 1
    }

    /// Reads a request head (and a Content-Length body), returning the head; nil when the client
    /// closed or the read failed.
    @discardableResult
    public func readRequest() -> String? {
        while true {
            if let end = find([0x0D, 0x0A, 0x0D, 0x0A], in: pending) {
                let head = String(decoding: pending[0..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                var length = 0
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    length = Int(line.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
                while pending.count < length {
                    guard let more = receive(), !more.isEmpty else { return nil }
                    pending += more
                }
                pending.removeFirst(min(length, pending.count))
                requests.append(head)
                server.record(head)
                return head
            }
            guard let more = receive(), !more.isEmpty else { return nil }
            pending += more
        }
    }

    /// Reads whatever comes (TLS application data, or raw bytes before a handshake); nil on error.
    public func receive(max: Int = 65536) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max)
        if let ssl {
            var count = 0
            ERR_clear_error()
            let ok = buffer.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, max, &count) }
            if ok != 1 { return SSL_get_error(ssl, 0) == SSL_ERROR_ZERO_RETURN ? [] : nil }
            return Array(buffer[0..<count])
        }
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, max, 0) }
        if count < 0 { return nil }
        return Array(buffer[0..<count])
    }

    /// Writes (through TLS once the handshake is done); false once the peer is gone.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty { return true }
        if let ssl {
            var offset = 0
            while offset < bytes.count {
                var written = 0
                ERR_clear_error()
                let ok = bytes.withUnsafeBytes { SSL_write_ex(ssl, $0.baseAddress! + offset, bytes.count - offset, &written) }
                if ok != 1 { return false }
                offset += written
            }
            return true
        }
        return sendRaw(bytes)
    }

    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Writes bytes on the TCP socket, bypassing TLS.
    @discardableResult
    public func sendRaw(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Sends `bytes` one at a time, `interval` seconds apart, until done, the peer leaves or the server stops.
    @discardableResult
    public func drip(_ bytes: [UInt8], every interval: Double, raw: Bool = false) -> Bool {
        for byte in bytes {
            guard !isStopping, raw ? sendRaw([byte]) : send([byte]) else { return false }
            if !pause(interval) { return false }
        }
        return true
    }

    /// Waits `seconds`, returning early (false) when the peer closed the connection or the server stops.
    @discardableResult
    public func pause(_ seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if isStopping { return false }
            var pfd = pollfd(fd: fd, events: pollRDHUP, revents: 0)
            let wait = Int32(max(1, min(50, end.timeIntervalSinceNow * 1000)))
            if poll(&pfd, 1, wait) > 0 && (pfd.revents & Int16(pollRDHUP | Int16(POLLHUP | POLLERR))) != 0 { return false }
        }
        return true
    }

    /// Waits until the client closes the connection (or `seconds` pass).
    public func awaitClose(_ seconds: Double = 10) { _ = pause(seconds) }

    /// Sends close_notify.
    public func closeNotify() {
        if let ssl {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
        }
    }

    /// Closes the TCP connection without close_notify (a truncation).
    public func hangUp() { finish() }

    /// Resets the TCP connection (SO_LINGER 0, so close sends RST).
    public func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        finish()
    }

    /// TLS 1.2: renegotiates (optionally presenting another certificate first) and pumps the
    /// handshake to its end; false when it failed (for example, when the client refused).
    @discardableResult
    public func renegotiate(certificate: Certificate? = nil, key: PrivateKey? = nil, requireClientCertificate: Bool = false) -> Bool {
        guard let ssl else { return false }
        if let certificate, let key, let x509 = try? Raw.x509(certificate), let evp = try? Raw.key(key) {
            _ = SSL_use_certificate(ssl, x509)  // takes its own reference
            _ = SSL_use_PrivateKey(ssl, evp)
            X509_free(x509)
            EVP_PKEY_free(evp)
        }
        if requireClientCertificate {
            SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, { _, _ in 1 })
        }
        ERR_clear_error()
        let finishedBefore = messages.finishedSent
        guard SSL_renegotiate(ssl) == 1, SSL_do_handshake(ssl) == 1 else { return false }
        // Done when our Finished of the new handshake is out (SSL_renegotiate_pending clears late).
        return pumpHandshake { self.messages.finishedSent > finishedBefore }
    }

    /// Reads handshake records without consuming application data until `done`, with the socket
    /// non-blocking so that a finished handshake is noticed; false on error, close or 10 s of silence.
    private func pumpHandshake(_ done: () -> Bool) -> Bool {
        guard let ssl else { return false }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        var byte: UInt8 = 0
        while !done() {
            if isStopping { return false }
            ERR_clear_error()
            let result = SSL_peek(ssl, &byte, 1)
            if result > 0 { return done() }  // the client sent data
            let error = SSL_get_error(ssl, result)
            guard error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE else { return false }
            if done() { return true }
            var pfd = pollfd(fd: fd, events: Int16(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), revents: 0)
            if poll(&pfd, 1, 10_000) <= 0 { return false }
        }
        return true
    }

    /// TLS 1.3: asks for a client certificate after the handshake, failing when none comes.
    @discardableResult
    public func requestCertificatePostHandshake() -> Bool {
        guard let ssl else { return false }
        SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, { _, _ in 1 })
        ERR_clear_error()
        guard SSL_verify_client_post_handshake(ssl) == 1, SSL_do_handshake(ssl) == 1 else { return false }
        // Processes the client's Certificate; fails with a fatal alert when it is empty.
        return pumpHandshake { SSL_get0_peer_certificate(ssl) != nil }
    }

    /// Writes a status line, headers and body.
    @discardableResult
    public func respond(_ status: String = "200 OK", headers: [String] = [], body: [UInt8] = [], contentLength: Bool = true) -> Bool {
        var head = "HTTP/1.1 \(status)\r\n"
        for header in headers { head += header + "\r\n" }
        if contentLength && !headers.contains(where: { $0.lowercased().hasPrefix("content-length:") || $0.lowercased().hasPrefix("transfer-encoding:") }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return send(Array(head.utf8) + body)
    }

    @discardableResult
    public func respond(_ status: String = "200 OK", headers: [String] = [], text: String) -> Bool {
        respond(status, headers: headers, body: Array(text.utf8))
    }

    /// Frees the SSL object and closes the descriptor (idempotent).
    public func finish() {
        guard !closed else { return }
        closed = true
        if let ssl { SSL_free(ssl) }
        ssl = nil
        server.close(fd)
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}

/// A loopback listener whose every connection runs `script` on its own thread.
public final class HostileServer: @unchecked Sendable {
    // @unchecked Sendable: the mutable state is guarded by `lock`.
    public typealias Script = @Sendable (HostileConnection) -> Void

    public let port: Int
    public let tls: HostileTLSContext?
    private let listener: Int32
    private let script: Script
    private let lock = NSLock()
    private var stopping = false
    private var live: Set<Int32> = []
    private var heads: [String] = []
    private var acceptedCount = 0
    private let group = DispatchGroup()
    private let acceptThreadDone = DispatchSemaphore(value: 0)

    /// Starts listening on 127.0.0.1 (a free port).
    ///
    /// - Parameters:
    ///   - tls: The TLS set-up; nil for a plain TCP server (the script may still call `handshake`).
    ///   - script: What to do with each connection (runs on its own thread; the connection is
    ///     closed after it returns).
    public init(tls: HostileTLSOptions?, script: @escaping Script) throws {
        self.tls = try tls.map { try HostileTLSContext($0) }
        self.script = script
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HostileError("socket() failed") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            Glibc.close(fd)
            throw HostileError("bind/listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [self] in self.acceptLoop() }
        thread.start()
    }

    /// Convenience: a TLS server with the standard identity.
    public convenience init(script: @escaping Script) throws {
        try self.init(tls: try HostileTLSOptions.standard(), script: script)
    }

    public var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    /// The request heads received, over all connections.
    public var requestHeads: [String] {
        lock.lock()
        defer { lock.unlock() }
        return heads
    }

    /// The number of connections accepted.
    public var connections: Int {
        lock.lock()
        defer { lock.unlock() }
        return acceptedCount
    }

    public func url(_ path: String = "/", host: String = "127.0.0.1") throws -> HTTPSURL {
        try HTTPSURL("https://\(host):\(port)\(path)")
    }

    fileprivate func record(_ head: String) {
        lock.lock()
        heads.append(head)
        lock.unlock()
    }

    /// Closes a connection's descriptor under the lock, so that `stop` never shuts down a number
    /// that has been reused.
    fileprivate func close(_ fd: Int32) {
        lock.lock()
        live.remove(fd)
        Glibc.close(fd)
        lock.unlock()
    }

    private func acceptLoop() {
        blockSIGPIPEOnThisThread()
        while !isStopping {
            var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let fd = Glibc.accept(listener, nil, nil)
            if fd < 0 { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var timeout = timeval(tv_sec: 15, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            lock.lock()
            if stopping {
                lock.unlock()
                Glibc.close(fd)
                break
            }
            live.insert(fd)
            acceptedCount += 1
            lock.unlock()
            group.enter()
            let connection = HostileConnection(fd: fd, server: self)
            let script = self.script
            let group = self.group
            Thread {
                blockSIGPIPEOnThisThread()
                script(connection)
                connection.finish()
                group.leave()
            }.start()
        }
        acceptThreadDone.signal()
    }

    /// Stops accepting, wakes every connection's script (shutting its socket down), waits for them
    /// and closes the listener. Idempotent.
    public func stop() {
        lock.lock()
        let already = stopping
        stopping = true
        for fd in live { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        lock.unlock()
        if already { return }
        _ = acceptThreadDone.wait(timeout: .now() + 5)
        if group.wait(timeout: .now() + 20) == .timedOut {
            XCTFail("a hostile-server script did not finish within 20 s of stop()")
        }
        Glibc.close(listener)
    }

    deinit { stop() }
}

/// SIGPIPE is thread-directed for a write on a dead socket: blocking it here keeps the server's
/// writes from killing the test process without changing what the client under test sees.
private func blockSIGPIPEOnThisThread() {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &set, nil)
}

/// `POLLRDHUP` (Linux: the peer shut down its writing half), which Glibc's module does not export.
private let pollRDHUP: Int16 = 0x2000

/// Counts the handshake messages a hostile connection sends, so that a script knows when a
/// renegotiation it started is over.
public final class HandshakeMessageCounter: @unchecked Sendable {
    // @unchecked Sendable: touched only inside SSL calls on the connection's one thread.
    public var finishedSent = 0
}

private func hostileMessageCallback(
    _ writeP: Int32, _ version: Int32, _ contentType: Int32, _ buf: UnsafeRawPointer?, _ len: Int, _ ssl: OpaquePointer?, _ arg: UnsafeMutableRawPointer?
) {
    guard writeP == 1, contentType == 22, let buf, len > 0, let arg else { return }
    if buf.load(as: UInt8.self) == 20 {
        Unmanaged<HandshakeMessageCounter>.fromOpaque(arg).takeUnretainedValue().finishedSent += 1
    }
}

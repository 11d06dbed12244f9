internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust
import Synchronization
import Dispatch
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One path's settings, mirroring IIS "SSL Settings" and authentication.
public struct PathRule: Sendable {
    /// IIS "Client certificates": Ignore / Accept / Require.
    public enum ClientCertificate: String, Sendable, CaseIterable { case ignore, accept, require }
    /// HTTP authentication on the path.
    public enum Authentication: String, Sendable, CaseIterable { case none, basic, digest }
    /// What the path answers once admitted.
    public enum Handler: Sendable {
        case page(String)
        case echoCertificate
        case shiftJIS
        case redirect(String)
        /// A page whose `<meta http-equiv="refresh">` sends a browser on to the target at once,
        /// as single sign-on pages do ("signing you in…").
        case refresh(String)
        case cookie
    }

    /// A path prefix; the longest matching prefix wins.
    public var path: String
    public var clientCertificate: ClientCertificate
    public var authentication: Authentication
    public var handler: Handler

    public init(path: String, clientCertificate: ClientCertificate = .ignore, authentication: Authentication = .none, handler: Handler = .page("OK")) {
        self.path = path
        self.clientCertificate = clientCertificate
        self.authentication = authentication
        self.handler = handler
    }

    /// The layout of `mtls serve` without a config file (CLI.md).
    public static let defaults: [PathRule] = [
        PathRule(path: "/", handler: .page("mtls serve: this path needs no client certificate.")),
        PathRule(path: "/secure", clientCertificate: .require, handler: .echoCertificate),
        PathRule(path: "/optional", clientCertificate: .accept, handler: .echoCertificate),
        PathRule(path: "/basic", authentication: .basic, handler: .page("Basic authentication succeeded.")),
        PathRule(path: "/digest", authentication: .digest, handler: .page("Digest authentication succeeded.")),
        PathRule(path: "/echo-cert", clientCertificate: .accept, handler: .echoCertificate),
        PathRule(path: "/sjis", handler: .shiftJIS),
        PathRule(path: "/redirect", handler: .redirect("/")),
        PathRule(path: "/refresh", handler: .refresh("/")),
        PathRule(path: "/cookie", handler: .cookie),
    ]

    /// Parses a config file: one rule a line, `PATH key=value ...` with keys `cert` (ignore, accept,
    /// require), `auth` (none, basic, digest) and `handler` (page, echo-cert, sjis, redirect:TARGET,
    /// refresh:TARGET, cookie); `#` starts a comment.
    public static func parse(_ text: String) throws(HTTPSError) -> [PathRule] {
        var rules: [PathRule] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?.trimmingWhitespace() ?? ""
            if line.isEmpty { continue }
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let path = words.first, path.hasPrefix("/") else {
                throw HTTPSError(.configuration, host: "config", "line \(number + 1): a rule starts with a path beginning with '/'")
            }
            var rule = PathRule(path: path, handler: .page("OK: \(path)"))
            for word in words.dropFirst() {
                let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw HTTPSError(.configuration, host: "config", "line \(number + 1): '\(word)' is not key=value") }
                switch parts[0] {
                case "cert":
                    guard let value = ClientCertificate(rawValue: parts[1]) else {
                        throw HTTPSError(.configuration, host: "config", "line \(number + 1): cert must be ignore, accept or require")
                    }
                    rule.clientCertificate = value
                case "auth":
                    guard let value = Authentication(rawValue: parts[1]) else {
                        throw HTTPSError(.configuration, host: "config", "line \(number + 1): auth must be none, basic or digest")
                    }
                    rule.authentication = value
                case "handler":
                    switch parts[1] {
                    case "page": rule.handler = .page("OK: \(path)")
                    case "echo-cert": rule.handler = .echoCertificate
                    case "sjis": rule.handler = .shiftJIS
                    case "cookie": rule.handler = .cookie
                    case let value where value.hasPrefix("redirect:"): rule.handler = .redirect(String(value.dropFirst(9)))
                    case let value where value.hasPrefix("refresh:"): rule.handler = .refresh(String(value.dropFirst(8)))
                    default: throw HTTPSError(.configuration, host: "config", "line \(number + 1): unknown handler '\(parts[1])'")
                    }
                default:
                    throw HTTPSError(.configuration, host: "config", "line \(number + 1): unknown key '\(parts[0])' (use cert, auth, handler)")
                }
            }
            rules.append(rule)
        }
        return rules
    }
}

/// The settings of ``TestServer``.
public struct TestServerConfiguration: Sendable {
    public var tls: TLSServerConfiguration
    public var bindAddress: String
    public var port: Int
    public var rules: [PathRule]
    /// Answer a per-path certificate request on TLS 1.3 the way http.sys does: 500 with 0x80070032.
    public var httpSysMode: Bool
    public var username: String
    public var password: String
    public var realm: String
    /// The longest body buffered while a renegotiation is pending (IIS `uploadReadAheadSize`).
    public var renegotiationBufferLimit: Int
    /// The idle time before a kept-alive connection is closed (when the server is not under
    /// pressure; see ``pressureIdleTimeout``).
    public var keepAliveTimeout: Duration
    /// The most connections held at once; a new one beyond it takes the place of the connection
    /// idle longest (waiting for its handshake or a request head), or is closed at once.
    public var maximumConnections: Int
    /// The most connections held at once from one client address (the same rule, per address).
    public var maximumConnectionsPerClient: Int
    /// The whole TLS handshake (and the first byte's sniffing for plain HTTP) must end within this.
    public var handshakeTimeout: Duration
    /// A whole request head must arrive within this, from its first byte (from the handshake's
    /// end for the first request): a slow client gets no fresh time per read.
    public var requestHeadTimeout: Duration
    /// A whole request body must arrive within this.
    public var requestBodyTimeout: Duration
    /// With more than half of the connections in use, a connection idle (no request in progress)
    /// for this long is closed at the next accept.
    public var pressureIdleTimeout: Duration
    /// The largest request body read into memory (413 above it).
    public var maximumBodySize: Int

    public init(
        tls: TLSServerConfiguration, bindAddress: String = "127.0.0.1", port: Int = 8443, rules: [PathRule] = PathRule.defaults, httpSysMode: Bool = false,
        username: String = "mtls", password: String = "mtls", realm: String = "mtls", renegotiationBufferLimit: Int = 49152, keepAliveTimeout: Duration = .seconds(30),
        maximumConnections: Int = 512, maximumConnectionsPerClient: Int = 256, handshakeTimeout: Duration = .seconds(10), requestHeadTimeout: Duration = .seconds(10),
        requestBodyTimeout: Duration = .seconds(60), pressureIdleTimeout: Duration = .seconds(1), maximumBodySize: Int = 1 << 20
    ) {
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.handshakeTimeout = handshakeTimeout
        self.requestHeadTimeout = requestHeadTimeout
        self.requestBodyTimeout = requestBodyTimeout
        self.pressureIdleTimeout = pressureIdleTimeout
        self.maximumBodySize = maximumBodySize
        self.tls = tls
        self.bindAddress = bindAddress
        self.port = port
        self.rules = rules
        self.httpSysMode = httpSysMode
        self.username = username
        self.password = password
        self.realm = realm
        self.renegotiationBufferLimit = renegotiationBufferLimit
        self.keepAliveTimeout = keepAliveTimeout
    }
}

/// A local HTTPS test server that behaves like IIS with client certificates: per-path Ignore /
/// Accept / Require, the certificate asked for after the request (renegotiation on TLS 1.2,
/// post-handshake auth on TLS 1.3) or in the handshake, IIS substatus answers (403.7, 403.16,
/// 403.17, 403.13, 403.4), Basic and Digest auth, and a log line per request.
public final class TestServer: Sendable {
    public let configuration: TestServerConfiguration
    /// Receives one line per request (and per refused connection).
    public let log: @Sendable (String) -> Void
    private let tls: TLSServerContext
    /// One held connection: its client address, since when it has been idle (nil while a request
    /// is being answered), and how to wake its thread (shut the socket, cancel the connection).
    private struct Slot {
        var client: String
        var idleSince: ContinuousClock.Instant?
        var wake: @Sendable () -> Void
    }
    private struct State {
        var listener: SocketHandle?
        var running = false
        var boundPort = 0
        /// Every held connection, by number; what ``stop()`` and the reaper use to wake workers.
        var slots: [UInt64: Slot] = [:]
        var nextSlot: UInt64 = 0
        /// Worker threads alive (a reaped connection's thread ends shortly after its slot goes).
        var threads = 0
        var nonces: Set<String> = []
    }
    private let state = Mutex(State())
    private let group = DispatchGroup()

    /// The port actually bound (after ``start()``).
    public var boundPort: Int { state.withLock { $0.boundPort } }

    /// Prepares a server; `log` is called from the worker threads, one line at a time per
    /// connection (lines of different connections may come concurrently).
    public init(configuration: TestServerConfiguration, log: @escaping @Sendable (String) -> Void = { _ in }) throws(HTTPSError) {
        self.configuration = configuration
        self.log = log
        self.tls = try TLSServerContext(configuration: configuration.tls)
    }

    /// Binds and starts accepting on a background thread.
    ///
    /// - Returns: The bound port (useful with port 0).
    @discardableResult
    public func start() throws(HTTPSError) -> Int {
        let (socket, port) = try TCP.listen(address: configuration.bindAddress, port: configuration.port)
        state.withLock { state in
            state.listener = socket
            state.running = true
            state.boundPort = port
        }
        // On a thread of its own: the loop blocks in accept for as long as the server runs.
        if DetachedThread.start({ [self] in acceptLoop(socket) }) != 0 {
            DispatchQueue.global().async { [self] in acceptLoop(socket) }
        }
        return port
    }

    /// Stops accepting, closes every connection, and waits for the workers to finish.
    public func stop() {
        let (socket, wakes) = state.withLock { state in
            state.running = false
            defer { state.listener = nil }
            return (state.listener, state.slots.values.map(\.wake))
        }
        socket?.shutdownBoth()
        wakes.forEach { $0() }
        _ = group.wait(timeout: .now() + 5)
        socket?.close()
    }

    private var isRunning: Bool { state.withLock { $0.running } }

    private func acceptLoop(_ socket: SocketHandle) {
        group.enter()
        defer { group.leave() }
        while isRunning {
            guard let client = TCP.accept(socket, until: .after(0.5)) else { continue }
            guard let slot = admit(client) else {
                client.close()
                continue
            }
            // A thread of its own per connection, bounded by `admit`: Dispatch's pool grows about
            // one thread a second, so blocked workers starved every new connection.
            group.enter()
            let started = DetachedThread.start(stackSize: 1 << 20) { [self] in
                defer {
                    release(slot)
                    group.leave()
                }
                serve(client, slot: slot)
            }
            if started != 0 {
                release(slot)
                group.leave()
                client.close()
            }
        }
    }

    /// The client address of a connection (`host` of `host:port`, brackets kept for IPv6).
    private static func clientAddress(_ socket: SocketHandle) -> String {
        guard let peer = socket.peerAddress, let colon = peer.lastIndex(of: ":") else { return "unknown" }
        return String(peer[..<colon])
    }

    /// Takes a slot for a new connection, making room when the limits are reached: under
    /// pressure (more than half the slots in use), connections idle longer than
    /// ``TestServerConfiguration/pressureIdleTimeout`` are closed; at a limit, the connection of
    /// the same client (or, for the total, any) idle longest is closed. Nil when nothing can go:
    /// every held connection is answering a request.
    private func admit(_ socket: SocketHandle) -> UInt64? {
        let client = TestServer.clientAddress(socket)
        let now = ContinuousClock.now
        let limits = (total: max(1, configuration.maximumConnections), perClient: max(1, configuration.maximumConnectionsPerClient))
        let (slot, victims, refusal) = state.withLock { state -> (UInt64?, [@Sendable () -> Void], String?) in
            var victims: [@Sendable () -> Void] = []
            func reap(_ id: UInt64) {
                if let slot = state.slots.removeValue(forKey: id) { victims.append(slot.wake) }
            }
            if state.slots.count * 2 > limits.total {
                let stale = state.slots.filter { $0.value.idleSince.map { now - $0 > configuration.pressureIdleTimeout } ?? false }.map(\.key)
                stale.forEach(reap)
            }
            func oldestIdle(_ include: (Slot) -> Bool) -> UInt64? {
                state.slots.filter { $0.value.idleSince != nil && include($0.value) }.min { $0.value.idleSince! < $1.value.idleSince! }?.key
            }
            if state.slots.values.filter({ $0.client == client }).count >= limits.perClient {
                guard let id = oldestIdle({ $0.client == client }) else { return (nil, victims, "\(limits.perClient) connections from \(client), all busy") }
                reap(id)
            }
            if state.slots.count >= limits.total {
                guard let id = oldestIdle({ _ in true }) else { return (nil, victims, "\(limits.total) connections, all busy") }
                reap(id)
            }
            // Reaped threads end soon; until they do, they count, within a margin.
            guard state.threads < limits.total + 64 else { return (nil, victims, "too many connections still closing") }
            let id = state.nextSlot
            state.nextSlot += 1
            state.threads += 1
            state.slots[id] = Slot(client: client, idleSince: now, wake: { socket.shutdownBoth() })
            return (id, victims, nil)
        }
        victims.forEach { $0() }
        if let refusal { log("\(socket.peerAddress ?? client) refused: \(refusal)") }
        return slot
    }

    /// Gives a slot back when its thread ends.
    private func release(_ slot: UInt64) {
        state.withLock { state in
            state.slots[slot] = nil
            state.threads -= 1
        }
    }

    /// Marks a connection idle (waiting for a head: may be reaped) or busy (answering a request).
    /// False when the connection was reaped meanwhile.
    @discardableResult
    private func mark(_ slot: UInt64, idle: Bool, wake: (@Sendable () -> Void)? = nil) -> Bool {
        state.withLock { state in
            guard state.slots[slot] != nil else { return false }
            state.slots[slot]!.idleSince = idle ? ContinuousClock.now : nil
            if let wake { state.slots[slot]!.wake = wake }
            return true
        }
    }

    /// A failed handshake for the log: each alert with the side that sent it (the transport's
    /// message is worded for a client, "the server sent …"), else the transport's reason.
    static func describeFailure(_ error: HTTPSError) -> String {
        guard let alerts = error.report?.alerts, !alerts.isEmpty else { return error.message }
        return alerts.map(describe).joined(separator: "; ")
    }

    static func alertNote(_ alerts: [TLSAlertRecord]) -> String {
        alerts.isEmpty ? "" : " (" + alerts.map(describe).joined(separator: "; ") + ")"
    }

    private static func describe(_ alert: TLSAlertRecord) -> String {
        "\(alert.level) alert \"\(alert.description)\" sent by \(alert.received ? "the client" : "us (the server)")"
    }

    // MARK: One connection

    private func serve(_ socket: SocketHandle, slot: UInt64) {
        // One deadline for the sniffing and the whole handshake: a client that sends nothing, or
        // one byte at a time, is closed when it passes.
        let handshakeDeadline = Deadline.after(configuration.handshakeTimeout)
        // A plain-HTTP request on the TLS port gets IIS's 403.4.
        var first: UInt8 = 0
        if socket.wait(forRead: true, forWrite: false, until: handshakeDeadline), recv(socket.fd, &first, 1, Int32(MSG_PEEK)) == 1, first != 0x16 {
            if (0x41...0x5A).contains(first) {
                let body = TestServer.errorPage(status: 403, substatus: 4, title: "Forbidden", text: "The page must be viewed over a secure channel (HTTPS).")
                let response =
                    "HTTP/1.1 403 Forbidden\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nX-MTLS-Substatus: 403.4\r\nConnection: close\r\n\r\n"
                    + body
                _ = response.withCString { Glibc.send(socket.fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                log("\(socket.peerAddress ?? "unknown peer") plain HTTP on the TLS port -> 403.4")
            }
            socket.close()
            return
        }
        let connection: TLSConnection
        let peer = socket.peerAddress ?? "unknown peer"  // before a failed handshake closes the socket
        do throws(HTTPSError) {
            connection = try tls.accept(socket, deadline: handshakeDeadline)
        } catch {
            log("\(peer) TLS handshake failed: \(TestServer.describeFailure(error))")
            socket.close()
            return
        }
        let canceller = connection.canceller
        defer { connection.lingeringClose() }
        // Reaped during the handshake: closed without a word.
        guard mark(slot, idle: true, wake: { canceller.cancel() }) else { return }
        var pending: [UInt8] = []
        var firstRequest = true
        while isRunning {
            do throws(HTTPSError) {
                guard try handleRequest(on: connection, pending: &pending, slot: slot, first: firstRequest) else { return }
                firstRequest = false
            } catch {
                if error.phase != .io && error.phase != .cancelled && error.phase != .timeout {
                    log("\(connection.label) \(error.message)\(TestServer.alertNote(connection.report.alerts))")
                } else if !connection.report.alerts.isEmpty {
                    log("\(connection.label) connection ended\(TestServer.alertNote(connection.report.alerts))")
                }
                return
            }
        }
    }

    /// Reads and answers one request; false when the connection should close.
    private func handleRequest(on connection: TLSConnection, pending: inout [UInt8], slot: UInt64, first: Bool) throws(HTTPSError) -> Bool {
        var parser = HTTPRequestParser(maximumBody: configuration.maximumBodySize)
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        var headSeen = false
        // Read the head (and whatever body arrives with it).
        func consume(_ bytes: ArraySlice<UInt8>) throws(HTTPSError) -> Bool {
            do throws(HTTPRequestParser.ParseError) {
                let (events, _) = try parser.feed(bytes)
                for event in events {
                    switch event {
                    case .head: headSeen = true
                    case .body(let chunk): body += chunk
                    case .end: return true
                    }
                }
                return false
            } catch {
                let status = error == .bodyTooLarge ? 413 : 400
                try send(
                    connection, status: status, reason: status == 413 ? "Payload Too Large" : "Bad Request", headers: [("Connection", "close")],
                    body: Array(TestServer.errorPage(status: status, substatus: nil, title: "Bad Request", text: "The request is malformed (\(error)).").utf8))
                throw HTTPSError(.httpParse, host: connection.label, "bad request: \(error)")
            }
        }
        var complete = false
        if !pending.isEmpty {
            complete = try consume(pending[...])
            pending.removeAll()
        }
        // Idle (reapable under pressure) until the head is complete. The first request's head must
        // be whole within requestHeadTimeout of the handshake; a kept-alive connection may wait
        // keepAliveTimeout for the next head's first byte, then has requestHeadTimeout for the rest.
        if !first { mark(slot, idle: true) }
        var headDeadline: Deadline? = first || !pending.isEmpty ? .after(configuration.requestHeadTimeout) : nil
        while !headSeen {
            let deadline = headDeadline ?? .after(configuration.keepAliveTimeout)
            let n: Int
            do throws(HTTPSError) {
                n = try connection.read(into: &buffer, deadline: deadline, idle: nil)
            } catch {
                if error.phase == .timeout && headDeadline != nil {
                    log("\(connection.label) closed: the request head did not arrive within \(configuration.requestHeadTimeout)")
                }
                throw error
            }
            if n == 0 { return false }
            if headDeadline == nil { headDeadline = .after(configuration.requestHeadTimeout) }
            complete = try consume(buffer[0..<n])
        }
        guard let head = parser.head else { return false }
        // Answering: not reapable until the response is sent. Reaped meanwhile: close.
        guard mark(slot, idle: false) else { return false }
        let bodyDeadline = Deadline.after(configuration.requestBodyTimeout)
        let rule =
            configuration.rules.filter { head.path == $0.path || head.path.hasPrefix($0.path == "/" ? "/" : $0.path + "/") || ($0.path != "/" && head.path.hasPrefix($0.path)) }.max
        { $0.path.count < $1.path.count } ?? PathRule(path: "/")
        let expectsContinue = head.headers["Expect"]?.lowercased() == "100-continue"
        var note = ""
        // IIS reads the client certificate after the request: renegotiate / post-handshake auth.
        if rule.clientCertificate != .ignore && connection.peerCertificate == nil && !configuration.tls.requestsCertificateAtHandshake
            && !connection.report.certificateRequests.contains(where: { $0.phase != .handshake })
        {
            if connection.version == .tls1_3 && configuration.httpSysMode {
                let body = TestServer.errorPage(
                    status: 500, substatus: nil, title: "Internal Server Error", text: "The request is not supported. (Exception from HRESULT: 0x80070032)", code: "0x80070032")
                try send(connection, status: 500, reason: "Internal Server Error", headers: [("Connection", "close")], body: Array(body.utf8))
                log(
                    "\(connection.label) \"\(head.method) \(head.target)\" 500 0x80070032 \(connection.report.version ?? "") (http.sys: TLS 1.3 cannot renegotiate for a per-path certificate)"
                )
                return false
            }
            // Without 100-continue, the body arrives before the renegotiation: buffer a little, like IIS.
            if !expectsContinue && !complete {
                while !complete {
                    if body.count > configuration.renegotiationBufferLimit {
                        try send(
                            connection, status: 413, reason: "Request Entity Too Large", headers: [("Connection", "close")],
                            body: Array(
                                TestServer.errorPage(
                                    status: 413, substatus: nil, title: "Request Entity Too Large",
                                    text:
                                        "The body arrived before the client certificate was negotiated and is larger than \(configuration.renegotiationBufferLimit) bytes; send Expect: 100-continue."
                                ).utf8))
                        log("\(connection.label) \"\(head.method) \(head.target)\" 413 (body before renegotiation)")
                        return false
                    }
                    let n = try connection.read(into: &buffer, deadline: bodyDeadline, idle: nil)
                    if n == 0 { return false }
                    complete = try consume(buffer[0..<n])
                }
            }
            switch try connection.requestClientCertificate(deadline: .after(30)) {
            case .asked(let phase): note = "asked by \(phase.rawValue)"
            case .clientOffersNoPostHandshakeAuth: note = "TLS 1.3 client offers no post-handshake auth"
            case .clientRefusedRenegotiation: note = "client refused renegotiation"
            }
        }
        if expectsContinue && !complete {
            try connection.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), deadline: .after(10))
        }
        while !complete {
            let n = try connection.read(into: &buffer, deadline: bodyDeadline, idle: nil)
            if n == 0 { return false }
            complete = try consume(buffer[0..<n])
        }
        let keepAlive = head.version == "HTTP/1.1" && head.headers["Connection"]?.lowercased() != "close"
        try respond(connection, head: head, body: body, rule: rule, note: note, keepAlive: keepAlive)
        return keepAlive
    }

    // MARK: Deciding

    private func respond(_ connection: TLSConnection, head: HTTPRequestHead, body: [UInt8], rule: PathRule, note: String, keepAlive: Bool) throws(HTTPSError) {
        let peer = connection.peerCertificate
        var extra: [(String, String)] = keepAlive ? [] : [("Connection", "close")]
        let certText = peer.map { "cert=\"\($0.subject)\"" } ?? "cert=none"
        func finish(
            _ status: Int, _ substatus: Int?, _ reason: String, _ page: String, headers: [(String, String)] = [], contentType: String = "text/html; charset=utf-8",
            raw: [UInt8]? = nil
        ) throws(HTTPSError) {
            var all = extra + headers
            if let substatus { all.append(("X-MTLS-Substatus", "\(status).\(substatus)")) }
            try send(connection, status: status, reason: reason, headers: all + [("Content-Type", contentType)], body: raw ?? Array(page.utf8))
            let code = substatus.map { "\(status).\($0)" } ?? "\(status)"
            log("\(connection.label) \"\(head.method) \(head.target)\" \(code) \(connection.report.version ?? "") \(certText)\(note.isEmpty ? "" : " (\(note))")")
        }
        if rule.clientCertificate != .ignore {
            if peer == nil && rule.clientCertificate == .require {
                return try finish(
                    403, 7, "Forbidden",
                    TestServer.errorPage(
                        status: 403, substatus: 7, title: "Forbidden",
                        text: "The page you are attempting to access requires your browser to have a Secure Sockets Layer (SSL) client certificate that the Web server recognizes.")
                )
            }
            if peer != nil, let trust = connection.clientTrust, !trust.isTrusted {
                let names = Set(trust.findings.map(\.code))
                if names.contains(X509_V_ERR_CERT_HAS_EXPIRED) || names.contains(X509_V_ERR_CERT_NOT_YET_VALID) {
                    return try finish(
                        403, 17, "Forbidden", TestServer.errorPage(status: 403, substatus: 17, title: "Forbidden", text: "The client certificate has expired or is not yet valid."))
                }
                if names.contains(X509_V_ERR_CERT_REVOKED) {
                    return try finish(
                        403, 13, "Forbidden",
                        TestServer.errorPage(
                            status: 403, substatus: 13, title: "Forbidden", text: "The client certificate used for this request has been revoked by the Web server."))
                }
                let reason = trust.findings.first?.reason ?? "untrusted"
                return try finish(
                    403, 16, "Forbidden", TestServer.errorPage(status: 403, substatus: 16, title: "Forbidden", text: "The client certificate is untrusted or invalid: \(reason)."))
            }
        }
        switch rule.authentication {
        case .none: break
        case .basic:
            let expected = "Basic " + Data("\(configuration.username):\(configuration.password)".utf8).base64EncodedString()
            guard let authorization = head.headers["Authorization"] else {
                return try finish(
                    401, 2, "Unauthorized",
                    TestServer.errorPage(status: 401, substatus: 2, title: "Unauthorized", text: "Access is denied due to server configuration: no credentials were sent."),
                    headers: [("WWW-Authenticate", "Basic realm=\"\(configuration.realm)\"")])
            }
            guard authorization == expected else {
                return try finish(
                    401, 1, "Unauthorized", TestServer.errorPage(status: 401, substatus: 1, title: "Unauthorized", text: "Access is denied due to invalid credentials."),
                    headers: [("WWW-Authenticate", "Basic realm=\"\(configuration.realm)\"")])
            }
        case .digest:
            let nonce = makeNonce()
            let challenge = "Digest realm=\"\(configuration.realm)\", qop=\"auth\", algorithm=MD5, nonce=\"\(nonce)\", opaque=\"mtls\""
            guard let authorization = head.headers["Authorization"], authorization.lowercased().hasPrefix("digest ") else {
                return try finish(
                    401, 2, "Unauthorized",
                    TestServer.errorPage(status: 401, substatus: 2, title: "Unauthorized", text: "Access is denied due to server configuration: no credentials were sent."),
                    headers: [("WWW-Authenticate", challenge)])
            }
            switch verifyDigest(authorization, method: head.method) {
            case .ok: break
            case .stale:
                return try finish(
                    401, 1, "Unauthorized", TestServer.errorPage(status: 401, substatus: 1, title: "Unauthorized", text: "The nonce is stale."),
                    headers: [("WWW-Authenticate", challenge + ", stale=true")])
            case .wrong:
                return try finish(
                    401, 1, "Unauthorized", TestServer.errorPage(status: 401, substatus: 1, title: "Unauthorized", text: "Access is denied due to invalid credentials."),
                    headers: [("WWW-Authenticate", challenge)])
            }
        }
        switch rule.handler {
        case .page(let text):
            try finish(200, nil, "OK", "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>mtls serve</title></head><body><p>\(TestServer.escape(text))</p></body></html>\n")
        case .echoCertificate:
            var lines = ["path: \(head.path)", "tls: \(connection.report.version ?? "?")"]
            if let peer {
                lines += [
                    "subject: \(peer.subject)", "issuer: \(peer.issuer)", "serial: \(peer.serialNumberHex)", "sha256: \(peer.sha256Fingerprint.colonHex)",
                    "notAfter: \(RFC3339.string(peer.notAfter))", "trusted: \(connection.clientTrust?.isTrusted ?? false)",
                ]
            } else {
                lines.append("subject: (no client certificate)")
            }
            try finish(
                200, nil, "OK", lines.joined(separator: "\n") + "\n", headers: peer.map { [("X-Client-Subject", $0.subject)] } ?? [], contentType: "text/plain; charset=utf-8")
        case .shiftJIS:
            let text = "<!DOCTYPE html><html><head><meta charset=\"Shift_JIS\"><title>テスト</title></head><body><p>日本語のページです。クライアント証明書のテスト。</p></body></html>\n"
            let bytes = ShiftJIS.encode(text)
            try finish(200, nil, "OK", "", contentType: "text/html; charset=Shift_JIS", raw: bytes)
        case .redirect(let target):
            extra.append(("Location", target))
            try finish(302, nil, "Found", "<p>Moved to <a href=\"\(TestServer.escape(target))\">\(TestServer.escape(target))</a></p>\n")
        case .refresh(let target):
            let escaped = TestServer.escape(target)
            try finish(
                200, nil, "OK",
                "<!DOCTYPE html><html><head><meta http-equiv=\"refresh\" content=\"0; url=\(escaped)\"><title>Signing in</title></head>"
                    + "<body><p>Signing you in&hellip; <a href=\"\(escaped)\">continue</a></p></body></html>\n")
        case .cookie:
            try finish(200, nil, "OK", "<p>A cookie was set.</p>\n", headers: [("Set-Cookie", "mtls-session=\(makeNonce()); Path=/; Secure; HttpOnly; SameSite=Lax")])
        }
    }

    private func send(_ connection: TLSConnection, status: Int, reason: String, headers: [(String, String)], body: [UInt8]) throws(HTTPSError) {
        var head = "HTTP/1.1 \(status) \(reason)\r\nServer: mtls-serve\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try connection.write(Array(head.utf8) + body, deadline: .after(30))
    }

    // MARK: Digest

    private func makeNonce() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        _ = RAND_bytes(&bytes, Int32(bytes.count))
        let nonce = bytes.hex
        state.withLock { state in
            if state.nonces.count > 10000 { state.nonces.removeAll() }
            state.nonces.insert(nonce)
        }
        return nonce
    }

    private enum DigestOutcome { case ok, stale, wrong }

    private func verifyDigest(_ header: String, method: String) -> DigestOutcome {
        // Credentials have the grammar of a challenge (RFC 9110 §11.4): the client's parser reads them.
        guard let fields = AuthChallenge.parse(value: header).first, fields.normalizedScheme == "digest",
            let username = fields["username"], let nonce = fields["nonce"], let uri = fields["uri"], let response = fields["response"]
        else { return .wrong }
        let known = state.withLock { $0.nonces.contains(nonce) }
        guard known else { return .stale }
        let ha1 = md5Hex("\(username):\(configuration.realm):\(configuration.password)")
        let ha2 = md5Hex("\(method):\(uri)")
        let expected: String
        if let qop = fields["qop"], let nc = fields["nc"], let cnonce = fields["cnonce"] {
            expected = md5Hex("\(ha1):\(nonce):\(nc):\(cnonce):\(qop):\(ha2)")
        } else {
            expected = md5Hex("\(ha1):\(nonce):\(ha2)")
        }
        return username == configuration.username && expected == response.lowercased() ? .ok : .wrong
    }

    private func md5Hex(_ text: String) -> String { AuthHash.md5(Array(text.utf8)).hex }

    // MARK: Pages

    static func escape(_ text: String) -> String {
        text.replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;").replacingAll(">", with: "&gt;").replacingAll("\"", with: "&quot;")
    }

    /// An error page in the manner of IIS's detailed errors ("HTTP Error 403.7 - Forbidden").
    static func errorPage(status: Int, substatus: Int?, title: String, text: String, code: String? = nil) -> String {
        let label = substatus.map { "\(status).\($0)" } ?? "\(status)"
        var page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>IIS-like Detailed Error - \(label) - \(title)</title></head><body>"
        page += "<h1>HTTP Error \(label) - \(title)</h1><p>\(escape(text))</p>"
        if let code { page += "<p>Error Code \(code)</p>" }
        page += "</body></html>\n"
        return page
    }
}

/// Shift_JIS encoding through iconv (CP932, as Windows servers send under that name).
enum ShiftJIS {
    static func encode(_ text: String) -> [UInt8] {
        guard let converter = iconv_open("CP932", "UTF-8"), converter != iconv_t(bitPattern: -1) else { return Array(text.utf8) }
        defer { iconv_close(converter) }
        var input = Array(text.utf8).map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: input.count * 2 + 16)
        var inLeft = input.count
        var outLeft = output.count
        let written: Int = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = inBuffer.baseAddress
                var outPointer: UnsafeMutablePointer<CChar>? = outBuffer.baseAddress
                _ = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                return outBuffer.count - outLeft
            }
        }
        return output.prefix(written).map { UInt8(bitPattern: $0) }
    }
}

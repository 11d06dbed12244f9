#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust
import Synchronization

/// A response, with what the TLS layer observed while it was exchanged.
public struct HTTPResponse: Sendable {
    /// The URL that answered.
    public var url: HTTPSURL
    public var head: HTTPResponseHead
    /// The body, decoded from gzip/deflate (empty when it was streamed to a sink).
    public var body: [UInt8]
    /// Body bytes as received on the wire.
    public var wireBodyLength: Int
    /// The TLS record of the connection, up to the end of this response.
    public var tls: TLSSessionReport
    /// True when the request went over a kept-alive connection.
    public var reusedConnection: Bool
    /// Informational statuses seen before the final one (100, 103 …).
    public var informational: [Int]

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
}

/// Kept-alive connections, one per host. The one put back last is held apart from the table: a
/// client that talks to one host (the common case) takes and returns it on every request, and a
/// comparison of the key is cheaper than hashing it twice.
struct IdleConnections<Connection> {
    private var last: (key: String, connection: Connection)?
    private var others: [String: Connection] = [:]

    /// Removes and returns the connection kept for `key`.
    mutating func take(_ key: String) -> Connection? {
        if let last, last.key == key {
            self.last = nil
            return last.connection
        }
        return others.removeValue(forKey: key)
    }

    /// Keeps `connection` for `key`; returns the one it replaces, which the caller closes.
    mutating func put(_ connection: Connection, for key: String) -> Connection? {
        if let last, last.key == key {
            self.last = (key, connection)
            return last.connection
        }
        if let last { others[last.key] = last.connection }
        self.last = (key, connection)
        // After a `take` of the last one, the table is usually empty: no hashing then.
        return others.isEmpty ? nil : others.removeValue(forKey: key)
    }

    /// Removes and returns every connection.
    mutating func removeAll() -> [Connection] {
        var all = Array(others.values)
        if let last { all.append(last.connection) }
        last = nil
        others.removeAll()
        return all
    }
}

/// What an ``HTTPSClient`` does beyond TLS. Given at init and fixed from then on, because one client
/// serves requests from several threads.
public struct HTTPClientOptions: Sendable {
    /// The largest body kept in memory (and the ceiling for decoded gzip/deflate).
    public var maximumBodySize: Int
    /// Redact secret headers (``HTTPSClient/secretHeaders``) in traces (`--show-secrets` turns it off).
    /// - Warning: With false, traces hold passwords and session cookies.
    public var redactsSecrets: Bool
    /// Where connections for a host go instead of its DNS address (`--connect-to`).
    public var connectTo: [String: (host: String, port: Int)]
    /// A trace sink for `-v`: request and response heads (secrets redacted) and, as they happen,
    /// the TLS events of every connection (``TLSEvent/line``), so the trace reads in order.
    public var trace: (@Sendable (String) -> Void)?
    /// Sent with every request unless the request sets its own.
    public var userAgent: String

    public init(
        maximumBodySize: Int = 64 << 20, redactsSecrets: Bool = true, connectTo: [String: (host: String, port: Int)] = [:],
        trace: (@Sendable (String) -> Void)? = nil, userAgent: String = "mtls/0.1"
    ) {
        self.maximumBodySize = maximumBodySize
        self.redactsSecrets = redactsSecrets
        self.connectTo = connectTo
        self.trace = trace
        self.userAgent = userAgent
    }
}

/// An HTTPS/1.1 client over OpenSSL: keep-alive, `Expect: 100-continue`, gzip/deflate, and every
/// way a server asks for a client certificate (in the handshake, by renegotiation, by TLS 1.3
/// post-handshake auth), recorded in each response's ``HTTPResponse/tls``.
///
/// One engine serves both APIs: every exchange is async code that awaits the sockets on the
/// engine's event loops (see <doc:Concurrency>). The `async` API holds no thread while it waits,
/// so a `TaskGroup` of a thousand sends waits on a handful of threads, and cancelling the task
/// closes the connection at once. The blocking API runs the same code and waits for it.
public final class HTTPSClient: Sendable {
    public let tls: TLSClient
    /// What the client does beyond TLS, fixed at init.
    public let options: HTTPClientOptions
    /// Header names whose values are replaced by `[redacted]` in traces.
    public static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// The largest body kept in memory (and the ceiling for decoded gzip/deflate).
    public var maximumBodySize: Int { options.maximumBodySize }
    /// Whether secret headers are redacted in traces.
    public var redactsSecrets: Bool { options.redactsSecrets }
    /// Where connections for a host go instead of its DNS address.
    public var connectTo: [String: (host: String, port: Int)] { options.connectTo }
    /// The trace sink, if any.
    public var trace: (@Sendable (String) -> Void)? { options.trace }
    /// Sent with every request unless overridden.
    public var userAgent: String { options.userAgent }

    /// The kept-alive connections (not Sendable: a connection taken out is used by one request).
    private let idle = Locked(IdleConnections<TLSConnection>())

    public init(configuration: TLSClientConfiguration, options: HTTPClientOptions = HTTPClientOptions()) throws(HTTPSError) {
        tls = try TLSClient(configuration: configuration)
        self.options = options
        if let trace = options.trace {
            tls.eventObserver = { event in
                switch event {
                case .httpRequest, .httpResponse: break  // the heads are traced in full by the client
                default: trace(event.line)
                }
            }
        }
    }

    deinit {
        for connection in idle.withLock({ $0.removeAll() }) { connection.close() }
    }

    /// Closes kept-alive connections.
    public func closeIdleConnections() {
        let connections = idle.withLock { idle in
            idle.removeAll()
        }
        connections.forEach { $0.close() }
    }

    /// How long after its last response an idle connection is reused for an idempotent request
    /// without first asking the socket whether the server has closed it.
    static let unprobedReuseSeconds = 1.0

    /// A kept-alive connection to the URL's host when one is idle (unless `fresh`), else a new one.
    ///
    /// Before reuse, one `poll` asks whether the server closed the connection (or sent something
    /// unasked) while it was idle: a request sent into a closed connection is lost. For an
    /// idempotent request on a connection idle for less than ``unprobedReuseSeconds`` that system
    /// call is skipped: servers close idle connections after seconds, not within one, and should
    /// it have happened, the exchange fails before any byte of a response and is retried once on a
    /// fresh connection (`HTTP1ExchangeStateMachine`'s retry rule), as curl and browsers do.
    ///
    /// Idle connections are kept by `hostHeader`, which names one host and port for `https://`.
    private func checkout(_ url: HTTPSURL, hostHeader: String, method: String, fresh: Bool, deadline: Deadline, token: CancellationToken?) async throws(HTTPSError) -> (
        TLSConnection, Bool
    ) {
        let existing = fresh ? nil : idle.withLock { $0.take(hostHeader) }
        if let existing {
            let recent = existing.idleSince.map { Deadline.now.nanoseconds &- $0.nanoseconds < UInt64(Self.unprobedReuseSeconds * 1e9) } ?? false
            let retriable = HTTP1ExchangeStateMachine.isIdempotent(method)
            if (recent && retriable && !existing.hasPendingTLSData) || !existing.isReadableNow {
                existing.token = token
                return (existing, true)
            }
            existing.close()  // the server closed it, or sent something unasked
        }
        let connection = try await tls.connect(
            host: url.host, port: url.port, connectTo: connectTo[url.host] ?? connectTo["\(url.host):\(url.port)"], deadline: deadline, token: token)
        return (connection, false)
    }

    private func checkin(_ connection: TLSConnection, hostHeader: String) {
        connection.idleSince = .now
        var previous: TLSConnection?
        previous = idle.withLock { $0.put(connection, for: hostHeader) }
        previous?.close()
    }

    /// Sends one request and reads the response (no redirects or auth: see ``LoginSession``).
    ///
    /// - Parameters:
    ///   - request: The request; `Host`, `Content-Length`, `User-Agent`, `Accept-Encoding` are added.
    ///   - bodySink: When given, decoded body bytes are passed here instead of being kept.
    ///   - bodySinkForHead: Asked once the final head is in: a sink returned there receives the
    ///     decoded body instead of memory (a download of any size in constant memory); nil keeps it.
    /// - Throws: ``HTTPSError`` naming the host and the phase.
    public func send(
        _ request: HTTPRequest, bodySink: ((ArraySlice<UInt8>) throws -> Void)? = nil, bodySinkForHead: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)? = nil,
        token: CancellationToken? = nil
    ) throws(HTTPSError) -> HTTPResponse {
        try Engine.blocking { () async throws(HTTPSError) -> HTTPResponse in
            try await self.perform(request, bodySink: bodySink, bodySinkForHead: bodySinkForHead, token: token)
        }
    }

    /// The async form of ``send(_:bodySink:bodySinkForHead:token:)``, with the same typed error.
    ///
    /// The exchange runs on one of the engine's loops and awaits its socket there: no thread is
    /// held while the server thinks. Cancelling the task shuts the connection's socket down at
    /// once: the call throws ``HTTPSError`` with phase `.cancelled` and the connection is not reused.
    public func send(_ request: HTTPRequest) async throws(HTTPSError) -> HTTPResponse {
        try await send(request, bodySinkForHead: nil)
    }

    /// ``send(_:)`` with a sink asked once the final head is in (as in the blocking form): a sink
    /// returned there receives the decoded body instead of memory.
    public func send(_ request: HTTPRequest, bodySinkForHead: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?) async throws(HTTPSError) -> HTTPResponse {
        try await Engine.run(host: request.url.hostHeader) { token async throws(HTTPSError) -> HTTPResponse in
            try await self.perform(request, bodySink: nil, bodySinkForHead: bodySinkForHead, token: token)
        }
    }

    /// The one exchange driver, under both APIs: connection, request, response, retry.
    func perform(
        _ request: HTTPRequest, bodySink: ((ArraySlice<UInt8>) throws -> Void)?, bodySinkForHead: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?,
        token: CancellationToken?
    ) async throws(HTTPSError) -> HTTPResponse {
        let host = request.url.hostHeader
        guard request.url.scheme == "https" else {
            throw HTTPSError(.url, host: host, "only https:// URLs are supported", hint: "use https://")
        }
        let deadline = Deadline.after(tls.configuration.timeouts.total)
        var machine = HTTP1ExchangeStateMachine(method: request.method, hasBody: request.body?.isEmpty == false, expectsContinue: request.expectsContinue)
        var fresh = false
        while true {
            let (connection, reused) = try await checkout(request.url, hostHeader: host, method: machine.method, fresh: fresh, deadline: deadline, token: token)
            do throws(HTTPSError) {
                guard
                    let response = try await exchange(
                        request, hostHeader: host, on: connection, reused: reused, machine: &machine, deadline: deadline, token: token, bodySink: bodySink,
                        bodySinkForHead: bodySinkForHead)
                else {
                    connection.close()
                    fresh = true
                    continue
                }
                return response
            } catch {
                var error = error
                if error.report == nil { error.report = connection.report }
                connection.close()
                throw error
            }
        }
    }

    /// Serialises the request head, refusing CR/LF/NUL in any header (no injection).
    ///
    /// `Host` goes first unless the request has one; `User-Agent`, `Accept`, `Accept-Encoding`,
    /// `Content-Length` (for `bodyLength`) and `Expect` follow the request's own fields unless it
    /// sets them. Every request of a keep-alive connection comes here, so it is written as bytes in
    /// one pass over the request's fields, without copying them.
    static func serializeHead(_ request: HTTPRequest, method: String, hostHeader: String, userAgent: String, bodyLength: Int?) throws(HTTPSError) -> [UInt8] {
        var head = RequestHeadWriter(hostHeader: hostHeader)
        guard head.append(token: method) else {
            throw HTTPSError(.request, host: hostHeader, "the method \(DisplayText.quoted(method)) is not a valid HTTP token (\(RequestHeadWriter.tokenCharacters))")
        }
        head.append(line: " ")
        try head.append(target: request.url.target)
        head.append(line: " HTTP/1.1\r\n")
        var supplied = SuppliedFields()
        for field in request.headers { supplied.note(field.name) }
        if !supplied.contains(.host) { try head.append(known: "Host", hostHeader) }
        for field in request.headers { try head.append(field.name, field.value) }
        if !supplied.contains(.userAgent) { try head.append(known: "User-Agent", userAgent) }
        if !supplied.contains(.accept) { head.append(line: "Accept: */*\r\n") }
        if !supplied.contains(.acceptEncoding) { head.append(line: "Accept-Encoding: gzip, deflate\r\n") }
        if let bodyLength, !supplied.contains(.contentLength), !supplied.contains(.transferEncoding) {
            try head.append(known: "Content-Length", String(bodyLength))
        }
        if request.expectsContinue && bodyLength != nil && !supplied.contains(.expect) { head.append(line: "Expect: 100-continue\r\n") }
        head.append(line: "\r\n")
        return head.bytes
    }

    /// A request head being written: each field checked (a token for a name; no CR, LF or NUL in a
    /// value, so no header injection) and appended as bytes.
    private struct RequestHeadWriter {
        var bytes: [UInt8] = []
        /// Names the request in errors.
        let hostHeader: String

        init(hostHeader: String) {
            self.hostHeader = hostHeader
            bytes.reserveCapacity(256)
        }

        /// What a token (a method, a field name) may hold, for the errors that refuse one.
        static let tokenCharacters = "letters, digits and !#$%&'*+-.^_`|~ only"

        /// Text of the client's own, known to be well-formed.
        mutating func append(line: StaticString) {
            line.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        // `withUTF8` lends the bytes of a native string in place: checked and copied as one buffer
        // each, rather than iterated through the UTF-8 view.

        /// Appends `text` if it is a token (a method, a field name); false if not.
        mutating func append(token text: String) -> Bool {
            var text = text
            return text.withUTF8 { token in
                guard !token.isEmpty, token.allSatisfy(HTTPResponseParser.isTokenByte) else { return false }
                bytes.append(contentsOf: token)
                return true
            }
        }

        /// The request target, by the URL parser's rule (``HTTPSURL/checkTarget(_:url:)``): checked
        /// again here, as `target` is a public field and the head is where CR or LF would do harm.
        mutating func append(target: String) throws(HTTPSError) {
            guard HTTPSURL.isSendableTarget(target) else {
                throw HTTPSError(.request, host: hostHeader, "the request target \(DisplayText.quoted(target)) contains white space or control characters; percent-encode them")
            }
            var target = target
            target.withUTF8 { bytes.append(contentsOf: $0) }
        }

        mutating func append(_ name: String, _ value: String) throws(HTTPSError) {
            guard append(token: name) else {
                throw HTTPSError(.request, host: hostHeader, "the header name \(DisplayText.quoted(name)) is not a valid HTTP token (\(RequestHeadWriter.tokenCharacters))")
            }
            try appendValue(value, of: name)
        }

        /// A field of the client's own: the name is a token; the value is checked like any other.
        mutating func append(known name: StaticString, _ value: String) throws(HTTPSError) {
            append(line: name)
            try appendValue(value, of: "\(name)")
        }

        private mutating func appendValue(_ value: String, of name: @autoclosure () -> String) throws(HTTPSError) {
            bytes.append(0x3A)
            bytes.append(0x20)
            var value = value
            // In UTF-8 these bytes stand only for CR, LF and NUL themselves.
            let valid = value.withUTF8 { value in
                guard !value.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { return false }
                bytes.append(contentsOf: value)
                return true
            }
            guard valid else {
                throw HTTPSError(.request, host: hostHeader, "the value of header '\(name())' contains CR, LF or NUL (header injection refused)")
            }
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
    }

    /// Which of the fields the client adds a request sets itself. A name that is not an ASCII
    /// token matches none of them, and ``serializeHead(_:method:hostHeader:userAgent:bodyLength:)``
    /// refuses it anyway.
    struct SuppliedFields: OptionSet {
        let rawValue: UInt8
        static let host = SuppliedFields(rawValue: 1 << 0)
        static let userAgent = SuppliedFields(rawValue: 1 << 1)
        static let accept = SuppliedFields(rawValue: 1 << 2)
        static let acceptEncoding = SuppliedFields(rawValue: 1 << 3)
        static let contentLength = SuppliedFields(rawValue: 1 << 4)
        static let transferEncoding = SuppliedFields(rawValue: 1 << 5)
        static let expect = SuppliedFields(rawValue: 1 << 6)

        private static let names: [(String, SuppliedFields)] = [
            ("host", .host), ("user-agent", .userAgent), ("accept", .accept), ("accept-encoding", .acceptEncoding),
            ("content-length", .contentLength), ("transfer-encoding", .transferEncoding), ("expect", .expect),
        ]

        mutating func note(_ name: String) {
            let count = name.utf8.count
            for (known, field) in Self.names where known.utf8.count == count && HTTPHeaders.sameName(name, known) {
                insert(field)
                return
            }
        }
    }

    /// Drives one attempt of `machine` on `connection`: the response, or nil when the machine
    /// asks for a retry on a fresh connection.
    private func exchange(
        _ request: HTTPRequest, hostHeader host: String, on connection: TLSConnection, reused: Bool, machine: inout HTTP1ExchangeStateMachine, deadline: Deadline,
        token: CancellationToken?,
        bodySink fixedSink: ((ArraySlice<UInt8>) throws -> Void)?, bodySinkForHead: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?
    ) async throws(HTTPSError) -> HTTPResponse? {
        var bodySink = fixedSink
        let method = machine.method
        let body = request.body ?? []
        let bodyLength = request.body?.count ?? (method == "POST" || method == "PUT" || method == "PATCH" ? 0 : nil)
        let head = try HTTPSClient.serializeHead(request, method: method, hostHeader: host, userAgent: userAgent, bodyLength: bodyLength)
        trace?(HTTPSClient.redactedHead(head, outgoing: true, redact: redactsSecrets))
        connection.state.log(.httpRequest(method: method, target: request.url.target))
        var parser = HTTPResponseParser(requestMethod: method)
        // The connection's read buffer, reused across the requests of a kept-alive connection:
        // given back before the connection goes back to the pool (below), never after, when
        // another task may already have taken it.
        var buffer = connection.takeReadBuffer()
        var collected: [UInt8] = []
        var wireLength = 0
        var decompressor: Decompressor? = nil
        let idle = tls.configuration.timeouts.idleRead
        // How long a held-back body waits for 100 Continue, from when the head was sent.
        var continueDeadline = Deadline.distantFuture
        // Parsed but not yet fed to the machine (one read may hold a 100, a final head and a body).
        var pending: [HTTPResponseParser.Event] = []
        var part: [UInt8] = []
        // The error behind the failure the machine is told about, and the first write failure.
        var lastError: HTTPSError? = nil
        var earlyWriteFailure: HTTPSError? = nil

        func failure(_ error: HTTPSError) -> HTTP1ExchangeStateMachine.IOFailure {
            if error.phase == .cancelled || token?.isCancelled == true { return .cancelled }
            if error.phase == .timeout { return .timeout }
            // A write that failed (EPIPE, reset) because the server refused us: its alert is in
            // the receive buffer, and it, not the broken pipe, is the answer.
            return .broken(alert: error.alert != nil || connection.report.alerts.contains(where: \.received))
        }

        var action = machine.handle(.start(reusedConnection: reused))
        while true {
            switch action {
            case .writeHead(let includingBody):
                do throws(HTTPSError) {
                    try await connection.write(includingBody && !body.isEmpty ? head + body : head, deadline: deadline)
                    if machine.expectsContinue { continueDeadline = Deadline.after(1.0) }
                    action = machine.handle(.headWritten)
                } catch {
                    lastError = error
                    if earlyWriteFailure == nil { earlyWriteFailure = error }
                    action = machine.handle(.writeFailed(failure(error)))
                }
            case .writeBody:
                do throws(HTTPSError) {
                    try await connection.write(body, deadline: deadline)
                    action = machine.handle(.bodyWritten)
                } catch {
                    lastError = error
                    if earlyWriteFailure == nil { earlyWriteFailure = error }
                    action = machine.handle(.writeFailed(failure(error)))
                }
            case .read(let mode) where !pending.isEmpty:
                _ = mode
                switch pending.removeFirst() {
                case .informational(let status):
                    action = machine.handle(.informational(status: status))
                case .head:
                    guard let responseHead = parser.head else { throw HTTPSError(.httpParse, host: host, "no response head") }
                    connection.state.log(.httpResponse(status: responseHead.status, reason: responseHead.reason))
                    if bodySink == nil, let bodySinkForHead { bodySink = bodySinkForHead(responseHead) }
                    trace?(HTTPSClient.describeResponseHead(responseHead, redact: redactsSecrets))
                    let coding = parser.contentCoding?.trimmingWhitespace() ?? ""
                    if !coding.isEmpty && coding.lowercased() != "identity" && method != "HEAD" {
                        decompressor = Decompressor(coding: coding, limit: maximumBodySize)
                        if decompressor == nil {
                            throw HTTPSError(.httpParse, host: host, "the body uses the content coding '\(coding)', which is not supported")
                        }
                    }
                    action = machine.handle(.head(responseHead))
                case .body(let bytes):
                    part = bytes
                    action = machine.handle(.body)
                case .end:
                    action = machine.handle(.end(readsUntilClose: parser.readsUntilClose))
                }
            case .read(let mode):
                let n: Int
                do throws(HTTPSError) {
                    n =
                        mode == .untilContinue
                        ? try await connection.read(into: &buffer, deadline: Deadline.earliest(deadline, continueDeadline), idle: nil)
                        : try await connection.read(into: &buffer, deadline: deadline, idle: idle)
                } catch {
                    lastError = error
                    action = machine.handle(.readFailed(failure(error)))
                    continue
                }
                if n == 0 {
                    do throws(HTTPResponseParser.ParseError) {
                        pending = try parser.finish()
                    } catch {
                        lastError = HTTPSClient.parseError(error, host: host)
                        action = machine.handle(.readFailed(.closed))
                        continue
                    }
                    if !pending.contains(.end) {
                        lastError = HTTPSError(.httpParse, host: host, "the connection closed before the response ended")
                        pending = []
                        action = machine.handle(.readFailed(.closed))
                    }
                    continue
                }
                action = machine.handle(.bytesReceived)
                do throws(HTTPResponseParser.ParseError) {
                    pending = try parser.feed(buffer[0..<n])
                } catch {
                    throw HTTPSClient.parseError(error, host: host)
                }
            case .deliverBody:
                wireLength += part.count
                var decoded = part
                if let decompressor {
                    do throws(Decompressor.Failure) {
                        decoded = try decompressor.decode(part)
                    } catch {
                        switch error {
                        case .tooLarge(let limit):
                            throw HTTPSError(.httpParse, host: host, "the compressed body expands beyond \(limit >> 20) MiB (a decompression bomb?); refused")
                        case .corrupt(let why): throw HTTPSError(.httpParse, host: host, "the compressed body is corrupt: \(why)")
                        }
                    }
                }
                if let bodySink {
                    do { try bodySink(decoded[...]) } catch {
                        throw HTTPSError(.io, host: host, "writing the body failed: \(error)")
                    }
                } else {
                    if collected.count + decoded.count > maximumBodySize {
                        throw HTTPSError(
                            .httpParse, host: host, "the body is larger than \(maximumBodySize >> 20) MiB",
                            hint: "stream it to a file instead: \(setting: .bodyDestination)")
                    }
                    if collected.isEmpty { collected = decoded } else { collected += decoded }
                }
                action = .read(.response)
            case .finish(let reuseConnection):
                guard let responseHead = machine.head else { throw HTTPSError(.httpParse, host: host, "no response head") }
                // TLS 1.3 tickets arrive after the handshake and are read with the first response: store
                // the session once per connection then, not after every response on a kept-alive one.
                if !connection.sessionRefreshed {
                    connection.sessionRefreshed = true
                    tls.refreshSession(connection)
                }
                // The report is read before the connection goes back to the pool: from then on another
                // task may take it and log the events of its own request.
                let report = connection.report
                connection.keepReadBuffer(buffer)
                if reuseConnection { checkin(connection, hostHeader: host) } else { connection.close() }
                return HTTPResponse(
                    url: request.url, head: responseHead, body: collected, wireBodyLength: wireLength, tls: report, reusedConnection: reused,
                    informational: machine.informational)
            case .retryOnFreshConnection:
                return nil
            case .fail(let reason):
                switch reason {
                case .staleConnection: throw HTTPSError(.io, host: host, "the kept-alive connection was closed by the server")
                case .earlierWriteFailure: throw earlyWriteFailure ?? lastError ?? HTTPSError(.io, host: host, "the request could not be sent")
                case .asReported: throw lastError ?? HTTPSError(.io, host: host, "the exchange failed")
                }
            }
        }
    }

    private static func parseError(_ error: HTTPResponseParser.ParseError, host: String) -> HTTPSError {
        switch error {
        case .headersTooLarge, .lineTooLong, .tooManyHeaders:
            HTTPSError(
                .httpParse, host: host, "the response headers are too large: \(error.description)",
                hint: "the server sent oversized headers (often a pile of cookies): clear them, or ask the administrator why the response is that large")
        default:
            HTTPSError(.httpParse, host: host, error.description)
        }
    }

    static func redactedHead(_ bytes: [UInt8], outgoing: Bool, redact: Bool = true) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(separator: "\r\n", omittingEmptySubsequences: true).map { line -> String in
            if redact, let colon = line.firstIndex(of: ":"), secretHeaders.contains(line[..<colon].lowercased()) {
                return "> \(line[..<colon]): [redacted]"
            }
            return "> \(line)"
        }.joined(separator: "\n")
    }

    static func describeResponseHead(_ head: HTTPResponseHead, redact: Bool = true) -> String {
        (["< \(head.version) \(head.status) \(head.reason)"]
            + head.headers.map { field in
                redact && secretHeaders.contains(field.name.lowercased()) ? "< \(field.name): [redacted]" : "< \(field.name): \(field.value)"
            }).joined(separator: "\n")
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// Where an exchange takes its connection and gives it back: the client's pool of kept-alive
/// connections (``HTTPSClient``).
protocol HTTPConnectionPool: AnyObject {
    /// A kept-alive connection to the URL's host when one is idle (unless `fresh`), else a new
    /// one; true when it was kept alive.
    nonisolated(nonsending) func checkout(
        _ url: HTTPSURL, hostHeader: String, method: String, fresh: Bool, deadline: Deadline, token: CancellationToken?
    ) async throws(HTTPSError) -> (TLSConnection, Bool)
    /// Takes back a connection whose response ended with the connection reusable.
    func checkin(_ connection: TLSConnection, hostHeader: String)
}

/// The one HTTP/1.1 exchange driver, under every API (``HTTPSClient``'s blocking and async
/// `send`, ``LoginSession``'s steps): takes a connection from the pool, writes the request, feeds
/// the response to ``HTTP1ExchangeStateMachine`` and does what it decides (read, deliver the
/// body, retry once on a fresh connection, give the connection back or close it).
///
/// Its reads and writes are the connection's async ones, awaited on the engine loop the exchange
/// runs on (a blocking `send` runs it on a loop its own thread drives: ``Engine/blocking(onLoop:_:)``).
struct HTTPExchange {
    let tls: TLSClient
    let pool: any HTTPConnectionPool
    /// The largest body kept in memory (and the ceiling for decoded gzip/deflate).
    let maximumBodySize: Int
    /// Whether secret headers are redacted in traces.
    let redactsSecrets: Bool
    /// The trace sink for `-v`, if any.
    let trace: (@Sendable (String) -> Void)?
    /// Sent with every request unless the request sets its own.
    let userAgent: String

    /// Header names whose values are replaced by `[redacted]` in traces.
    static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// Runs the exchange: connection, request, response, and at most one retry on a fresh connection.
    ///
    /// This function and the async steps under it (`attempt`, the pool's `checkout`, the
    /// connection's `drive`, the socket's wait) are `nonisolated(nonsending)`: they run where the
    /// exchange's task already is (its loop), so none of them asks the runtime to switch
    /// executors on entry (a check under a lock, each time, on every request).
    nonisolated(nonsending) func perform(
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
            let (connection, reused) = try await pool.checkout(request.url, hostHeader: host, method: machine.method, fresh: fresh, deadline: deadline, token: token)
            do throws(HTTPSError) {
                guard
                    let response = try await attempt(
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
    /// sets them. Every request of a keep-alive connection comes here, so the head is written in
    /// one pass over the request's fields into one buffer of the largest size it can have, each
    /// field checked as it is copied.
    static func serializeHead(_ request: HTTPRequest, method: String, hostHeader: String, userAgent: String, bodyLength: Int?) throws(HTTPSError) -> [UInt8] {
        var supplied = SuppliedFields()
        // The most the head can take: every field's bytes and the fixed text around them.
        var bound = method.utf8.count + request.url.target.utf8.count + hostHeader.utf8.count + userAgent.utf8.count + 160
        for field in request.headers {
            supplied.note(field.name)
            bound += field.name.utf8.count + field.value.utf8.count + 4
        }
        var failure: HTTPSError? = nil
        let head = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            var head = RequestHeadWriter(buffer: buffer, hostHeader: hostHeader)
            do throws(HTTPSError) {
                guard head.append(token: method) else {
                    throw HTTPSError(.request, host: hostHeader, "the method \(DisplayText.quoted(method)) is not a valid HTTP token (\(RequestHeadWriter.tokenCharacters))")
                }
                head.append(line: " ")
                try head.append(target: request.url.target)
                head.append(line: " HTTP/1.1\r\n")
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
            } catch {
                failure = error
            }
            count = head.count
        }
        if let failure { throw failure }
        return head
    }

    /// A request head being written into a buffer sized for it: each field checked (a token for
    /// a name; no CR, LF or NUL in a value, so no header injection) and copied as bytes.
    private struct RequestHeadWriter {
        private let buffer: UnsafeMutableBufferPointer<UInt8>
        private(set) var count = 0
        /// Names the request in errors.
        let hostHeader: String

        init(buffer: UnsafeMutableBufferPointer<UInt8>, hostHeader: String) {
            self.buffer = buffer
            self.hostHeader = hostHeader
        }

        /// What a token (a method, a field name) may hold, for the errors that refuse one.
        static let tokenCharacters = "letters, digits and !#$%&'*+-.^_`|~ only"

        private mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
            // serializeHead sized the buffer for every byte it writes.
            precondition(count + bytes.count <= buffer.count, "the request head outgrew its buffer")
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return }
            (target + count).initialize(from: source, count: bytes.count)
            count += bytes.count
        }

        /// Text of the client's own, known to be well-formed.
        mutating func append(line: StaticString) {
            line.withUTF8Buffer { copy($0) }
        }

        // `withUTF8` lends the bytes of a native string in place: checked and copied as one buffer
        // each, rather than iterated through the UTF-8 view.

        /// Appends `text` if it is a token (a method, a field name); false if not.
        mutating func append(token text: String) -> Bool {
            var text = text
            return text.withUTF8 { token in
                guard !token.isEmpty, token.allSatisfy(HTTPResponseParser.isTokenByte) else { return false }
                copy(token)
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
            target.withUTF8 { copy($0) }
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
            append(line: ": ")
            var value = value
            // In UTF-8 these bytes stand only for CR, LF and NUL themselves.
            let valid = value.withUTF8 { value in
                guard !value.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { return false }
                copy(value)
                return true
            }
            guard valid else {
                throw HTTPSError(.request, host: hostHeader, "the value of header '\(name())' contains CR, LF or NUL (header injection refused)")
            }
            append(line: "\r\n")
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
    nonisolated(nonsending) private func attempt(
        _ request: HTTPRequest, hostHeader host: String, on connection: TLSConnection, reused: Bool, machine: inout HTTP1ExchangeStateMachine, deadline: Deadline,
        token: CancellationToken?,
        bodySink fixedSink: ((ArraySlice<UInt8>) throws -> Void)?, bodySinkForHead: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?
    ) async throws(HTTPSError) -> HTTPResponse? {
        var bodySink = fixedSink
        let method = machine.method
        let body = request.body ?? []
        let bodyLength = request.body?.count ?? (method == "POST" || method == "PUT" || method == "PATCH" ? 0 : nil)
        let head = try HTTPExchange.serializeHead(request, method: method, hostHeader: host, userAgent: userAgent, bodyLength: bodyLength)
        trace?(HTTPExchange.redactedHead(head, outgoing: true, redact: redactsSecrets))
        connection.state.log(.httpRequest(method: method, target: request.url.target))
        var parser = HTTPResponseParser(canonicalMethod: method)
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
                    try await connection.writeHere(includingBody && !body.isEmpty ? head + body : head, deadline: deadline)
                    if machine.expectsContinue { continueDeadline = Deadline.after(1.0) }
                    action = machine.handle(.headWritten)
                } catch {
                    lastError = error
                    if earlyWriteFailure == nil { earlyWriteFailure = error }
                    action = machine.handle(.writeFailed(failure(error)))
                }
            case .writeBody:
                do throws(HTTPSError) {
                    try await connection.writeHere(body, deadline: deadline)
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
                    trace?(HTTPExchange.describeResponseHead(responseHead, redact: redactsSecrets))
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
                        ? try await connection.readHere(into: &buffer, deadline: Deadline.earliest(deadline, continueDeadline), idle: nil)
                        : try await connection.readHere(into: &buffer, deadline: deadline, idle: idle)
                } catch {
                    lastError = error
                    action = machine.handle(.readFailed(failure(error)))
                    continue
                }
                if n == 0 {
                    do throws(HTTPResponseParser.ParseError) {
                        pending = try parser.finish()
                    } catch {
                        lastError = HTTPExchange.parseError(error, host: host)
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
                    throw HTTPExchange.parseError(error, host: host)
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
                if reuseConnection { pool.checkin(connection, hostHeader: host) } else { connection.close() }
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

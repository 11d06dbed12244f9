import Foundation
import MTLSTrust

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

/// An HTTPS/1.1 client over OpenSSL: keep-alive, `Expect: 100-continue`, gzip/deflate, and every
/// way a server asks for a client certificate (in the handshake, by renegotiation, by TLS 1.3
/// post-handshake auth), recorded in each response's ``HTTPResponse/tls``.
///
/// The synchronous API blocks the calling thread with `poll` and deadlines; the `async` API runs it on
/// a dispatch queue, never on Swift's cooperative pool, and closes the connection on cancellation.
public final class HTTPSClient: @unchecked Sendable {
    // @unchecked Sendable: the idle pool is guarded by `lock`; a connection is used by one request at a time.
    public let tls: TLSClient
    /// The largest body kept in memory (and the ceiling for decoded gzip/deflate).
    public var maximumBodySize: Int = 64 << 20
    /// Header names whose values are replaced by `[redacted]` in traces.
    public static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    /// Redact secret headers in traces (default true; `--show-secrets` turns it off).
    /// - Warning: With false, traces hold passwords and session cookies.
    public var redactsSecrets = true
    /// Where `connect-to` sends connections for a host (`--connect-to`).
    public var connectTo: [String: (host: String, port: Int)] = [:]
    /// A trace sink for `-v`: request and response heads (secrets redacted) and, as they happen,
    /// the TLS events of every connection (``TLSEvent/line``), so the trace reads in order.
    public var trace: (@Sendable (String) -> Void)? {
        didSet {
            guard let trace else {
                tls.eventObserver = nil
                return
            }
            tls.eventObserver = { event in
                switch event {
                case .httpRequest, .httpResponse: break  // the heads are traced in full by the client
                default: trace(event.line)
                }
            }
        }
    }
    /// Sent with every request unless overridden.
    public var userAgent = "mtls/0.1"

    private let lock = NSLock()
    private var idle: [String: TLSConnection] = [:]

    public init(configuration: TLSClientConfiguration) throws(HTTPSError) {
        tls = try TLSClient(configuration: configuration)
    }

    deinit {
        for connection in idle.values { connection.close() }
    }

    /// Closes kept-alive connections.
    public func closeIdleConnections() {
        lock.lock()
        let connections = Array(idle.values)
        idle.removeAll()
        lock.unlock()
        connections.forEach { $0.close() }
    }

    private func key(_ url: HTTPSURL) -> String { "\(url.host):\(url.port)" }

    private func checkout(_ url: HTTPSURL, deadline: Deadline, token: CancellationToken?) throws(HTTPSError) -> (TLSConnection, Bool) {
        lock.lock()
        let existing = idle.removeValue(forKey: key(url))
        lock.unlock()
        if let existing {
            if !existing.isReadableNow {
                existing.token = token
                return (existing, true)
            }
            existing.close()  // the server closed it, or sent something unasked
        }
        let connection = try tls.connect(host: url.host, port: url.port, connectTo: connectTo[url.host] ?? connectTo["\(url.host):\(url.port)"], deadline: deadline, token: token)
        return (connection, false)
    }

    private func checkin(_ connection: TLSConnection, url: HTTPSURL) {
        lock.lock()
        let previous = idle.updateValue(connection, forKey: key(url))
        lock.unlock()
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
        guard request.url.scheme == "https" else {
            throw HTTPSError(.url, host: request.url.hostHeader, "only https:// URLs are supported", hint: "use https://")
        }
        let deadline = Deadline.after(tls.configuration.timeouts.total)
        var attempt = 0
        while true {
            attempt += 1
            let (connection, reused) = try checkout(request.url, deadline: deadline, token: token)
            do throws(HTTPSError) {
                var response = try exchange(request, on: connection, reused: reused, deadline: deadline, bodySink: bodySink, bodySinkForHead: bodySinkForHead)
                response.tls = connection.report
                return response
            } catch {
                var error = error
                if error.report == nil { error.report = connection.report }
                connection.close()
                // A kept-alive connection the server closed before answering: retry once, fresh.
                if reused && attempt == 1 && error.phase == .io && token?.isCancelled != true && ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"].contains(request.method.uppercased()) {
                    continue
                }
                throw error
            }
        }
    }

    /// The async form of ``send(_:bodySink:bodySinkForHead:token:)``, with the same typed error.
    ///
    /// The blocking socket work runs on a dispatch queue, never on Swift's cooperative pool, so
    /// concurrent requests do not starve other tasks. Cancelling the task shuts the connection's
    /// socket down at once: the call throws ``HTTPSError`` with phase `.cancelled` and the
    /// connection is not reused.
    public func send(_ request: HTTPRequest) async throws(HTTPSError) -> HTTPResponse {
        try await Self.runCancellable(host: request.url.hostHeader) { token throws(HTTPSError) in try self.send(request, token: token) }
    }

    /// Runs blocking transport work on a dispatch queue with a token that task cancellation fires.
    static func runCancellable<T: Sendable>(host: String, _ work: @escaping @Sendable (CancellationToken) throws(HTTPSError) -> T) async throws(HTTPSError) -> T {
        let token = CancellationToken()
        let result: Result<T, HTTPSError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, HTTPSError>, Never>) in
                DispatchQueue.global().async {
                    if Task.isCancelled { token.cancel() }
                    do throws(HTTPSError) {
                        continuation.resume(returning: .success(try work(token)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        } onCancel: {
            token.cancel()
        }
        if case .failure(let error) = result, error.phase != .cancelled, token.isCancelled {
            throw HTTPSError(.cancelled, host: host, "the task was cancelled (\(error.message))")
        }
        return try result.get()
    }

    /// Serialises the request head, refusing CR/LF/NUL in any header (no injection).
    static func serializeHead(_ request: HTTPRequest, userAgent: String, bodyLength: Int?) throws(HTTPSError) -> [UInt8] {
        let method = request.method.uppercased()
        guard !method.isEmpty, method.utf8.allSatisfy(HTTPResponseParser.isTokenByte) else {
            throw HTTPSError(.request, host: request.url.hostHeader, "the method '\(request.method)' is not a valid HTTP token")
        }
        var head = "\(method) \(request.url.target) HTTP/1.1\r\n"
        var headers = request.headers
        if !headers.contains("Host") { headers.fields.insert(("Host", request.url.hostHeader), at: 0) }
        if !headers.contains("User-Agent") { headers.add("User-Agent", userAgent) }
        if !headers.contains("Accept") { headers.add("Accept", "*/*") }
        if !headers.contains("Accept-Encoding") { headers.add("Accept-Encoding", "gzip, deflate") }
        if let bodyLength, !headers.contains("Content-Length"), !headers.contains("Transfer-Encoding") {
            headers.add("Content-Length", String(bodyLength))
        }
        if request.expectsContinue && bodyLength != nil && !headers.contains("Expect") { headers.add("Expect", "100-continue") }
        for field in headers {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(HTTPResponseParser.isTokenByte) else {
                throw HTTPSError(.request, host: request.url.hostHeader, "the header name '\(field.name)' is not a valid HTTP token")
            }
            guard !field.value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw HTTPSError(.request, host: request.url.hostHeader, "the value of header '\(field.name)' contains CR, LF or NUL (header injection refused)")
            }
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8)
    }

    private func exchange(
        _ request: HTTPRequest, on connection: TLSConnection, reused: Bool, deadline: Deadline, bodySink fixedSink: ((ArraySlice<UInt8>) throws -> Void)?,
        bodySinkForHead: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?
    ) throws(HTTPSError) -> HTTPResponse {
        var bodySink = fixedSink
        let host = request.url.hostHeader
        let body = request.body
        let head = try HTTPSClient.serializeHead(
            request, userAgent: userAgent, bodyLength: body?.count ?? (["POST", "PUT", "PATCH"].contains(request.method.uppercased()) ? 0 : nil))
        trace?(HTTPSClient.redactedHead(head, outgoing: true, redact: redactsSecrets))
        connection.state.log(.httpRequest(method: request.method.uppercased(), target: request.url.target))
        let waitForContinue = request.expectsContinue && (body?.isEmpty == false)
        var earlyWriteFailure: HTTPSError? = nil
        do throws(HTTPSError) {
            try connection.write(head + (waitForContinue ? [] : (body ?? [])), deadline: deadline)
        } catch {
            // The server may have answered early (413, 403) and closed: read what it sent.
            if error.phase == .timeout || error.phase == .cancelled { throw error }
            earlyWriteFailure = error
        }
        var bodySent = !waitForContinue
        var parser = HTTPResponseParser(requestMethod: request.method)
        // The connection's read buffer, reused across the requests of a kept-alive connection.
        var buffer = connection.takeReadBuffer()
        defer { connection.keepReadBuffer(buffer) }
        var collected: [UInt8] = []
        var wireLength = 0
        var informational: [Int] = []
        var decompressor: Decompressor? = nil
        var finished = false
        let idle = tls.configuration.timeouts.idleRead
        let continueDeadline = Deadline.after(1.0)
        var gotAnyByte = false
        while !finished {
            let n: Int
            do throws(HTTPSError) {
                let readDeadline = !bodySent ? Deadline.earliest(deadline, continueDeadline) : deadline
                n = try connection.read(into: &buffer, deadline: readDeadline, idle: bodySent ? idle : nil)
            } catch {
                if !bodySent && error.phase == .timeout {
                    // No 100 Continue within a second: send the body anyway (RFC 9110 §10.1.1).
                    try connection.write(body ?? [], deadline: deadline)
                    bodySent = true
                    continue
                }
                if !gotAnyByte && reused { throw HTTPSError(.io, host: host, "the kept-alive connection was closed by the server") }
                // A write that failed (EPIPE, reset) because the server refused us: its alert is in
                // the receive buffer, and it, not the broken pipe, is the answer.
                if error.alert != nil || connection.report.alerts.contains(where: \.received) { throw error }
                throw earlyWriteFailure ?? error
            }
            let events: [HTTPResponseParser.Event]
            do throws(HTTPResponseParser.ParseError) {
                events = n == 0 ? try parser.finish() : try parser.feed(buffer[0..<n])
            } catch {
                if n == 0 && !gotAnyByte && reused { throw HTTPSError(.io, host: host, "the kept-alive connection was closed by the server") }
                switch error {
                case .headersTooLarge, .lineTooLong, .tooManyHeaders:
                    throw HTTPSError(
                        .httpParse, host: host, "the response headers are too large: \(error.description)",
                        hint: "the server sent oversized headers (often a pile of cookies): clear them, or ask the administrator why the response is that large")
                default:
                    throw HTTPSError(.httpParse, host: host, error.description)
                }
            }
            if n > 0 { gotAnyByte = true }
            for event in events {
                switch event {
                case .informational(let status):
                    informational.append(status)
                    if status == 100 && !bodySent {
                        try connection.write(body ?? [], deadline: deadline)
                        bodySent = true
                    }
                case .head:
                    if let head = parser.head {
                        connection.state.log(.httpResponse(status: head.status, reason: head.reason))
                        if bodySink == nil, let bodySinkForHead { bodySink = bodySinkForHead(head) }
                        trace?(HTTPSClient.describeResponseHead(head, redact: redactsSecrets))
                        let coding = head.headers["Content-Encoding"]?.trimmingCharacters(in: .whitespaces) ?? ""
                        if !coding.isEmpty && coding.lowercased() != "identity" && request.method.uppercased() != "HEAD" {
                            decompressor = Decompressor(coding: coding, limit: maximumBodySize)
                            if decompressor == nil {
                                throw HTTPSError(.httpParse, host: host, "the body uses the content coding '\(coding)', which is not supported")
                            }
                        }
                    }
                case .body(let bytes):
                    wireLength += bytes.count
                    var decoded = bytes
                    if let decompressor {
                        do throws(Decompressor.Failure) {
                            decoded = try decompressor.decode(bytes)
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
                            throw HTTPSError(.httpParse, host: host, "the body is larger than \(maximumBodySize >> 20) MiB; write it to a file with --output")
                        }
                        collected += decoded
                    }
                case .end:
                    finished = true
                }
            }
            if n == 0 && !finished {
                throw HTTPSError(.httpParse, host: host, "the connection closed before the response ended")
            }
        }
        guard let responseHead = parser.head else { throw HTTPSError(.httpParse, host: host, "no response head") }
        // TLS 1.3 tickets arrive after the handshake and are read with the first response: store
        // the session once per connection then, not after every response on a kept-alive one.
        if !connection.sessionRefreshed {
            connection.sessionRefreshed = true
            tls.refreshSession(connection)
        }
        // `Connection: close` among the connection options (a comma-separated token list).
        let closes = responseHead.headers.values("Connection").contains { value in
            value.split(separator: ",").contains { HTTPHeaders.sameName(HTTPResponseParser.trimmingWhitespace($0), "close") }
        }
        let reusable =
            bodySent && earlyWriteFailure == nil && !parser.readsUntilClose && responseHead.version == "HTTP/1.1" && !closes && responseHead.status != 101
        if reusable { checkin(connection, url: request.url) } else { connection.close() }
        return HTTPResponse(
            url: request.url, head: responseHead, body: collected, wireBodyLength: wireLength, tls: connection.report, reusedConnection: reused, informational: informational)
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

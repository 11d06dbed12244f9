#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust
import Synchronization

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
public final class HTTPSClient: Sendable, HTTPConnectionPool {
    public let tls: TLSClient
    /// What the client does beyond TLS, fixed at init.
    public let options: HTTPClientOptions
    /// Header names whose values are replaced by `[redacted]` in traces.
    public static let secretHeaders: Set<String> = HTTPExchange.secretHeaders

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

    public convenience init(configuration: TLSClientConfiguration, options: HTTPClientOptions = HTTPClientOptions()) throws(HTTPSError) {
        self.init(tls: try TLSClient(configuration: configuration), options: options)
    }

    /// A client with `other`'s TLS configuration, `SSL_CTX` and trust evaluators, and its own
    /// sessions, kept-alive connections and options (``TLSClient/init(sharingContextWith:)``): for a
    /// fan-out of independent clients, the TLS context and the trust store are made once.
    public convenience init(sharingContextWith other: HTTPSClient, options: HTTPClientOptions = HTTPClientOptions()) {
        self.init(tls: TLSClient(sharingContextWith: other.tls), options: options)
    }

    private init(tls: TLSClient, options: HTTPClientOptions) {
        self.tls = tls
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
    nonisolated(nonsending) func checkout(
        _ url: HTTPSURL, hostHeader: String, method: String, fresh: Bool, deadline: Deadline, token: CancellationToken?
    ) async throws(HTTPSError) -> (TLSConnection, Bool) {
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

    func checkin(_ connection: TLSConnection, hostHeader: String) {
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

    /// Runs one exchange (the engine's driver, ``HTTPExchange``) with this client's pool and
    /// options: connection, request, response, retry.
    nonisolated(nonsending) func perform(
        _ request: HTTPRequest, bodySink: ((ArraySlice<UInt8>) throws -> Void)?, bodySinkForHead: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?,
        token: CancellationToken?
    ) async throws(HTTPSError) -> HTTPResponse {
        let exchange = HTTPExchange(
            tls: tls, pool: self, maximumBodySize: options.maximumBodySize, redactsSecrets: options.redactsSecrets, trace: options.trace, userAgent: options.userAgent)
        return try await exchange.perform(request, bodySink: bodySink, bodySinkForHead: bodySinkForHead, token: token)
    }
}

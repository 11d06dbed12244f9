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

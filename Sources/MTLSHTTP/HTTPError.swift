import MTLSTrust

/// The one error type of `MTLSHTTP`: which host, which phase, what happened, and what to try.
public struct HTTPSError: Error, Sendable, CustomStringConvertible {
    /// Where in the exchange the failure happened: a code that can grow (new phases are static
    /// members, so a `switch` over it has a `default` and keeps compiling when one is added).
    public struct Phase: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The phase in words (`TLS handshake`), as messages show it.
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The URL could not be used (no host, a scheme other than https).
        public static let url = Phase(rawValue: "URL")
        /// The host name did not resolve.
        public static let nameResolution = Phase(rawValue: "name resolution")
        /// The TCP connection failed.
        public static let connect = Phase(rawValue: "connect")
        /// The TLS handshake failed.
        public static let tlsHandshake = Phase(rawValue: "TLS handshake")
        /// The server's certificate was not trusted.
        public static let serverCertificate = Phase(rawValue: "server certificate")
        /// The client certificate was asked for or refused.
        public static let clientCertificate = Phase(rawValue: "client certificate")
        /// The request could not be sent.
        public static let request = Phase(rawValue: "request")
        /// The response was not valid HTTP/1.1.
        public static let httpParse = Phase(rawValue: "HTTP response")
        /// A deadline passed.
        public static let timeout = Phase(rawValue: "timeout")
        /// Reading or writing the connection failed.
        public static let io = Phase(rawValue: "I/O")
        /// The caller cancelled the exchange.
        public static let cancelled = Phase(rawValue: "cancelled")
        /// Authentication failed.
        public static let auth = Phase(rawValue: "authentication")
        /// A redirect could not or would not be followed.
        public static let redirect = Phase(rawValue: "redirect")
        /// The options given cannot work together.
        public static let configuration = Phase(rawValue: "configuration")
    }

    // The fields live in a copy-on-write box: an error is 8 bytes, not 216 (see CopyOnWriteBox).
    private struct Fields {
        var phase: Phase
        var host: String
        var message: String
        var hint: Hint?
        var alert: String?
        var trust: TrustEvaluation?
        var report: TLSSessionReport?
        var kerberos: KerberosFailure?
    }

    private var storage: CopyOnWriteBox<Fields>

    public var phase: Phase {
        get { storage.value.phase }
        _modify { yield &storage.value.phase }
    }
    /// The host (and port) involved.
    public var host: String {
        get { storage.value.host }
        _modify { yield &storage.value.host }
    }
    /// One sentence.
    public var message: String {
        get { storage.value.message }
        _modify { yield &storage.value.message }
    }
    /// What to try; the settings it names are kept as ``Setting`` values (the CLI names them as flags).
    public var hint: Hint? {
        get { storage.value.hint }
        _modify { yield &storage.value.hint }
    }
    /// The TLS alert received or sent, by name, when there was one.
    public var alert: String? {
        get { storage.value.alert }
        _modify { yield &storage.value.alert }
    }
    /// The trust evaluation, when the failure is the server's certificate.
    public var trust: TrustEvaluation? {
        get { storage.value.trust }
        _modify { yield &storage.value.trust }
    }
    /// What the TLS layer observed before the failure (handshake messages, alerts, certificate requests).
    public var report: TLSSessionReport? {
        get { storage.value.report }
        _modify { yield &storage.value.report }
    }
    /// Why a Kerberos (`Negotiate`) login failed, when it did (phase `.auth`).
    public var kerberos: KerberosFailure? {
        get { storage.value.kerberos }
        _modify { yield &storage.value.kerberos }
    }

    public init(_ phase: Phase, host: String, _ message: String, hint: Hint? = nil, alert: String? = nil, trust: TrustEvaluation? = nil) {
        storage = CopyOnWriteBox(Fields(phase: phase, host: host, message: message, hint: hint, alert: alert, trust: trust, report: nil, kerberos: nil))
    }

    public var description: String {
        var text = "\(host): \(phase.rawValue) failed: \(message)"
        if let hint { text += " (\(hint))" }
        return text
    }
}

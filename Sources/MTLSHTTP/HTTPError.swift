import MTLSTrust

/// The one error type of `MTLSHTTP`: which host, which phase, what happened, and what to try.
public struct HTTPSError: Error, Sendable, CustomStringConvertible {
    /// Where in the exchange the failure happened.
    public enum Phase: String, Sendable {
        case url = "URL"
        case nameResolution = "name resolution"
        case connect = "connect"
        case tlsHandshake = "TLS handshake"
        case serverCertificate = "server certificate"
        case clientCertificate = "client certificate"
        case request = "request"
        case httpParse = "HTTP response"
        case timeout = "timeout"
        case io = "I/O"
        case cancelled = "cancelled"
        case auth = "authentication"
        case redirect = "redirect"
        case configuration = "configuration"
    }

    public var phase: Phase
    /// The host (and port) involved.
    public var host: String
    /// One sentence.
    public var message: String
    /// What to try; the settings it names are kept as ``Setting`` values (the CLI names them as flags).
    public var hint: Hint?
    /// The TLS alert received or sent, by name, when there was one.
    public var alert: String?
    /// The trust evaluation, when the failure is the server's certificate.
    public var trust: TrustEvaluation?
    /// What the TLS layer observed before the failure (handshake messages, alerts, certificate requests).
    public var report: TLSSessionReport?
    /// Why a Kerberos (`Negotiate`) login failed, when it did (phase `.auth`).
    public var kerberos: KerberosFailure?

    public init(_ phase: Phase, host: String, _ message: String, hint: Hint? = nil, alert: String? = nil, trust: TrustEvaluation? = nil) {
        self.phase = phase
        self.host = host
        self.message = message
        self.hint = hint
        self.alert = alert
        self.trust = trust
    }

    public var description: String {
        var text = "\(host): \(phase.rawValue) failed: \(message)"
        if let hint { text += " (\(hint))" }
        return text
    }
}

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

    // The fields live in a copy-on-write box: an error is 8 bytes, not 216. Every `try await`
    // of a `throws(HTTPSError)` function keeps room for one in its caller's async frame, and a
    // task's frames are most of what a thousand exchanges in flight hold (docs/BENCHMARKS.md,
    // "The fleet at scale on the engine").
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

    private final class Storage: @unchecked Sendable {
        // @unchecked Sendable: copy-on-write: a shared box is never written (mutableStorage() copies
        // it first), so a box reached from two tasks is only read.
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    // Written only through mutableStorage(), which first copies a shared box: a value type to its users.
    private var storage: Storage

    private mutating func mutableStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        return storage
    }

    public var phase: Phase {
        get { storage.fields.phase }
        _modify { yield &mutableStorage().fields.phase }
    }
    /// The host (and port) involved.
    public var host: String {
        get { storage.fields.host }
        _modify { yield &mutableStorage().fields.host }
    }
    /// One sentence.
    public var message: String {
        get { storage.fields.message }
        _modify { yield &mutableStorage().fields.message }
    }
    /// What to try; the settings it names are kept as ``Setting`` values (the CLI names them as flags).
    public var hint: Hint? {
        get { storage.fields.hint }
        _modify { yield &mutableStorage().fields.hint }
    }
    /// The TLS alert received or sent, by name, when there was one.
    public var alert: String? {
        get { storage.fields.alert }
        _modify { yield &mutableStorage().fields.alert }
    }
    /// The trust evaluation, when the failure is the server's certificate.
    public var trust: TrustEvaluation? {
        get { storage.fields.trust }
        _modify { yield &mutableStorage().fields.trust }
    }
    /// What the TLS layer observed before the failure (handshake messages, alerts, certificate requests).
    public var report: TLSSessionReport? {
        get { storage.fields.report }
        _modify { yield &mutableStorage().fields.report }
    }
    /// Why a Kerberos (`Negotiate`) login failed, when it did (phase `.auth`).
    public var kerberos: KerberosFailure? {
        get { storage.fields.kerberos }
        _modify { yield &mutableStorage().fields.kerberos }
    }

    public init(_ phase: Phase, host: String, _ message: String, hint: Hint? = nil, alert: String? = nil, trust: TrustEvaluation? = nil) {
        storage = Storage(Fields(phase: phase, host: host, message: message, hint: hint, alert: alert, trust: trust, report: nil, kerberos: nil))
    }

    public var description: String {
        var text = "\(host): \(phase.rawValue) failed: \(message)"
        if let hint { text += " (\(hint))" }
        return text
    }
}

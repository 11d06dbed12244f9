internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// A TLS protocol version.
public enum TLSVersion: String, Sendable, Comparable, CaseIterable {
    case tls1_0 = "1.0", tls1_1 = "1.1", tls1_2 = "1.2", tls1_3 = "1.3"

    /// OpenSSL's number for the version (`TLS1_3_VERSION` …), the one place it is spelled.
    var openSSLValue: Int32 {
        switch self {
        case .tls1_0: TLS1_VERSION
        case .tls1_1: TLS1_1_VERSION
        case .tls1_2: TLS1_2_VERSION
        case .tls1_3: TLS1_3_VERSION
        }
    }

    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.openSSLValue < rhs.openSSLValue }

    /// `TLSv1.3` as OpenSSL names it.
    public var name: String { "TLSv\(rawValue)" }
}

/// Timeouts of one exchange.
public struct Timeouts: Sendable, Equatable {
    public var connect: Duration
    public var handshake: Duration
    /// The longest silence while reading.
    public var idleRead: Duration
    /// The whole exchange.
    public var total: Duration

    public init(connect: Duration = .seconds(10), handshake: Duration = .seconds(10), idleRead: Duration = .seconds(30), total: Duration = .seconds(120)) {
        self.connect = connect
        self.handshake = handshake
        self.idleRead = idleRead
        self.total = total
    }

    /// All four set from one `--timeout`: `limit` to connect, to handshake and without data, and
    /// four times `limit` for the whole exchange.
    public static func uniform(_ limit: Duration) -> Timeouts {
        Timeouts(connect: limit, handshake: limit, idleRead: limit, total: max(limit, limit * 4))
    }
}

extension Duration {
    /// The duration in seconds, for `poll` deadlines and messages.
    package var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// How the client checks the server and what it presents.
public struct TLSClientConfiguration: Sendable {
    /// The trust policy; its hostname is filled in from the URL unless ``validatesHostname`` is false.
    public var trust: TrustPolicy
    /// Check the server's name against its certificate's subjectAltName (default: true).
    public var validatesHostname: Bool
    /// Continue when the server is not trusted, recording every problem (`--insecure`).
    /// - Warning: Only for diagnosis: an attacker can read and change everything.
    public var continuesOnTrustFailure: Bool
    /// Pins per host (any format `mtls pin` writes, read with `PinDocument(contentsOf:)`): the domain
    /// that applies to the host connected to must be satisfied; report-only and expired domains
    /// are recorded, not enforced.
    public var pinning: PinDocument?
    /// One set of pins for every host; the same as a ``pinning`` document with one any-host domain
    /// (used only when ``pinning`` is nil).
    public var pins: PinSet?
    /// Client identities, chosen by the CA names the server accepts.
    public var identities: [ClientIdentity]
    public var minimumVersion: TLSVersion?
    public var maximumVersion: TLSVersion?
    /// OpenSSL cipher list for TLS 1.2 and below.
    public var cipherList: String?
    /// TLS 1.3 cipher suites.
    public var cipherSuites: String?
    /// The SNI name; nil uses the URL's host (none for IP literals).
    public var serverName: String?
    /// ALPN protocols offered.
    public var alpn: [String]
    /// Allow renegotiation with servers that lack RFC 5746 secure renegotiation.
    /// - Warning: Exposes the connection to the 2009 renegotiation prefix attack.
    public var allowsLegacyRenegotiation: Bool
    /// Offer TLS 1.3 post-handshake authentication (default: true, so servers can ask per path).
    public var offersPostHandshakeAuth: Bool
    public var timeouts: Timeouts
    /// Let OpenSSL free a connection's record buffers (about 34 KiB) while they are empty, at the
    /// price of an allocation per record: for many connections that mostly wait, as in
    /// `probe --targets`, not for one that streams.
    package var releasesIdleBuffers = false

    public init(
        trust: TrustPolicy = TrustPolicy(includesSystemRoots: true), validatesHostname: Bool = true,
        continuesOnTrustFailure: Bool = false, pinning: PinDocument? = nil, pins: PinSet? = nil, identities: [ClientIdentity] = [],
        minimumVersion: TLSVersion? = .tls1_2, maximumVersion: TLSVersion? = nil, cipherList: String? = nil,
        cipherSuites: String? = nil, serverName: String? = nil, alpn: [String] = ["http/1.1"],
        allowsLegacyRenegotiation: Bool = false, offersPostHandshakeAuth: Bool = true, timeouts: Timeouts = Timeouts()
    ) {
        self.trust = trust
        self.validatesHostname = validatesHostname
        self.continuesOnTrustFailure = continuesOnTrustFailure
        self.pinning = pinning
        self.pins = pins
        self.identities = identities
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.cipherList = cipherList
        self.cipherSuites = cipherSuites
        self.serverName = serverName
        self.alpn = alpn
        self.allowsLegacyRenegotiation = allowsLegacyRenegotiation
        self.offersPostHandshakeAuth = offersPostHandshakeAuth
        self.timeouts = timeouts
    }
}

/// When the server asked for a client certificate.
public enum CertificateRequestPhase: String, Sendable {
    /// In the first handshake (nginx `ssl_verify_client on`, IIS with `clientcertnegotiation=enable`).
    case handshake
    /// After the request, by TLS 1.2 renegotiation (IIS and Apache per path).
    case renegotiation
    /// After the request, by TLS 1.3 post-handshake authentication (Apache per path).
    case postHandshake = "post-handshake"
}

/// One certificate request by the server, and our answer.
public struct CertificateRequestRecord: Sendable {
    public var phase: CertificateRequestPhase
    /// The CA names the server accepts (RFC 4514); empty when it sent none (IIS 2012+ by default).
    public var acceptedCANames: [String]
    /// The signature algorithms the server accepts.
    public var signatureAlgorithms: [String]
    /// The certificate we sent; nil when we sent none.
    public var sentCertificate: Certificate?
    /// The label of the identity sent.
    public var sentIdentityLabel: String?
    /// True when the sent identity is issued by one of the accepted CAs (or no names were sent).
    public var identityFits: Bool
    /// True when we had no identity at all.
    public var hadNoIdentity: Bool
}

/// A TLS alert, by name.
public struct TLSAlertRecord: Sendable {
    /// True when we received it; false when we sent it.
    public var received: Bool
    public var level: String
    public var description: String
}

/// Everything observed on one TLS connection, for `probe` and for error messages.
///
/// A value type whose fields live in one copy-on-write box: the report travels inside every
/// response and error, and inline it made each of them (and every stack frame holding one across
/// a wait, a thousand of them in `probe --targets`) hundreds of bytes larger.
public struct TLSSessionReport: Sendable {
    /// The report's fields: one place to add a field, copied whole when a shared box is written.
    private struct Fields {
        var host: String
        var port: Int
        var address: String? = nil
        var serverName: String? = nil
        var version: String? = nil
        var cipher: String? = nil
        var alpn: String? = nil
        var resumed: Bool = false
        var secureRenegotiation: Bool = false
        var serverCertificate: Certificate? = nil
        var peerChainAsSent: [Certificate] = []
        var trust: TrustEvaluation? = nil
        var pinMatch: PinSet.Match? = nil
        var pinEvaluation: PinEvaluation? = nil
        var certificateRequests: [CertificateRequestRecord] = []
        var alerts: [TLSAlertRecord] = []
        var renegotiations: Int = 0
        var resumedRenegotiations: Int = 0
        var messageTrace: [MessageTraceEntry] = []
        var overriddenProblems: [String] = []
        var events: TLSEventLog = TLSEventLog()
        var stapledOCSP: RevocationAttempt? = nil
    }

    private var storage: CopyOnWriteBox<Fields>

    init(host: String, port: Int) { storage = CopyOnWriteBox(Fields(host: host, port: port)) }

    public var host: String {
        get { storage.value.host }
        _modify { yield &storage.value.host }
    }
    public var port: Int {
        get { storage.value.port }
        _modify { yield &storage.value.port }
    }
    public var address: String? {
        get { storage.value.address }
        _modify { yield &storage.value.address }
    }
    public var serverName: String? {
        get { storage.value.serverName }
        _modify { yield &storage.value.serverName }
    }
    public var version: String? {
        get { storage.value.version }
        _modify { yield &storage.value.version }
    }
    public var cipher: String? {
        get { storage.value.cipher }
        _modify { yield &storage.value.cipher }
    }
    public var alpn: String? {
        get { storage.value.alpn }
        _modify { yield &storage.value.alpn }
    }
    public var resumed: Bool {
        get { storage.value.resumed }
        _modify { yield &storage.value.resumed }
    }
    public var secureRenegotiation: Bool {
        get { storage.value.secureRenegotiation }
        _modify { yield &storage.value.secureRenegotiation }
    }
    /// The server's certificate of this session, also on a resumed session (whose handshake
    /// carries no certificate); the TLS channel binding is computed from it.
    public var serverCertificate: Certificate? {
        get { storage.value.serverCertificate }
        _modify { yield &storage.value.serverCertificate }
    }
    /// The chain as the server sent it (leaf first).
    public var peerChainAsSent: [Certificate] {
        get { storage.value.peerChainAsSent }
        _modify { yield &storage.value.peerChainAsSent }
    }
    /// The server trust evaluation (nil if the server sent no certificate).
    public var trust: TrustEvaluation? {
        get { storage.value.trust }
        _modify { yield &storage.value.trust }
    }
    /// The OCSP response the server stapled (asked for in every handshake), judged for its leaf;
    /// nil when none came. A stapled `revoked` fails trust (StapledOCSP.swift).
    public var stapledOCSP: RevocationAttempt? {
        get { storage.value.stapledOCSP }
        _modify { yield &storage.value.stapledOCSP }
    }
    /// The pin check, when pins were given.
    public var pinMatch: PinSet.Match? {
        get { storage.value.pinMatch }
        _modify { yield &storage.value.pinMatch }
    }
    /// The pin check of the chain against the configuration's pinning, per host.
    public var pinEvaluation: PinEvaluation? {
        get { storage.value.pinEvaluation }
        _modify { yield &storage.value.pinEvaluation }
    }
    public var certificateRequests: [CertificateRequestRecord] {
        get { storage.value.certificateRequests }
        _modify { yield &storage.value.certificateRequests }
    }
    public var alerts: [TLSAlertRecord] {
        get { storage.value.alerts }
        _modify { yield &storage.value.alerts }
    }
    /// Renegotiations done after the first handshake.
    public var renegotiations: Int {
        get { storage.value.renegotiations }
        _modify { yield &storage.value.renegotiations }
    }
    /// Renegotiations the server completed by resuming the session (an abbreviated handshake, in
    /// which it cannot ask for a certificate). The client never offers a session in a
    /// renegotiation, so a count above zero means a server that resumed what was not offered.
    public var resumedRenegotiations: Int {
        get { storage.value.resumedRenegotiations }
        _modify { yield &storage.value.resumedRenegotiations }
    }
    /// Handshake messages seen, summarised like `s_client -msg` (`<<< ServerHello (122 bytes)`).
    ///
    /// Kept as the facts and written out when read: every handshake records them, few callers
    /// read them.
    public var messageTrace: [String] {
        get { storage.value.messageTrace.map(\.line) }
        set { storage.value.messageTrace = newValue.map { MessageTraceEntry(kind: .text($0), sentByUs: false, length: 0) } }
    }

    /// The number of ``messageTrace`` lines.
    var messageTraceCount: Int { storage.value.messageTrace.count }

    /// Appends a line to ``messageTrace``.
    mutating func traceMessage(_ entry: MessageTraceEntry) { storage.value.messageTrace.append(entry) }

    /// One line of ``messageTrace``: a handshake message or an alert, who sent it and its size.
    struct MessageTraceEntry {
        enum Kind {
            /// A handshake message of this type.
            case handshake(UInt8)
            /// An alert with this description code.
            case alert(UInt8)
            /// A line set as text.
            case text(String)
        }
        var kind: Kind
        var sentByUs: Bool
        var length: Int

        var line: String {
            let direction = sentByUs ? ">>>" : "<<<"
            switch kind {
            case .handshake(let type): return "\(direction) \(handshakeName(type)) (\(length) bytes)"
            case .alert(let description): return "\(direction) Alert \(description)"
            case .text(let line): return line
            }
        }
    }
    /// Problems let through because of `continuesOnTrustFailure`.
    public var overriddenProblems: [String] {
        get { storage.value.overriddenProblems }
        _modify { yield &storage.value.overriddenProblems }
    }
    /// Everything that happened, in order (TLSEventLog.swift).
    public var events: TLSEventLog {
        get { storage.value.events }
        _modify { yield &storage.value.events }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whether and how the evaluator checks revocation over the network.
public enum RevocationMode: String, Sendable, CaseIterable {
    /// No network check (``TrustPolicy/crls`` given by the caller are still checked). The default.
    case off
    /// As IIS checks a client certificate (Windows' `CertCheckMode` 0): a certificate whose status
    /// cannot be determined — offline, stale, unknown to the responder, or answered with revocation
    /// data whose signer is not authorised — fails the verdict with its own reason.
    case hard
    /// As browsers do: a revoked certificate fails; a status that cannot be determined is reported
    /// (``TrustEvaluation/revocation``) and passes.
    case soft
}

/// One HTTP exchange asked of a ``RevocationFetching``: a CRL download or an OCSP request.
public struct RevocationRequest: Sendable, Hashable {
    /// `GET` or `POST`.
    public var method: String
    /// The `http://` URL.
    public var url: String
    /// The body of a POST (an `application/ocsp-request`).
    public var body: [UInt8]
    /// The body's content type, for a POST.
    public var contentType: String?

    /// Creates a request.
    public init(method: String = "GET", url: String, body: [UInt8] = [], contentType: String? = nil) {
        self.method = method
        self.url = url
        self.body = body
        self.contentType = contentType
    }
}

/// What came back for a ``RevocationRequest``.
public struct RevocationResponse: Sendable {
    /// The HTTP status, or nil when no answer came (``failure`` says why).
    public var status: Int?
    /// The body.
    public var body: [UInt8]
    /// Why no usable answer came: `connection refused`, `timed out after 3 s`, … Nil on an answer.
    public var failure: String?
    /// Seconds spent.
    public var seconds: Double
    /// True when the answer came from the fetcher's cache.
    public var cached: Bool

    /// Creates a response.
    public init(status: Int?, body: [UInt8] = [], failure: String? = nil, seconds: Double = 0, cached: Bool = false) {
        self.status = status
        self.body = body
        self.failure = failure
        self.seconds = seconds
        self.cached = cached
    }
}

/// Fetches CRLs and asks OCSP responders for ``TrustEvaluator``. MTLSTrust has no network code of
/// its own: `MTLSHTTP`'s `RevocationFetch` is the bounded plain-HTTP implementation; a library user
/// may supply another (a proxy, a cache, a test double).
public protocol RevocationFetching: Sendable {
    /// Performs `request`, spending at most `timeout` seconds.
    func fetch(_ request: RevocationRequest, timeout: Double) -> RevocationResponse
}

/// The revocation status of one certificate.
public enum RevocationStatus: Sendable, Equatable {
    /// Not revoked, according to current, properly signed data.
    case good
    /// Revoked, with the reason (RFC 5280 5.3.1 name, if given) and the date.
    case revoked(reason: String?, date: Date?)
    /// The OCSP responder does not know the certificate.
    case unknown
    /// No current status could be obtained: offline, timed out, stale, or no revocation information.
    case cannotCheck(String)
    /// Revocation data was obtained but cannot be relied on (a signer not authorised for the issuer,
    /// a bad signature).
    case invalidData(String)

    /// `good`, `revoked`, `unknown`, `offline`, `invalid`: the name in JSON.
    public var name: String {
        switch self {
        case .good: "good"
        case .revoked: "revoked"
        case .unknown: "unknown"
        case .cannotCheck: "offline"
        case .invalidData: "invalid"
        }
    }
}

/// One URL tried for one certificate, with what came back (as `certutil -urlfetch` lists them).
public struct RevocationAttempt: Sendable {
    /// `CRL`, `delta CRL`, `OCSP` or `local CRL`.
    public var kind: String
    /// `GET` or `POST`.
    public var method: String
    /// The URL (or the file, for a local CRL).
    public var url: String
    /// The HTTP status, when one came.
    public var httpStatus: Int?
    /// The length of the answer.
    public var bytes: Int
    /// Seconds spent (0 when cached).
    public var seconds: Double
    /// True when the answer came from the run's cache.
    public var cached: Bool
    /// The CRL's thisUpdate or the OCSP response's thisUpdate.
    public var thisUpdate: Date?
    /// The CRL's or OCSP response's nextUpdate.
    public var nextUpdate: Date?
    /// The OCSP response's producedAt.
    public var producedAt: Date?
    /// The OCSP responder's status (`successful`, `unauthorized`, …).
    public var responderStatus: String?
    /// What this source said about the certificate: `good`, `revoked`, `unknown`, or the error.
    public var outcome: String
    /// The status this source gives, when it gives one.
    public var status: RevocationStatus?

    /// Creates an attempt.
    public init(
        kind: String, method: String, url: String, httpStatus: Int? = nil, bytes: Int = 0, seconds: Double = 0, cached: Bool = false,
        thisUpdate: Date? = nil, nextUpdate: Date? = nil, producedAt: Date? = nil, responderStatus: String? = nil, outcome: String, status: RevocationStatus? = nil
    ) {
        self.kind = kind
        self.method = method
        self.url = url
        self.httpStatus = httpStatus
        self.bytes = bytes
        self.seconds = seconds
        self.cached = cached
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
        self.producedAt = producedAt
        self.responderStatus = responderStatus
        self.outcome = outcome
        self.status = status
    }
}

/// The revocation check of one certificate of the chain.
public struct CertificateRevocation: Sendable {
    /// Position in the chain (0: the leaf).
    public var depth: Int
    /// The certificate's subject.
    public var subject: String
    /// The decision.
    public var status: RevocationStatus
    /// Which source decided (`OCSP http://…`, `CRL http://…`), when one did.
    public var decidedBy: String?
    /// Every URL tried, in order.
    public var attempts: [RevocationAttempt]

    /// Creates an entry.
    public init(depth: Int, subject: String, status: RevocationStatus, decidedBy: String?, attempts: [RevocationAttempt]) {
        self.depth = depth
        self.subject = subject
        self.status = status
        self.decidedBy = decidedBy
        self.attempts = attempts
    }
}

/// The revocation check of a chain: one entry per certificate below the anchor.
public struct RevocationReport: Sendable {
    /// The mode checked in.
    public var mode: RevocationMode
    /// Leaf first.
    public var certificates: [CertificateRevocation]
    /// Seconds spent in all.
    public var seconds: Double
}

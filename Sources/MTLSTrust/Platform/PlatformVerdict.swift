#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a platform would make of a chain: accepted, accepted only with app configuration, or refused.
public struct PlatformVerdict: Sendable {
    /// The verdict itself.
    public enum Outcome: String, Sendable {
        /// The platform accepts the chain as it stands.
        case accepted
        /// Accepted only once the app is configured for it (an Android network security config).
        case conditional
        /// The platform refuses the chain.
        case refused
    }

    /// The platform.
    public var platform: Platform
    /// The verdict.
    public var outcome: Outcome
    /// Each rule that fails (for ``Outcome/refused``) or that needs configuration (``Outcome/conditional``).
    public var failures: [PlatformFailure]
    /// Facts worth knowing that change nothing (a pin set that expired, a rule that did not apply).
    public var notes: [String]
    /// What was fetched from authorityInfoAccess caIssuers URLs for this verdict (iOS, macOS and
    /// Chrome fetch a missing intermediate; the others judge the chain as sent). Empty otherwise.
    public var fetchedIssuers: [FetchedIssuer] = []
}

/// One authorityInfoAccess caIssuers fetch: the URL and what it gave.
public struct FetchedIssuer: Sendable {
    /// The caIssuers `http://` URL.
    public var url: String
    /// The certificates it served (DER, PEM or PKCS#7), empty when the fetch failed.
    public var certificates: [Certificate]
    /// Why nothing was fetched, in words (nil when certificates came back).
    public var failure: String?

    public init(url: String, certificates: [Certificate], failure: String?) {
        self.url = url
        self.certificates = certificates
        self.failure = failure
    }
}

extension Platform {
    /// Whether the platform fetches a missing intermediate from the certificate's authorityInfoAccess
    /// caIssuers URL: Apple's SecTrust and Chrome's verifier do; Android's TrustManager and the JDK
    /// (without `com.sun.security.enableAIAcaIssuers`) do not.
    public var fetchesMissingIssuers: Bool { self == .apple || self == .chrome }
}

/// One platform rule a chain breaks, tied to the certificate at fault, with the fix.
public struct PlatformFailure: Sendable {
    /// The rule.
    public var rule: PlatformRule
    /// Position in the chain (0: the leaf).
    public var depth: Int
    /// The certificate's subject (RFC 4514).
    public var subject: String
    /// What is wrong, as a sentence naming the certificate.
    public var reason: String
    /// What to do about it.
    public var fix: Hint
    /// True when the app can accept it by configuration rather than by a new certificate.
    public var isConfigurable: Bool
}

/// Where the chain's anchor comes from, which decides the rules that apply (398-day limits, jdkCA).
public enum PlatformAnchorKind: String, Sendable {
    /// A root of the platform's own store (publicly trusted; the system roots here).
    case publicRoot = "public"
    /// An anchor the user, an administrator or the app supplies (a private CA, a self-signed leaf).
    case privateAnchor = "private"
}

/// The inputs of a platform evaluation.
public struct PlatformInput: Sendable {
    /// The chain as validated, leaf first, with the findings of path validation. Evaluate it with
    /// the RFC 5280 profile (``TrustPolicy/Profile/rfc5280``): the platforms' own algorithm and
    /// key rules replace the Web PKI security level.
    public var evaluation: TrustEvaluation
    /// Public or private anchor.
    public var anchorKind: PlatformAnchorKind
    /// The host the client connects to (already checked against the SAN by the evaluation), if any.
    public var hostname: String?
    /// The evaluation time.
    public var evaluationTime: Date
    /// The result of checking a pin set (an Android `<pin-set>`) against the chain, if pins were given.
    public var pinMatch: PinSet.Match?
    /// The pin set's expiration, for the message.
    public var pinExpiration: Date?
    /// The JDK's `jdk.certpath.disabledAlgorithms`.
    public var javaConstraints: JavaAlgorithmConstraints

    /// Creates an input.
    public init(
        evaluation: TrustEvaluation, anchorKind: PlatformAnchorKind, hostname: String? = nil, evaluationTime: Date,
        pinMatch: PinSet.Match? = nil, pinExpiration: Date? = nil, javaConstraints: JavaAlgorithmConstraints = .openJDK17Default
    ) {
        self.evaluation = evaluation
        self.anchorKind = anchorKind
        self.hostname = hostname
        self.evaluationTime = evaluationTime
        self.pinMatch = pinMatch
        self.pinExpiration = pinExpiration
        self.javaConstraints = javaConstraints
    }
}

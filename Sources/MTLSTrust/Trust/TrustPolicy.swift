#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What to trust and what to check: the inputs of an evaluation, in the spirit of
/// `SecTrustSetAnchorCertificates` + `SecPolicyCreateSSL`.
public struct TrustPolicy: Sendable {
    /// The purpose the leaf must serve, checked through the extended key usage of the whole chain.
    public enum Purpose: String, Sendable, CaseIterable {
        /// A TLS server (`serverAuth`).
        case server
        /// A TLS client (`clientAuth`).
        case client
        /// Any purpose: the EKU is not checked.
        case any
    }

    /// Which certificate profile the chain must follow beyond what OpenSSL checks.
    public enum Profile: String, Sendable, CaseIterable {
        /// What the clients enforce (the default): RFC 5280 path validation (``rfc5280``, OpenSSL
        /// security level 1) plus, for a server, the one Web PKI rule browsers apply to every
        /// anchor (no wildcard on a public suffix). The other Baseline Requirements findings bind
        /// public CAs, not clients — curl, OpenSSL, Java, Chrome and the platform verifiers accept
        /// a private CA's ECDSA leaf with keyEncipherment or a leaf without extKeyUsage — so they
        /// are reported as ``TrustEvaluation/warnings`` and do not change the verdict; choose
        /// ``webPKI`` to make them failures.
        case automatic
        /// RFC 5280 only: the rules OpenSSL leaves unchecked (name-constraint form, serial numbers,
        /// dNSName syntax, wildcards against excluded names, CRL numbers).
        case rfc5280
        /// RFC 5280 and the CA/Browser Forum Baseline Requirements: allowed keys and signatures
        /// (OpenSSL security level 2), extended key usage on leaf and root, `cA:FALSE` leaves,
        /// authority key identifiers, subject CN consistency, no wildcard on a public suffix.
        case webPKI
    }

    /// The anchors: only these are trusted unless ``includesSystemRoots`` is set.
    public var anchors: [Certificate]
    /// Also trust the system roots (as `SecTrustSetAnchorCertificatesOnly(false)`).
    public var includesSystemRoots: Bool
    /// Untrusted certificates that may serve as intermediates.
    public var intermediates: [Certificate]
    /// The evaluation time; nil means now.
    public var evaluationTime: Date?
    /// The purpose (default: server).
    public var purpose: Purpose
    /// The DNS name or IP literal the leaf must carry in its subjectAltName. Nil: no name check.
    ///
    /// A name with non-ASCII letters (`bücher.example`) is kept in the ASCII form certificates
    /// carry (`xn--bcher-kva.example`), converted by UTS 46 as browsers and curl convert it
    /// (``IDNA``); one UTS 46 refuses is kept as given, and matches no certificate.
    public var hostname: String? {
        didSet { hostname = hostname.map(IDNA.comparableForm) }
    }
    /// Accept a chain that ends at any anchor, not only at a self-signed root
    /// (a pinned self-signed leaf, or an intermediate used as anchor).
    public var allowsPartialChain: Bool
    /// CRLs to check revocation against; when non-empty, every certificate of the chain must be
    /// covered by one.
    public var crls: [CertificateRevocationList]
    /// The longest chain accepted: the number of intermediates between leaf and anchor, not counting
    /// self-issued ones (RFC 5280 6.1.4 (l)).
    public var maximumDepth: Int?
    /// When the first chain OpenSSL builds fails, try the other issuers found (OpenSSL 3.0 does not).
    public var triesAlternativePaths: Bool
    /// The profile checked on top of OpenSSL (default ``Profile/automatic``: Web PKI for servers).
    public var profile: Profile
    /// Whether key sizes and signature digests are checked by OpenSSL's security level (2 for Web
    /// PKI: RSA ≥ 2048, no P-192, no SHA-1/MD5; 1 for RFC 5280: RSA ≥ 1024, no SHA-1/MD5). Default
    /// true; false leaves them to the caller, as the platform verdicts do with each platform's own limits.
    public var enforcesAlgorithmStrength: Bool = true
    /// The email address (rfc822Name) the leaf must carry in its subjectAltName. Nil: no email check.
    ///
    /// Compared as RFC 5280 4.2.1.6 says: the local part exactly, the domain ignoring ASCII case.
    public var email: String?
    /// RFC 5280 6.1.1 (c) user-initial-policy-set: the certificate policies (dotted OIDs) the
    /// caller accepts. Empty (the default) means anyPolicy.
    public var initialPolicies: [String] = []
    /// RFC 5280 6.1.1 (f) initial-explicit-policy: the path must be valid for at least one of
    /// ``initialPolicies`` (default false: only a CA's requireExplicitPolicy demands that).
    public var requiresExplicitPolicy = false
    /// RFC 5280 6.1.1 (e) initial-policy-mapping-inhibit: policy mappings are not honoured.
    public var inhibitsPolicyMapping = false
    /// RFC 5280 6.1.1 (g) initial-any-policy-inhibit: anyPolicy in a certificate matches nothing.
    public var inhibitsAnyPolicy = false
    /// Key usages the leaf must allow (`--key-usage digitalSignature,keyEncipherment`). A leaf
    /// without a keyUsage extension allows every usage (RFC 5280 4.2.1.3). Empty: not checked.
    public var requiredKeyUsage: KeyUsage
    /// Whether the status of each certificate below the anchor is fetched (CRL distribution
    /// points, delta CRLs, OCSP) and how an undeterminable status counts (default ``RevocationMode/off``).
    /// Needs ``revocationFetcher``; ``crls`` are combined with what is fetched.
    public var revocation: RevocationMode = .off
    /// The network for ``revocation``: MTLSHTTP's `RevocationFetch` (bounded plain HTTP), or your own.
    public var revocationFetcher: (any RevocationFetching)? = nil
    /// Seconds per revocation URL (default 3) and for the whole chain (default 15).
    public var revocationTimeouts: (perURL: Double, total: Double) = (3, 15)

    /// Creates a policy. By default: no anchors (so nothing is trusted), server purpose, now.
    public init(
        anchors: [Certificate] = [], includesSystemRoots: Bool = false, intermediates: [Certificate] = [],
        evaluationTime: Date? = nil, purpose: Purpose = .server, hostname: String? = nil,
        allowsPartialChain: Bool = false, crls: [CertificateRevocationList] = [], maximumDepth: Int? = nil,
        triesAlternativePaths: Bool = true, profile: Profile = .automatic, email: String? = nil, requiredKeyUsage: KeyUsage = []
    ) {
        self.anchors = anchors
        self.includesSystemRoots = includesSystemRoots
        self.intermediates = intermediates
        self.evaluationTime = evaluationTime
        self.purpose = purpose
        self.hostname = hostname.map(IDNA.comparableForm)
        self.allowsPartialChain = allowsPartialChain
        self.crls = crls
        self.maximumDepth = maximumDepth
        self.triesAlternativePaths = triesAlternativePaths
        self.profile = profile
        self.email = email
        self.requiredKeyUsage = requiredKeyUsage
    }

    /// The profile whose rules decide the verdict: ``Profile/automatic`` decides by RFC 5280
    /// (with its client rules, see ``Profile/automatic``).
    public var effectiveProfile: Profile {
        switch profile {
        case .automatic: .rfc5280
        case .rfc5280, .webPKI: profile
        }
    }

    /// True when the Baseline Requirements are checked for ``TrustEvaluation/warnings`` only:
    /// ``Profile/automatic`` with purpose server.
    public var reportsWebPKIWarnings: Bool { profile == .automatic && purpose == .server }
}

/// One reason a chain is not trusted, tied to the certificate at fault.
public struct TrustFinding: Sendable, Equatable, CustomStringConvertible {
    /// Position in the chain: 0 is the leaf.
    public var depth: Int
    /// The certificate's subject (RFC 4514), or empty when the fault is not tied to one.
    public var subject: String
    /// OpenSSL's `X509_V_ERR_*` code, or a ``TrustRule`` (1000 and up) for the rules mtls adds.
    public var code: Int32
    /// The `X509_V_ERR_*` name, or the rule's `MTLS_*` name.
    public var name: String
    /// The rule that failed, in plain words.
    public var reason: String
    /// What to do about it; the settings it names are kept as ``Setting`` values.
    public var hint: Hint

    /// Creates a finding.
    ///
    /// - Parameters:
    ///   - depth: Position in the chain, 0 for the leaf.
    ///   - subject: The subject (RFC 4514) of the certificate at fault, or empty.
    ///   - code: An `X509_V_ERR_*` code, or a ``TrustRule`` raw value (1000 and up).
    ///   - name: The code's name.
    ///   - reason: The rule that failed, as a sentence naming the certificate.
    ///   - hint: What to do about it.
    public init(depth: Int, subject: String, code: Int32, name: String, reason: String, hint: Hint) {
        self.depth = depth
        self.subject = subject
        self.code = code
        self.name = name
        self.reason = reason
        self.hint = hint
    }

    public var description: String { "depth \(depth) \(subject): \(reason) (\(name))" }
}

/// The verdict in the terms of Apple's `SecTrustResultType`, which iOS developers recognise.
public enum TrustSummary: String, Sendable {
    /// `kSecTrustResultProceed` / `.unspecified`: trusted.
    case proceed
    /// `kSecTrustResultRecoverableTrustFailure`: the kind a user could choose to override
    /// (expired, wrong name, unknown root).
    case recoverableTrustFailure
    /// `kSecTrustResultFatalTrustFailure`: revoked, forged or malformed; never override.
    case fatalTrustFailure
}

/// The outcome of one evaluation.
public struct TrustEvaluation: Sendable {
    /// The chain as built, leaf first (up to the anchor when one was reached).
    public var chain: [Certificate]
    /// Every failure found; empty when trusted.
    public var findings: [TrustFinding]
    /// The revocation check, URL by URL, when ``TrustPolicy/revocation`` asked for one.
    public var revocation: RevocationReport? = nil
    /// How many candidate paths were tried.
    public var pathsTried: Int
    /// Set by the evaluator under ``TrustPolicy/Profile/automatic``: the Web PKI rules to report
    /// as warnings.
    var advisory: AdvisoryProfile? = nil

    /// Baseline Requirements findings that the verdict does not count (``TrustPolicy/Profile/automatic``
    /// for a server): what a public CA could not issue, although clients accept it. Empty under
    /// the other profiles (``TrustPolicy/Profile/webPKI`` makes them ``findings``).
    public var warnings: [TrustFinding] { advisory?.warnings(chain) ?? [] }

    /// True when the chain is trusted for the policy.
    public var isTrusted: Bool { findings.isEmpty && !chain.isEmpty }

    /// Apple-style summary.
    public var summary: TrustSummary {
        if isTrusted { return .proceed }
        return findings.contains { VerifyErrorCatalog.isFatal($0.code) } ? .fatalTrustFailure : .recoverableTrustFailure
    }
}

/// The Web PKI rules run for warnings only, on the chain an evaluation built. A class, made once
/// per evaluator: an evaluation holds a reference, not a copy of the policy.
final class AdvisoryProfile: Sendable {
    let policy: TrustPolicy
    let anchors: Set<Certificate>

    init(policy: TrustPolicy, anchors: Set<Certificate>) {
        self.policy = policy
        self.anchors = anchors
    }

    func warnings(_ chain: [Certificate]) -> [TrustFinding] {
        guard !chain.isEmpty else { return [] }
        var strict = policy
        strict.profile = .webPKI
        let context = ChainContext(chain: chain, policy: strict, anchors: anchors)
        var seen = Set<String>()
        return strict.webPKIPolicies.flatMap { $0.check(context) }.filter { seen.insert("\($0.depth)/\($0.code)").inserted }.map { finding in
            var warning = finding
            warning.hint = "\(finding.hint); clients accept this, but a public CA could not issue it (\(setting: .profile) webpki makes it a failure)"
            return warning
        }
    }
}

internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Alamofire's server trust evaluators (`ServerTrustEvaluation.swift`), one small type per strategy,
// on top of ``TrustEvaluator``. Secure by default: every evaluator validates the chain and the host
// unless told otherwise, and the one that checks nothing says so in its name.

extension ServerTrust {
    /// Alamofire's `performDefaultValidation` + `performValidation(forHost:)` in one evaluation: the
    /// chain for a TLS server, and the host when `validateHost`. A failure caused by the name alone
    /// is `hostValidationFailed`, any other `defaultEvaluationFailed`.
    func validate(host: String, validateHost: Bool, performDefaultValidation: Bool = true) throws(ServerTrustFailure) {
        guard !certificates.isEmpty else { throw ServerTrustFailure(host: host, reason: .noCertificatesFound) }
        guard performDefaultValidation || validateHost, let evaluation = evaluation(host: validateHost ? host : nil) else { return }
        if evaluation.isTrusted { return }
        let nameCodes: Set<String> = ["X509_V_ERR_HOSTNAME_MISMATCH", "X509_V_ERR_IP_ADDRESS_MISMATCH", TrustRule.webPKIPublicSuffixWildcard.name]
        let nameOnly = evaluation.findings.allSatisfy { nameCodes.contains($0.name) }
        if nameOnly { throw ServerTrustFailure(host: host, reason: .hostValidationFailed(evaluation)) }
        // Without default validation only the name matters.
        if !performDefaultValidation {
            if evaluation.findings.contains(where: { nameCodes.contains($0.name) }) {
                throw ServerTrustFailure(host: host, reason: .hostValidationFailed(evaluation))
            }
            return
        }
        throw ServerTrustFailure(host: host, reason: .defaultEvaluationFailed(evaluation))
    }
}

/// Alamofire's `DefaultTrustEvaluator`: the chain must lead to an anchor and be valid for a TLS
/// server; with `validateHost` (the default) it must also name the host.
public struct DefaultTrustEvaluator: ServerTrustEvaluating {
    /// Whether the host name is checked.
    public let validateHost: Bool

    /// - Parameter validateHost: Check the host name (default true).
    public init(validateHost: Bool = true) { self.validateHost = validateHost }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure) {
        try trust.validate(host: host, validateHost: validateHost)
    }
}

/// Alamofire's `RevocationTrustEvaluator`: the default evaluation, then revocation of every
/// certificate of the chain, here against CRLs (``ServerTrust/crls`` and the evaluator's own).
public struct RevocationTrustEvaluator: ServerTrustEvaluating {
    /// Revocation options, as Alamofire's `RevocationTrustEvaluator.Options`.
    public struct Options: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Fail unless every certificate is positively known not to be revoked (a CRL covers it).
        /// Without it, a certificate no CRL covers passes ("best attempt", Apple's default).
        public static let requirePositiveResponse = Options(rawValue: 1 << 3)
        /// The default: best attempt.
        public static let any: Options = []
    }

    public let crls: [CertificateRevocationList]
    public let performDefaultValidation: Bool
    public let validateHost: Bool
    public let options: Options

    /// - Parameters:
    ///   - crls: CRLs to use besides those of the ``ServerTrust``.
    ///   - performDefaultValidation: Validate the chain first (default true).
    ///   - validateHost: Check the host name (default true).
    ///   - options: ``Options/any`` (best attempt) or ``Options/requirePositiveResponse``.
    public init(crls: [CertificateRevocationList] = [], performDefaultValidation: Bool = true, validateHost: Bool = true, options: Options = .any) {
        self.crls = crls
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.options = options
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure) {
        try trust.validate(host: host, validateHost: validateHost, performDefaultValidation: performDefaultValidation)
        let all = trust.crls + crls
        if all.isEmpty {
            guard options.contains(.requirePositiveResponse), let leaf = trust.certificates.first else { return }
            let finding = TrustFinding(
                depth: 0, subject: leaf.subject, code: X509_V_ERR_UNABLE_TO_GET_CRL, name: "X509_V_ERR_UNABLE_TO_GET_CRL",
                reason: "no CRL was given, so the revocation status of \(leaf.displayName) is unknown",
                hint: "pass the CAs' current CRLs, or drop requirePositiveResponse to accept an unknown status")
            throw ServerTrustFailure(host: host, reason: .revocationCheckFailed(TrustEvaluation(chain: trust.certificates, findings: [finding], pathsTried: 0)))
        }
        guard var evaluation = trust.evaluation(host: nil, crls: all) else {
            throw ServerTrustFailure(host: host, reason: .noCertificatesFound)
        }
        if !options.contains(.requirePositiveResponse) {
            // Best attempt: "no CRL covers it" is not a failure.
            evaluation.findings.removeAll { $0.code == X509_V_ERR_UNABLE_TO_GET_CRL }
        }
        if !evaluation.isTrusted { throw ServerTrustFailure(host: host, reason: .revocationCheckFailed(evaluation)) }
    }
}

/// Alamofire's `PinnedCertificatesTrustEvaluator`: the default evaluation, then at least one
/// certificate of the chain must be byte-for-byte one of the pinned certificates.
public struct PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    public let certificates: [Certificate]
    public let acceptSelfSignedCertificates: Bool
    public let performDefaultValidation: Bool
    public let validateHost: Bool

    /// - Parameters:
    ///   - certificates: The pinned certificates (leaf, intermediate or root).
    ///   - acceptSelfSignedCertificates: Also make the pinned certificates anchors, so that a
    ///     self-signed (or private-CA) chain validates (default false).
    ///   - performDefaultValidation: Validate the chain first (default true).
    ///   - validateHost: Check the host name (default true).
    public init(certificates: [Certificate], acceptSelfSignedCertificates: Bool = false, performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure) {
        guard !certificates.isEmpty else { throw ServerTrustFailure(host: host, reason: .noPinsConfigured) }
        var effective = trust
        if acceptSelfSignedCertificates { effective.anchors += certificates }
        try effective.validate(host: host, validateHost: validateHost, performDefaultValidation: performDefaultValidation)
        let built = effective.evaluation(host: nil)?.chain ?? []
        let server = Set((effective.certificates + built).map(\.derBytes))
        if certificates.contains(where: { server.contains($0.derBytes) }) { return }
        throw ServerTrustFailure(
            host: host,
            reason: .certificatePinningFailed(
                expected: certificates.map { Pin.certificate($0) }, presented: effective.presentedCertificatePins))
    }
}

/// Alamofire's `PublicKeysTrustEvaluator`: the default evaluation, then at least one public key of
/// the chain must be one of the pinned keys (compared as SPKI SHA-256 pins).
public struct PublicKeysTrustEvaluator: ServerTrustEvaluating {
    /// The pinned keys, as SPKI pins.
    public let pins: [Pin]
    public let performDefaultValidation: Bool
    public let validateHost: Bool

    /// - Parameters:
    ///   - keys: The pinned public keys (a backup key may be one no certificate holds yet).
    ///   - performDefaultValidation: Validate the chain first (default true).
    ///   - validateHost: Check the host name (default true).
    public init(keys: [PublicKey], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.init(pins: keys.map { Pin.publicKey(of: $0) }, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }

    /// - Parameter pins: SPKI pins (`sha256/…`); certificate pins are ignored.
    public init(pins: [Pin], performDefaultValidation: Bool = true, validateHost: Bool = true) {
        self.pins = pins.filter { $0.kind == .publicKey }
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure) {
        guard !pins.isEmpty else { throw ServerTrustFailure(host: host, reason: .noPinsConfigured) }
        try trust.validate(host: host, validateHost: validateHost, performDefaultValidation: performDefaultValidation)
        let presented = trust.presentedPublicKeyPins
        if presented.contains(where: pins.contains) { return }
        throw ServerTrustFailure(host: host, reason: .publicKeyPinningFailed(expected: pins, presented: presented))
    }
}

/// Alamofire's `CompositeTrustEvaluator`: every evaluator in order; the first failure is thrown.
public struct CompositeTrustEvaluator: ServerTrustEvaluating {
    public let evaluators: [any ServerTrustEvaluating]

    public init(evaluators: [any ServerTrustEvaluating]) { self.evaluators = evaluators }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure) {
        for evaluator in evaluators { try evaluator.evaluate(trust, forHost: host) }
    }
}

/// Alamofire's `DisabledTrustEvaluator`: accepts every server, checking nothing at all.
///
/// - Warning: INSECURE. Any certificate is accepted, for any host, so anyone on the network path can
///   impersonate the server. For local experiments only; never in production.
public struct DisabledTrustEvaluator: ServerTrustEvaluating {
    public init() {}

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure) {}
}

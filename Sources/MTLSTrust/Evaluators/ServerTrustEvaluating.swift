internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a TLS client holds when it judges a server: the certificates the server presented and the
/// trust settings around them. The counterpart of Apple's `SecTrust`, which Alamofire and
/// AFNetworking evaluate.
public struct ServerTrust: Sendable {
    /// The certificates as presented by the server, leaf first.
    public var certificates: [Certificate]
    /// The trust anchors (`SecTrustSetAnchorCertificates`).
    public var anchors: [Certificate]
    /// Also trust the system roots (`SecTrustSetAnchorCertificatesOnly(false)`); the default when no
    /// anchors are given, as on Apple platforms.
    public var includesSystemRoots: Bool
    /// The evaluation time (`SecTrustSetVerifyDate`); nil means now.
    public var evaluationTime: Date?
    /// CRLs for ``RevocationTrustEvaluator`` (Apple's fetch of CRLs and OCSP has no offline equivalent).
    public var crls: [CertificateRevocationList]

    /// Creates a server trust.
    ///
    /// - Parameters:
    ///   - certificates: The presented chain, leaf first.
    ///   - anchors: The anchors; when empty, the system roots are used.
    ///   - includesSystemRoots: Also trust the system roots; default: only when `anchors` is empty.
    ///   - evaluationTime: The time to evaluate at; nil means now.
    ///   - crls: CRLs for revocation checking.
    public init(certificates: [Certificate], anchors: [Certificate] = [], includesSystemRoots: Bool? = nil, evaluationTime: Date? = nil, crls: [CertificateRevocationList] = []) {
        self.certificates = certificates
        self.anchors = anchors
        self.includesSystemRoots = includesSystemRoots ?? anchors.isEmpty
        self.evaluationTime = evaluationTime
        self.crls = crls
    }

    /// The SPKI pins of the presented certificates, leaf first.
    public var presentedPublicKeyPins: [Pin] { certificates.map { Pin.publicKey(of: $0) } }
    /// The whole-certificate pins of the presented certificates, leaf first.
    public var presentedCertificatePins: [Pin] { certificates.map { Pin.certificate($0) } }

    /// Evaluates the chain with ``TrustEvaluator`` for a TLS server.
    ///
    /// As with `SecTrust`, every anchor is a trust anchor, self-signed or not (partial chains).
    ///
    /// - Parameters:
    ///   - host: The name to check, or nil for none (`SecPolicyCreateBasicX509` / `SecPolicyCreateSSL(true, nil)`).
    ///   - anchors: Anchors to use instead of ``anchors`` (and then only them), or nil.
    ///   - crls: CRLs to check, every certificate of the chain must be covered.
    func evaluation(host: String?, anchorsOnly replacement: [Certificate]? = nil, crls: [CertificateRevocationList] = []) -> TrustEvaluation? {
        guard let leaf = certificates.first else { return nil }
        let policy = TrustPolicy(
            anchors: replacement ?? anchors, includesSystemRoots: replacement == nil ? includesSystemRoots : false,
            evaluationTime: evaluationTime, purpose: .server, hostname: host, allowsPartialChain: true, crls: crls)
        do throws(MTLSTrustError) {
            return try TrustEvaluator(policy: policy).evaluate(leaf, extraIntermediates: Array(certificates.dropFirst()))
        } catch {
            let finding = TrustFinding(
                depth: 0, subject: leaf.subject, code: X509_V_ERR_STORE_LOOKUP, name: VerifyErrorCatalog.name(X509_V_ERR_STORE_LOOKUP),
                reason: error.message, hint: "pass anchors to the ServerTrust, or install the system CA bundle")
            return TrustEvaluation(chain: [leaf], findings: [finding], pathsTried: 0)
        }
    }
}

/// Judges a server's chain for a host, the way one HTTP client library would.
///
/// The types conforming to it mirror Alamofire's `ServerTrustEvaluating` evaluators and
/// AFNetworking's `AFSecurityPolicy`, so that one chain can be judged as each library would.
public protocol ServerTrustEvaluating: Sendable {
    /// Evaluates `trust` for `host`.
    ///
    /// - Throws: ``ServerTrustFailure`` naming the host, the rule that failed and, for pins, the
    ///   expected and the presented pins.
    func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure)
}

extension ServerTrustEvaluating {
    /// True when ``evaluate(_:forHost:)`` does not throw.
    public func isTrusted(_ trust: ServerTrust, forHost host: String) -> Bool {
        do {
            try evaluate(trust, forHost: host)
            return true
        } catch {
            return false
        }
    }
}

/// Why a server trust evaluation failed, in the terms of Alamofire's `ServerTrustFailureReason`.
public struct ServerTrustFailure: Error, Sendable, CustomStringConvertible {
    /// The failure kinds.
    public enum Reason: Sendable {
        /// The server presented no certificate.
        case noCertificatesFound
        /// A pinning evaluator was built without a certificate (or key) to pin.
        case noPinsConfigured
        /// The chain is not trusted: unknown anchor, expired, misissued … (`defaultEvaluationFailed`).
        case defaultEvaluationFailed(TrustEvaluation)
        /// The chain is fine but does not name the host (`hostValidationFailed`).
        case hostValidationFailed(TrustEvaluation)
        /// A certificate of the chain is revoked, or revocation could not be established (`revocationCheckFailed`).
        case revocationCheckFailed(TrustEvaluation)
        /// No presented certificate is one of the pinned certificates (`certificatePinningFailed`).
        case certificatePinningFailed(expected: [Pin], presented: [Pin])
        /// No presented public key is one of the pinned keys (`publicKeyPinningFailed`).
        case publicKeyPinningFailed(expected: [Pin], presented: [Pin])
        /// AFNetworking: `allowInvalidCertificates` with `validatesDomainName` needs certificate or key pinning.
        case domainValidationRequiresPinning
    }

    /// The host evaluated.
    public var host: String
    /// What failed.
    public var reason: Reason

    public init(host: String, reason: Reason) {
        self.host = host
        self.reason = reason
    }

    /// The trust findings behind the failure, when it came from a chain evaluation.
    public var findings: [TrustFinding] {
        switch reason {
        case .defaultEvaluationFailed(let evaluation), .hostValidationFailed(let evaluation), .revocationCheckFailed(let evaluation):
            evaluation.findings
        default: []
        }
    }

    /// The expected pins of a pinning failure (empty otherwise).
    public var expectedPins: [Pin] {
        switch reason {
        case .certificatePinningFailed(let expected, _), .publicKeyPinningFailed(let expected, _): expected
        default: []
        }
    }

    /// The presented pins of a pinning failure (empty otherwise).
    public var presentedPins: [Pin] {
        switch reason {
        case .certificatePinningFailed(_, let presented), .publicKeyPinningFailed(_, let presented): presented
        default: []
        }
    }

    /// The failure in one sentence, naming the host.
    public var message: String {
        switch reason {
        case .noCertificatesFound:
            return "\(host) presented no certificate"
        case .noPinsConfigured:
            return "the pinning evaluator for \(host) has no certificate or key to pin, so nothing can match"
        case .defaultEvaluationFailed(let evaluation):
            return "the chain of \(host) is not trusted: \(evaluation.findings.map(\.reason).joined(separator: "; "))"
        case .hostValidationFailed(let evaluation):
            return "the certificate is not valid for \(host): \(evaluation.findings.map(\.reason).joined(separator: "; "))"
        case .revocationCheckFailed(let evaluation):
            return "the revocation check for \(host) failed: \(evaluation.findings.map(\.reason).joined(separator: "; "))"
        case .certificatePinningFailed(let expected, let presented):
            return
                "no certificate presented by \(host) is pinned; expected one of \(expected.map(\.description).joined(separator: ", ")); presented \(presented.map(\.description).joined(separator: ", "))"
        case .publicKeyPinningFailed(let expected, let presented):
            return
                "no public key presented by \(host) is pinned; expected one of \(expected.map(\.description).joined(separator: ", ")); presented \(presented.map(\.description).joined(separator: ", "))"
        case .domainValidationRequiresPinning:
            return "validating the domain name \(host) while allowing invalid certificates needs certificate or public-key pinning (AFNetworking refuses this setup)"
        }
    }

    /// What to do about it.
    public var hint: String {
        switch reason {
        case .noCertificatesFound:
            return "check that the server is configured with a certificate"
        case .noPinsConfigured:
            return "give the evaluator the certificates (or public keys) to pin"
        case .defaultEvaluationFailed(let evaluation), .hostValidationFailed(let evaluation), .revocationCheckFailed(let evaluation):
            return evaluation.findings.first(where: { !$0.hint.isEmpty })?.hint.description ?? ""
        case .certificatePinningFailed:
            return "the server's certificate changed (renewal?): pin the new certificate, or pin the public key or the CA instead"
        case .publicKeyPinningFailed:
            return "the server's key changed: add its SPKI pin (and a backup key's) before rotating keys"
        case .domainValidationRequiresPinning:
            return "set a pinning mode with pinned certificates, or set validatesDomainName to NO (insecure)"
        }
    }

    public var description: String { hint.isEmpty ? message : "\(message) (hint: \(hint))" }
}

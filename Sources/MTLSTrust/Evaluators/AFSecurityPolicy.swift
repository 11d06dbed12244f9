#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// AFNetworking's `AFSecurityPolicy`: a pinning mode, pinned certificates, and the two switches
/// `allowInvalidCertificates` and `validatesDomainName`, evaluated as
/// `-[AFSecurityPolicy evaluateServerTrust:forDomain:]` does.
///
/// - `none`: the chain must be valid (unless `allowInvalidCertificates`).
/// - `certificate`: the chain must be valid, then valid again with only the pinned certificates as
///   anchors, which puts a pinned certificate in it (this second check holds even with
///   `allowInvalidCertificates`).
/// - `publicKey`: the chain must be valid (unless `allowInvalidCertificates`), and a presented
///   certificate must carry the public key of a pinned certificate.
///
/// - Warning: `allowInvalidCertificates` with pinning mode `none` accepts any certificate: it is as
///   insecure as ``DisabledTrustEvaluator``.
public struct AFSecurityPolicy: ServerTrustEvaluating {
    /// `AFSSLPinningMode`.
    public enum SSLPinningMode: String, Sendable, CaseIterable {
        /// `AFSSLPinningModeNone`: no pinning.
        case none
        /// `AFSSLPinningModePublicKey`: pin the public keys of the pinned certificates.
        case publicKey
        /// `AFSSLPinningModeCertificate`: pin the certificates themselves.
        case certificate
    }

    public var pinningMode: SSLPinningMode
    /// The pinned certificates (AFNetworking loads every `.cer` of the app bundle by default).
    public var pinnedCertificates: [Certificate]
    /// Trust invalid or expired chains (default false).
    public var allowInvalidCertificates: Bool
    /// Check the certificate's names against the host (default true).
    public var validatesDomainName: Bool

    /// - Parameters:
    ///   - pinningMode: The pinning mode (default none).
    ///   - pinnedCertificates: The pinned certificates.
    ///   - allowInvalidCertificates: Trust invalid or expired chains (default false).
    ///   - validatesDomainName: Check the host name (default true).
    public init(pinningMode: SSLPinningMode = .none, pinnedCertificates: [Certificate] = [], allowInvalidCertificates: Bool = false, validatesDomainName: Bool = true) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
        self.allowInvalidCertificates = allowInvalidCertificates
        self.validatesDomainName = validatesDomainName
    }

    /// `+[AFSecurityPolicy defaultPolicy]`: no pinning, valid chains only, names checked.
    public static var defaultPolicy: AFSecurityPolicy { AFSecurityPolicy() }

    /// `+[AFSecurityPolicy policyWithPinningMode:withPinnedCertificates:]`.
    public static func policy(withPinningMode mode: SSLPinningMode, pinnedCertificates: [Certificate]) -> AFSecurityPolicy {
        AFSecurityPolicy(pinningMode: mode, pinnedCertificates: pinnedCertificates)
    }

    public func evaluate(_ trust: ServerTrust, forHost host: String) throws(ServerTrustFailure) {
        if !host.isEmpty && allowInvalidCertificates && validatesDomainName && (pinningMode == .none || pinnedCertificates.isEmpty) {
            // "In order to validate a domain name for self signed certificates, you MUST use pinning."
            throw ServerTrustFailure(host: host, reason: .domainValidationRequiresPinning)
        }
        guard !trust.certificates.isEmpty else { throw ServerTrustFailure(host: host, reason: .noCertificatesFound) }
        if pinningMode == .none {
            if allowInvalidCertificates { return }
            try trust.validate(host: host, validateHost: validatesDomainName)
            return
        }
        if !allowInvalidCertificates { try trust.validate(host: host, validateHost: validatesDomainName) }
        switch pinningMode {
        case .none:
            return
        case .certificate:
            // SecTrustSetAnchorCertificates(pinned), then the chain must be valid again.
            guard let evaluation = trust.evaluation(host: validatesDomainName ? host : nil, anchorsOnly: pinnedCertificates) else {
                throw ServerTrustFailure(host: host, reason: .noCertificatesFound)
            }
            let pinned = Set(pinnedCertificates.map(\.derBytes))
            if evaluation.isTrusted, evaluation.chain.contains(where: { pinned.contains($0.derBytes) }) { return }
            let reachedPin = evaluation.chain.contains { pinned.contains($0.derBytes) }
            if reachedPin { throw ServerTrustFailure(host: host, reason: .defaultEvaluationFailed(evaluation)) }
            throw ServerTrustFailure(
                host: host,
                reason: .certificatePinningFailed(
                    expected: pinnedCertificates.map { Pin.certificate($0) }, presented: trust.presentedCertificatePins))
        case .publicKey:
            let expected = pinnedCertificates.map { Pin.publicKey(of: $0) }
            let presented = trust.presentedPublicKeyPins
            if presented.contains(where: expected.contains) { return }
            throw ServerTrustFailure(host: host, reason: .publicKeyPinningFailed(expected: expected, presented: presented))
        }
    }
}

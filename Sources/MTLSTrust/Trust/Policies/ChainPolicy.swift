#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One candidate chain exactly as OpenSSL built it, with what the policies need to judge it.
struct ChainContext {
    /// Leaf first, up to the anchor when one was reached.
    let chain: [Certificate]
    /// ``CertificateFacts`` of each certificate, in chain order.
    let facts: [CertificateFacts]
    /// The evaluation's policy.
    let policy: TrustPolicy
    /// The evaluation time.
    let time: Date
    /// True when the last certificate of ``chain`` is one of the anchors.
    let isAnchored: Bool
    /// True when the Web PKI (CA/Browser Forum) rules apply.
    let enforcesWebPKI: Bool

    /// - Parameter knownFacts: Facts already worked out, keyed by `Int(bitPattern: X509*)` (the
    ///   evaluator's own anchors and intermediates, which every chain shares).
    init(chain: [Certificate], policy: TrustPolicy, anchors: Set<Certificate>, knownFacts: [Int: CertificateFacts] = [:]) {
        self.chain = chain
        // A certificate still undecoded is none of the known ones (and must stay undecoded).
        self.facts = chain.map { certificate in certificate.reference.decodedPointer.flatMap { knownFacts[Int(bitPattern: $0)] } ?? CertificateFacts(certificate) }
        self.policy = policy
        self.time = policy.evaluationTime ?? Date()
        self.isAnchored = chain.last.map { anchors.contains($0) } ?? false
        self.enforcesWebPKI = policy.enforcesWebPKI
    }

    var leaf: Certificate { chain[0] }

    /// True when the certificate at `depth` is the trust anchor that ends the chain.
    func isAnchor(_ depth: Int) -> Bool { isAnchored && depth == chain.count - 1 }

    /// True when the leaf is itself the anchor (a pinned self-signed certificate): leaf rules of the
    /// Web PKI profile are about certificates a CA issued, so they do not apply to it.
    var leafIsAnchor: Bool { isAnchored && chain.count == 1 }

    /// A finding for `rule` about the certificate at `depth`.
    func finding(_ rule: TrustRule, depth: Int, reason: String, hint: Hint) -> TrustFinding {
        TrustFinding(rule: rule, depth: depth, subject: depth < chain.count ? chain[depth].subject : "", reason: reason, hint: hint)
    }

    /// A finding with an OpenSSL code about the certificate at `depth`, worded by the policy.
    func finding(code: Int32, depth: Int, reason: String, hint: Hint) -> TrustFinding {
        TrustFinding(depth: depth, subject: depth < chain.count ? chain[depth].subject : "", code: code, name: VerifyErrorCatalog.name(code), reason: reason, hint: hint)
    }

    /// `CN=…` of the certificate at `depth`, for messages.
    func label(_ depth: Int) -> String { depth < chain.count ? chain[depth].displayName : "the certificate" }

    /// `the leaf`, `the intermediate`, `the root` …: the role of `depth`, for messages.
    func role(_ depth: Int) -> String {
        if depth == 0 { return "the leaf" }
        if isAnchor(depth) { return "the anchor" }
        return "the intermediate"
    }
}

/// A small Swift rule that judges a chain OpenSSL has built and returns every violation it finds.
///
/// Policies never stop at the first problem and never throw: an empty result means the chain passes
/// that rule. Each one is applied to every candidate path, the first as well as the alternatives.
protocol ChainPolicy: Sendable {
    func check(_ context: ChainContext) -> [TrustFinding]
}

extension TrustPolicy {
    /// True when the Web PKI rules apply: ``Profile/webPKI``, or ``Profile/automatic`` with purpose server.
    var enforcesWebPKI: Bool {
        effectiveProfile == .webPKI
    }

    /// The policies applied to every candidate chain, in reporting order.
    var chainPolicies: [any ChainPolicy] {
        var policies: [any ChainPolicy] = [
            ChainDepthPolicy(), SerialNumberPolicy(), NameConstraintsProfilePolicy(), PolicyConstraintsProfilePolicy(),
            SubjectAltNameSyntaxPolicy(), WildcardExclusionPolicy(), SubjectCommonNameConstraintsPolicy(), CRLNumberPolicy(),
        ]
        policies += RFC5280ExtensionRules.policies
        if enforcesWebPKI {
            policies += webPKIPolicies
        } else if reportsWebPKIWarnings {
            // The one Web PKI rule clients apply to every anchor: Chrome and Firefox refuse a
            // wildcard on a registry-controlled domain whoever issued it.
            policies.append(WebPKIPublicSuffixWildcardPolicy())
        }
        return policies
    }

    /// The CA/Browser Forum rules: failures under ``Profile/webPKI``, warnings under ``Profile/automatic``.
    var webPKIPolicies: [any ChainPolicy] {
        [
            WebPKIKeyPolicy(), WebPKIExtendedKeyUsagePolicy(), WebPKILeafBasicConstraintsPolicy(),
            WebPKIAuthorityKeyIdentifierPolicy(), WebPKISubjectAltNamePolicy(), WebPKICommonNamePolicy(),
            WebPKIPublicSuffixWildcardPolicy(),
        ] + WebPKIProfileRules.policies
    }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Rules found by the Chromium certificate verifier's path-validation suite
// (TestCerts/third-party/chromium-pki, ChromiumPKISuiteTests): chains OpenSSL 3.0 accepts and
// Chromium rejects for a reason RFC 5280 gives.

/// A trust anchor's certificatePolicies, policyConstraints, policyMappings and inhibitAnyPolicy
/// constrain the path below it (RFC 5937 §3; Chromium with anchor constraints). OpenSSL leaves the
/// anchor out of policy processing (RFC 5280 6.1 starts below it), so an anchor that says
/// `requireExplicitPolicy` or `inhibitPolicyMapping`, or names the only policies it allows, would
/// not be heard. This rule runs OpenSSL's own policy processing (`X509_policy_check`) once more with
/// the anchor as the first certificate of the path, from the same initial input ({anyPolicy},
/// nothing inhibited). An anchor without certificatePolicies allows every policy (RFC 5937), so it
/// enters that path as if it named anyPolicy (a copy, never used for anything else).
struct AnchorPolicyConstraintsPolicy: ChainPolicy {
    static let constrainingExtensions = [
        CertificateFacts.OID.certificatePolicies, CertificateFacts.OID.policyConstraints, CertificateFacts.OID.policyMappings,
        CertificateFacts.OID.inhibitAnyPolicy,
    ]

    func check(_ context: ChainContext) -> [TrustFinding] {
        let top = context.chain.count - 1
        guard context.isAnchored, top > 0 else { return [] }
        let present = AnchorPolicyConstraintsPolicy.constrainingExtensions.filter { context.facts[top].extension($0) != nil }
        guard !present.isEmpty else { return [] }
        let anchor = context.chain[top]
        guard let asPathCertificate = present.contains(CertificateFacts.OID.certificatePolicies) ? anchor : AnchorPolicyConstraintsPolicy.withAnyPolicy(anchor) else {
            return []
        }
        let names = present.map(AnchorPolicyConstraintsPolicy.name).joined(separator: ", ")
        // The last certificate is OpenSSL's trust anchor, left out of the processing: the anchor
        // once more, so that its first copy is a certificate of the path.
        switch AnchorPolicyConstraintsPolicy.policyCheck(Array(context.chain[..<top]) + [asPathCertificate, asPathCertificate], policy: context.policy) {
        case X509_PCY_TREE_FAILURE:
            return [
                context.finding(
                    code: X509_V_ERR_NO_EXPLICIT_POLICY, depth: 0,
                    reason:
                        "no certificate policy is valid for \(context.label(0)) once the policy extensions of the anchor \(context.label(top)) (\(names)) are applied, and the path requires an explicit policy (RFC 5280 6.1, RFC 5937 3)",
                    hint: "have the certificates issued under a policy the anchor \(context.label(top)) allows, or trust an anchor without these policy constraints")
            ]
        case X509_PCY_TREE_INVALID:
            return [
                context.finding(
                    code: X509_V_ERR_INVALID_POLICY_EXTENSION, depth: top,
                    reason: "the policy extensions of the anchor \(context.label(top)) (\(names)) are invalid or inconsistent (RFC 5280 4.2.1.4, 4.2.1.5, 4.2.1.11)",
                    hint: "the anchor is not conforming; trust a correctly issued anchor")
            ]
        default:
            return []
        }
    }

    static func name(_ oid: String) -> String {
        switch oid {
        case CertificateFacts.OID.certificatePolicies: "certificatePolicies"
        case CertificateFacts.OID.policyConstraints: "policyConstraints"
        case CertificateFacts.OID.policyMappings: "policyMappings"
        default: "inhibitAnyPolicy"
        }
    }

    /// A copy of `certificate` with certificatePolicies {anyPolicy} added (unsigned again: policy
    /// processing never looks at signatures), or nil when OpenSSL cannot make it.
    static func withAnyPolicy(_ certificate: Certificate) -> Certificate? {
        // certificatePolicies ::= SEQUENCE { PolicyInformation ::= SEQUENCE { anyPolicy 2.5.29.32.0 } }
        let value: [UInt8] = [0x30, 0x08, 0x30, 0x06, 0x06, 0x04, 0x55, 0x1D, 0x20, 0x00]
        guard let copy = X509_dup(certificate.reference.pointer) else { return nil }
        let result = Certificate(taking: copy)
        guard let octets = ASN1_OCTET_STRING_new() else { return nil }
        defer { ASN1_OCTET_STRING_free(octets) }
        guard ASN1_OCTET_STRING_set(octets, value, Int32(value.count)) == 1,
            let extensionValue = X509_EXTENSION_create_by_NID(nil, NID_certificate_policies, 0, octets)
        else { return nil }
        defer { X509_EXTENSION_free(extensionValue) }
        guard X509_add_ext(copy, extensionValue, -1) == 1 else { return nil }
        return result
    }

    /// `X509_policy_check` on `path` (leaf first; the last certificate is left out as OpenSSL's
    /// trust anchor), with the policy's inputs (user-initial-policy-set, explicit, inhibits).
    static func policyCheck(_ path: [Certificate], policy: TrustPolicy) -> Int32 {
        guard let certificates = X509StackReference(path), let oids = OPENSSL_sk_new_null() else { return X509_PCY_TREE_INTERNAL }
        var objects: [OpaquePointer] = []
        defer {
            OPENSSL_sk_free(oids)
            for object in objects { ASN1_OBJECT_free(object) }
        }
        for oid in policy.userInitialPolicySet {
            guard let object = OBJ_txt2obj(oid, 1) else { return X509_PCY_TREE_INTERNAL }
            objects.append(object)
            guard OPENSSL_sk_push(oids, UnsafeRawPointer(object)) > 0 else { return X509_PCY_TREE_INTERNAL }
        }
        var tree: OpaquePointer? = nil
        var explicit: Int32 = 0
        let flags = UInt32(truncatingIfNeeded: policy.policyInputFlags)
        let result = withExtendedLifetime(certificates) { X509_policy_check(&tree, &explicit, certificates.pointer, oids, flags) }
        X509_policy_tree_free(tree)
        ERR_clear_error()
        return result
    }
}

/// Purpose server: an extendedKeyUsage with Server Gated Cryptography (Microsoft 1.3.6.1.4.1.311.10.3.3,
/// Netscape 2.16.840.1.113730.4.1) but without serverAuth does not allow TLS server
/// authentication (RFC 5280 4.2.1.12). OpenSSL still counts SGC as serverAuth, a leftover of 1990s
/// export cryptography; Chromium does not, and neither do the CA/Browser Forum requirements.
struct ServerGatedCryptoPolicy: ChainPolicy {
    static let serverGatedCrypto = ["1.3.6.1.4.1.311.10.3.3", "2.16.840.1.113730.4.1"]

    func check(_ context: ChainContext) -> [TrustFinding] {
        guard context.policy.purpose == .server else { return [] }
        return context.facts.enumerated().compactMap { depth, facts in
            guard let purposes = facts.extendedKeyUsage, !purposes.contains(CertificateFacts.OID.serverAuth),
                purposes.contains(where: ServerGatedCryptoPolicy.serverGatedCrypto.contains)
            else { return nil }
            return context.finding(
                code: X509_V_ERR_INVALID_PURPOSE, depth: depth,
                reason:
                    "the extended key usage of \(context.role(depth)) \(context.label(depth)) names Server Gated Cryptography but not serverAuth, so it does not allow server authentication (RFC 5280 4.2.1.12)",
                hint: depth == 0
                    ? "reissue the certificate with serverAuth in its extended key usage"
                    : "the CA \(context.label(depth)) may not issue server certificates; use a CA whose extended key usage names serverAuth")
        }
    }
}

/// RFC 5280 4.2 and 4.2.1.4: a critical certificatePolicies must be understood whole, qualifiers
/// included; the only qualifiers RFC 5280 defines are the CPS pointer and the user notice. A
/// critical extension with another qualifier holds information the verifier cannot process.
struct CriticalPolicyQualifierPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard let raw = facts.extension(CertificateFacts.OID.certificatePolicies), raw.critical,
                let policies = CertificatePoliciesSyntaxPolicy.policies(raw.value)
            else { return nil }
            let known = [CertificateFacts.OID.cpsQualifier, CertificateFacts.OID.userNoticeQualifier]
            let unknown = policies.flatMap { $0.qualifiers.map(\.oid) }.filter { !known.contains($0) }
            guard !unknown.isEmpty else { return nil }
            return context.finding(
                code: X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION, depth: depth,
                reason:
                    "the critical certificatePolicies extension of \(context.label(depth)) has a policy qualifier this verifier cannot process (\(unknown.joined(separator: ", "))); RFC 5280 4.2 requires rejecting it",
                hint: "the issuing CA is not conforming; have the certificate reissued with only CPS or user-notice qualifiers, or a non-critical certificatePolicies")
        }
    }
}

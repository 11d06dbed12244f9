internal import COpenSSL
internal import COpenSSLShims
#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TrustEvaluator {
    // MARK: One OpenSSL verification

    struct Attempt {
        var chain: [Certificate]
        var findings: [TrustFinding]
        /// `X509_verify_cert` returned 1 and nothing at all was reported (no error, waived or not).
        var clean = false
    }

    /// Collects every error OpenSSL reports through the verify callback.
    private final class Collector: TrustCallbackSink {
        var errors: [(code: Int32, depth: Int32, certificate: OpaquePointer?)] = []
        func record(code: Int32, depth: Int32, certificate: OpaquePointer?) {
            if errors.count < 256 { errors.append((code, depth, certificate)) }
        }
    }

    /// One `X509_verify_cert` and, when `runsPolicies`, the Swift policies on the chain it built.
    /// `partialChain` adds `X509_V_FLAG_PARTIAL_CHAIN` (the fast path's check of a leaf against its
    /// intermediate alone).
    func attempt(
        leaf: Certificate, untrusted: X509StackReference, store: X509StoreReference, selfIssued: Int, partialChain: Bool = false, runsPolicies: Bool = true
    ) -> Attempt {
        OpenSSLErrorQueue.clear()
        guard let context = X509_STORE_CTX_new() else {
            return Attempt(chain: [leaf], findings: [VerifyErrorCatalog.finding(code: X509_V_ERR_OUT_OF_MEM, depth: 0, certificate: leaf, chain: [leaf], policy: policy)])
        }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store.pointer, leaf.reference.pointer, untrusted.pointer) == 1 else {
            return Attempt(chain: [leaf], findings: [VerifyErrorCatalog.finding(code: X509_V_ERR_UNSPECIFIED, depth: 0, certificate: leaf, chain: [leaf], policy: policy)])
        }
        let collector = Collector()
        var hostError: Int32? = nil
        if let param = X509_STORE_CTX_get0_param(context) {
            configure(param, selfIssued: selfIssued, hostError: &hostError)
            if partialChain { X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_PARTIAL_CHAIN)) }  // set_flags adds to the flags
        }
        X509_STORE_CTX_set_ex_data(context, 0, Unmanaged.passUnretained(collector).toOpaque())
        X509_STORE_CTX_set_verify_cb(context, trustVerifyCallback)
        let result = withExtendedLifetime(collector) { X509_verify_cert(context) }
        var chain: [Certificate] = []
        if let built = X509_STORE_CTX_get0_chain(context) {
            for i in 0..<mtls_sk_X509_num(built) {
                if let certificate = mtls_sk_X509_value(built, i) { chain.append(wrap(certificate, leaf: leaf)) }
            }
        }
        if chain.isEmpty { chain = [leaf] }
        let anchored = chain.last.map { anchorSet.contains($0) } ?? false
        let time = time_t((policy.evaluationTime ?? Date()).timeIntervalSince1970.rounded(.down))
        var findings: [TrustFinding] = []
        var seen = Set<String>()
        // OpenSSL stops building at the depth limit; when the callback lets it go on, it also reports
        // that the cut chain's last certificate has no issuer, which is untrue (the issuer was not
        // looked for): the depth finding says it all.
        let cutAt = Set(collector.errors.filter { $0.code == X509_V_ERR_CERT_CHAIN_TOO_LONG }.map(\.depth))
        // A certificate whose issuer was not found cannot have its signature checked either, and
        // OpenSSL says both when the callback lets it go on: one fact, told once.
        let issuerMissingAt = Set(
            collector.errors.filter { $0.code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT || $0.code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY }.map(\.depth))
        // An anchor whose trust settings reject the purpose: OpenSSL's purpose check of a trusted
        // certificate then fails too, for the same reason.
        let rejectedAt = Set(collector.errors.filter { $0.code == X509_V_ERR_CERT_REJECTED }.map(\.depth))
        for error in collector.errors {
            let depth = Int(error.depth)
            if error.code == X509_V_ERR_INVALID_PURPOSE && rejectedAt.contains(error.depth) { continue }
            if cutAt.contains(error.depth) && (error.code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT || error.code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY) { continue }
            if error.code == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE && issuerMissingAt.contains(error.depth) && !cutAt.contains(error.depth) { continue }
            if waived(code: error.code, depth: depth, certificate: error.certificate, chainCount: chain.count, anchored: anchored, time: time) { continue }
            let certificate: Certificate? =
                error.certificate.map { wrap($0, leaf: leaf) } ?? (depth < chain.count ? chain[depth] : nil)
            let key = "\(depth)/\(error.code)"
            if seen.insert(key).inserted {
                findings.append(VerifyErrorCatalog.finding(code: error.code, depth: depth, certificate: certificate, chain: chain, policy: policy))
            }
        }
        if let hostError, seen.insert("0/\(hostError)").inserted {
            findings.append(VerifyErrorCatalog.finding(code: hostError, depth: 0, certificate: leaf, chain: chain, policy: policy))
        }
        if result != 1 && collector.errors.isEmpty && findings.isEmpty {
            let code = X509_STORE_CTX_get_error(context)
            findings.append(
                VerifyErrorCatalog.finding(
                    code: code == X509_V_OK ? X509_V_ERR_UNSPECIFIED : code, depth: Int(X509_STORE_CTX_get_error_depth(context)), certificate: leaf, chain: chain, policy: policy))
        }
        ERR_clear_error()
        let clean = result == 1 && collector.errors.isEmpty && hostError == nil && findings.isEmpty
        guard runsPolicies else {
            OpenSSLErrorQueue.clear()
            return Attempt(chain: chain, findings: findings, clean: clean)
        }
        // The Swift policies judge the chain OpenSSL built in this attempt.
        let chainContext = ChainContext(chain: chain, policy: policy, anchors: anchorSet, knownFacts: knownFacts)
        for check in policy.chainPolicies {
            for finding in check.check(chainContext) where seen.insert("\(finding.depth)/\(finding.code)").inserted {
                findings.append(finding)
            }
        }
        OpenSSLErrorQueue.clear()
        return Attempt(chain: chain, findings: findings, clean: clean && findings.isEmpty)
    }

    /// The certificate value behind an `X509*` of a built chain: the leaf, an anchor or intermediate
    /// already held, or (an extra intermediate) a new value.
    func wrap(_ pointer: OpaquePointer, leaf: Certificate) -> Certificate {
        if pointer == leaf.reference.pointer { return leaf }
        return known[Int(bitPattern: pointer)] ?? Certificate(borrowing: pointer)
    }

    /// OpenSSL errors that the standards do not make errors.
    ///
    /// - `X509_V_ERR_CERT_HAS_EXPIRED` at exactly `notAfter`: RFC 5280 4.1.2.5 makes the validity
    ///   period inclusive, OpenSSL's comparison does not.
    /// - `X509_V_ERR_CA_CERT_MISSING_KEY_USAGE` (an X509_STRICT check) on the trust anchor: the
    ///   anchor is an input of path validation (RFC 5280 6.1.1 (d)), and RFC 5280 6.3.3 (f) checks
    ///   a CRL issuer's keyUsage only when present.
    func waived(code: Int32, depth: Int, certificate: OpaquePointer?, chainCount: Int, anchored: Bool, time: time_t) -> Bool {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            guard let certificate, let notAfter = X509_get0_notAfter(certificate) else { return false }
            return ASN1_TIME_cmp_time_t(notAfter, time) == 0
        case X509_V_ERR_CA_CERT_MISSING_KEY_USAGE:
            return anchored && depth == chainCount - 1 && chainCount > 1
        case X509_V_ERR_INVALID_PURPOSE:
            // A CA certificate as the leaf: OpenSSL's TLS purpose check wants digitalSignature or
            // keyEncipherment in its keyUsage, which RFC 5280 does not (it lets a CA certificate
            // end a path, 6.1). The rfc5280 profile waives that when the EKU, if any, allows the
            // purpose; the webpki profile refuses the CA leaf outright (MTLS_WEBPKI_EE_IS_CA).
            guard depth == 0, policy.effectiveProfile == .rfc5280, let certificate, let purposeOID = policy.purpose.extendedKeyUsageOID else { return false }
            let leaf = Certificate(borrowing: certificate)
            guard leaf.basicConstraints?.isCA == true else { return false }
            let facts = CertificateFacts(leaf)
            guard let purposes = facts.extendedKeyUsage else { return true }
            return purposes.contains(purposeOID) || purposes.contains(CertificateFacts.OID.anyExtendedKeyUsage)
        default:
            return false
        }
    }

    func configure(_ param: OpaquePointer, selfIssued: Int, hostError: inout Int32?) {
        // Certificate policies (RFC 5280 6.1): OpenSSL processes them only when asked, and with no
        // user-initial-policy-set given it starts from an empty set, so that any requireExplicitPolicy
        // fails. RFC 5280's default input is {anyPolicy}: the certificates' own policyConstraints,
        // policyMappings and inhibitAnyPolicy then decide (the anchor's: AnchorPolicyConstraintsPolicy).
        var flags = UInt(X509_V_FLAG_X509_STRICT | X509_V_FLAG_POLICY_CHECK) | policy.policyInputFlags
        for oid in policy.userInitialPolicySet {
            if let object = OBJ_txt2obj(oid, 1), X509_VERIFY_PARAM_add0_policy(param, object) != 1 { ASN1_OBJECT_free(object) }
        }
        if policy.allowsPartialChain { flags |= UInt(X509_V_FLAG_PARTIAL_CHAIN) }
        // CRLs as RFC 5280 6.3 reads them: without EXTENDED_CRL_SUPPORT OpenSSL takes a delta CRL
        // (deltaCRLIndicator) for a complete one, and refuses indirect and reason-partitioned CRLs;
        // with USE_DELTAS a delta CRL is applied on top of its base CRL and never alone.
        if !policy.crls.isEmpty {
            flags |= UInt(X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL | X509_V_FLAG_EXTENDED_CRL_SUPPORT | X509_V_FLAG_USE_DELTAS)
        }
        X509_VERIFY_PARAM_set_flags(param, flags)
        let time = policy.evaluationTime ?? Date()
        X509_VERIFY_PARAM_set_time(param, time_t(time.timeIntervalSince1970.rounded(.down)))
        if let depth = policy.maximumDepth { X509_VERIFY_PARAM_set_depth(param, Int32(clamping: depth + selfIssued)) }
        // Web PKI: security level 2 (112 bits) refuses RSA < 2048, P-192 and SHA-1/MD5 signatures
        // anywhere in the chain (the anchor's own self-signature excepted).
        // RFC 5280 alone: security level 1 (80 bits) still refuses SHA-1 and MD5 signatures
        // (collisions are practical) and RSA keys under 1024 bits.
        // Level 0: no limits at all, when the caller applies its own (platform verdicts).
        X509_VERIFY_PARAM_set_auth_level(param, !policy.enforcesAlgorithmStrength ? 0 : (policy.enforcesWebPKI ? 2 : 1))
        // The trust too: X509_STORE_CTX_init infers it from the purpose only when the purpose is
        // set before it, and this runs after. Left at the default, an anchor's trust settings
        // (TRUSTED CERTIFICATE) would be read for anyExtendedKeyUsage: one rejected for
        // serverAuth trusted, one trusted for serverAuth rejected.
        switch policy.purpose {
        case .server:
            _ = X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER)
            _ = X509_VERIFY_PARAM_set_trust(param, X509_TRUST_SSL_SERVER)
        case .client:
            _ = X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_CLIENT)
            _ = X509_VERIFY_PARAM_set_trust(param, X509_TRUST_SSL_CLIENT)
        case .any: break
        }
        // SAN only, never the subject CN (as browsers, rustls and pyca), for the host check and for
        // name constraints (SubjectCommonNameConstraintsPolicy handles leaves without any SAN);
        // no partial wildcards (`f*.example.com`).
        X509_VERIFY_PARAM_set_hostflags(param, UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        // An email peer name: the rfc822Name SAN entries only (never the subject's emailAddress),
        // local part exactly and domain ignoring case, as X509_check_email does.
        if let email = policy.email {
            if email.utf8.contains(0) || !email.allSatisfy({ $0.isASCII }) {
                hostError = X509_V_ERR_EMAIL_MISMATCH
            } else {
                _ = X509_VERIFY_PARAM_set1_email(param, email, email.utf8.count)
            }
        }
        guard let host = policy.hostname, !host.isEmpty else { return }
        if let ip = IPAddress.parse(host) {
            // Compared as an address, octet by octet, with the SAN iPAddress entries only.
            _ = ip.withUnsafeBufferPointer { X509_VERIFY_PARAM_set1_ip(param, $0.baseAddress, $0.count) }
        } else {
            // Compared with the SAN dNSName entries, ignoring ASCII case only.
            let name = host.hasSuffix(".") ? String(host.dropLast()) : host
            if name.utf8.contains(0) || !name.allSatisfy({ $0.isASCII }) {
                hostError = X509_V_ERR_HOSTNAME_MISMATCH
                return
            }
            _ = X509_VERIFY_PARAM_set1_host(param, name, name.utf8.count)
        }
    }

}

extension TrustPolicy {
    /// The user-initial-policy-set as given to OpenSSL: ``initialPolicies``, or {anyPolicy}.
    var userInitialPolicySet: [String] { initialPolicies.isEmpty ? [CertificateFacts.OID.anyPolicy] : initialPolicies }

    /// OpenSSL's flags for the other policy inputs of RFC 5280 6.1.1.
    var policyInputFlags: UInt {
        var flags: UInt = 0
        if requiresExplicitPolicy { flags |= UInt(X509_V_FLAG_EXPLICIT_POLICY) }
        if inhibitsPolicyMapping { flags |= UInt(X509_V_FLAG_INHIBIT_MAP) }
        if inhibitsAnyPolicy { flags |= UInt(X509_V_FLAG_INHIBIT_ANY) }
        return flags
    }

    /// True when every policy input is RFC 5280's default.
    var hasDefaultPolicyInputs: Bool { initialPolicies.isEmpty && !requiresExplicitPolicy && !inhibitsPolicyMapping && !inhibitsAnyPolicy }
}

extension TrustPolicy.Purpose {
    /// The extKeyUsage purpose OID this purpose needs, or nil for ``any``.
    var extendedKeyUsageOID: String? {
        switch self {
        case .server: CertificateFacts.OID.serverAuth
        case .client: CertificateFacts.OID.clientAuth
        case .any: nil
        }
    }
}

/// The verify callback: records the error and tells OpenSSL to go on, so that every failure is seen.
private func trustVerifyCallback(_ ok: Int32, _ context: OpaquePointer?) -> Int32 {
    guard ok == 0, let context, let raw = X509_STORE_CTX_get_ex_data(context, 0) else { return ok }
    let collector = Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
    guard let sink = collector as? TrustCallbackSink else { return 0 }
    let code = X509_STORE_CTX_get_error(context)
    sink.record(code: code, depth: X509_STORE_CTX_get_error_depth(context), certificate: X509_STORE_CTX_get_current_cert(context))
    return 1
}

/// The one thing the C callback needs from the collector.
protocol TrustCallbackSink: AnyObject {
    func record(code: Int32, depth: Int32, certificate: OpaquePointer?)
}

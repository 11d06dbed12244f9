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

/// Owns one `X509_STORE`.
final class X509StoreReference: @unchecked Sendable {
    // @unchecked Sendable: the store is filled once at construction and only read afterwards;
    // OpenSSL locks its internal caches.
    let pointer: OpaquePointer
    init?(anchors: [Certificate], crls: [CertificateRevocationList]) {
        guard let store = X509_STORE_new() else { return nil }
        pointer = store
        for anchor in anchors { _ = X509_STORE_add_cert(store, anchor.reference.pointer) }  // add_cert takes its own reference
        for crl in crls { _ = X509_STORE_add_crl(store, crl.reference.pointer) }
        ERR_clear_error()  // duplicates are harmless
    }
    deinit { X509_STORE_free(pointer) }
}

/// Owns a `STACK_OF(X509)` that borrows its certificates from Swift values kept alive alongside.
final class X509StackReference: @unchecked Sendable {
    // @unchecked Sendable: never mutated after construction.
    let pointer: OpaquePointer
    private let certificates: [Certificate]
    init?(_ certificates: [Certificate]) {
        guard let stack = mtls_sk_X509_new_null() else { return nil }
        pointer = stack
        self.certificates = certificates
        for certificate in certificates { _ = mtls_sk_X509_push(stack, certificate.reference.pointer) }
    }
    deinit { mtls_sk_X509_free(pointer) }  // the certificates belong to `certificates`
}

/// Evaluates certificate chains against a ``TrustPolicy``: OpenSSL builds and checks each path,
/// the Swift policies (`Trust/Policies/`) judge the path OpenSSL built, every failure is collected,
/// and when the first path fails the other issuers are tried, each with exactly the same checks.
///
/// Build one evaluator and reuse it for many leaves: anchors, intermediates and CRLs are prepared once.
public struct TrustEvaluator: Sendable {
    /// The policy.
    public let policy: TrustPolicy
    private let anchors: [Certificate]
    let anchorSet: Set<Certificate>
    private let store: X509StoreReference
    private let intermediateStack: X509StackReference
    /// The anchors and intermediates by their `X509*`, so that the chain OpenSSL builds from them
    /// maps back to the values already held instead of being re-encoded certificate by certificate.
    let known: [Int: Certificate]  // keyed by Int(bitPattern: X509*)
    /// The anchors, then the policy's intermediates.
    let allKnown: [Certificate]
    /// The ``CertificateFacts`` of those certificates, worked out once for every chain.
    let knownFacts: [Int: CertificateFacts]
    /// How many of the policy's intermediates are self-issued (and not anchors).
    let selfIssuedIntermediates: Int
    /// The fast path for leaves under already accepted intermediates (`TrustFastPath.swift`), or
    /// nil when the policy does not allow it.
    let fastPath: TrustFastPath?
    /// The Web PKI rules reported as warnings (``TrustPolicy/reportsWebPKIWarnings``), or nil.
    let advisory: AdvisoryProfile?

    /// Prepares an evaluator.
    ///
    /// - Throws: `.unreadableFile` when system roots are asked for and none can be found.
    public init(policy: TrustPolicy) throws(MTLSTrustError) {
        try self.init(policy: policy, differentialLog: nil)
    }

    /// Prepares an evaluator that, with `differentialLog`, runs both the fast and the reference
    /// path on every leaf and appends the two verdicts to that file (a `DIFF` line where the fast
    /// path accepts what the reference path rejects): `scripts/trust-differential.sh` over
    /// x509-limbo, through `mtls verify`.
    package init(policy: TrustPolicy, differentialLog: String?) throws(MTLSTrustError) {
        for oid in policy.initialPolicies where !CertificateFacts.isDottedOID(oid) {
            throw MTLSTrustError(
                .invalidArgument, "the initial policy '\(DisplayText.escaped(oid))' is not an object identifier in dotted form",
                hint: "give the certificate policy's OID, as in 2.16.840.1.101.3.2.1.48.1")
        }
        self.policy = policy
        var anchors = policy.anchors
        if policy.includesSystemRoots { anchors += try CertificateLoader.systemRoots() }
        self.anchors = anchors
        self.anchorSet = Set(anchors)
        guard let store = X509StoreReference(anchors: anchors, crls: policy.crls),
            let stack = X509StackReference(policy.intermediates)
        else { throw MTLSTrustError(.internalFailure, "out of memory preparing the trust store") }
        self.store = store
        self.intermediateStack = stack
        var known: [Int: Certificate] = [:]
        for certificate in anchors + policy.intermediates { known[Int(bitPattern: certificate.reference.pointer)] = certificate }
        self.known = known
        // Facts for the given anchors and intermediates only: system roots (a hundred and more) are
        // rarely in a chain, and working theirs out would slow every evaluator's start.
        var knownFacts: [Int: CertificateFacts] = [:]
        for certificate in policy.anchors + policy.intermediates { knownFacts[Int(bitPattern: certificate.reference.pointer)] = CertificateFacts(certificate) }
        self.knownFacts = knownFacts
        let anchorSet = self.anchorSet
        self.selfIssuedIntermediates = policy.intermediates.filter { !anchorSet.contains($0) && ChainDepthPolicy.isSelfIssued($0) }.count
        self.allKnown = anchors + policy.intermediates
        self.fastPath = TrustEvaluator.allowsFastPath(policy, knownCount: allKnown.count) ? TrustFastPath(differentialLog: differentialLog, policy: policy) : nil
        self.advisory = policy.reportsWebPKIWarnings ? AdvisoryProfile(policy: policy, anchors: anchorSet) : nil
    }

    /// Evaluates `leaf`, with `extraIntermediates` added to the policy's intermediates.
    ///
    /// Under ``TrustPolicy/Profile/automatic`` for a server, the Baseline Requirements findings
    /// that no client enforces are kept aside as ``TrustEvaluation/warnings`` (worked out only
    /// when read).
    public func evaluate(_ leaf: Certificate, extraIntermediates: [Certificate] = []) -> TrustEvaluation {
        var evaluation = verdict(leaf, extraIntermediates: extraIntermediates)
        evaluation.advisory = advisory
        if policy.revocation != .off, evaluation.chain.count > 1 { checkRevocation(&evaluation) }
        return evaluation
    }

    private func verdict(_ leaf: Certificate, extraIntermediates: [Certificate]) -> TrustEvaluation {
        guard let fastPath, fastPath.differentialLog == nil || extraIntermediates.isEmpty else { return referenceEvaluation(leaf, extraIntermediates: extraIntermediates) }
        if !extraIntermediates.isEmpty { return rememberedEvaluation(leaf, extraIntermediates: extraIntermediates, fastPath: fastPath) }
        if fastPath.differentialLog != nil { return differentialEvaluation(leaf, fastPath: fastPath) }
        if let fast = fastEvaluationWithRoute(leaf, fastPath: fastPath) {
            fastPath.count(accepted: true, onDER: fast.onDER)
            return fast.evaluation
        }
        fastPath.count(accepted: false)
        let evaluation = referenceEvaluation(leaf, extraIntermediates: [])
        if evaluation.isTrusted, evaluation.pathsTried == 1, let suffix = armableSuffix(evaluation.chain) { fastPath.arm(suffix, known: allKnown) }
        return evaluation
    }

    /// A chain with intermediates of its own (a TLS server's, a probe's): the reference path, whose
    /// acceptance is remembered for the same leaf and intermediates while every certificate of the
    /// chain stays within its validity. Nothing else a verdict depends on can change: the policy
    /// (anchors, intermediates, purpose, names, profile, depth, strength) is fixed, there are no
    /// CRLs (no fast path with them), and neither OpenSSL nor the Swift policies read the time
    /// except to compare it with the validity periods. A handshake with the same server then costs
    /// a lookup instead of a chain validation, as in the platform verifiers' caches.
    func rememberedEvaluation(_ leaf: Certificate, extraIntermediates: [Certificate], fastPath: TrustFastPath) -> TrustEvaluation {
        let seconds = (policy.evaluationTime ?? Date()).timeIntervalSince1970.rounded(.down)
        let now = Int(exactly: seconds) ?? Int.min
        if var remembered = fastPath.rememberedVerdict(leaf: leaf, intermediates: extraIntermediates, at: now) {
            remembered.chain[0] = leaf
            return remembered
        }
        let evaluation = referenceEvaluation(leaf, extraIntermediates: extraIntermediates)
        if evaluation.isTrusted, let window = TrustEvaluator.validityWindow(evaluation.chain), window.contains(now) {
            fastPath.remember(evaluation, leaf: leaf, intermediates: extraIntermediates, window: window)
        }
        return evaluation
    }

    /// The seconds in which every certificate of `chain` is within its validity (notBefore ≤ t <
    /// notAfter), or nil when there are none.
    static func validityWindow(_ chain: [Certificate]) -> Range<Int>? {
        guard let start = chain.map({ Int($0.notBefore.timeIntervalSince1970) }).max(), let end = chain.map({ Int($0.notAfter.timeIntervalSince1970) }).min()
        else { return nil }
        return start < end ? start..<end : nil
    }

    /// Both paths on one leaf: the reference path's verdict is returned, and the fast path's is
    /// compared with it. The fast path is armed by the reference result more eagerly than in normal
    /// use — whenever no finding concerns the chain above the leaf, not only when the chain is
    /// trusted — so that it also meets leaves the full path rejects. A fast acceptance of a chain
    /// the reference path rejects is a `DIFF` line.
    func differentialEvaluation(_ leaf: Certificate, fastPath: TrustFastPath) -> TrustEvaluation {
        let reference = referenceEvaluation(leaf, extraIntermediates: [])
        let reachedBefore = fastPath.statistics.reachedChecks
        // Both routes of the fast path, each on its own: the DER route on a copy of the leaf that
        // is still undecoded, as in normal use (the reference path has decoded `leaf`).
        let undecoded = (try? Certificate(derBytes: leaf.derBytes)).flatMap { $0.reference.decodedPointer == nil ? $0 : nil }
        func routes() -> (onDER: TrustEvaluation?, byOpenSSL: TrustEvaluation?) {
            (undecoded.flatMap { evaluationOnDER($0, fastPath: fastPath) }, evaluationByOpenSSL(leaf, fastPath: fastPath))
        }
        var fast = routes()
        if reference.pathsTried == 1, reference.findings.allSatisfy({ $0.depth == 0 }), let suffix = armableSuffix(reference.chain) { fastPath.arm(suffix, known: allKnown) }
        if fast.onDER == nil && fast.byOpenSSL == nil { fast = routes() }
        let accepted = fast.onDER != nil || fast.byOpenSSL != nil
        fastPath.count(accepted: accepted, onDER: fast.onDER != nil)
        let reached = fastPath.statistics.reachedChecks > reachedBefore
        let verdicts = "fast=\(accepted ? "accept" : "decline") reference=\(reference.isTrusted ? "accept" : "reject")"
        let der = undecoded == nil ? "n/a" : fast.onDER != nil ? "accept" : "decline"
        let line = verdicts + " checks=\(reached ? "ran" : "skipped") leaf=\(leaf.sha256Fingerprint.hex) der=\(der)"
        let differs = accepted && !reference.isTrusted
        let chainDiffers = [fast.onDER, fast.byOpenSSL].contains { $0 != nil && $0?.chain != reference.chain } && reference.isTrusted
        if differs || chainDiffers {
            fastPath.log("DIFF " + line + " findings=\(reference.findings.map(\.name))" + (chainDiffers ? " (another chain)" : ""))
        } else {
            fastPath.log("same " + line)
        }
        return reference
    }

    /// The reference path: OpenSSL builds and checks the whole chain, the Swift policies judge it,
    /// and the alternative paths are tried when it fails.
    func referenceEvaluation(_ leaf: Certificate, extraIntermediates: [Certificate]) -> TrustEvaluation {
        let untrusted: X509StackReference
        let pool: [Certificate]
        if extraIntermediates.isEmpty {
            untrusted = intermediateStack
            pool = policy.intermediates
        } else {
            pool = policy.intermediates + extraIntermediates
            guard let stack = X509StackReference(pool) else {
                return TrustEvaluation(
                    chain: [leaf], findings: [VerifyErrorCatalog.finding(code: X509_V_ERR_OUT_OF_MEM, depth: 0, certificate: leaf, chain: [leaf], policy: policy)], pathsTried: 0)
            }
            untrusted = stack
        }
        // Self-issued intermediates do not count against --max-depth (RFC 5280 6.1.4 (l)), but
        // OpenSSL counts them: give OpenSSL that much room and let ChainDepthPolicy apply the limit.
        let selfIssued = selfIssuedIntermediates + extraIntermediates.filter { !anchorSet.contains($0) && ChainDepthPolicy.isSelfIssued($0) }.count
        let first = attempt(leaf: leaf, untrusted: untrusted, store: store, selfIssued: selfIssued)
        if first.findings.isEmpty || !policy.triesAlternativePaths {
            return TrustEvaluation(chain: first.chain, findings: first.findings, pathsTried: 1)
        }
        // OpenSSL 3.0 builds one path and does not backtrack. Enumerate the others and check each
        // fully: OpenSSL with the same flags, purpose, host, time, CRLs and depth, then the same
        // Swift policies on the chain that OpenSSL built in that attempt. Any one that passes is a
        // valid certification path.
        var best = first
        var tried = 1
        for path in candidatePaths(leaf: leaf, pool: pool, selfIssued: selfIssued) {
            guard let anchor = path.last else { continue }
            if path == first.chain { continue }
            let middle = Array(path.dropFirst().dropLast())
            // Only this path's anchor is trusted and only its intermediates are offered, so the
            // chain OpenSSL builds is this path (or a shorter one through the same anchor, which
            // is then what the policies judge).
            guard let pathStore = X509StoreReference(anchors: [anchor], crls: policy.crls),
                let pathStack = X509StackReference(middle)
            else { break }
            let outcome = attempt(leaf: leaf, untrusted: pathStack, store: pathStore, selfIssued: selfIssued)
            tried += 1
            if outcome.findings.isEmpty, outcome.chain.last.map({ anchorSet.contains($0) }) == true {
                return TrustEvaluation(chain: outcome.chain, findings: [], pathsTried: tried)
            }
            // Report the most telling failure: a path that reaches an anchor before one that does
            // not, then the one with the fewest findings.
            let reaches = outcome.chain.last.map { anchorSet.contains($0) } ?? false
            let bestReaches = best.chain.last.map { anchorSet.contains($0) } ?? false
            if (reaches && !bestReaches) || (reaches == bestReaches && outcome.findings.count < best.findings.count) { best = outcome }
        }
        return TrustEvaluation(chain: best.chain, findings: best.findings, pathsTried: tried)
    }

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
    private func wrap(_ pointer: OpaquePointer, leaf: Certificate) -> Certificate {
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
    private func waived(code: Int32, depth: Int, certificate: OpaquePointer?, chainCount: Int, anchored: Bool, time: time_t) -> Bool {
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

    private func configure(_ param: OpaquePointer, selfIssued: Int, hostError: inout Int32?) {
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

    // MARK: Alternative paths

    /// Paths from `leaf` to an anchor through `pool`, shortest first, bounded in number and work.
    private func candidatePaths(leaf: Certificate, pool: [Certificate], selfIssued: Int) -> [[Certificate]] {
        let maxLength = min((policy.maximumDepth.map { $0 + selfIssued } ?? 8) + 2, 10)
        var results: [[Certificate]] = []
        var steps = 0
        func issued(_ issuer: Certificate, _ subject: Certificate) -> Bool {
            X509_check_issued(issuer.reference.pointer, subject.reference.pointer) == X509_V_OK
        }
        func walk(_ path: [Certificate]) {
            guard results.count < 32, steps < 4096, let top = path.last else { return }
            steps += 1
            for anchor in anchors where !path.contains(anchor) && issued(anchor, top) {
                results.append(path + [anchor])
            }
            guard path.count < maxLength else { return }
            for candidate in pool where !path.contains(candidate) && !anchorSet.contains(candidate) && issued(candidate, top) {
                walk(path + [candidate])
            }
        }
        walk([leaf])
        return results.sorted { $0.count < $1.count }
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

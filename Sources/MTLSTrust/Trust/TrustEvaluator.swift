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

/// Evaluates certificate chains against a ``TrustPolicy``: OpenSSL builds and checks each path,
/// the Swift policies (`Trust/Policies/`) judge the path OpenSSL built, every failure is collected,
/// and when the first path fails the other issuers are tried, each with exactly the same checks.
///
/// Build one evaluator and reuse it for many leaves: anchors, intermediates and CRLs are prepared once.
public struct TrustEvaluator: Sendable {
    /// The policy.
    public let policy: TrustPolicy
    let anchors: [Certificate]
    let anchorSet: Set<Certificate>
    let store: X509StoreReference
    let intermediateStack: X509StackReference
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

    func verdict(_ leaf: Certificate, extraIntermediates: [Certificate]) -> TrustEvaluation {
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

}

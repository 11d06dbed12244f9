internal import COpenSSL
internal import COpenSSLShims
import Synchronization
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The evaluator's fast path for the common case: many leaves under the same, already accepted
/// intermediates.
///
/// `X509_verify_cert` rebuilds and rechecks the whole chain for every leaf: it looks every issuer
/// up, verifies the intermediate's signature by the root again, and checks the root and the
/// intermediates again, although nothing about them depends on the leaf. Once the reference path
/// (``TrustEvaluator/evaluate(_:extraIntermediates:)``'s `attempt`) has **accepted** a chain
/// `leaf → I → … → anchor` made of the evaluator's own intermediates and anchors, the part above
/// the leaf is known good for this policy (``TrustFastPath/arm(_:)``). A later leaf issued by `I`
/// is then checked by:
///
/// 1. `X509_verify_cert` on `leaf → I` alone, `I` as the only (partial-chain) anchor, with the same
///    flags, purpose, host, e-mail, time and security level: OpenSSL's own leaf checks (signature
///    by `I`'s key, validity, purpose, host, X509_STRICT, key and digest strength, critical
///    extensions), exactly as in the full path;
/// 2. the same Swift chain policies, on the same full chain `leaf → I → … → anchor`, as the full
///    path applies.
///
/// The fast path may only **accept**, and only when both give no finding at all and every
/// condition below holds; in any other case it declines and the full path decides, so a rejection
/// (and every reason given) always comes from the reference path. Conditions (each one a reason
/// the full path could do something the partial check does not):
///
/// - no CRLs (revocation is checked for every certificate of the chain), no extra intermediates
///   (they change chain building), at most 16 anchors and intermediates (the checks below are linear);
/// - among all anchors and intermediates, `I` is the only certificate whose subject is the leaf's
///   issuer name (OpenSSL looks issuers up by name, trusted first, and would try any of them), and
///   `X509_check_issued` accepts it as the leaf's issuer;
/// - the leaf is not self-issued, not a proxy certificate, and its subject is no known
///   certificate's subject (it cannot be mistaken for an issuer in the chain above it), and it is
///   not itself an anchor or intermediate;
/// - no certificate of the armed chain carries name constraints or policy constraints, which
///   constrain the leaf from above (OpenSSL checks them on the whole chain);
/// - the armed chain's certificates above `I` are within their validity at the evaluation time
///   (the partial check only sees `I`'s).
///
/// ``TrustPolicy`` is a value fixed at the evaluator's construction, so everything the armed
/// chain was accepted for (purpose, profile, depth, strength) holds for every later leaf.
final class TrustFastPath: Sendable {
    /// One accepted chain above a leaf: `I` first, the anchor last.
    struct Armed: Sendable {
        var suffix: [Certificate]
        /// A store holding only `I`: the partial-chain check's anchor.
        var store: X509StoreReference
    }

    /// Counters, for tests and `mtls-bench`: how often the fast path accepted, and declined.
    private let counts = Mutex<TrustEvaluator.FastPathStatistics>(TrustEvaluator.FastPathStatistics())
    /// Armed chains by `Int(bitPattern: X509*)` of `I`.
    private let armed = Mutex<[Int: Armed]>([:])
    /// Where the differential mode writes (``TrustEvaluator/differentialLog``), or nil.
    let differentialLog: String?

    init(differentialLog: String?) { self.differentialLog = differentialLog }

    var statistics: TrustEvaluator.FastPathStatistics { counts.withLock { $0 } }

    func count(accepted: Bool) {
        counts.withLock { if accepted { $0.accepted += 1 } else { $0.declined += 1 } }
    }

    /// A leaf whose issuer is an armed intermediate: the checks of OpenSSL and the policies ran.
    func countReached() { counts.withLock { $0.reachedChecks += 1 } }

    func armedChain(issuer: OpaquePointer) -> Armed? { armed.withLock { $0[Int(bitPattern: issuer)] } }

    /// Records `suffix` (the accepted chain without its leaf) for later leaves of `suffix[0]`.
    func arm(_ suffix: [Certificate]) {
        guard let issuer = suffix.first else { return }
        let key = Int(bitPattern: issuer.reference.pointer)
        if armed.withLock({ $0[key] != nil }) { return }
        guard let store = X509StoreReference(anchors: [issuer], crls: []) else { return }
        armed.withLock { $0[key] = Armed(suffix: suffix, store: store) }
    }

    /// Appends one line to the differential log.
    func log(_ line: String) {
        guard let differentialLog, let file = fopen(differentialLog, "a") else { return }
        defer { fclose(file) }
        fputs(line + "\n", file)
    }
}

extension TrustEvaluator {
    /// How often the fast path (see `TrustFastPath.swift`) accepted a leaf and how often it
    /// declined one that the full path then judged.
    public struct FastPathStatistics: Sendable, Equatable {
        /// Leaves accepted by the fast path.
        public var accepted = 0
        /// Leaves the fast path left to the full path (not eligible, or not certain).
        public var declined = 0
        /// Leaves that got as far as the fast path's OpenSSL and policy checks (their issuer is an
        /// armed intermediate), accepted or not.
        public var reachedChecks = 0
        public init(accepted: Int = 0, declined: Int = 0, reachedChecks: Int = 0) {
            self.accepted = accepted
            self.declined = declined
            self.reachedChecks = reachedChecks
        }
    }

    /// This evaluator's fast-path counters (zero when the policy never allows the fast path).
    public var fastPathStatistics: FastPathStatistics { fastPath?.statistics ?? FastPathStatistics() }

    /// True when a policy lets the fast path run at all (see `TrustFastPath`).
    static func allowsFastPath(_ policy: TrustPolicy, knownCount: Int) -> Bool {
        policy.crls.isEmpty && knownCount <= 16
    }

    /// The known chain above a trusted, first-path chain, when it may arm the fast path: the leaf
    /// is not a known certificate, `chain[1]` is one of the policy's intermediates (not an anchor),
    /// every certificate above the leaf is the evaluator's own, the last is an anchor, and none
    /// carries name or policy constraints.
    func armableSuffix(_ chain: [Certificate]) -> [Certificate]? {
        guard chain.count >= 3, !isKnown(chain[0]), !anchorSet.contains(chain[1]) else { return nil }
        for certificate in chain.dropFirst() {
            let key = Int(bitPattern: certificate.reference.pointer)
            guard known[key] != nil, let facts = knownFacts[key], facts.isReadable else { return nil }
            if facts.extension(CertificateFacts.OID.nameConstraints) != nil || facts.extension(CertificateFacts.OID.policyConstraints) != nil { return nil }
        }
        guard let last = chain.last, anchorSet.contains(last) else { return nil }
        return Array(chain.dropFirst())
    }

    private func isKnown(_ certificate: Certificate) -> Bool {
        known[Int(bitPattern: certificate.reference.pointer)] != nil || anchorSet.contains(certificate) || policy.intermediates.contains(certificate)
    }

    /// The fast path's verdict: a trusted evaluation, or nil to let the full path decide.
    func fastEvaluation(_ leaf: Certificate, fastPath: TrustFastPath) -> TrustEvaluation? {
        let pointer = leaf.reference.pointer
        // Not self-issued, not a proxy certificate (a proxy changes how OpenSSL checks its issuer),
        // and not one of the evaluator's own certificates.
        guard X509_get_extension_flags(pointer) & UInt32(EXFLAG_SI | EXFLAG_PROXY) == 0, !isKnown(leaf) else { return nil }
        // Exactly one known certificate has the leaf's issuer name — OpenSSL's chain building
        // looks issuers up by name, so then it cannot pick another — and it issued the leaf
        // (`X509_check_issued`) and is an armed intermediate. The leaf's subject is no known
        // certificate's subject.
        var issuer: Certificate? = nil
        let leafSubject = X509_get_subject_name(pointer)
        let leafIssuer = X509_get_issuer_name(pointer)
        for certificate in allKnown {
            let subject = X509_get_subject_name(certificate.reference.pointer)
            if X509_NAME_cmp(leafSubject, subject) == 0 { return nil }
            if X509_NAME_cmp(leafIssuer, subject) == 0 {
                guard issuer == nil else { return nil }
                issuer = certificate
            }
        }
        guard let issuer, X509_check_issued(issuer.reference.pointer, pointer) == X509_V_OK else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        guard let armed = fastPath.armedChain(issuer: issuer.reference.pointer) else { return nil }
        fastPath.countReached()
        // The certificates above I are within their validity (the partial check sees only I's).
        var when = time_t((policy.evaluationTime ?? Date()).timeIntervalSince1970.rounded(.down))
        for certificate in armed.suffix.dropFirst() {
            guard let notBefore = X509_get0_notBefore(certificate.reference.pointer), let notAfter = X509_get0_notAfter(certificate.reference.pointer),
                X509_cmp_time(notBefore, &when) < 0, X509_cmp_time(notAfter, &when) > 0
            else { return nil }
        }
        // OpenSSL's leaf checks: leaf → I, I the only anchor, no other certificate offered.
        guard let empty = X509StackReference([]) else { return nil }
        let partial = attempt(leaf: leaf, untrusted: empty, store: armed.store, selfIssued: selfIssuedIntermediates, partialChain: true, runsPolicies: false)
        guard partial.clean, partial.chain.count == 2, partial.chain[1] == issuer else { return nil }
        // The Swift policies on the full chain, exactly as the full path applies them.
        let chain = [leaf] + armed.suffix
        let context = ChainContext(chain: chain, policy: policy, anchors: anchorSet, knownFacts: knownFacts)
        for check in policy.chainPolicies where !check.check(context).isEmpty { return nil }
        return TrustEvaluation(chain: chain, findings: [], pathsTried: 1)
    }
}

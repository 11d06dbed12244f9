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
        /// What the check on the DER needs of `I`: its subject's DER, its subjectKeyIdentifier, its
        /// key and the key's type.
        var issuerSubjectDER: [UInt8]
        var issuerKeyID: [UInt8]?
        var issuerKey: EVPKeyReference?
        var issuerKeyType: Int32
        /// No other known certificate has `I`'s subject (else OpenSSL would have a choice of issuers).
        var issuerSubjectIsUnique: Bool
    }

    /// The peer name of the policy, as the check on the DER compares it: a DNS name in lower case
    /// (no trailing dot), an IP address's bytes, none, or one that only OpenSSL may judge.
    /// (A struct, not an enum with payloads: spare-bit tagging would hide the array's pointer from
    /// LeakSanitizer in a long-lived evaluator.)
    struct PeerName: Sendable {
        enum Kind: Sendable { case none, dns, ip, other }
        var kind: Kind
        var bytes: [UInt8] = []
    }
    let peerName: PeerName

    /// Counters, for tests and `mtls-bench`: how often the fast path accepted, and declined.
    private let counts = Locked<TrustEvaluator.FastPathStatistics>(TrustEvaluator.FastPathStatistics())
    /// Armed chains by `Int(bitPattern: X509*)` of `I`.
    private let armed = Locked<[Int: Armed]>([:])
    /// Accepted chains with intermediates of their own, by leaf (``TrustEvaluator/rememberedEvaluation``).
    struct Remembered: Sendable {
        var intermediates: [Certificate]
        var window: Range<Int>
        var evaluation: TrustEvaluation
    }
    private let remembered = Locked<[Certificate: Remembered]>([:])
    /// How many accepted chains are remembered at most (then the memory starts again).
    static let rememberedCapacity = 64

    func rememberedVerdict(leaf: Certificate, intermediates: [Certificate], at time: Int) -> TrustEvaluation? {
        let found = remembered.withLock { $0[leaf] }
        guard let found, found.window.contains(time), found.intermediates == intermediates else { return nil }
        counts.withLock { $0.rememberedVerdicts += 1 }
        return found.evaluation
    }

    func remember(_ evaluation: TrustEvaluation, leaf: Certificate, intermediates: [Certificate], window: Range<Int>) {
        remembered.withLock { entries in
            if entries.count >= TrustFastPath.rememberedCapacity { entries.removeAll(keepingCapacity: true) }
            entries[leaf] = Remembered(intermediates: intermediates, window: window, evaluation: evaluation)
        }
    }

    /// Where the differential mode writes (``TrustEvaluator/differentialLog``), or nil.
    let differentialLog: String?

    init(differentialLog: String?, policy: TrustPolicy) {
        self.differentialLog = differentialLog
        if policy.email != nil {
            peerName = PeerName(kind: .other)
        } else if let host = policy.hostname, !host.isEmpty {
            if let ip = IPAddress.parse(host) {
                peerName = PeerName(kind: .ip, bytes: ip)
            } else {
                let name = Array((host.hasSuffix(".") ? String(host.dropLast()) : host).utf8)
                // What `X509_check_host` compares byte for byte, ignoring ASCII case: no wildcard,
                // no control, nothing outside ASCII.
                let plain = !name.isEmpty && name.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x2A }
                peerName = plain ? PeerName(kind: .dns, bytes: name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }) : PeerName(kind: .other)
            }
        } else {
            peerName = PeerName(kind: .none)
        }
    }

    var statistics: TrustEvaluator.FastPathStatistics { counts.withLock { $0 } }

    func count(accepted: Bool, onDER: Bool = false) {
        counts.withLock {
            if accepted { $0.accepted += 1 } else { $0.declined += 1 }
            if onDER { $0.acceptedOnDER += 1 }
        }
    }

    /// A leaf whose issuer is an armed intermediate: the checks of OpenSSL and the policies ran.
    func countReached() { counts.withLock { $0.reachedChecks += 1 } }

    func armedChain(issuer: OpaquePointer) -> Armed? { armed.withLock { $0[Int(bitPattern: issuer)] } }

    /// The armed chain whose `I` has exactly `subject` (a Name's DER) as its subject.
    func armedChain(subject der: [UInt8], _ range: Range<Int>) -> Armed? {
        armed.withLock { chains in
            der.withUnsafeBufferPointer { buffer in
                chains.values.first { chain in
                    chain.issuerSubjectDER.count == range.count && memcmp(chain.issuerSubjectDER, buffer.baseAddress! + range.lowerBound, range.count) == 0
                }
            }
        }
    }

    /// Records `suffix` (the accepted chain without its leaf) for later leaves of `suffix[0]`;
    /// `known` are the evaluator's anchors and intermediates.
    func arm(_ suffix: [Certificate], known: [Certificate]) {
        guard let issuer = suffix.first else { return }
        let key = Int(bitPattern: issuer.reference.pointer)
        if armed.withLock({ $0[key] != nil }) { return }
        guard let store = X509StoreReference(anchors: [issuer], crls: []) else { return }
        let facts = CertificateFacts(issuer)
        let issuerKey = X509_get0_pubkey(issuer.reference.pointer)
        OpenSSLErrorQueue.clear()
        let issuerSubject = X509_get_subject_name(issuer.reference.pointer)
        let unique = !known.contains { $0 != issuer && X509_NAME_cmp(issuerSubject, X509_get_subject_name($0.reference.pointer)) == 0 }
        let armedChain = Armed(
            suffix: suffix, store: store, issuerSubjectDER: facts.subjectDER, issuerKeyID: facts.subjectKeyIdentifier,
            issuerKey: issuerKey.map { EVPKeyReference(borrowing: $0) }, issuerKeyType: issuerKey.map { EVP_PKEY_get_base_id($0) } ?? 0,
            issuerSubjectIsUnique: unique)
        armed.withLock { $0[key] = armedChain }
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
        /// Of the accepted leaves, those checked on their DER alone, never decoded by `d2i_X509`.
        public var acceptedOnDER = 0
        /// Chains with intermediates of their own (a server's) answered by an earlier acceptance of
        /// the same certificates, still within their validity.
        public var rememberedVerdicts = 0
        public init(accepted: Int = 0, declined: Int = 0, reachedChecks: Int = 0, acceptedOnDER: Int = 0, rememberedVerdicts: Int = 0) {
            self.accepted = accepted
            self.declined = declined
            self.reachedChecks = reachedChecks
            self.acceptedOnDER = acceptedOnDER
            self.rememberedVerdicts = rememberedVerdicts
        }
    }

    /// This evaluator's fast-path counters (zero when the policy never allows the fast path).
    public var fastPathStatistics: FastPathStatistics { fastPath?.statistics ?? FastPathStatistics() }

    /// True when a policy lets the fast path run at all (see `TrustFastPath`).
    static func allowsFastPath(_ policy: TrustPolicy, knownCount: Int) -> Bool {
        policy.crls.isEmpty && knownCount <= 16 && policy.hasDefaultPolicyInputs
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
        // A certificate still undecoded cannot be one of the evaluator's own (those are decoded).
        certificate.reference.decodedPointer.map { known[Int(bitPattern: $0)] != nil } == true || anchorSet.contains(certificate)
            || policy.intermediates.contains(certificate)
    }

    /// The fast path's verdict: a trusted evaluation, or nil to let the full path decide. A leaf
    /// still undecoded in the plain profile is checked on its DER first (`evaluationOnDER`); when
    /// that declines, on its `X509` by OpenSSL (`evaluationByOpenSSL`).
    func fastEvaluation(_ leaf: Certificate, fastPath: TrustFastPath) -> TrustEvaluation? {
        fastEvaluationWithRoute(leaf, fastPath: fastPath)?.evaluation
    }

    /// ``fastEvaluation(_:fastPath:)`` and whether the leaf was accepted on its DER.
    func fastEvaluationWithRoute(_ leaf: Certificate, fastPath: TrustFastPath) -> (evaluation: TrustEvaluation, onDER: Bool)? {
        if leaf.reference.decodedPointer == nil, let evaluation = evaluationOnDER(leaf, fastPath: fastPath) { return (evaluation, true) }
        return evaluationByOpenSSL(leaf, fastPath: fastPath).map { ($0, false) }
    }

    /// The leaf checked on its DER, as `X509_verify_cert` on `leaf → I` and the Swift policies would
    /// check it, without decoding it. Accepts only a leaf in ``CertificateLayout/PlainLeaf``'s
    /// profile that passes every check below; anything else is declined (nil), never rejected.
    /// What each line stands for in OpenSSL 3.0 (`x509_vfy.c`, `v3_purp.c`, `v3_utl.c`):
    ///
    /// - chain building: the leaf's issuer is byte for byte the subject of an armed `I`, whose
    ///   subject no other known certificate has; the leaf's subject is no known certificate's subject
    ///   (`X509_NAME_cmp`: not self-issued, not mistaken for an issuer); it is no known certificate;
    /// - `X509_check_issued`: the authorityKeyIdentifier's keyIdentifier is `I`'s
    ///   subjectKeyIdentifier; the signature algorithm is one of `I`'s key type;
    /// - the extensions decode (no `EXFLAG_INVALID`), none is an unhandled critical one, and the
    ///   X509_STRICT leaf checks hold: v3, non-empty subject and subjectAltName, equal signature
    ///   AlgorithmIdentifiers, an authorityKeyIdentifier with a keyIdentifier, the key identifiers
    ///   not critical, no keyCertSign, no path length;
    /// - the purpose (`check_purpose_ssl_server`/`_client`): serverAuth/clientAuth in an
    ///   extKeyUsage, digitalSignature, keyEncipherment or keyAgreement (client: digitalSignature or
    ///   keyAgreement) in a keyUsage;
    /// - the host (`X509_check_host` without wildcards, subject CN never) or IP address against
    ///   the subjectAltName; no e-mail check;
    /// - the time: notBefore ≤ t < notAfter for the leaf and every certificate above it;
    /// - key and signature strength: RSA ≥ 2048 bits or P-256/384/521 on the curve, SHA-256 or
    ///   better (above security level 2);
    /// - the signature, by `EVP_DigestVerify` with `I`'s key over the TBSCertificate;
    /// - then the same Swift policies on the same full chain.
    func evaluationOnDER(_ leaf: Certificate, fastPath: TrustFastPath) -> TrustEvaluation? {
        guard let layout = leaf.reference.layout, let plain = layout.plainLeaf, let entries = layout.subjectEntries, !entries.isEmpty,
            let armed = fastPath.armedChain(subject: leaf.derBytes, layout.issuer), armed.issuerSubjectIsUnique,
            let issuerKey = armed.issuerKey, armed.issuerKeyType == plain.signatureKeyType,
            let issuerKeyID = armed.issuerKeyID, let keyID = plain.authorityKeyID
        else { return nil }
        let der = leaf.derBytes
        guard der[keyID].elementsEqual(issuerKeyID), !isKnown(leaf) else { return nil }
        // Validity of the leaf and of every certificate above it.
        let seconds = (policy.evaluationTime ?? Date()).timeIntervalSince1970.rounded(.down)
        guard let now = Int(exactly: seconds), layout.notBefore <= now, now < layout.notAfter else { return nil }
        var when = time_t(now)
        for certificate in armed.suffix {
            guard let notBefore = X509_get0_notBefore(certificate.reference.pointer), let notAfter = X509_get0_notAfter(certificate.reference.pointer),
                X509_cmp_time(notBefore, &when) < 0, X509_cmp_time(notAfter, &when) > 0
            else { return nil }
        }
        // Purpose, and the X509_STRICT rules for a leaf.
        if let usage = plain.keyUsage {
            guard !usage.contains(.keyCertSign) else { return nil }
            switch policy.purpose {
            case .server: guard !usage.isDisjoint(with: [.digitalSignature, .keyEncipherment, .keyAgreement]) else { return nil }
            case .client: guard !usage.isDisjoint(with: [.digitalSignature, .keyAgreement]) else { return nil }
            case .any: break
            }
        }
        if let purposes = plain.extendedKeyUsage, policy.purpose != .any {
            let wanted: [UInt8] = [0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, policy.purpose == .server ? 0x01 : 0x02]
            guard purposes.contains(where: { der[$0].elementsEqual(wanted) }) else { return nil }
        }
        // The peer name.
        let host = fastPath.peerName.bytes
        switch fastPath.peerName.kind {
        case .none: break
        case .other: return nil
        case .dns:
            let matches = plain.dnsNames.contains { range in
                range.count == host.count && !der[range].contains(0x2A)
                    && zip(der[range], host).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
            }
            guard matches else { return nil }
        case .ip:
            guard plain.ipAddresses.contains(where: { der[$0].elementsEqual(host) }) else { return nil }
        }
        // The key OpenSSL would decode and find strong enough.
        if case .ec(let nid, let point) = plain.key, !CertificateLayout.validPoint(der, point, curveNID: nid) { return nil }
        // Chain building: the leaf's subject is no known certificate's subject (OpenSSL compares
        // canonical forms), so it is not self-issued and cannot stand for a certificate above it.
        guard
            let subjectName = der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress! + layout.subject.lowerBound
                return d2i_X509_NAME(nil, &cursor, layout.subject.count)
            })
        else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { X509_NAME_free(subjectName) }
        for certificate in allKnown where X509_NAME_cmp(subjectName, X509_get_subject_name(certificate.reference.pointer)) == 0 { return nil }
        fastPath.countReached()
        // The signature, with I's key.
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        let verified = der.withUnsafeBufferPointer { buffer -> Bool in
            let base = buffer.baseAddress!
            guard EVP_DigestVerifyInit_ex(context, nil, plain.signatureDigest, nil, nil, issuerKey.pointer, nil) == 1 else { return false }
            return EVP_DigestVerify(context, base + layout.signature.lowerBound, layout.signature.count, base + layout.tbs.lowerBound, layout.tbs.count) == 1
        }
        OpenSSLErrorQueue.clear()
        guard verified else { return nil }
        // The Swift policies on the full chain, exactly as the full path applies them.
        let chain = [leaf] + armed.suffix
        let chainContext = ChainContext(chain: chain, policy: policy, anchors: anchorSet, knownFacts: knownFacts)
        for check in policy.chainPolicies where !check.check(chainContext).isEmpty { return nil }
        return TrustEvaluation(chain: chain, findings: [], pathsTried: 1)
    }

    /// The leaf checked by `X509_verify_cert` against its armed issuer alone, then the Swift policies.
    func evaluationByOpenSSL(_ leaf: Certificate, fastPath: TrustFastPath) -> TrustEvaluation? {
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

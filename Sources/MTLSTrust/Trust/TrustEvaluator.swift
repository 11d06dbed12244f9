internal import COpenSSL
internal import COpenSSLShims
import Foundation

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
/// every failure is collected, and when the first path fails the other issuers are tried.
///
/// Build one evaluator and reuse it for many leaves: anchors, intermediates and CRLs are prepared once.
public struct TrustEvaluator: Sendable {
    /// The policy.
    public let policy: TrustPolicy
    private let anchors: [Certificate]
    private let store: X509StoreReference
    private let intermediateStack: X509StackReference

    /// Prepares an evaluator.
    ///
    /// - Throws: `.unreadableFile` when system roots are asked for and none can be found.
    public init(policy: TrustPolicy) throws(MTLSTrustError) {
        self.policy = policy
        var anchors = policy.anchors
        if policy.includesSystemRoots { anchors += try CertificateLoader.systemRoots() }
        self.anchors = anchors
        guard let store = X509StoreReference(anchors: anchors, crls: policy.crls),
            let stack = X509StackReference(policy.intermediates)
        else { throw MTLSTrustError(.internalFailure, "out of memory preparing the trust store") }
        self.store = store
        self.intermediateStack = stack
    }

    /// Evaluates `leaf`, with `extraIntermediates` added to the policy's intermediates.
    public func evaluate(_ leaf: Certificate, extraIntermediates: [Certificate] = []) -> TrustEvaluation {
        let untrusted: X509StackReference
        let pool: [Certificate]
        if extraIntermediates.isEmpty {
            untrusted = intermediateStack
            pool = policy.intermediates
        } else {
            pool = policy.intermediates + extraIntermediates
            guard let stack = X509StackReference(pool) else {
                return TrustEvaluation(chain: [leaf], findings: [VerifyErrorCatalog.finding(code: X509_V_ERR_OUT_OF_MEM, depth: 0, certificate: leaf, chain: [leaf], policy: policy)], pathsTried: 0)
            }
            untrusted = stack
        }
        let first = attempt(leaf: leaf, untrusted: untrusted, store: store)
        if first.findings.isEmpty || !policy.triesAlternativePaths {
            return TrustEvaluation(chain: first.chain, findings: first.findings, pathsTried: 1)
        }
        // OpenSSL 3.0 builds one path and does not backtrack. Enumerate the others and check each
        // fully with OpenSSL; any one that passes is a valid certification path.
        var best = first
        var tried = 1
        for path in candidatePaths(leaf: leaf, pool: pool) {
            guard let anchor = path.last else { continue }
            let middle = Array(path.dropFirst().dropLast())
            if path.count - 1 == first.chain.count - 1, path == first.chain { continue }
            guard let pathStore = X509StoreReference(anchors: [anchor], crls: policy.crls),
                let pathStack = X509StackReference(middle)
            else { break }
            let outcome = attempt(leaf: leaf, untrusted: pathStack, store: pathStore)
            tried += 1
            if outcome.findings.isEmpty {
                return TrustEvaluation(chain: outcome.chain, findings: [], pathsTried: tried)
            }
            if outcome.findings.count < best.findings.count && outcome.chain.count >= best.chain.count { best = outcome }
        }
        return TrustEvaluation(chain: best.chain, findings: best.findings, pathsTried: tried)
    }

    // MARK: One OpenSSL verification

    private struct Attempt {
        var chain: [Certificate]
        var findings: [TrustFinding]
    }

    /// Collects every error OpenSSL reports through the verify callback.
    private final class Collector: TrustCallbackSink {
        var errors: [(code: Int32, depth: Int32, certificate: OpaquePointer?)] = []
        func record(code: Int32, depth: Int32, certificate: OpaquePointer?) {
            if errors.count < 256 { errors.append((code, depth, certificate)) }
        }
    }

    private func attempt(leaf: Certificate, untrusted: X509StackReference, store: X509StoreReference) -> Attempt {
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
            configure(param, hostError: &hostError)
        }
        X509_STORE_CTX_set_ex_data(context, 0, Unmanaged.passUnretained(collector).toOpaque())
        X509_STORE_CTX_set_verify_cb(context, trustVerifyCallback)
        let result = withExtendedLifetime(collector) { X509_verify_cert(context) }
        var chain: [Certificate] = []
        if let built = X509_STORE_CTX_get0_chain(context) {
            for i in 0..<mtls_sk_X509_num(built) {
                if let certificate = mtls_sk_X509_value(built, i) { chain.append(Certificate(borrowing: certificate)) }
            }
        }
        if chain.isEmpty { chain = [leaf] }
        var findings: [TrustFinding] = []
        var seen = Set<String>()
        for error in collector.errors {
            let depth = Int(error.depth)
            let certificate: Certificate? =
                error.certificate.map { Certificate(borrowing: $0) } ?? (depth < chain.count ? chain[depth] : nil)
            let key = "\(depth)/\(error.code)"
            if seen.insert(key).inserted {
                findings.append(VerifyErrorCatalog.finding(code: error.code, depth: depth, certificate: certificate, chain: chain, policy: policy))
            }
        }
        if let hostError, seen.insert("0/\(hostError)").inserted {
            findings.append(VerifyErrorCatalog.finding(code: hostError, depth: 0, certificate: leaf, chain: chain, policy: policy))
        }
        if result != 1 && findings.isEmpty {
            let code = X509_STORE_CTX_get_error(context)
            findings.append(VerifyErrorCatalog.finding(code: code == X509_V_OK ? X509_V_ERR_UNSPECIFIED : code, depth: Int(X509_STORE_CTX_get_error_depth(context)), certificate: leaf, chain: chain, policy: policy))
        }
        ERR_clear_error()
        return Attempt(chain: chain, findings: findings)
    }

    private func configure(_ param: OpaquePointer, hostError: inout Int32?) {
        var flags = UInt(X509_V_FLAG_X509_STRICT)
        if policy.allowsPartialChain { flags |= UInt(X509_V_FLAG_PARTIAL_CHAIN) }
        if !policy.crls.isEmpty { flags |= UInt(X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL) }
        X509_VERIFY_PARAM_set_flags(param, flags)
        let time = policy.evaluationTime ?? Date()
        X509_VERIFY_PARAM_set_time(param, time_t(time.timeIntervalSince1970.rounded(.down)))
        if let depth = policy.maximumDepth { X509_VERIFY_PARAM_set_depth(param, Int32(depth)) }
        switch policy.purpose {
        case .server: _ = X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER)
        case .client: _ = X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_CLIENT)
        case .any: break
        }
        guard let host = policy.hostname, !host.isEmpty else { return }
        if let ip = IPAddress.parse(host) {
            _ = ip.withUnsafeBufferPointer { X509_VERIFY_PARAM_set1_ip(param, $0.baseAddress, $0.count) }
        } else {
            // SAN only, never the subject CN (as browsers, rustls and pyca); no partial wildcards.
            X509_VERIFY_PARAM_set_hostflags(param, UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
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
    private func candidatePaths(leaf: Certificate, pool: [Certificate]) -> [[Certificate]] {
        let maxLength = min((policy.maximumDepth ?? 8) + 2, 10)
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
            for candidate in pool where !path.contains(candidate) && !anchors.contains(candidate) && issued(candidate, top) {
                walk(path + [candidate])
            }
        }
        walk([leaf])
        return results.sorted { $0.count < $1.count }
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

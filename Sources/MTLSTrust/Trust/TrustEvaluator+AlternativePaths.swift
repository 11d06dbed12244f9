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
    // MARK: Alternative paths

    /// Paths from `leaf` to an anchor through `pool`, shortest first, bounded in number and work.
    func candidatePaths(leaf: Certificate, pool: [Certificate], selfIssued: Int) -> [[Certificate]] {
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

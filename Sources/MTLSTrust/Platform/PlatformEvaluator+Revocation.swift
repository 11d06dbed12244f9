internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Revocation as each platform checks it by default.
extension PlatformEvaluator {
    /// The revocation report of the chain (``TrustEvaluation/revocation``), applied as `platform`
    /// does by default (``PlatformRules/revocation``): a failure where the platform would refuse,
    /// a note where it would not look or would let an undeterminable status pass.
    static func revocation(_ input: PlatformInput, _ facts: [ChainCertificate], platform: Platform, notes: inout [String]) -> [PlatformFailure] {
        guard let report = input.evaluation.revocation else { return [] }
        let policy = PlatformRevocationPolicy.of(platform)
        let check = policy.check(input.anchorKind)
        let anchorWords = input.anchorKind == .publicRoot ? "under a publicly trusted root" : "under a private anchor"
        var failures: [PlatformFailure] = []
        var passed: [String] = []
        for entry in report.certificates where entry.status != .good && entry.depth < facts.count {
            let fact = facts[entry.depth]
            let what = "\(fact.name) (\(role(entry.depth, facts))) is \(statusWords(entry.status))" + (entry.decidedBy.map { " according to \($0)" } ?? "")
            let isRevoked = if case .revoked = entry.status { true } else { false }
            let refuses = check == .hardFail || (check == .softFail && isRevoked)
            if refuses, let rule = revocationRule(platform) {
                failures.append(
                    failure(
                        rule, fact, depth: entry.depth, "\(what); \(platform.displayName) refuses it \(anchorWords)",
                        fix: isRevoked
                            ? (entry.depth == 0
                                ? "the certificate must be replaced: request a new one from its CA"
                                : "the CA is at fault: its operator must issue a new CA certificate and reissue the certificates under it")
                            : "make the CRL distribution point and OCSP URLs reachable"))
            } else {
                passed.append(what)
            }
        }
        let how =
            "\(platform.displayName) \(check == .none ? "does not check revocation \(anchorWords)" : "checks revocation \(anchorWords) \(check.rawValue)"): it \(policy.summary)"
        if passed.isEmpty {
            notes.append("revocation: \(how)" + (report.certificates.allSatisfy { $0.status == .good } ? "; every certificate below the anchor is good" : ""))
        } else {
            notes.append("revocation: \(passed.joined(separator: "; ")), yet \(platform.displayName) accepts it: \(how) (\(policy.enable))")
        }
        return failures
    }

    /// The rule a platform's revocation refusal is reported under (nil: it never refuses by default).
    static func revocationRule(_ platform: Platform) -> PlatformRule? {
        platform == .apple ? PlatformRules.appleRevoked : nil
    }

    static func statusWords(_ status: RevocationStatus) -> String {
        switch status {
        case .good: "good"
        case .revoked(let reason, let date): "revoked" + (reason.map { " (\($0))" } ?? "") + (date.map { " on \(RFC3339.string($0))" } ?? "")
        case .unknown: "unknown to its OCSP responder"
        case .cannotCheck(let why): "of undeterminable status (\(why))"
        case .invalidData(let why): "of undeterminable status: its revocation data cannot be relied on (\(why))"
        }
    }
}

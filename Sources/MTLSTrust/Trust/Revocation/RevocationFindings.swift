internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TrustEvaluator {
    /// Fetches and judges the revocation status of each certificate below the anchor, and adds
    /// the findings the mode makes failures: a revoked certificate always; under
    /// ``RevocationMode/hard`` also a status that cannot be determined.
    func checkRevocation(_ evaluation: inout TrustEvaluation) {
        let checker = RevocationChecker(
            mode: policy.revocation, fetcher: policy.revocationFetcher, localCRLs: policy.crls, timeoutPerURL: policy.revocationTimeouts.perURL,
            totalTimeout: policy.revocationTimeouts.total)
        let report = checker.check(evaluation.chain, at: policy.evaluationTime ?? Date())
        evaluation.revocation = report
        let existing = Set(evaluation.findings.map { "\($0.depth)/\($0.code)" })
        for entry in report.certificates {
            guard let finding = RevocationFindings.finding(entry, chain: evaluation.chain, mode: policy.revocation),
                !existing.contains("\(finding.depth)/\(finding.code)")
            else { continue }
            evaluation.findings.append(finding)
        }
    }
}

enum RevocationFindings {
    static func finding(_ entry: CertificateRevocation, chain: [Certificate], mode: RevocationMode) -> TrustFinding? {
        let depth = entry.depth
        let label = chain[depth].displayName
        let source = entry.decidedBy.map { " according to \($0)" } ?? ""
        func make(_ code: Int32, _ reason: String, _ hint: Hint) -> TrustFinding {
            TrustFinding(depth: depth, subject: entry.subject, code: code, name: VerifyErrorCatalog.name(code), reason: reason, hint: hint)
        }
        switch entry.status {
        case .good:
            return nil
        case .revoked(let why, let date):
            let what = (why.map { " (\($0))" } ?? "") + (date.map { " on \(RFC3339.string($0))" } ?? "")
            if depth == 0 {
                return make(X509_V_ERR_CERT_REVOKED, "\(label) was revoked\(what)\(source)", "the certificate must be replaced: request a new one from its CA")
            }
            return make(
                X509_V_ERR_CERT_REVOKED,
                "the issuing CA \(label) was revoked\(what)\(source): nothing it issued is trusted, \(chain[0].displayName) included",
                "the CA is at fault, not the leaf: its operator must issue a new CA certificate and reissue the certificates under it")
        case .unknown:
            guard mode == .hard else { return nil }
            return make(
                X509_V_ERR_OCSP_CERT_UNKNOWN, "the OCSP responder does not know \(label)\(source) (status unknown)",
                "the responder serves another CA or has not been told of this certificate; IIS refuses it (403.13), or check with \(setting: .revocation) soft")
        case .cannotCheck(let why):
            guard mode == .hard else { return nil }
            let stale = why.contains("stale")
            return make(
                stale ? X509_V_ERR_CRL_HAS_EXPIRED : X509_V_ERR_UNABLE_TO_GET_CRL, "the revocation status of \(label) cannot be determined: \(why)",
                stale
                    ? "the CA must publish a fresh CRL (IIS refuses the certificate until it does), or check with \(setting: .revocation) soft"
                    : "make the CRL distribution point and OCSP URLs reachable from this host (IIS must reach them too), or check with \(setting: .revocation) soft")
        case .invalidData(let why):
            guard mode == .hard else { return nil }
            return make(
                why.contains("CRL") ? X509_V_ERR_CRL_SIGNATURE_FAILURE : X509_V_ERR_OCSP_VERIFY_FAILED,
                "the revocation data for \(label) cannot be relied on: \(why)",
                "the CA's CRL or OCSP signer is misconfigured: the CA must sign its CRLs itself (or name another CRL issuer as cRLIssuer in the certificate's distribution point) and delegate OCSP only to a certificate it issued with id-kp-OCSPSigning"
            )
        }
    }
}

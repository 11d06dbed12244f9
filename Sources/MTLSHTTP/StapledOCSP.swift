internal import COpenSSLShims
import MTLSTrust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TLSConnection {
    /// Reads and judges the OCSP response the server stapled (RFC 6066 status_request, asked for in
    /// every client handshake) for the leaf of the trusted chain, and records it in the report.
    ///
    /// A stapled `revoked`, properly signed by the issuer or its delegated responder, fails trust as
    /// a revoked certificate does (a finding on the evaluation; the connection is refused unless
    /// `continuing`, `--insecure`). Any other answer is shown, not enforced: browsers treat a
    /// stapled `unknown` or a bad staple as no staple.
    func judgeStapledOCSP(continuing: Bool) -> HTTPSError? {
        guard !state.isServer else { return nil }
        var pointer: UnsafePointer<UInt8>?
        let length = mtls_SSL_get_ocsp_response(ssl, &pointer)
        guard length > 0, length <= 1 << 20, let pointer else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: pointer, count: length))
        let chain = state.report.trust?.chain ?? state.report.peerChainAsSent
        guard chain.count >= 2 else {
            state.report.stapledOCSP = RevocationAttempt(
                kind: "stapled OCSP", method: "-", url: "(stapled)", bytes: bytes.count, outcome: "not judged: the leaf's issuer is not known")
            return nil
        }
        let time = state.clientConfiguration?.trust.evaluationTime ?? Date()
        let attempt = RevocationChecker.judgeOCSP(bytes, certificate: chain[0], issuer: chain[1], at: time, kind: "stapled OCSP", url: "(stapled)")
        state.report.stapledOCSP = attempt
        guard case .revoked = attempt.status else { return nil }
        let entry = CertificateRevocation(
            depth: 0, subject: chain[0].subject, status: attempt.status ?? .unknown, decidedBy: "the OCSP response the server stapled", attempts: [attempt])
        guard let finding = RevocationChecker.finding(entry, chain: chain, mode: .soft) else { return nil }
        state.report.trust?.findings.append(finding)
        if continuing {
            state.report.overriddenProblems.append(finding.reason)
            return nil
        }
        return HTTPSError(
            .serverCertificate, host: label, "the server's certificate is not trusted: \(finding.reason) (\(finding.name))", hint: finding.hint, trust: state.report.trust)
    }
}

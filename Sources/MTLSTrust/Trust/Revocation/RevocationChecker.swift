#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Checks the revocation status of each certificate of a built chain below its anchor, as
/// `certutil -verify -urlfetch` does: every CRL distribution point, delta CRL and OCSP responder,
/// URL by URL, within a per-URL and a total deadline.
public struct RevocationChecker: Sendable {
    /// The mode (``RevocationMode/off`` checks only the caller's CRLs).
    public var mode: RevocationMode
    /// The network; nil checks the caller's CRLs only.
    public var fetcher: (any RevocationFetching)?
    /// CRLs the caller has (`--crl`), combined with the fetched ones.
    public var localCRLs: [CertificateRevocationList]
    /// Seconds per URL.
    public var timeoutPerURL: Double
    /// Seconds for the whole chain.
    public var totalTimeout: Double

    /// Creates a checker.
    public init(
        mode: RevocationMode, fetcher: (any RevocationFetching)?, localCRLs: [CertificateRevocationList] = [], timeoutPerURL: Double = 3,
        totalTimeout: Double = 15
    ) {
        self.mode = mode
        self.fetcher = fetcher
        self.localCRLs = localCRLs
        self.timeoutPerURL = timeoutPerURL
        self.totalTimeout = totalTimeout
    }

    /// Checks `chain` (leaf first, the anchor last) at `time`. The anchor itself is not checked.
    public func check(_ chain: [Certificate], at time: Date) -> RevocationReport {
        let start = Date()
        let deadline = start.addingTimeInterval(totalTimeout)
        var entries: [CertificateRevocation] = []
        if chain.count > 1 {
            for depth in 0..<(chain.count - 1) {
                entries.append(checkOne(chain[depth], issuer: chain[depth + 1], above: Array(chain[(depth + 1)...]), depth: depth, at: time, deadline: deadline))
            }
        }
        return RevocationReport(mode: mode, certificates: entries, seconds: Date().timeIntervalSince(start))
    }

    /// Judges an OCSP response (a stapled one, or one fetched elsewhere) for `certificate` issued by
    /// `issuer` at `time`: signer authorisation (RFC 6960 4.2.2.2), times and status.
    public static func judgeOCSP(_ bytes: [UInt8], certificate: Certificate, issuer: Certificate, at time: Date, kind: String = "OCSP", url: String = "-")
        -> RevocationAttempt
    {
        let verdict = RevocationData.judge(ocsp: bytes, certificate: certificate, issuer: issuer, at: time)
        return RevocationAttempt(
            kind: kind, method: "-", url: url, bytes: bytes.count, thisUpdate: verdict.thisUpdate, nextUpdate: verdict.nextUpdate, producedAt: verdict.producedAt,
            responderStatus: verdict.responderStatus, outcome: verdict.outcome, status: verdict.status)
    }

    /// The trust finding `entry` makes under `mode` (nil when it passes): revoked always; under
    /// ``RevocationMode/hard`` also unknown, offline and invalid data. A revoked CA is blamed as the CA.
    public static func finding(_ entry: CertificateRevocation, chain: [Certificate], mode: RevocationMode) -> TrustFinding? {
        RevocationFindings.finding(entry, chain: chain, mode: mode)
    }

    private func fetch(_ request: RevocationRequest, deadline: Date) -> RevocationResponse {
        let remaining = deadline.timeIntervalSinceNow
        guard let fetcher else { return RevocationResponse(status: nil, failure: "no fetcher is configured") }
        guard remaining > 0.05 else {
            return RevocationResponse(status: nil, failure: "not tried: the total revocation deadline of \(Int(totalTimeout)) s was spent")
        }
        return fetcher.fetch(request, timeout: min(timeoutPerURL, remaining))
    }

    private struct Source {
        var status: RevocationStatus
        var freshness: Date
        var label: String
    }

    /// `allowsIndirect` is false while checking an indirect CRL's own issuer, so that a CRL
    /// issuer whose status an indirect CRL would give cannot vouch for itself (RFC 5280 6.3.3 (f)).
    private func checkOne(
        _ certificate: Certificate, issuer: Certificate, above: [Certificate], depth: Int, at time: Date, deadline: Date, allowsIndirect: Bool = true
    ) -> CertificateRevocation {
        let locations = RevocationLocations(certificate)
        var attempts: [RevocationAttempt] = []
        var sources: [Source] = []
        var problems: [RevocationStatus] = []

        // Local CRLs of this issuer.
        for crl in localCRLs where crl.issuer == issuer.subject {
            let verdict = RevocationData.judge(crl: crl, certificate: certificate, issuer: issuer, at: time)
            attempts.append(
                RevocationAttempt(
                    kind: verdict.isDelta ? "local delta CRL" : "local CRL", method: "-", url: "issuer \(crl.issuer)", bytes: crl.derBytes.count,
                    thisUpdate: verdict.thisUpdate, nextUpdate: verdict.nextUpdate, outcome: verdict.outcome, status: verdict.status))
            record(verdict.status, freshness: verdict.thisUpdate, label: "local CRL", into: &sources, problems: &problems)
        }

        if mode != .off {
            // Base CRLs: the distribution points in order, until one gives a usable CRL.
            var base: CRLVerdict?
            for url in locations.crls where base == nil {
                // An indirect CRL's issuer certificate is fetched after the CRL: listed after it.
                var issuerFetches: [RevocationAttempt] = []
                let (attempt, verdict) = crlAttempt(
                    url, kind: "CRL", certificate: certificate, issuer: issuer, at: time, deadline: deadline,
                    indirect: allowsIndirect ? (locations.crlIssuers[url] ?? [], above, { issuerFetches.append($0) }) : nil)
                attempts.append(attempt)
                attempts += issuerFetches
                if let verdict {
                    if verdict.isDelta {
                        problems.append(.invalidData("\(url) serves a delta CRL where a complete CRL is expected"))
                        continue
                    }
                    record(verdict.status, freshness: verdict.thisUpdate, label: "CRL \(url)", into: &sources, problems: &problems)
                    if case .good = verdict.status { base = verdict } else if case .revoked = verdict.status { base = verdict }
                } else if let failure = attempt.status {
                    problems.append(failure)
                }
            }
            // Delta CRLs (freshestCRL), judged against the base CRL they extend.
            if let base {
                for url in locations.deltaCRLs {
                    let (attempt, verdict) = crlAttempt(url, kind: "delta CRL", certificate: certificate, issuer: issuer, at: time, deadline: deadline)
                    attempts.append(attempt)
                    guard let verdict else {
                        if let failure = attempt.status { problems.append(failure) }
                        continue
                    }
                    if !verdict.isDelta {
                        record(verdict.status, freshness: verdict.thisUpdate, label: "CRL \(url)", into: &sources, problems: &problems)
                    } else if let baseNumber = verdict.baseNumber, let number = base.number, baseNumber > number {
                        problems.append(.invalidData("the delta CRL at \(url) extends CRL number \(baseNumber), newer than the base CRL (number \(number))"))
                    } else {
                        record(verdict.status, freshness: verdict.thisUpdate, label: "delta CRL \(url)", into: &sources, problems: &problems)
                    }
                    break
                }
            }
            // OCSP: GET first (as Windows asks, cacheable), POST when GET gives no usable answer.
            if let request = RevocationData.ocspRequest(certificate: certificate, issuer: issuer) {
                responders: for url in locations.ocsp {
                    for method in ["GET", "POST"] {
                        let fetched =
                            method == "GET"
                            ? RevocationRequest(method: "GET", url: RevocationData.ocspGetURL(url, request: request))
                            : RevocationRequest(method: "POST", url: url, body: request, contentType: "application/ocsp-request")
                        let response = fetch(fetched, deadline: deadline)
                        var attempt = RevocationAttempt(
                            kind: "OCSP", method: method, url: url, httpStatus: response.status, bytes: response.body.count, seconds: response.seconds,
                            cached: response.cached, outcome: "")
                        if let failure = response.failure {
                            attempt.outcome = "offline: \(failure)"
                            attempt.status = .cannotCheck("\(url): \(failure)")
                            attempts.append(attempt)
                            problems.append(attempt.status!)
                            if failure.contains("refused") || failure.contains("timed out") || failure.contains("deadline") { continue responders }
                            continue
                        }
                        guard response.status == 200 else {
                            attempt.outcome = "HTTP \(response.status ?? 0), not 200"
                            attempt.status = .cannotCheck("\(url) answered HTTP \(response.status ?? 0)")
                            attempts.append(attempt)
                            problems.append(attempt.status!)
                            continue
                        }
                        let verdict = RevocationData.judge(ocsp: response.body, certificate: certificate, issuer: issuer, at: time)
                        attempt.thisUpdate = verdict.thisUpdate
                        attempt.nextUpdate = verdict.nextUpdate
                        attempt.producedAt = verdict.producedAt
                        attempt.responderStatus = verdict.responderStatus
                        attempt.outcome = verdict.outcome
                        attempt.status = verdict.status ?? .cannotCheck("\(url): \(verdict.outcome)")
                        attempts.append(attempt)
                        record(attempt.status!, freshness: verdict.thisUpdate ?? verdict.producedAt, label: "OCSP \(url)", into: &sources, problems: &problems)
                        if verdict.status != nil { break responders }
                    }
                }
            }
        }

        let status: RevocationStatus
        var decidedBy: String?
        // A fresher source wins; a revocation is final unless a fresher source says good after a hold.
        let decisive = sources.sorted { $0.freshness > $1.freshness }
        if let revoked = decisive.first(where: { if case .revoked = $0.status { true } else { false } }) {
            let fresherGood = decisive.first { $0.status == .good && $0.freshness > revoked.freshness }
            if case .revoked(let reason, _) = revoked.status, reason == "certificateHold", let fresherGood {
                status = .good
                decidedBy = fresherGood.label
            } else {
                status = revoked.status
                decidedBy = revoked.label
            }
        } else if let good = decisive.first(where: { $0.status == .good }) {
            status = .good
            decidedBy = good.label
        } else if let unknown = decisive.first(where: { $0.status == .unknown }) {
            status = .unknown
            decidedBy = unknown.label
        } else if let invalid = problems.first(where: { if case .invalidData = $0 { true } else { false } }) {
            status = invalid
        } else if mode == .off {
            status = .cannotCheck("no CRL of \(issuer.displayName) was given")
        } else if locations.isEmpty {
            status = .cannotCheck("the certificate names no CRL distribution point and no OCSP responder: it has no revocation information")
        } else if locations.crls.isEmpty && locations.ocsp.isEmpty {
            status = .cannotCheck("its revocation information is not on http:// (\(locations.otherSchemes.joined(separator: ", "))), which is not fetched")
        } else if let first = problems.first {
            status = first
        } else {
            status = .cannotCheck("no source answered")
        }
        return CertificateRevocation(depth: depth, subject: certificate.subject, status: status, decidedBy: decidedBy, attempts: attempts)
    }

    private func record(_ status: RevocationStatus, freshness: Date?, label: String, into sources: inout [Source], problems: inout [RevocationStatus]) {
        switch status {
        case .good, .revoked, .unknown: sources.append(Source(status: status, freshness: freshness ?? .distantPast, label: label))
        case .cannotCheck, .invalidData: problems.append(status)
        }
    }

    /// An indirect CRL (RFC 5280 5.2.5, 6.3.3): a CRL whose issuer is not the certificate's issuer
    /// counts only when it says it is indirect (issuingDistributionPoint indirectCRL), the
    /// distribution point it came from names its issuer as cRLIssuer, and the CRL issuer's
    /// certificate — one of the chain, or fetched from the CRL's authorityInfoAccess caIssuers —
    /// verifies the CRL and was issued, valid and with cRLSign, by a certificate of the same chain
    /// above the certificate (so by the same anchor). Entries count for the certificate only when
    /// their certificateIssuer (5.3.3) is its issuer.
    private func judgeIndirect(
        _ crl: CertificateRevocationList, url: String, allCRLURLs: [String], certificate: Certificate, issuer: Certificate, at time: Date, deadline: Date,
        indirect: (names: [[UInt8]], above: [Certificate], log: (RevocationAttempt) -> Void)
    ) -> CRLVerdict {
        func invalid(_ message: String) -> CRLVerdict {
            CRLVerdict(
                status: .invalidData(message), thisUpdate: nil, nextUpdate: nil, isDelta: false, number: nil, baseNumber: nil, outcome: message)
        }
        guard crl.scope?.indirect == true else {
            return invalid(
                "the CRL is issued by \(crl.issuer), not by the certificate's issuer \(issuer.subject), and is not an indirect CRL (no indirectCRL in its issuingDistributionPoint)"
            )
        }
        guard RevocationData.names(indirect.names, contain: crl) else {
            return invalid(
                "the indirect CRL is issued by \(crl.issuer), which the certificate's distribution point \(url) does not name as its cRLIssuer: not authorised for \(issuer.displayName) (RFC 5280 6.3.3 (b))"
            )
        }
        // The CRL must cover the distribution point it was fetched from (6.3.3 (b)(2)(i)).
        if let scope = crl.scope, !scope.coversAny(of: allCRLURLs) {
            return invalid(
                "the indirect CRL at \(url) covers another distribution point (its issuingDistributionPoint names \(scope.distributionPoints.joined(separator: ", "))), not this certificate's"
            )
        }
        var candidates = indirect.above + [issuer]
        // The CRL issuer's certificate from the CRL's caIssuers only when the chain does not hold it.
        let inChain = candidates.contains { RevocationData.sameName(crl, $0) && RevocationData.verifies(crl, with: $0) }
        for location in inChain ? [] : RevocationData.caIssuersURLs(crl) {
            let response = fetch(RevocationRequest(url: location), deadline: deadline)
            var attempt = RevocationAttempt(
                kind: "CRL issuer", method: "GET", url: location, httpStatus: response.status, bytes: response.body.count, seconds: response.seconds,
                cached: response.cached, outcome: response.failure.map { "offline: \($0)" } ?? "")
            if response.failure == nil, response.status == 200, let fetched = try? CertificateLoader.certificates(from: response.body, source: location).certificates {
                candidates += fetched
                attempt.outcome = "certificate \(fetched.map(\.displayName).joined(separator: ", "))"
            } else if response.failure == nil {
                attempt.outcome = "HTTP \(response.status ?? 0): no certificate"
            }
            indirect.log(attempt)
        }
        guard let signer = candidates.first(where: { RevocationData.sameName(crl, $0) && RevocationData.verifies(crl, with: $0) }) else {
            return invalid(
                "the certificate of the indirect CRL's issuer \(crl.issuer) was not found (neither in the chain nor at the CRL's caIssuers URL), so the CRL cannot be verified")
        }
        guard indirect.above.contains(where: { RevocationData.issued(signer, by: $0) }) else {
            return invalid(
                "the indirect CRL's issuer \(signer.displayName) was not issued by a CA of \(certificate.displayName)'s chain: it does not chain to the same anchor (RFC 5280 6.3.3 (f))"
            )
        }
        guard signer.isValid(at: time) else {
            return invalid("the indirect CRL's issuer \(signer.displayName) is not valid at the evaluation time")
        }
        // The CRL issuer's own certificate is checked as any certificate of a path is (6.3.3 (f)),
        // its attempts listed with this certificate's; only a good status lets its CRL count.
        if let position = indirect.above.firstIndex(where: { RevocationData.issued(signer, by: $0) }), signer.derBytes != issuer.derBytes,
            !indirect.above.contains(where: { $0.derBytes == signer.derBytes })
        {
            let own = checkOne(
                signer, issuer: indirect.above[position], above: Array(indirect.above[position...]), depth: 0, at: time, deadline: deadline,
                allowsIndirect: false)
            for var attempt in own.attempts {
                attempt.kind = "CRL issuer's \(attempt.kind)"
                indirect.log(attempt)
            }
            switch own.status {
            case .good:
                break
            case .revoked:
                return invalid("the indirect CRL's issuer \(signer.displayName) is itself \(own.status.name)\(own.decidedBy.map { " according to \($0)" } ?? "")")
            case .unknown, .cannotCheck, .invalidData:
                if mode == .hard {
                    let message = "the revocation status of the indirect CRL's issuer \(signer.displayName) cannot be determined (\(own.status.name))"
                    return CRLVerdict(
                        status: .cannotCheck(message), thisUpdate: nil, nextUpdate: nil, isDelta: false, number: nil, baseNumber: nil, outcome: message)
                }
            }
        }
        return RevocationData.judge(crl: crl, certificate: certificate, issuer: issuer, at: time, signer: signer)
    }

    /// Downloads and judges one CRL; the verdict is nil when nothing usable came.
    private func crlAttempt(
        _ url: String, kind: String, certificate: Certificate, issuer: Certificate, at time: Date, deadline: Date,
        indirect: (names: [[UInt8]], above: [Certificate], log: (RevocationAttempt) -> Void)? = nil
    ) -> (RevocationAttempt, CRLVerdict?) {
        let response = fetch(RevocationRequest(url: url), deadline: deadline)
        var attempt = RevocationAttempt(
            kind: kind, method: "GET", url: url, httpStatus: response.status, bytes: response.body.count, seconds: response.seconds, cached: response.cached,
            outcome: "")
        if let failure = response.failure {
            attempt.outcome = "offline: \(failure)"
            attempt.status = .cannotCheck("\(url): \(failure)")
            return (attempt, nil)
        }
        guard response.status == 200 else {
            attempt.outcome = "HTTP \(response.status ?? 0), not 200"
            attempt.status = .cannotCheck("\(url) answered HTTP \(response.status ?? 0)")
            return (attempt, nil)
        }
        let crl: CertificateRevocationList
        do throws(MTLSTrustError) {
            crl = try CertificateRevocationList.load(response.body)[0]
        } catch {
            attempt.outcome = "not a CRL: \(error.message)"
            attempt.status = .invalidData("\(url) answered \(response.body.count) bytes that are not a CRL (\(error.message))")
            return (attempt, nil)
        }
        var verdict: CRLVerdict
        let locations = RevocationLocations(certificate)
        if let indirect, !RevocationData.sameName(crl, issuer) {
            verdict = judgeIndirect(crl, url: url, allCRLURLs: locations.crls, certificate: certificate, issuer: issuer, at: time, deadline: deadline, indirect: indirect)
        } else {
            verdict = RevocationData.judge(crl: crl, certificate: certificate, issuer: issuer, at: time, distributionPoints: locations.crls + locations.deltaCRLs + [url])
        }
        attempt.thisUpdate = verdict.thisUpdate
        attempt.nextUpdate = verdict.nextUpdate
        attempt.outcome = verdict.outcome
        attempt.status = verdict.status
        return (attempt, verdict)
    }
}

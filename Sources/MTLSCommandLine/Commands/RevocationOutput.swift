#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// `--revocation hard|soft`: fetch each certificate's CRLs, delta CRLs and OCSP answers, and show
/// them URL by URL as `certutil -verify -urlfetch` does (shared by `verify` and `probe`).
enum RevocationOutput {
    static let option = OptionSpec(
        .revocation, valueName: "MODE",
        help:
            "Fetch CRLs, delta CRLs and OCSP for every certificate below the anchor (plain http, 3 s per URL, 15 s in all) and list each URL: hard fails when a status cannot be determined (as IIS), soft only on revoked (as browsers).",
        kind: .choice(["hard", "soft"])
    ).withImplicitValue("hard")

    static func apply(_ arguments: ParsedArguments, to policy: inout TrustPolicy, command: String) throws(CommandFailure) {
        guard let text = arguments.value(.revocation) else { return }
        switch text.lowercased() {
        case "hard": policy.revocation = .hard
        case "soft": policy.revocation = .soft
        default: throw CommandFailure.usage("--revocation '\(text)' must be hard (as IIS checks a client certificate) or soft (as browsers)", command: command)
        }
        // One fetcher, and so one cache, per command run.
        policy.revocationFetcher = RevocationFetch()
    }

    /// The revocation of the client certificate sent in `report`'s handshake, checked as the server
    /// will check it (nil without `--revocation`, or when none was sent). The chain is the one sent
    /// (the identity's), completed from caIssuers URLs (up to three levels, until a self-issued
    /// root) through the run's revocation fetcher, so that its cache serves the CA certificates as
    /// it serves the CRLs: a fleet of probes fetches each once. Each caIssuers fetch is listed
    /// among the attempts of the certificate whose issuer it fetched.
    static func checkSentIdentity(_ report: TLSSessionReport?, configuration: TLSClientConfiguration) -> (report: RevocationReport, chain: [Certificate])? {
        let policy = configuration.trust
        guard policy.revocation != .off, let sent = report?.certificateRequests.compactMap(\.sentCertificate).last else { return nil }
        var chain = [sent] + (configuration.identities.first { $0.certificate == sent }?.chain ?? []).filter { $0 != sent }
        var fetches: [Int: RevocationAttempt] = [:]
        while fetches.count < 3, chain.count < 8, let last = chain.last, last.issuer != last.subject {
            // An anchor we were given that issued it needs no fetch.
            if let anchor = policy.anchors.first(where: { $0.subject == last.issuer }) {
                chain.append(anchor)
                continue
            }
            guard let url = last.caIssuersURLs.first, let fetcher = policy.revocationFetcher else { break }
            let (attempt, issuer) = fetchIssuer(url, of: last, fetcher: fetcher, timeout: policy.revocationTimeouts.perURL)
            fetches[chain.count - 1] = attempt
            guard let issuer else { break }
            chain.append(issuer)
        }
        let checker = RevocationChecker(
            mode: policy.revocation, fetcher: policy.revocationFetcher, localCRLs: policy.crls, timeoutPerURL: policy.revocationTimeouts.perURL,
            totalTimeout: policy.revocationTimeouts.total)
        var checked = checker.check(chain, at: policy.evaluationTime ?? Date())
        for (depth, attempt) in fetches {
            if let index = checked.certificates.firstIndex(where: { $0.depth == depth }) {
                checked.certificates[index].attempts.insert(attempt, at: 0)
            } else {
                // The last certificate: its issuer could not be fetched, so it could not be checked.
                checked.certificates.append(
                    CertificateRevocation(
                        depth: depth, subject: chain[depth].subject,
                        status: .cannotCheck("its issuer could not be fetched from \(attempt.url) (\(attempt.outcome)), so its status cannot be checked"),
                        decidedBy: nil, attempts: [attempt]))
            }
        }
        return (checked, chain)
    }

    /// One caIssuers GET through the revocation fetcher (its cache, its bounds), as an attempt.
    static func fetchIssuer(_ url: String, of certificate: Certificate, fetcher: any RevocationFetching, timeout: Double) -> (RevocationAttempt, Certificate?) {
        let response = fetcher.fetch(RevocationRequest(url: url), timeout: timeout)
        var attempt = RevocationAttempt(
            kind: "CA issuers", method: "GET", url: url, httpStatus: response.status, bytes: response.body.count, seconds: response.seconds,
            cached: response.cached, outcome: "")
        if let failure = response.failure {
            attempt.outcome = "offline: \(failure)"
            return (attempt, nil)
        }
        guard response.status == 200 else {
            attempt.outcome = "HTTP \(response.status ?? 0), not 200"
            return (attempt, nil)
        }
        let certificates: [Certificate]
        do throws(MTLSTrustError) {
            certificates = try CertificateLoader.certificates(from: response.body, source: url).certificates
        } catch {
            attempt.outcome = "not a certificate: \(error.message)"
            return (attempt, nil)
        }
        guard let issuer = certificates.first(where: { $0.subject == certificate.issuer }) else {
            attempt.outcome = "served \(certificates.map(\.displayName).joined(separator: ", ")), not the issuer of \(certificate.displayName)"
            return (attempt, nil)
        }
        attempt.outcome = "issuer \(issuer.displayName)"
        return (attempt, issuer)
    }

    /// The first certificate whose status is not good, in words; nil when all are good.
    static func problem(_ report: RevocationReport) -> String? {
        guard let entry = report.certificates.first(where: { $0.status != .good }) else {
            return report.certificates.isEmpty ? "its issuer is unknown, so it could not be checked" : nil
        }
        let who = entry.depth == 0 ? "the certificate" : "its issuing CA \(entry.subject)"
        return "\(who) is \(statusText(entry.status))" + (entry.decidedBy.map { " (by \($0))" } ?? "")
    }

    static func modeText(_ mode: RevocationMode) -> String {
        switch mode {
        case .hard: "hard-fail, as IIS checks a client certificate (CertCheckMode 0): a status that cannot be determined fails"
        case .soft: "soft-fail, as browsers: only a revoked certificate fails"
        case .off: "local CRLs only"
        }
    }

    static func statusText(_ status: RevocationStatus) -> String {
        switch status {
        case .good: "good"
        case .revoked(let reason, let date): "REVOKED" + (reason.map { " (\($0))" } ?? "") + (date.map { " on \(Timestamp.rfc3339($0))" } ?? "")
        case .unknown: "unknown to the OCSP responder"
        case .cannotCheck(let why): "cannot be checked: \(why)"
        case .invalidData(let why): "invalid revocation data: \(why)"
        }
    }

    static func attemptLine(_ attempt: RevocationAttempt) -> String {
        var facts: [String] = []
        if let status = attempt.httpStatus { facts.append("HTTP \(status)") }
        if attempt.httpStatus != nil || attempt.bytes > 0 { facts.append("\(attempt.bytes) bytes") }
        if attempt.cached { facts.append("cached") } else if attempt.seconds > 0 { facts.append("\(Int((attempt.seconds * 1000).rounded())) ms") }
        if let responder = attempt.responderStatus { facts.append("responder \(responder)") }
        if let produced = attempt.producedAt { facts.append("producedAt \(Timestamp.rfc3339(produced))") }
        if let this = attempt.thisUpdate { facts.append("thisUpdate \(Timestamp.rfc3339(this))") }
        if let next = attempt.nextUpdate { facts.append("nextUpdate \(Timestamp.rfc3339(next))") }
        let method = attempt.method == "-" ? "" : attempt.method + " "
        return "\(attempt.kind) \(method)\(attempt.url)" + (facts.isEmpty ? "" : " [\(facts.joined(separator: ", "))]") + ": \(attempt.outcome)"
    }

    static func print(_ report: RevocationReport, chain: [Certificate], console: Console, verbose: Bool, heading: String? = nil) {
        console.out(heading ?? "Revocation (\(modeText(report.mode))):")
        for entry in report.certificates {
            let mark: String
            switch entry.status {
            case .good: mark = console.paint("✓", .green)
            case .revoked: mark = console.paint("✗", .red)
            default: mark = report.mode == .hard ? console.paint("✗", .red) : console.paint("⚠", .yellow)
            }
            let name = entry.depth < chain.count ? chain[entry.depth].displayName : entry.subject
            console.out("  \(mark) depth \(entry.depth) \(name): \(statusText(entry.status))" + (entry.decidedBy.map { " (by \($0))" } ?? ""))
            if entry.attempts.isEmpty { console.out("      no URL to try") }
            for attempt in entry.attempts { console.out("      \(attemptLine(attempt))") }
        }
        if verbose { console.out("  revocation check: \(Int((report.seconds * 1000).rounded())) ms") }
    }

    static func attemptJSON(_ attempt: RevocationAttempt) -> JSON {
        func date(_ value: Date?) -> JSON { value.map { .string(Timestamp.rfc3339($0)) } ?? .null }
        return .object([
            ("kind", .string(attempt.kind)), ("method", .string(attempt.method)), ("url", .string(attempt.url)),
            ("httpStatus", attempt.httpStatus.map { .int($0) } ?? .null), ("bytes", .int(attempt.bytes)),
            ("seconds", .number((attempt.seconds * 1000).rounded() / 1000)), ("cached", .bool(attempt.cached)),
            ("thisUpdate", date(attempt.thisUpdate)), ("nextUpdate", date(attempt.nextUpdate)), ("producedAt", date(attempt.producedAt)),
            ("responderStatus", JSON.optional(attempt.responderStatus)), ("outcome", .string(attempt.outcome)),
            ("status", JSON.optional(attempt.status?.name)),
        ])
    }

    /// The stapled response in one line: its status and times.
    static func stapledText(_ attempt: RevocationAttempt) -> String {
        var facts: [String] = ["\(attempt.bytes) bytes"]
        if let produced = attempt.producedAt { facts.append("producedAt \(Timestamp.rfc3339(produced))") }
        if let this = attempt.thisUpdate { facts.append("thisUpdate \(Timestamp.rfc3339(this))") }
        if let next = attempt.nextUpdate { facts.append("nextUpdate \(Timestamp.rfc3339(next))") }
        return "\(attempt.outcome) [\(facts.joined(separator: ", "))]"
    }

    static func json(_ report: RevocationReport) -> JSON {
        func date(_ value: Date?) -> JSON { value.map { .string(Timestamp.rfc3339($0)) } ?? .null }
        let certificates: [JSON] = report.certificates.map { entry in
            var reason: JSON = .null
            var revokedAt: JSON = .null
            var detail: JSON = .null
            switch entry.status {
            case .revoked(let why, let when):
                reason = JSON.optional(why)
                revokedAt = date(when)
            case .cannotCheck(let why), .invalidData(let why): detail = .string(why)
            case .good, .unknown: break
            }
            let attempts: [JSON] = entry.attempts.map(attemptJSON)
            return .object([
                ("depth", .int(entry.depth)), ("subject", .string(entry.subject)), ("status", .string(entry.status.name)),
                ("revocationReason", reason), ("revocationDate", revokedAt), ("detail", detail), ("decidedBy", JSON.optional(entry.decidedBy)),
                ("attempts", .array(attempts)),
            ])
        }
        return .object([
            ("mode", .string(report.mode.rawValue)), ("seconds", .number((report.seconds * 1000).rounded() / 1000)), ("certificates", .array(certificates)),
        ])
    }
}

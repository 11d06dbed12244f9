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
        kind: .choice(["hard", "soft"]))

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
    /// (the identity's), completed from the caIssuers URL when only the leaf is known.
    static func checkSentIdentity(_ report: TLSSessionReport?, configuration: TLSClientConfiguration) -> (report: RevocationReport, chain: [Certificate])? {
        let policy = configuration.trust
        guard policy.revocation != .off, let sent = report?.certificateRequests.compactMap(\.sentCertificate).last else { return nil }
        var chain = [sent] + (configuration.identities.first { $0.certificate == sent }?.chain ?? []).filter { $0 != sent }
        if chain.count == 1, let url = sent.caIssuersURLs.first, let issuer = IssuerFetch.fetch(url, timeout: policy.revocationTimeouts.perURL).certificates.first {
            chain.append(issuer)
        }
        let checker = RevocationChecker(
            mode: policy.revocation, fetcher: policy.revocationFetcher, localCRLs: policy.crls, timeoutPerURL: policy.revocationTimeouts.perURL,
            totalTimeout: policy.revocationTimeouts.total)
        return (checker.check(chain, at: policy.evaluationTime ?? Date()), chain)
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

    static func print(_ report: RevocationReport, chain: [Certificate], console: Console, verbose: Bool) {
        console.out("Revocation (\(modeText(report.mode))):")
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

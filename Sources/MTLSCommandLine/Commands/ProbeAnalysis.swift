#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// Turns what a probe observed into sections, ranked causes and an exit code.
struct ProbeAnalysis {
    var url: HTTPSURL
    var firstRequest: HTTPRequest
    /// The last response (after redirects, challenges and forms).
    var final: HTTPResponse?
    /// Every request of the flow (the first, each redirect, each challenge answer, each form post).
    var loginHops: [LoginHop]
    var failure: HTTPSError?
    var report: TLSSessionReport?
    var configuration: TLSClientConfiguration

    /// `--user`, when given (named in refusals; never the password).
    var user: String? = nil
    /// `--auth` when it restricts the schemes; nil for any.
    var allowedSchemes: [String]? = nil
    /// `--no-channel-binding` was given.
    var channelBindingDisabled = false
    /// The start of the final body when it was streamed to --output (for the title and first line).
    var bodyPreview: [UInt8]? = nil
    /// The final body's length when it was streamed.
    var streamedBodyBytes: Int? = nil
    /// With `--revocation`: the revocation check of the client certificate we sent, as the server
    /// (IIS) will check it, and the chain it was checked on.
    var clientRevocation: (report: RevocationReport, chain: [Certificate])? = nil

    var requests: [CertificateRequestRecord] { report?.certificateRequests ?? [] }

    var substatus: Int? { final.flatMap { StatusMeaning.substatus($0) } }

    /// The facts every section and verdict is derived from.
    var facts: ProbeFacts { ProbeFacts(analysis: self) }

    /// Causes, most likely first (``ProbeRules``); empty exactly when the probe succeeded.
    var causes: [ProbeFinding] { ProbeRules.causes(facts) }

    /// What does not fail the probe but should be read.
    var warnings: [ProbeFinding] { ProbeRules.warnings(facts) }

    var succeeded: Bool { exitCode == ExitCode.success }

    /// 0 exactly when the flow succeeded and no rule found a cause; else the top cause's code.
    var exitCode: Int32 { ProbeRules.exitCode(causes) }

    /// `, logged in with the client certificate and Kerberos (alice@REALM)`: what the login used.
    var loginWords: String {
        var ways: [String] = []
        if requests.contains(where: { $0.sentCertificate != nil }) { ways.append("the client certificate") }
        if let outcome = loginHops.last?.negotiate, outcome.mechanism == "Kerberos" { ways.append("Kerberos (\(outcome.clientPrincipal ?? "?"))") }
        return ways.isEmpty ? "" : ", logged in with " + ways.joined(separator: " and ")
    }

    /// The one-line verdict, also written to stderr.
    var verdictLine: String {
        let causes = self.causes
        guard let top = causes.first else {
            let status = final.map { "\($0.status)\($0.head.reason.isEmpty ? "" : " \($0.head.reason)")" } ?? ""
            return "Verdict: OK — \(status)" + loginWords
                + (warnings.isEmpty ? "" : " (\(warnings.count) warning\(warnings.count == 1 ? "" : "s"))")
        }
        return "Verdict: FAILED (exit \(exitCode)) — \(top.text)"
    }

    /// The body a person reads: the final response's, or the preview of a streamed one.
    var readableBody: (bytes: [UInt8], mediaType: MediaType?)? {
        guard let final else { return nil }
        return (bodyPreview ?? final.body, final.headers.mediaType)
    }

    /// The page's title and first line of text, decoded from its charset.
    var page: ProbePage? {
        guard let body = readableBody, !body.bytes.isEmpty else { return nil }
        return ProbePage(body: body.bytes, mediaType: body.mediaType)
    }

    // MARK: Human output

    /// The TLS line of the Connection section: claims only what the log shows.
    static func tlsLine(_ facts: ProbeFacts, alpn: String?) -> String {
        if let prefix = facts.notTLSPrefix {
            return prefix.hasPrefix("HTTP") ? "none: the port answered with plain HTTP" : "none: the port does not answer with TLS (\"\(prefix)\")"
        }
        if let finished = facts.finishedHandshake {
            return finished.version + (finished.cipher.map { ", \($0)" } ?? "") + (alpn.map { ", ALPN \($0)" } ?? "") + (finished.resumed ? ", session resumed" : ", new session")
        }
        if let hello = facts.serverHello {
            return "handshake not finished (the ServerHello chose \(hello.version)\(hello.cipher.map { ", \($0)" } ?? ""))"
        }
        if facts.events.contains(where: { if case .message(true, "ClientHello", _) = $0 { true } else { false } }) {
            return "handshake not finished (no ServerHello)"
        }
        return "no TLS session"
    }

    /// The "requested" row: from the CertificateRequest messages in the log and the requests answered.
    static func requestedLine(_ facts: ProbeFacts) -> String? {
        if !facts.requests.isEmpty { return nil }  // one row per answered request follows
        if let phase = facts.certificateRequestPhases.first {
            return "yes, \(ProbeRules.phaseWords(phase)) (the handshake failed before we answered it)"
        }
        if facts.renegotiationResumed { return "no: the server renegotiated but resumed the session, so it could not ask" }
        if facts.handshakeFinished { return "no: the server never asked on this connection" }
        return "unknown: the handshake did not finish"
    }

    /// The order of the HTTP exchanges and the certificate requests on the final connection
    /// (`GET /x → 401 Negotiate → GET /x (Negotiate answer) → CertificateRequest (renegotiation) → 200`),
    /// when the server asked after a request: IIS asks after the login's 401, Apache before it.
    static func requestOrder(_ events: [TLSEvent], hops: [LoginHop]) -> String? {
        let asksLate = events.contains { if case .message(false, "CertificateRequest", let phase) = $0 { phase != .handshake } else { false } }
        guard asksLate else { return nil }
        // The responses logged on this connection are the last hops' (the connection is reused
        // through a login); they name the challenge and the answer when their statuses agree.
        let responses = events.filter { if case .httpResponse = $0 { true } else { false } }.count
        let onConnection = Array(hops.suffix(responses))
        var requestIndex = 0
        var responseIndex = 0
        var steps: [String] = []
        for event in events {
            switch event {
            case .httpRequest(let method, let target):
                var text = "\(method) \(target)"
                if requestIndex < onConnection.count, let scheme = onConnection[requestIndex].sentAuthorization {
                    text += " (\(scheme == .negotiate ? "Kerberos" : scheme.displayName) answer)"
                }
                requestIndex += 1
                steps.append(text)
            case .httpResponse(let status, _):
                var text = "\(status)"
                if responseIndex < onConnection.count, onConnection[responseIndex].status == status, status == 401,
                    let challenge = onConnection[responseIndex].challenges.first
                {
                    text += " \(challenge.scheme)"
                }
                responseIndex += 1
                steps.append(text)
            case .message(false, "CertificateRequest", let phase):
                steps.append("CertificateRequest (\(phase.rawValue))")
            default:
                break
            }
        }
        return steps.joined(separator: " → ")
    }

    /// Whether the server sent the path from its leaf up to the anchor, less the root: followed
    /// by issuer name through what was sent, in any order. A path that stops below the anchor is
    /// incomplete whatever the client has been given, since another client may not have it.
    static func completeness(_ sent: [Certificate], trust: TrustEvaluation?) -> String {
        guard var current = sent.first else { return "nothing sent" }
        var onPath: Set<Int> = [0]
        while !current.isSelfSigned, let next = sent.indices.first(where: { !onPath.contains($0) && sent[$0].subject == current.issuer }) {
            onPath.insert(next)
            current = sent[next]
        }
        if current.isSelfSigned { return "includes the root (harmless, but not needed)" }
        // The path ends below a certificate that was not sent: normal when that is the anchor.
        if let anchor = trust?.chain.last, anchor.subject == current.issuer, trust?.chain.count ?? 0 >= 2 {
            return anchor.isSelfSigned ? "root not sent (normal)" : "ends below the anchor \(Certificate.shortName(anchor.subject)), not sent (normal)"
        }
        // Not an anchor here: a missing intermediate, or a root this probe was not given.
        let issuer = Certificate.shortName(current.issuer)
        var text = "the path ends at \(Certificate.shortName(current.subject)), whose issuer \(issuer) was not sent and is not an anchor here: "
        if let url = current.caIssuersURLs.first {
            text += "if it is an intermediate, the server must send it (iOS, macOS and Chrome fetch it from \(url); Android and Java do not)"
        } else {
            text += "if it is an intermediate, the server must send it"
        }
        return text + "; if it is a root, give it with --anchors"
    }

    func printHuman(console: Console, verbose: Bool) {
        func section(_ title: String) { console.out(console.paint(title, .bold)) }
        func row(_ label: String, _ value: String) { console.out("  " + label.padded(to: 16) + value) }
        let facts = self.facts
        section("Connection")
        row("URL", url.description + CertificateDescription.spelled(url.host))
        if let report {
            if let address = report.address { row("address", address) } else { row("address", "not connected") }
            row("TLS", ProbeAnalysis.tlsLine(facts, alpn: report.alpn))
            if let finished = facts.finishedHandshake {
                row(
                    "renegotiation",
                    finished.version == "TLSv1.3"
                        ? "not in TLS 1.3 (post-handshake auth instead)"
                        : (report.secureRenegotiation ? "secure (RFC 5746) supported" : "server lacks RFC 5746 secure renegotiation"))
                if report.renegotiations > 0 {
                    row(
                        "renegotiated",
                        "\(report.renegotiations) time\(report.renegotiations == 1 ? "" : "s") after the first handshake"
                            + (facts.renegotiationResumed ? " (the server resumed the session)" : ""))
                }
            }
            if let name = report.serverName { row("SNI", name) }
            for alert in report.alerts { row("alert", "\(alert.received ? "received" : "sent") \(alert.level) \"\(alert.description)\"") }
        }
        if let report, !report.peerChainAsSent.isEmpty {
            console.out()
            section("Server chain (as sent)")
            for (index, certificate) in report.peerChainAsSent.enumerated() {
                console.out("  \(index)  \(certificate.subject)")
                console.out("     issuer \(certificate.issuer); expires \(Timestamp.rfc3339(certificate.notAfter)); \(certificate.keyAlgorithm)")
            }
            let sent = report.peerChainAsSent
            var order = "in order"
            for index in 1..<max(1, sent.count) where sent[index - 1].issuer != sent[index].subject {
                order = "NOT in order (certificate \(index) does not issue certificate \(index - 1))"
            }
            row("order", order)
            row("completeness", ProbeAnalysis.completeness(sent, trust: report.trust))
            if let trust = report.trust {
                if trust.isTrusted {
                    row(
                        "trust",
                        console.paint("trusted", .green) + " (chain of \(trust.chain.count)" + (trust.chain.last.map { " built to \(Certificate.shortName($0.subject))" } ?? "")
                            + ")")
                } else {
                    row("trust", console.paint("NOT trusted", .red) + " (\(trust.summary.rawValue))")
                    for finding in trust.findings { console.out("    ✗ depth \(finding.depth): \(finding.reason) (\(finding.name))") }
                }
            }
            row("stapled OCSP", report.stapledOCSP.map(RevocationOutput.stapledText) ?? "none (the server staples no OCSP response)")
            if let revocation = report.trust?.revocation, let chain = report.trust?.chain {
                RevocationOutput.print(revocation, chain: chain, console: console, verbose: false)
            }
            if let match = report.pinMatch {
                row(
                    "pins",
                    match.isSatisfied
                        ? "matched: " + match.matched.map { "\($0.pin) at depth \($0.depth)" }.joined(separator: ", ")
                        : "NO pin matched; presented " + match.presented.map(\.description).joined(separator: ", "))
            }
        }
        console.out()
        section("Client certificate")
        if let line = ProbeAnalysis.requestedLine(facts) { row("requested", line) }
        if let order = ProbeAnalysis.requestOrder(facts.events, hops: loginHops) { row("order", order) }
        for request in requests {
            row("requested", "yes, \(ProbeRules.phaseWords(request.phase))")
            row("accepted CAs", request.acceptedCANames.isEmpty ? "none sent (any issuer; IIS 2012+ sends none by default)" : request.acceptedCANames.joined(separator: "; "))
            if !request.signatureAlgorithms.isEmpty {
                row("signatures", request.signatureAlgorithms.prefix(8).joined(separator: ", ") + (request.signatureAlgorithms.count > 8 ? ", …" : ""))
            }
            if let sent = request.sentCertificate {
                row("sent", sent.subject + (request.sentIdentityLabel.map { " (from \(DisplayText.escaped($0)))" } ?? ""))
                var checks: [String] = []
                if !request.acceptedCANames.isEmpty {
                    checks.append(request.identityFits ? "issuer among the accepted CAs" : "issuer NOT among the accepted CAs")
                }
                if let eku = sent.extendedKeyUsage, !eku.contains("clientAuth") && !eku.contains("anyExtendedKeyUsage") {
                    checks.append("NO clientAuth EKU (\(eku.joined(separator: ", ")))")
                } else {
                    checks.append("clientAuth EKU ok")
                }
                let now = configuration.trust.evaluationTime ?? Date()
                checks.append(sent.isValid(at: now) ? "valid now" : "NOT valid now (\(Timestamp.rfc3339(sent.notBefore)) to \(Timestamp.rfc3339(sent.notAfter)))")
                row("fit", checks.joined(separator: "; "))
            } else {
                row("sent", request.hadNoIdentity ? "nothing (no identity given: --p12 or --cert/--key)" : "nothing")
            }
        }
        if let (revocation, chain) = clientRevocation {
            console.out("  what the server finds when it checks the revocation of our certificate:")
            RevocationOutput.print(revocation, chain: chain, console: console, verbose: false)
        }
        if !loginHops.isEmpty {
            console.out()
            section("HTTP")
            for (index, hop) in loginHops.enumerated() {
                let label: String
                switch hop.kind {
                case .initial: label = "request"
                case .redirect: label = "redirect"
                case .authentication(let scheme): label = scheme == .negotiate ? "Kerberos answer" : "\(scheme.displayName) answer"
                case .formPost(let binding): label = "\(binding == .wsFederation ? "WS-Fed" : "SAML") form post"
                case .refresh(let seconds): label = "refresh (\(seconds) s)"
                }
                let isFinal = index == loginHops.count - 1 && final != nil
                let substatus = isFinal ? final.flatMap { StatusMeaning.substatus($0) } : nil
                row(label, "\(hop.method) \(hop.url)")
                row("status", "\(hop.status) — \(StatusMeaning.explain(status: hop.status, substatus: substatus, response: isFinal ? final : nil))")
                for challenge in hop.challenges { row("auth offered", challenge.description) }
                if let scheme = hop.sentAuthorization { row("credentials", "answered with \(scheme.displayName) (secret not shown)") }
                if let outcome = hop.negotiate {
                    if outcome.fallback == nil {
                        row(
                            "kerberos",
                            "\(outcome.clientPrincipal ?? "?") → \(outcome.servicePrincipal)" + (outcome.ticketSource.map { ", ticket from the \($0)" } ?? "")
                                + (hop.channelBindingSent == true ? ", TLS channel binding sent" : ""))
                    }
                    if let mutual = outcome.mutualAuthentication {
                        row(
                            "mutual auth",
                            mutual ? "verified (the server's final token proves it holds the key of \(outcome.servicePrincipal))" : "not proven: the server sent no final token")
                    }
                    if let persistent = outcome.persistentAuth {
                        row("persistent", "Persistent-Auth: \(persistent)" + (persistent == "true" ? " (the login holds for this connection)" : ""))
                    }
                    if let fallback = outcome.fallback { row("kerberos", "not used (\(fallback.reason.rawValue)): \(fallback.explanation.message)") }
                }
                if let location = hop.location { row("location", location) }
                if !hop.cookiesSent.isEmpty { row("cookies sent", hop.cookiesSent.joined(separator: ", ")) }
                for decision in hop.cookieDecisions { row("cookie", ProbeAnalysis.describe(decision)) }
                if !hop.droppedHeaders.isEmpty { row("dropped", "\(hop.droppedHeaders.joined(separator: ", ")) (not sent to another origin)") }
            }
            if let final {
                row("body", "\(streamedBodyBytes ?? final.body.count) bytes" + (final.headers["Content-Type"].map { " (\($0))" } ?? ""))
                if let page {
                    row("charset", "\(page.charset) (\(page.charsetSource))")
                    if let title = page.title { row("title", title) }
                    if let line = page.firstLine { row("text", line) }
                }
            }
        }
        if verbose, let report, report.events.dropped > 0 {
            console.out()
            row("trace", "\(report.events.dropped) later events not kept")
        }
        console.out()
        let causes = self.causes
        let warnings = self.warnings
        if causes.isEmpty {
            let status = final.map { "\($0.status)\($0.head.reason.isEmpty ? "" : " \($0.head.reason)")" } ?? ""
            console.out(
                "Verdict: " + console.paint("OK", .green) + " — \(status)" + loginWords)
        } else {
            console.out("Verdict: " + console.paint("FAILED", .red) + " (exit \(exitCode))")
            for (index, cause) in causes.enumerated() {
                console.out("  \(index + 1). \(cause.text)")
                console.out("     fix: \(cause.fix)")
            }
        }
        for warning in warnings {
            console.out("  warning: \(warning.text)")
            console.out("     fix: \(warning.fix)")
        }
    }
}

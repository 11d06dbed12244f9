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

    // MARK: JSON

    /// The version of docs/schemas/probe.schema.json this output follows.
    static let schemaVersion = 2

    func json() -> JSON {
        let facts = self.facts
        var pairs: [(String, JSON)] = [("schemaVersion", .int(ProbeAnalysis.schemaVersion)), ("url", .string(url.description))]
        if let report {
            let finished = facts.finishedHandshake
            pairs.append(
                (
                    "connection",
                    .object([
                        ("address", JSON.optional(report.address)), ("handshakeFinished", .bool(finished != nil)), ("tlsVersion", JSON.optional(finished?.version)),
                        ("cipher", JSON.optional(finished?.cipher ?? facts.serverHello?.cipher)), ("notTLS", JSON.optional(facts.notTLSPrefix)),
                        ("alpn", JSON.optional(report.alpn)), ("resumed", .bool(finished?.resumed ?? false)),
                        ("secureRenegotiation", .bool(finished != nil && report.secureRenegotiation)),
                        ("renegotiationResumed", .bool(facts.renegotiationResumed)),
                        ("renegotiations", .int(report.renegotiations)), ("serverName", JSON.optional(report.serverName)),
                        (
                            "alerts",
                            .array(report.alerts.map { .object([("received", .bool($0.received)), ("level", .string($0.level)), ("description", .string($0.description))]) })
                        ),
                    ])
                ))
            pairs.append(("serverChain", .array(report.peerChainAsSent.enumerated().map { CertificateDescription.json($1, depth: $0) })))
            if let trust = report.trust {
                pairs.append(
                    (
                        "trust",
                        .object(
                            [
                                ("trusted", .bool(trust.isTrusted)), ("summary", .string(trust.summary.rawValue)),
                                (
                                    "findings",
                                    .array(
                                        trust.findings.map {
                                            .object([
                                                ("depth", .int($0.depth)), ("error", .string($0.name)), ("reason", .string($0.reason)), ("hint", .string($0.hint.commandLine)),
                                            ])
                                        })
                                ),
                            ] + (trust.revocation.map { [("revocation", RevocationOutput.json($0))] } ?? []))
                    ))
            }
            pairs.append(("stapledOCSP", report.stapledOCSP.map(RevocationOutput.attemptJSON) ?? .null))
            if let match = report.pinMatch {
                pairs.append(
                    (
                        "pins",
                        .object([
                            ("satisfied", .bool(match.isSatisfied)), ("presented", .strings(match.presented.map(\.description))),
                            ("matched", .strings(match.matched.map(\.pin.description))),
                        ])
                    ))
            }
            pairs.append(
                (
                    "clientCertificate",
                    .object([
                        (
                            "requested",
                            facts.handshakeFinished || !facts.certificateRequestPhases.isEmpty ? .bool(!facts.certificateRequestPhases.isEmpty || !requests.isEmpty) : .null
                        ),
                        ("requestPhases", .strings(facts.certificateRequestPhases.map(\.rawValue))),
                        (
                            "requests",
                            .array(
                                requests.map { request in
                                    .object([
                                        ("phase", .string(request.phase.rawValue)), ("acceptedCANames", .strings(request.acceptedCANames)),
                                        ("signatureAlgorithms", .strings(request.signatureAlgorithms)), ("sent", JSON.optional(request.sentCertificate?.subject)),
                                        ("identity", JSON.optional(request.sentIdentityLabel)), ("identityFits", .bool(request.identityFits)),
                                        ("hadNoIdentity", .bool(request.hadNoIdentity)),
                                    ])
                                })
                        ),
                    ])
                ))
            if let (revocation, _) = clientRevocation { pairs.append(("clientRevocation", RevocationOutput.json(revocation))) }
            pairs.append(("overriddenProblems", .strings(report.overriddenProblems)))
        }
        pairs.append(
            (
                "http",
                .array(
                    loginHops.enumerated().map { index, hop in
                        let isFinal = index == loginHops.count - 1
                        let response = isFinal ? final : nil
                        let substatus = response.flatMap { StatusMeaning.substatus($0) }
                        let kind: String
                        switch hop.kind {
                        case .initial: kind = "initial"
                        case .redirect: kind = "redirect"
                        case .authentication: kind = "authentication"
                        case .formPost: kind = "form-post"
                        case .refresh: kind = "refresh"
                        }
                        return .object(
                            [
                                ("kind", .string(kind)), ("method", .string(hop.method)), ("url", .string(hop.url.description)), ("status", .int(hop.status)),
                                ("substatus", substatus.map { .int($0) } ?? .null),
                                ("meaning", .string(StatusMeaning.explain(status: hop.status, substatus: substatus, response: response))),
                                ("authSchemes", .strings(hop.challenges.map(\.description))), ("location", JSON.optional(hop.location)),
                                ("cookies", .strings(hop.cookieDecisions.compactMap { if case .stored(let cookie) = $0 { cookie.name } else { nil } })),
                                ("bodyBytes", .int(response.map { streamedBodyBytes ?? $0.body.count } ?? 0)),
                                ("title", JSON.optional(response != nil ? page?.title : nil)), ("firstLine", JSON.optional(response != nil ? page?.firstLine : nil)),
                                ("charset", JSON.optional(response != nil ? page?.charset : nil)),
                            ] + ProbeAnalysis.negotiateJSON(hop))
                    })
            ))
        if let failure {
            pairs.append(
                (
                    "error",
                    .object(
                        [
                            ("code", .int(Int(exitCode))), ("phase", .string(failure.phase.rawValue)), ("message", .string(failure.message)),
                            ("hint", JSON.optional(failure.hint?.commandLine)),
                            ("alert", JSON.optional(failure.alert)),
                        ] + (failure.kerberos.map { [("kerberos", ProbeAnalysis.kerberosJSON($0))] } ?? []))
                ))
        }
        pairs.append(
            (
                "verdict",
                .object([
                    ("ok", .bool(exitCode == ExitCode.success)),
                    ("causes", .array(causes.map { .object([("rule", .string($0.id)), ("cause", .string($0.text)), ("fix", .string($0.fix))]) })),
                    ("warnings", .array(warnings.map { .object([("rule", .string($0.id)), ("cause", .string($0.text)), ("fix", .string($0.fix))]) })),
                ])
            ))
        pairs.append(("events", .array((report?.events.events ?? []).map(ProbeAnalysis.json))))
        pairs.append(("exitCode", .int(Int(exitCode))))
        return .object(pairs)
    }
}

extension ProbeAnalysis {
    /// One event of the log as JSON: its kind, its facts, and the line -v prints.
    static func json(_ event: TLSEvent) -> JSON {
        var pairs: [(String, JSON)]
        switch event {
        case .message(let ours, let name, let phase):
            pairs = [("kind", .string("message")), ("sentByUs", .bool(ours)), ("name", .string(name)), ("phase", .string(phase.rawValue))]
        case .serverHello(let version, let cipher):
            pairs = [("kind", .string("serverHello")), ("version", .string(version)), ("cipher", JSON.optional(cipher))]
        case .handshakeFinished(let phase, let version, let cipher, let resumed):
            pairs = [
                ("kind", .string("handshakeFinished")), ("phase", .string(phase.rawValue)), ("version", .string(version)), ("cipher", JSON.optional(cipher)),
                ("resumed", .bool(resumed)),
            ]
        case .alert(let ours, let level, let description):
            pairs = [("kind", .string("alert")), ("sentByUs", .bool(ours)), ("level", .string(level)), ("description", .string(description))]
        case .peerClosed(let closeNotify): pairs = [("kind", .string("peerClosed")), ("closeNotify", .bool(closeNotify))]
        case .socketError(let operation, let reason): pairs = [("kind", .string("socketError")), ("operation", .string(operation)), ("reason", .string(reason))]
        case .notTLS(let prefix): pairs = [("kind", .string("notTLS")), ("prefix", .string(prefix))]
        case .timeout(let during, let seconds): pairs = [("kind", .string("timeout")), ("during", .string(during)), ("seconds", .number(seconds))]
        case .httpRequest(let method, let target): pairs = [("kind", .string("httpRequest")), ("method", .string(method)), ("target", .string(target))]
        case .httpResponse(let status, let reason): pairs = [("kind", .string("httpResponse")), ("status", .int(status)), ("reason", .string(reason))]
        }
        return .object(pairs + [("line", .string(event.line))])
    }

    /// A cookie decision without the cookie's value.
    static func describe(_ decision: CookieJar.Decision) -> String {
        switch decision {
        case .stored(let cookie):
            var attributes = ["domain=\(cookie.domain)", "path=\(cookie.path)"]
            if cookie.secure { attributes.append("Secure") }
            if cookie.httpOnly { attributes.append("HttpOnly") }
            return "\(cookie.name)=[redacted] stored (\(attributes.joined(separator: "; ")))"
        case .deleted(let name): return "\(name) deleted"
        case .rejected(let name, let reason): return "\(name) rejected: \(reason)"
        }
    }
}

/// What a person needs of the final page: its title and first line of text, decoded from the
/// charset the response declares (Content-Type, BOM, <meta>) or, failing that, a guess.
struct ProbePage {
    var title: String?
    var firstLine: String?
    var charset: String
    var charsetSource: String
    /// The whole body as UTF-8 (for --output-text).
    var text: String

    init(body: [UInt8], mediaType: MediaType?) {
        let decoded = DecodedText(body: body, mediaType: mediaType)
        text = decoded.text
        charset = decoded.charset.name
        charsetSource = decoded.source.rawValue
        let isHTML = mediaType.map(\.isHTML) ?? text.lowercased().contains("<html")
        var visible = text
        if isHTML {
            // Scalar by scalar, as the ICU expressions these were written for match.
            if let match = text.firstMatch(of: #/<title[^>]*>([^<]*)</title/#.ignoresCase().matchingSemantics(.unicodeScalar)) {
                title = ProbePage.clean(ProbePage.unescape(String(match.1)))
            }
            // The visible text: without head, scripts, styles and tags.
            for element in ProbePage.hiddenElements { visible = visible.replacing(element, with: "\n") }
            visible = visible.replacing(#/<(br|p|div|h[1-6]|li|tr|title)[^>]*>/#.ignoresCase().matchingSemantics(.unicodeScalar), with: "\n")
            visible = ProbePage.unescape(visible.replacing(#/<[^>]*>/#.matchingSemantics(.unicodeScalar), with: ""))
        }
        firstLine = visible.split(whereSeparator: \.isNewline).map { ProbePage.clean(String($0)) }.first { !$0.isEmpty }
        if title?.isEmpty == true { title = nil }
    }

    /// `<head>`, `<title>`, `<script>` and `<style>` with their content, removed in that order.
    private static var hiddenElements: [Regex<AnyRegexOutput>] {
        ["head", "title", "script", "style"].map { element in
            // The patterns are constant and valid: `try!` cannot fail.
            try! Regex("<\(element)[^>]*>[\\s\\S]*?</\(element)>").ignoresCase().matchingSemantics(.unicodeScalar)
        }
    }

    /// Collapsed whitespace, at most 160 characters.
    static func clean(_ text: String) -> String {
        let collapsed = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return collapsed.count > 160 ? String(collapsed.prefix(159)) + "…" : collapsed
    }

    /// Character references as a browser decodes them; a no-break space shown as a space.
    static func unescape(_ text: String) -> String {
        HTMLCharacterReferences.decode(text).replacingAll("\u{00A0}", with: " ")
    }
}

extension ProbeAnalysis {
    /// A hop's Kerberos record (`negotiate`), when it answered or skipped a Negotiate challenge.
    static func negotiateJSON(_ hop: LoginHop) -> [(String, JSON)] {
        guard let outcome = hop.negotiate else { return [] }
        return [
            (
                "negotiate",
                .object([
                    ("mechanism", .string(outcome.mechanism)), ("clientPrincipal", JSON.optional(outcome.clientPrincipal)),
                    ("servicePrincipal", .string(outcome.servicePrincipal)), ("mutualAuthentication", outcome.mutualAuthentication.map { .bool($0) } ?? .null),
                    ("persistentAuth", JSON.optional(outcome.persistentAuth)), ("channelBinding", hop.channelBindingSent.map { .bool($0) } ?? .null),
                    ("fallback", outcome.fallback.map(kerberosJSON) ?? .null), ("ticket", JSON.optional(outcome.ticketSource)),
                ])
            )
        ]
    }

    /// Why Kerberos failed: the class, the principals, GSSAPI's text and the server's KRB-ERROR code.
    static func kerberosJSON(_ failure: KerberosFailure) -> JSON {
        .object([
            ("reason", .string(failure.reason.rawValue)), ("clientPrincipal", JSON.optional(failure.clientPrincipal)),
            ("servicePrincipal", .string(failure.servicePrincipal)), ("beforeSending", .bool(failure.beforeSending)),
            ("gssapi", .string(failure.gssMessage)), ("kerberosError", failure.kerberosErrorCode.map { .int($0) } ?? .null),
            ("kerberosErrorName", JSON.optional(failure.kerberosErrorCode.map(KerberosFailure.kerberosErrorName))),
        ])
    }
}

import Foundation
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

    struct Cause {
        var text: String
        var fix: String
    }

    var requests: [CertificateRequestRecord] { report?.certificateRequests ?? [] }

    var substatus: Int? { final.flatMap { StatusMeaning.substatus($0) } }

    /// Causes, most likely first.
    var causes: [Cause] {
        var causes: [Cause] = []
        let version = report?.version ?? ""
        if let failure {
            switch failure.phase {
            case .serverCertificate:
                let finding = failure.trust?.findings.first
                causes.append(
                    Cause(
                        text: "the server's certificate is not trusted: \(finding?.reason ?? failure.message)",
                        fix: finding?.hint.isEmpty == false ? finding!.hint : "pass the server's CA with --anchors (review it first: --insecure --save-chain FILE)"))
            case _
            where requests.contains(where: { $0.sentCertificate == nil })
                && (failure.alert.map { ["certificate required", "handshake failure", "bad certificate"].contains($0) } ?? false):
                causes.append(
                    Cause(text: "the server requires a client certificate in the handshake and we had none to send", fix: "pass your identity with --p12 FILE (or --cert/--key)"))
            default:
                causes.append(Cause(text: failure.message, fix: failure.hint ?? "check the address and port, and that the server speaks HTTPS"))
            }
        }
        for request in requests {
            if request.hadNoIdentity && failure == nil {
                causes.append(
                    Cause(
                        text: "the server asked for a client certificate \(phaseWords(request.phase)) and we had none",
                        fix: "pass your identity with --p12 FILE --password SPEC, or --cert FILE --key FILE"))
            } else if !request.identityFits {
                causes.append(
                    Cause(
                        text:
                            "the server accepts client certificates issued by \(request.acceptedCANames.map(Certificate.shortName).joined(separator: "; ")), and ours (\(request.sentCertificate?.displayName ?? "?")) is issued by \(request.sentCertificate.map { Certificate.shortName($0.issuer) } ?? "?")",
                        fix: "use an identity issued by one of those CAs, or ask the administrator to trust your CA"))
            }
        }
        if let final {
            let status = final.status
            if StatusMeaning.isHTTPSysTLS13Renegotiation(final) {
                causes.append(
                    Cause(
                        text: "the server (IIS/http.sys) asks for the client certificate after the request, by renegotiation, which TLS 1.3 cannot do",
                        fix: "retry with --tls-max 1.2, or ask the administrator to set clientcertnegotiation=enable on the binding (netsh http update sslcert …)"))
            }
            switch (status, substatus) {
            case (403, let sub)
            where (sub == 7 || sub == nil) && !requests.isEmpty && requests.allSatisfy({ $0.sentCertificate == nil }) && !requests.contains(where: { $0.hadNoIdentity }):
                causes.append(Cause(text: "the server requires a client certificate and none was presented", fix: "pass your identity with --p12 FILE --password SPEC"))
            case (403, 7?) where requests.isEmpty:
                if version == "TLSv1.3" {
                    causes.append(
                        Cause(
                            text:
                                "the server answered 403.7 without ever asking for a certificate: over TLS 1.3 it could not ask after the request (IIS has no post-handshake auth)",
                            fix: "retry with --tls-max 1.2, or ask the administrator to set clientcertnegotiation=enable on the binding"))
                } else {
                    causes.append(
                        Cause(
                            text: "the server answered 403.7 but never asked for a certificate on this connection",
                            fix: "retry with --tls-max 1.2; check that the binding negotiates client certificates"))
                }
            case (403, 16?):
                let sent = requests.compactMap(\.sentCertificate).last
                causes.append(
                    Cause(
                        text:
                            "the server does not trust our client certificate\(sent.map { " (\($0.displayName), issued by \(Certificate.shortName($0.issuer)))" } ?? "")",
                        fix:
                            "the server must trust that CA (IIS: in the machine's Trusted Root / Intermediate stores), and the chain must be sent: include intermediates in the .p12"
                    ))
            case (403, 17?):
                let sent = requests.compactMap(\.sentCertificate).last
                causes.append(
                    Cause(
                        text:
                            "our client certificate has expired or is not yet valid\(sent.map { " (valid \(Timestamp.rfc3339($0.notBefore)) to \(Timestamp.rfc3339($0.notAfter)))" } ?? "")",
                        fix: "renew the client certificate"))
            case (403, 13?):
                causes.append(Cause(text: "our client certificate has been revoked", fix: "get a new client certificate"))
            case (403, 4?):
                causes.append(Cause(text: "the path requires SSL", fix: "use https://"))
            case (401, _):
                let schemes = final.headers.values("WWW-Authenticate").map { $0.split(separator: " ").first.map(String.init) ?? $0 }
                let answered = loginHops.contains { $0.sentAuthorization != nil }
                if answered {
                    causes.append(
                        Cause(
                            text: "the server refused the credentials (\(substatus == 1 ? "IIS 401.1: logon failed" : "401 after our answer"))",
                            fix: "check the user name and password; for Windows auth give DOMAIN\\user"))
                } else {
                    causes.append(
                        Cause(
                            text: "the server wants credentials (\(schemes.isEmpty ? "no scheme offered" : schemes.joined(separator: ", ")))",
                            fix: "pass --user NAME --user-password SPEC"
                                + (schemes.contains(where: { $0.lowercased() == "negotiate" || $0.lowercased() == "ntlm" }) ? " (Windows auth: NTLM)" : "")))
                }
            case (400, _) where String(decoding: final.body.prefix(4096), as: UTF8.self).contains("certificate"):
                causes.append(
                    Cause(
                        text: "the server rejected the request because of the client certificate (nginx: \"No required SSL certificate was sent\" or it did not verify)",
                        fix: "pass an identity the server trusts with --p12 or --cert/--key"))
            default: break
            }
        }
        if let report, !report.overriddenProblems.isEmpty {
            causes.append(
                Cause(
                    text: "the server's certificate is not trusted (ignored because of --insecure): \(report.overriddenProblems[0])",
                    fix: "review the chain (--save-chain FILE) and pass its CA with --anchors"))
        }
        return causes
    }

    func phaseWords(_ phase: CertificateRequestPhase) -> String {
        switch phase {
        case .handshake: "during the TLS handshake"
        case .renegotiation: "after the request, by TLS 1.2 renegotiation"
        case .postHandshake: "after the request, by TLS 1.3 post-handshake authentication"
        }
    }

    var succeeded: Bool {
        guard failure == nil, let final else { return false }
        return (200...399).contains(final.status)
    }

    var exitCode: Int32 {
        if let failure {
            switch failure.phase {
            case .serverCertificate, .redirect, .auth: return ExitCode.no
            case .url, .configuration: return ExitCode.usage
            default: return requests.contains(where: { $0.hadNoIdentity }) ? ExitCode.no : ExitCode.network
            }
        }
        return succeeded ? ExitCode.success : ExitCode.no
    }

    // MARK: Human output

    func printHuman(console: Console, verbose: Bool, trace: [String]) {
        func section(_ title: String) { console.out(console.paint(title, .bold)) }
        func row(_ label: String, _ value: String) { console.out("  " + label.padding(toLength: 16, withPad: " ", startingAt: 0) + value) }
        section("Connection")
        row("URL", url.description)
        if let report {
            row("address", report.address ?? "(not connected)")
            if let version = report.version {
                row("TLS", "\(version), \(report.cipher ?? "?")" + (report.alpn.map { ", ALPN \($0)" } ?? "") + (report.resumed ? ", session resumed" : ", new session"))
                row(
                    "renegotiation",
                    report.secureRenegotiation
                        ? "secure (RFC 5746) supported" : (version == "TLSv1.3" ? "not in TLS 1.3 (post-handshake auth instead)" : "server lacks RFC 5746 secure renegotiation"))
                if report.renegotiations > 0 { row("renegotiated", "\(report.renegotiations) time\(report.renegotiations == 1 ? "" : "s") after the first handshake") }
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
            let endsAtRoot = sent.last?.isSelfSigned ?? false
            row("order", order)
            row("completeness", endsAtRoot ? "includes the root (harmless, but not needed)" : "root not sent (normal)")
            if let trust = report.trust {
                if trust.isTrusted {
                    row(
                        "trust",
                        console.paint("trusted", .green)
                            + " (chain of \(trust.chain.count) built to \(trust.chain.last.map { Certificate.shortName($0.subject) } ?? "?"))")
                } else {
                    row("trust", console.paint("NOT trusted", .red) + " (\(trust.summary.rawValue))")
                    for finding in trust.findings { console.out("    ✗ depth \(finding.depth): \(finding.reason) (\(finding.name))") }
                }
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
        if requests.isEmpty {
            row("requested", report?.version == nil ? "unknown (no TLS session)" : "no: the server never asked on this connection")
        }
        for request in requests {
            row("requested", "yes, \(phaseWords(request.phase))")
            row("accepted CAs", request.acceptedCANames.isEmpty ? "none sent (any issuer; IIS 2012+ sends none by default)" : request.acceptedCANames.joined(separator: "; "))
            if !request.signatureAlgorithms.isEmpty {
                row("signatures", request.signatureAlgorithms.prefix(8).joined(separator: ", ") + (request.signatureAlgorithms.count > 8 ? ", …" : ""))
            }
            if let sent = request.sentCertificate {
                row("sent", "\(sent.subject) (from \(request.sentIdentityLabel ?? "?"))")
                let eku = sent.extendedKeyUsage
                var checks: [String] = []
                checks.append(request.identityFits ? "issuer accepted" : "issuer NOT among the accepted CAs")
                if let eku, !eku.contains("clientAuth") && !eku.contains("anyExtendedKeyUsage") {
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
        if !loginHops.isEmpty {
            console.out()
            section("HTTP")
            for (index, hop) in loginHops.enumerated() {
                let label: String
                switch hop.kind {
                case .initial: label = "request"
                case .redirect: label = "redirect"
                case .authentication(let scheme): label = "\(scheme.displayName) answer"
                case .formPost(let binding): label = "\(binding == .wsFederation ? "WS-Fed" : "SAML") form post"
                }
                let isFinal = index == loginHops.count - 1 && final != nil
                let substatus = isFinal ? final.flatMap { StatusMeaning.substatus($0) } : nil
                row(label, "\(hop.method) \(hop.url)")
                row("status", "\(hop.status) — \(StatusMeaning.explain(status: hop.status, substatus: substatus, response: isFinal ? final : nil))")
                for challenge in hop.challenges { row("auth offered", challenge.description) }
                if let scheme = hop.sentAuthorization { row("credentials", "answered with \(scheme.displayName) (secret not shown)") }
                if let location = hop.location { row("location", location) }
                if !hop.cookiesSent.isEmpty { row("cookies sent", hop.cookiesSent.joined(separator: ", ")) }
                for decision in hop.cookieDecisions { row("cookie", ProbeAnalysis.describe(decision)) }
                if !hop.droppedHeaders.isEmpty { row("dropped", "\(hop.droppedHeaders.joined(separator: ", ")) (not sent to another origin)") }
            }
            if let final { row("body", "\(final.body.count) bytes" + (final.headers["Content-Type"].map { " (\($0))" } ?? "")) }
        }
        if verbose {
            console.out()
            section("Trace")
            for line in report?.messageTrace ?? [] { console.out("  " + line) }
            for line in trace { console.out(line.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")) }
        }
        console.out()
        let causes = self.causes
        if succeeded && causes.isEmpty {
            console.out(
                "Verdict: " + console.paint("OK", .green) + " — \(final.map { "\($0.status) \($0.head.reason)" } ?? "")"
                    + (requests.contains { $0.sentCertificate != nil } ? ", logged in with the client certificate" : ""))
        } else {
            console.out("Verdict: " + (succeeded ? console.paint("OK with warnings", .yellow) : console.paint("FAILED", .red)))
            for (index, cause) in causes.enumerated() {
                console.out("  \(index + 1). \(cause.text)")
                console.out("     fix: \(cause.fix)")
            }
            if causes.isEmpty, let final { console.out("  the server answered \(final.status) \(final.head.reason)") }
        }
    }

    // MARK: JSON

    func json() -> JSON {
        var pairs: [(String, JSON)] = [("url", .string(url.description))]
        if let report {
            pairs.append(
                (
                    "connection",
                    .object([
                        ("address", JSON.optional(report.address)), ("tlsVersion", JSON.optional(report.version)), ("cipher", JSON.optional(report.cipher)),
                        ("alpn", JSON.optional(report.alpn)), ("resumed", .bool(report.resumed)), ("secureRenegotiation", .bool(report.secureRenegotiation)),
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
                        .object([
                            ("trusted", .bool(trust.isTrusted)), ("summary", .string(trust.summary.rawValue)),
                            (
                                "findings",
                                .array(
                                    trust.findings.map {
                                        .object([("depth", .int($0.depth)), ("error", .string($0.name)), ("reason", .string($0.reason)), ("hint", .string($0.hint))])
                                    })
                            ),
                        ])
                    ))
            }
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
                        ("requested", .bool(!requests.isEmpty)),
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
                        }
                        return .object([
                            ("kind", .string(kind)), ("method", .string(hop.method)), ("url", .string(hop.url.description)), ("status", .int(hop.status)),
                            ("substatus", substatus.map { .int($0) } ?? .null),
                            ("meaning", .string(StatusMeaning.explain(status: hop.status, substatus: substatus, response: response))),
                            ("authSchemes", .strings(hop.challenges.map(\.description))), ("location", JSON.optional(hop.location)),
                            ("cookies", .strings(hop.cookieDecisions.compactMap { if case .stored(let cookie) = $0 { cookie.name } else { nil } })),
                            ("bodyBytes", .int(response?.body.count ?? 0)),
                        ])
                    })
            ))
        if let failure {
            pairs.append(
                (
                    "error",
                    .object([
                        ("code", .int(Int(exitCode))), ("phase", .string(failure.phase.rawValue)), ("message", .string(failure.message)), ("hint", JSON.optional(failure.hint)),
                        ("alert", JSON.optional(failure.alert)),
                    ])
                ))
        }
        pairs.append(
            (
                "verdict",
                .object([
                    ("ok", .bool(succeeded && causes.isEmpty)),
                    ("causes", .array(causes.map { .object([("cause", .string($0.text)), ("fix", .string($0.fix))]) })),
                ])
            ))
        pairs.append(("exitCode", .int(Int(exitCode))))
        return .object(pairs)
    }
}

extension ProbeAnalysis {
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

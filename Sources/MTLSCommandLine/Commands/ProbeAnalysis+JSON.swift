#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// The probe's report as JSON (docs/schemas/probe.schema.json).
extension ProbeAnalysis {
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

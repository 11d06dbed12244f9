#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP

/// One conclusion of a rule: what happened, what to do, and the exit code it stands for.
struct ProbeFinding: Equatable {
    /// The rule's id (`certificate-required`), stable for scripts and tests.
    var id: String
    var text: String
    var fix: String
    /// The exit code this finding stands for (1: the server refuses or requires our identity or
    /// refuses our credentials; 4: network or TLS failure unrelated to our identity).
    var exitCode: Int32
}

/// The rules that turn ``ProbeFacts`` into causes, warnings and an exit code.
///
/// Each rule reads only facts that were observed, and builds its sentence only from facts that
/// exist (no "?" and no empty names): a rule whose facts are missing does not fire.
///
/// Exit-code policy (README "Exit codes", `mtls probe --help`): 0 when the flow ended with a 2xx
/// or 3xx and no rule found a cause; 1 when the server refuses or requires our certificate,
/// refuses our credentials, is not trusted, or answers with an error status; 4 for network and
/// TLS failures unrelated to our identity (connection refused, timeout, not TLS, malformed HTTP);
/// 2 usage, 3 bad input (raised before connecting). `verdict.ok` is exactly `exitCode == 0`.
enum ProbeRules {
    /// Causes, most likely first. Empty exactly when the probe succeeded.
    static func causes(_ facts: ProbeFacts) -> [ProbeFinding] {
        var found: [ProbeFinding] = []
        for rule in transportRules + certificateRules + httpRules {
            if let finding = rule(facts), !found.contains(where: { $0.id == finding.id }) { found.append(finding) }
        }
        // A failure no rule explained is still named, by its own message (network: 4).
        if found.isEmpty, let failure = facts.failure { found.append(genericFailure(failure)) }
        if found.isEmpty, !facts.succeeded, let status = facts.finalStatus {
            found.append(
                ProbeFinding(
                    id: "http-status", text: "the server answered \(status)\(facts.finalReason.isEmpty ? "" : " \(facts.finalReason)")",
                    fix: "see the HTTP section for what the status means", exitCode: ExitCode.no))
        }
        return found
    }

    /// Observations that do not fail the probe.
    static func warnings(_ facts: ProbeFacts) -> [ProbeFinding] {
        var found: [ProbeFinding] = []
        if let problem = facts.overriddenProblems.first {
            found.append(
                ProbeFinding(
                    id: "insecure-overridden", text: "the server's certificate is not trusted (ignored because of --insecure): \(problem)",
                    fix: "review the chain (--save-chain FILE) and pass its CA with --anchors", exitCode: ExitCode.success))
        }
        if facts.succeeded {
            for request in facts.requests where request.sent == nil {
                found.append(
                    ProbeFinding(
                        id: "optional-certificate-not-sent",
                        text: "the server asked for a client certificate \(phaseWords(request.phase)) and we sent none; it answered anyway",
                        fix: request.hadNoIdentity ? "to log in with a certificate, pass --p12 FILE or --cert FILE --key FILE" : "check that the identity fits the server",
                        exitCode: ExitCode.success))
            }
        }
        return found
    }

    /// The exit code: 0 without causes, else the top cause's.
    static func exitCode(_ causes: [ProbeFinding]) -> Int32 { causes.first?.exitCode ?? ExitCode.success }

    static func phaseWords(_ phase: CertificateRequestPhase) -> String {
        switch phase {
        case .handshake: "during the TLS handshake"
        case .renegotiation: "after the request, by TLS 1.2 renegotiation"
        case .postHandshake: "after the request, by TLS 1.3 post-handshake authentication"
        }
    }

    static func phaseWords(_ phase: TLSMessagePhase) -> String {
        switch phase {
        case .handshake: phaseWords(CertificateRequestPhase.handshake)
        case .renegotiation: phaseWords(CertificateRequestPhase.renegotiation)
        case .postHandshake: phaseWords(CertificateRequestPhase.postHandshake)
        }
    }

    static let identityFix = "pass your identity with --p12 FILE --password SPEC, or --cert FILE --key FILE"

    // MARK: Transport

    typealias Rule = @Sendable (ProbeFacts) -> ProbeFinding?

    static let transportRules: [Rule] = [plainHTTP, notTLS, timeout, serverNotTrusted]

    /// `plain-http`: the first bytes on the port were `HTTP/`.
    static func plainHTTP(_ facts: ProbeFacts) -> ProbeFinding? {
        guard let prefix = facts.notTLSPrefix, prefix.hasPrefix("HTTP") else { return nil }
        return ProbeFinding(
            id: "plain-http", text: "\(facts.host) answered with plain HTTP (\"\(prefix)…\"), not TLS",
            fix: "this port serves http://, not https://: use the HTTPS port (443 by default)", exitCode: ExitCode.network)
    }

    /// `not-tls`: the first bytes are not a TLS record.
    static func notTLS(_ facts: ProbeFacts) -> ProbeFinding? {
        guard let prefix = facts.notTLSPrefix, !prefix.hasPrefix("HTTP") else { return nil }
        return ProbeFinding(
            id: "not-tls", text: "\(facts.host) does not answer with TLS (its first bytes are \"\(prefix)\")",
            fix: "another protocol listens on this port: check the port", exitCode: ExitCode.network)
    }

    /// `timeout-handshake` / `timeout-response`: a wait ran out.
    static func timeout(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.failure?.phase == .timeout, let timeout = facts.timeout else { return nil }
        let seconds = TLSEvent.seconds(timeout.seconds)
        if !facts.handshakeFinished {
            let text =
                facts.serverHello == nil
                ? "\(facts.host) accepted the TCP connection but did not answer our ClientHello within \(seconds)"
                : "\(facts.host) stopped answering during the TLS handshake (no message for \(seconds))"
            return ProbeFinding(
                id: "timeout-handshake", text: text, fix: "the server is stalled, or this port is not TLS; raise --timeout if it is only slow", exitCode: ExitCode.network)
        }
        return ProbeFinding(
            id: "timeout-response", text: "the TLS handshake finished, but \(facts.host) sent no HTTP response within \(seconds)",
            fix: "the application behind the TLS endpoint is stalled or slow; raise --timeout if it is only slow", exitCode: ExitCode.network)
    }

    /// `server-not-trusted`: our check of the server's certificate failed.
    static func serverNotTrusted(_ facts: ProbeFacts) -> ProbeFinding? {
        guard let failure = facts.failure, failure.phase == .serverCertificate else { return nil }
        return ProbeFinding(
            id: "server-not-trusted", text: failure.message,
            fix: failure.hint ?? "pass the server's CA with --anchors (review it first: --insecure --save-chain FILE)", exitCode: ExitCode.no)
    }

    // MARK: Client certificate

    static let certificateRules: [Rule] = [resumedRenegotiation, certificateRequired, certificateRefused, identityDoesNotFit]

    /// `renegotiation-resumed`: the server renegotiated by resuming the session, so it could not
    /// send a CertificateRequest (Node.js `renegotiate()` with default options does this when a
    /// client offers its session).
    static func resumedRenegotiation(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.renegotiationResumed, !facts.certificateRequestPhases.contains(.renegotiation) else { return nil }
        return ProbeFinding(
            id: "renegotiation-resumed",
            text:
                "the server renegotiated after the request but resumed the TLS session (ServerHello, then Finished), so it could not ask for a client certificate",
            fix:
                "the server must do a full renegotiation: disable session resumption on renegotiation on the server (OpenSSL: SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION), or ask for the certificate in the handshake",
            exitCode: ExitCode.no)
    }

    /// `certificate-required`: we sent an empty Certificate and the server ended the handshake or
    /// connection right after (alert, close without alert, reset).
    static func certificateRequired(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.failure != nil, let request = facts.requests.last, request.sent == nil, let reaction = facts.reactionToOurCertificate else { return nil }
        let why = request.hadNoIdentity ? "we had none to send (no --p12 or --cert given)" : "we sent none"
        return ProbeFinding(
            id: "certificate-required",
            text: "the server requires a client certificate (it asked \(phaseWords(request.phase))) and \(why): after our empty Certificate message it \(reaction.words)",
            fix: identityFix, exitCode: ExitCode.no)
    }

    /// `certificate-refused`: we sent a certificate and the server ended the connection right
    /// after (under TLS 1.3 the alert arrives after our Finished, often as a failed write).
    static func certificateRefused(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.failure != nil, let request = facts.requests.last, let sent = request.sent, let reaction = facts.reactionToOurCertificate else { return nil }
        var text = "the server refused our client certificate \(sent.subject) (issued by \(sent.issuer)): it \(reaction.words) after our certificate"
        if !request.acceptedCANames.isEmpty && !request.identityFits {
            text += "; it accepts certificates issued by \(request.acceptedCANames.joined(separator: "; "))"
        }
        let fix: String
        switch reaction {
        case .alert("certificate expired"): fix = "renew the client certificate"
        case .alert("certificate revoked"): fix = "get a new client certificate"
        default: fix = "use an identity issued by a CA the server trusts, or ask the administrator to trust \(sent.issuer) (and send its intermediates)"
        }
        return ProbeFinding(id: "certificate-refused", text: text, fix: fix, exitCode: ExitCode.no)
    }

    /// `identity-does-not-fit`: the server named the CAs it accepts, and ours is not among them.
    static func identityDoesNotFit(_ facts: ProbeFacts) -> ProbeFinding? {
        guard !facts.succeeded, let request = facts.requests.first(where: { $0.sent != nil && !$0.acceptedCANames.isEmpty && !$0.identityFits }), let sent = request.sent
        else { return nil }
        if certificateRefused(facts) != nil { return nil }  // that finding already names the accepted CAs
        return ProbeFinding(
            id: "identity-does-not-fit",
            text: "the server accepts client certificates issued by \(request.acceptedCANames.joined(separator: "; ")), and ours (\(sent.subject)) is issued by \(sent.issuer)",
            fix: "use an identity issued by one of those CAs, or ask the administrator to trust your CA", exitCode: ExitCode.no)
    }

    // MARK: HTTP

    static let httpRules: [Rule] = [httpSysTLS13, certificateStatus, kerberos, epaChannelBinding, credentialsRefused, credentialsWanted, nginxBadRequest]

    /// `kerberos-<reason>`: a Kerberos (Negotiate) login failed, here before anything was sent
    /// (GSSAPI's reason) or at the server (the KRB-ERROR in its 401's Negotiate token).
    static func kerberos(_ facts: ProbeFacts) -> ProbeFinding? {
        guard let failure = facts.failure?.kerberos else { return nil }
        let (text, fix) = failure.explanation
        let code = failure.kerberosErrorCode.map { " [\(KerberosFailure.kerberosErrorName($0))]" } ?? ""
        let exit = failure.reason == .kdcUnreachable || failure.reason == .libraryUnavailable ? ExitCode.network : ExitCode.no
        return ProbeFinding(id: "kerberos-\(failure.reason.rawValue)", text: text + code, fix: fix, exitCode: exit)
    }

    /// `http-sys-tls13`: IIS answers 0x80070032 for a per-path certificate over TLS 1.3.
    static func httpSysTLS13(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.httpSysTLS13Renegotiation else { return nil }
        return ProbeFinding(
            id: "http-sys-tls13",
            text: "the server (IIS/http.sys) asks for the client certificate after the request, by renegotiation, which TLS 1.3 cannot do",
            fix: "retry with --tls-max 1.2, or ask the administrator to set clientcertnegotiation=enable on the binding (netsh http update sslcert …)", exitCode: ExitCode.no)
    }

    /// 403.x statuses about the client certificate.
    static func certificateStatus(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.failure == nil, facts.finalStatus == 403 else { return nil }
        let sent = facts.requests.compactMap(\.sent).last
        let revocationWords = facts.clientRevocationProblem.map { "; our own revocation check of it, as the server makes it: \($0)" } ?? ""
        let sentWords = (sent.map { " (\($0.subject), issued by \($0.issuer))" } ?? "") + revocationWords
        switch facts.finalSubstatus {
        case 7?, nil:
            if let request = facts.requests.last, request.sent == nil {
                return ProbeFinding(
                    id: "certificate-required-403",
                    text: "the server requires a client certificate (it asked \(phaseWords(request.phase))) and \(request.hadNoIdentity ? "we had none to send" : "we sent none")",
                    fix: identityFix, exitCode: ExitCode.no)
            }
            guard facts.finalSubstatus == 7, facts.requests.isEmpty, facts.certificateRequestPhases.isEmpty, !facts.renegotiationResumed else { return nil }
            if facts.finishedHandshake?.version == "TLSv1.3" {
                return ProbeFinding(
                    id: "403.7-tls13-no-request",
                    text: "the server answered 403.7 without ever asking for a certificate: over TLS 1.3 it could not ask after the request (IIS has no post-handshake auth)",
                    fix: "retry with --tls-max 1.2, or ask the administrator to set clientcertnegotiation=enable on the binding", exitCode: ExitCode.no)
            }
            return ProbeFinding(
                id: "403.7-no-request", text: "the server answered 403.7 but never asked for a certificate on this connection",
                fix: "check that the binding negotiates client certificates (IIS: SSL Settings → Client certificates: Require)", exitCode: ExitCode.no)
        case 16?:
            return ProbeFinding(
                id: "403.16", text: "the server does not trust our client certificate\(sentWords)",
                fix: facts.clientRevocationUndetermined
                    ? "the server cannot determine our certificate's revocation status and IIS fails closed (CertCheckMode 0): the CRL distribution point and OCSP URLs listed above must be reachable from the server and current"
                    : "the server must trust that CA (IIS: in the machine's Trusted Root / Intermediate stores), and the chain must be sent: include intermediates in the .p12",
                exitCode: ExitCode.no)
        case 17?:
            return ProbeFinding(
                id: "403.17", text: "the server says our client certificate has expired or is not yet valid\(sentWords)", fix: "renew the client certificate", exitCode: ExitCode.no
            )
        case 13?:
            return ProbeFinding(
                id: "403.13", text: "the server says our client certificate has been revoked\(sentWords)", fix: "get a new client certificate", exitCode: ExitCode.no)
        case 4?:
            return ProbeFinding(id: "403.4", text: "the path requires SSL", fix: "use https://", exitCode: ExitCode.no)
        default:
            return nil
        }
    }

    /// The NTLM/Negotiate answers that the server refused.
    private static func refusedLogin(_ facts: ProbeFacts) -> ProbeFacts.Exchange? {
        let refusedByError = facts.failure?.phase == .auth && facts.failure?.message.contains("refused") == true
        let refusedByStatus = facts.failure == nil && facts.finalStatus == 401
        guard refusedByError || refusedByStatus, let answer = facts.exchanges.last(where: { $0.answeredWith != nil }), facts.exchanges.last?.status == 401 else { return nil }
        return answer
    }

    /// `epa-channel-binding`: an NTLM/Negotiate login refused with 401 while no channel binding was
    /// sent: IIS Extended Protection for Authentication. mtls sends the binding unless
    /// `--no-channel-binding` is given (to see the server as curl and other clients without it do).
    static func epaChannelBinding(_ facts: ProbeFacts) -> ProbeFinding? {
        guard let answer = refusedLogin(facts), let scheme = answer.answeredWith, scheme == "NTLM" || scheme == "Negotiate", answer.channelBindingSent == false else {
            return nil
        }
        let why = facts.channelBindingDisabled ? " (--no-channel-binding)" : ""
        let fix =
            facts.channelBindingDisabled
            ? "retry without --no-channel-binding (mtls then sends the binding); clients that cannot send one need Extended Protection set to Accept instead of Required (IIS: Windows Authentication → Advanced Settings)"
            : "check the password; if it is right, set Extended Protection to Accept instead of Required (IIS: Windows Authentication → Advanced Settings), or use a client that sends channel bindings"
        return ProbeFinding(
            id: "epa-channel-binding",
            text:
                "the server refused the \(scheme) login\(facts.user.map { " for user '\($0)'" } ?? "") with 401, and our answer carried no TLS channel binding\(why): if the password is right, this is IIS Extended Protection for Authentication, which refuses logins without one",
            fix: fix, exitCode: ExitCode.no)
    }

    /// `credentials-refused`: 401 again after our answer.
    static func credentialsRefused(_ facts: ProbeFacts) -> ProbeFinding? {
        guard let answer = refusedLogin(facts), let scheme = answer.answeredWith else { return nil }
        let detail = facts.finalSubstatus == 1 ? "IIS 401.1: logon failed" : "401 again after our answer"
        return ProbeFinding(
            id: "credentials-refused", text: "the server refused the \(scheme) credentials\(facts.user.map { " for user '\($0)'" } ?? "") (\(detail))",
            fix: "check the user name and password; for Windows auth give DOMAIN\\user", exitCode: ExitCode.no)
    }

    /// `credentials-wanted` / `auth-scheme-excluded` / `auth-scheme-unsupported`: a 401 we did not answer.
    static func credentialsWanted(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.failure == nil, facts.finalStatus == 401, let last = facts.exchanges.last, last.answeredWith == nil else { return nil }
        let offered = last.offered
        guard !offered.isEmpty else {
            return ProbeFinding(
                id: "unauthorized-without-challenge", text: "the server answered 401 without a challenge (no WWW-Authenticate header)",
                fix: "the server expects credentials mtls cannot guess (a token or a cookie from another login)", exitCode: ExitCode.no)
        }
        let offeredWords = offered.joined(separator: ", ")
        guard let user = facts.user else {
            let windows = offered.contains { ["ntlm", "negotiate"].contains($0.lowercased()) }
            // --auth any tried Kerberos first (a ticket from the cache): say why it could not answer.
            if let kerberos = last.kerberosNotUsed {
                let (why, fix) = kerberos.explanation
                return ProbeFinding(
                    id: "credentials-wanted", text: "the server wants credentials (\(offeredWords)), and Kerberos could not answer: \(why)",
                    fix: fix + "; or pass --user DOMAIN\\user --user-password SPEC for NTLM", exitCode: ExitCode.no)
            }
            return ProbeFinding(
                id: "credentials-wanted", text: "the server wants credentials (\(offeredWords))",
                fix: "pass --user NAME --user-password SPEC" + (windows ? " (Windows auth: DOMAIN\\user, answered with NTLM)" : ""), exitCode: ExitCode.no)
        }
        let answerable = offered.compactMap { scheme -> String? in
            switch scheme.lowercased() {
            case "basic": "basic"
            case "digest": "digest"
            case "ntlm", "negotiate": "ntlm"
            default: nil
            }
        }
        if let allowed = facts.allowedSchemes, let other = answerable.first(where: { !allowed.contains($0) }) {
            return ProbeFinding(
                id: "auth-scheme-excluded",
                text: "the server offers \(offeredWords), and --auth \(allowed.joined(separator: ",")) excludes it, so the credentials for '\(user)' were not sent",
                fix: "retry with --auth \(other) (or --auth any)", exitCode: ExitCode.no)
        }
        return ProbeFinding(
            id: "auth-scheme-unsupported", text: "the server offers only \(offeredWords), which mtls cannot answer, so the credentials for '\(user)' were not sent",
            fix: "use a client that speaks \(offeredWords)", exitCode: ExitCode.no)
    }

    /// `nginx-certificate-400`: nginx answers 400 when the certificate is missing or did not verify.
    static func nginxBadRequest(_ facts: ProbeFacts) -> ProbeFinding? {
        guard facts.failure == nil, facts.finalStatus == 400, facts.badRequestMentionsCertificate else { return nil }
        return ProbeFinding(
            id: "nginx-certificate-400",
            text: "the server rejected the request because of the client certificate (nginx: \"No required SSL certificate was sent\" or it did not verify)",
            fix: "pass an identity the server trusts with --p12 or --cert/--key", exitCode: ExitCode.no)
    }

    // MARK: Anything else

    /// A failure no rule above explained: named by its own message, with a fix for its phase.
    static func genericFailure(_ failure: ProbeFacts.Failure) -> ProbeFinding {
        let fix: String
        switch failure.phase {
        case .nameResolution: fix = "check the host name (DNS)"
        case .connect: fix = "check the address and port, and that the server is running"
        case .tlsHandshake: fix = "check the TLS versions (--tls-min/--tls-max) and that this is an HTTPS port"
        case .httpParse: fix = "the server's answer is not usable HTTP/1.1"
        default: fix = "check the network path to the server"
        }
        let code: Int32
        switch failure.phase {
        case .auth, .redirect, .serverCertificate, .clientCertificate: code = ExitCode.no
        case .url, .configuration: code = ExitCode.usage
        default: code = ExitCode.network
        }
        return ProbeFinding(
            id: "failure-\(failure.phase.rawValue.replacingAll(" ", with: "-").lowercased())", text: failure.message, fix: failure.hint ?? fix, exitCode: code)
    }
}

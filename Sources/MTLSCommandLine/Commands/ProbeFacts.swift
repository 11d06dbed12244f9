#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// What a probe observed, as plain facts: the connection's event log, the certificate requests
/// and our answers, the HTTP exchanges, the failure. Every section, cause, fix and the exit code
/// of `mtls probe` is derived from these by ``ProbeRules`` — pure functions, tested from facts
/// without sockets.
struct ProbeFacts {
    /// One certificate request as the client callback saw it.
    struct Request {
        var phase: CertificateRequestPhase
        /// The CA names the server sent (RFC 4514); empty when it sent none.
        var acceptedCANames: [String]
        /// What we sent; nil for an empty Certificate message.
        var sent: SentIdentity?
        /// True when no identity was given at all.
        var hadNoIdentity: Bool
        /// True when the sent identity's issuer is among the CA names (meaningless without names).
        var identityFits: Bool
    }

    /// Our certificate as sent.
    struct SentIdentity {
        var subject: String
        var issuer: String
        var label: String?
    }

    /// One HTTP request of the flow and its answer.
    struct Exchange {
        var kind: String
        var status: Int
        /// The scheme we answered a challenge with (`Basic`, `Digest`, `NTLM`).
        var answeredWith: String?
        /// The schemes the server offered in `WWW-Authenticate`.
        var offered: [String]
        /// For an NTLM/Negotiate answer: whether a TLS channel binding was sent (nil: not known).
        var channelBindingSent: Bool?
        /// Why Kerberos did not answer a Negotiate challenge (`--auth any`), when it did not.
        var kerberosNotUsed: KerberosFailure? = nil
    }

    /// The error that ended the probe.
    struct Failure {
        var phase: HTTPSError.Phase
        var message: String
        var hint: String?
        var alert: String?
        /// Why a Kerberos (Negotiate) login failed, when it did.
        var kerberos: KerberosFailure? = nil
    }

    var host: String
    /// The connection's events, in order.
    var events: [TLSEvent] = []
    var requests: [Request] = []
    /// nil when the server's certificate was never evaluated.
    var serverTrusted: Bool?
    /// With `--revocation`: what our own check found for the client certificate we sent, when it
    /// is not good (a revoked or undeterminable status is what IIS answers with 403.13 or 403.16).
    var clientRevocationProblem: String?
    /// True when that problem is a status the server cannot determine (offline, stale, unknown,
    /// invalid data), not a revocation: IIS (CertCheckMode 0) refuses it with 403.16, not 403.13.
    var clientRevocationUndetermined = false
    var overriddenProblems: [String] = []
    var exchanges: [Exchange] = []
    /// The last response's status, substatus and reason, when one was received.
    var finalStatus: Int?
    var finalSubstatus: Int?
    var finalReason: String = ""
    /// The final body carries http.sys's 0x80070032 (TLS 1.3 cannot renegotiate on IIS).
    var httpSysTLS13Renegotiation = false
    /// A 400 whose body talks about the client certificate (nginx).
    var badRequestMentionsCertificate = false
    var failure: Failure?
    /// `--user`, when given.
    var user: String?
    /// `--auth` when it restricts the schemes (lower case); nil for any.
    var allowedSchemes: [String]?
    /// True when --p12 or --cert was given.
    var identityGiven = false
    /// True when `--no-channel-binding` kept the TLS channel binding out of NTLM answers.
    var channelBindingDisabled = false

    // MARK: Derived facts (read from the log, never assumed)

    /// The first handshake finished.
    var handshakeFinished: Bool { events.contains { if case .handshakeFinished(.handshake, _, _, _) = $0 { true } else { false } } }

    /// Version, cipher and resumption of the finished first handshake.
    var finishedHandshake: (version: String, cipher: String?, resumed: Bool)? {
        for event in events { if case .handshakeFinished(.handshake, let version, let cipher, let resumed) = event { return (version, cipher, resumed) } }
        return nil
    }

    /// What the ServerHello chose (also when the handshake then failed).
    var serverHello: (version: String, cipher: String?)? {
        for event in events { if case .serverHello(let version, let cipher) = event { return (version, cipher) } }
        return nil
    }

    /// The printable start of a non-TLS answer.
    var notTLSPrefix: String? {
        for event in events { if case .notTLS(let prefix) = event { return prefix } }
        return nil
    }

    /// The phases in which a CertificateRequest message was received (from the log, so also a
    /// request the handshake failed before answering).
    var certificateRequestPhases: [TLSMessagePhase] {
        events.compactMap { if case .message(false, "CertificateRequest", let phase) = $0 { phase } else { nil } }
    }

    /// A renegotiation the server finished by resuming the session (no CertificateRequest possible).
    var renegotiationResumed: Bool {
        events.contains { if case .handshakeFinished(.renegotiation, _, _, true) = $0 { true } else { false } }
    }

    /// The last timeout, when one happened.
    var timeout: (during: String, seconds: Double)? {
        for event in events.reversed() { if case .timeout(let during, let seconds) = event { return (during, seconds) } }
        return nil
    }

    /// How the server reacted after our last Certificate message, when it ended the connection
    /// before any HTTP response: an alert it sent, or an end without one.
    ///
    /// The alert wins wherever it stands: a write that met the server's reset is logged before the
    /// alert the transport then reads from the buffer. A close without close_notify and a socket
    /// error (reset, `EPIPE`) mean the same thing here — the server dropped the connection without
    /// saying why — and which of them we see depends only on timing, so they are one reaction.
    var reactionToOurCertificate: Reaction? {
        guard let index = events.lastIndex(where: { if case .message(true, let name, _) = $0 { name.hasPrefix("Certificate") && name != "CertificateVerify" } else { false } })
        else { return nil }
        var ended: Reaction? = nil
        for event in events[(index + 1)...] {
            switch event {
            case .httpResponse: return nil
            case .alert(false, _, let description): return .alert(description)
            case .peerClosed(let closeNotify): ended = ended ?? (closeNotify ? .closedCleanly : .closedWithoutAlert)
            case .socketError: ended = ended ?? .closedWithoutAlert
            default: continue
            }
        }
        return ended
    }

    enum Reaction: Equatable {
        case alert(String)
        /// A close without close_notify, a reset or `EPIPE`: the connection ended without an alert.
        case closedWithoutAlert
        case closedCleanly

        /// "answered with the TLS alert "unknown ca"", "closed the connection without an alert" …
        var words: String {
            switch self {
            case .alert(let description): "answered with the TLS alert \"\(description)\""
            case .closedWithoutAlert: "closed the connection without an alert"
            case .closedCleanly: "closed the connection (close_notify) without answering"
            }
        }
    }

    /// True when the flow ended with a 2xx or 3xx and no error.
    var succeeded: Bool { failure == nil && finalStatus.map { (200...399).contains($0) } == true }
}

extension ProbeFacts {
    /// The facts of a probe run.
    init(analysis: ProbeAnalysis, channelBindingSent: Bool? = nil) {
        let report = analysis.report
        self.init(host: analysis.url.hostHeader)
        events = report?.events.events ?? []
        requests = (report?.certificateRequests ?? []).map { record in
            Request(
                phase: record.phase, acceptedCANames: record.acceptedCANames,
                sent: record.sentCertificate.map { SentIdentity(subject: $0.subject, issuer: $0.issuer, label: record.sentIdentityLabel) },
                hadNoIdentity: record.hadNoIdentity, identityFits: record.identityFits)
        }
        serverTrusted = report?.trust.map(\.isTrusted)
        clientRevocationProblem = analysis.clientRevocation.flatMap { RevocationOutput.problem($0.report) }
        clientRevocationUndetermined =
            analysis.clientRevocation?.report.certificates.contains { entry in
                switch entry.status {
                case .good, .revoked: false
                case .unknown, .cannotCheck, .invalidData: true
                }
            } ?? false
        overriddenProblems = report?.overriddenProblems ?? []
        exchanges = analysis.loginHops.map { hop in
            let kind: String
            var answered: String? = nil
            switch hop.kind {
            case .initial: kind = "initial"
            case .redirect: kind = "redirect"
            case .authentication: kind = "authentication"
            case .formPost: kind = "form-post"
            case .refresh: kind = "refresh"
            }
            if let scheme = hop.sentAuthorization { answered = scheme.displayName }
            return Exchange(
                kind: kind, status: hop.status, answeredWith: answered, offered: hop.challenges.map { $0.scheme }, channelBindingSent: hop.channelBindingSent ?? channelBindingSent,
                kerberosNotUsed: hop.negotiate?.fallback)
        }
        if let final = analysis.final {
            finalStatus = final.status
            finalSubstatus = StatusMeaning.substatus(final)
            finalReason = final.head.reason
            httpSysTLS13Renegotiation = StatusMeaning.isHTTPSysTLS13Renegotiation(final)
            badRequestMentionsCertificate = final.status == 400 && String(decoding: final.body.prefix(4096), as: UTF8.self).lowercased().contains("certificate")
        }
        failure = analysis.failure.map { Failure(phase: $0.phase, message: $0.message, hint: $0.hint?.commandLine, alert: $0.alert, kerberos: $0.kerberos) }
        user = analysis.user
        allowedSchemes = analysis.allowedSchemes
        identityGiven = !analysis.configuration.identities.isEmpty
        channelBindingDisabled = analysis.channelBindingDisabled
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// What a login carries between requests to answer challenges: the protection spaces that
/// succeeded (kept across flows) and the attempt in progress on this flow.
extension LoginStateMachine {
    /// An answer that succeeded, for later requests without a new challenge (kept across flows).
    enum ProtectionSpace {
        case basic(directory: String)
        case digest(DigestAuthenticator, challengedAt: HTTPSURL)
    }

    /// The per-request state of answering challenges.
    struct AuthAttempt {
        var scheme: AuthScheme?
        var preemptive = false
        var staleRetried = false
        var digest: DigestAuthenticator?
        var ntlmChallengeSeen = false
        var ntlmSchemeName = "NTLM"
        var challenge: AuthChallenge?
        /// Kerberos: the security context, and the token to send with the next request.
        var negotiate: NegotiateContext?
        var negotiateToken: [UInt8]?
        var negotiateRounds = 0
        /// Why Kerberos was not used, when another scheme answers instead.
        var kerberosFallback: KerberosFailure?
        var negotiateBindings: [UInt8]?
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// The login flow's rules that need no state: which origins may get credentials, what a redirect
/// sends, a URL's site for SameSite, the Negotiate token and channel binding of a response, and which
/// authentication scheme answers a challenge.
extension LoginStateMachine {
    static func allowedAuthOrigins(first: HTTPSURL, extra: Set<String>) -> Set<String> {
        var allowed: Set<String> = [first.origin]
        for origin in extra {
            if let url = try? HTTPSURL(origin) { allowed.insert(url.origin) }
        }
        return allowed
    }

    /// The request to send after a redirect (RFC 9110 §15.4): 303 turns anything but HEAD into GET;
    /// 301 and 302 turn POST into GET (as browsers do); 307 and 308 keep method and body.
    static func redirected(_ request: HTTPRequest, to url: HTTPSURL, status: Int) -> HTTPRequest {
        var next = request
        next.url = url
        let method = request.method.uppercased()
        let toGet = (status == 303 && method != "HEAD" && method != "GET") || ((status == 301 || status == 302) && method == "POST")
        if toGet {
            next.method = "GET"
            next.body = nil
            next.expectsContinue = false
            for name in ["Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location", "Transfer-Encoding", "Origin"] {
                next.headers.remove(name)
            }
        }
        return next
    }

    /// The site of a URL for SameSite: the scheme and the registrable domain by the Public Suffix
    /// List (the whole host for IP addresses and for hosts that are themselves public suffixes;
    /// without a list installed, the last two labels).
    static func site(of url: HTTPSURL, publicSuffixes: PublicSuffixList = .system) -> String {
        if CookieRules.isIPAddress(url.host) { return "\(url.scheme)://\(url.host)" }
        return "\(url.scheme)://" + (publicSuffixes.registrableDomain(of: url.host) ?? url.host)
    }

    /// The token of a `WWW-Authenticate: Negotiate <token>` field, decoded.
    static func negotiateToken(in response: HTTPResponse) -> [UInt8]? {
        let challenge = AuthChallenge.parse(response.headers.values("WWW-Authenticate")).first { $0.normalizedScheme == "negotiate" && $0.token68 != nil }
        return challenge?.token68.flatMap { Data(base64Encoded: $0) }.map { Array($0) }
    }

    /// RFC 5929 / RFC 5056 channel binding application data: `tls-server-end-point:` + hash.
    static func channelBindingData(_ certificate: Certificate) -> [UInt8] {
        Array("tls-server-end-point:".utf8) + NTLM.tlsServerEndPoint(certificate)
    }

    /// Picks the strongest scheme offered and prepares its answer.
    static func choose(_ challenges: [AuthChallenge], host: String) throws(HTTPSError) -> AuthAttempt {
        var attempt = AuthAttempt()
        let offered = challenges.compactMap { challenge -> (AuthScheme, AuthChallenge)? in
            if let scheme = AuthScheme(challenge: challenge) { return (scheme, challenge) }
            if challenge.normalizedScheme == "negotiate" { return (.ntlm, challenge) }
            return nil
        }
        guard let best = offered.map(\.0).filter({ $0 != .negotiate }).min() else { return attempt }
        attempt.scheme = best
        switch best {
        case .digest:
            let challenge = DigestAuthenticator.preferred(challenges) ?? offered.first { $0.0 == .digest }!.1
            attempt.digest = try DigestAuthenticator(challenge: challenge, host: host)
            attempt.challenge = challenge
        case .ntlm:
            // Prefer the plain NTLM scheme; answer Negotiate with NTLM tokens when only it is offered.
            let challenge = offered.first { $0.1.normalizedScheme == "ntlm" }?.1 ?? offered.first { $0.0 == .ntlm }!.1
            attempt.ntlmSchemeName = challenge.normalizedScheme == "ntlm" ? "NTLM" : "Negotiate"
            attempt.challenge = challenge
        case .basic:
            attempt.challenge = offered.first { $0.0 == .basic }!.1
        case .negotiate:
            break  // Kerberos is chosen before this, in decide
        }
        return attempt
    }
}

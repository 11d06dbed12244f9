/// One request of a login flow and what came back, for `probe` and for debugging a login.
public struct LoginHop: Sendable, CustomStringConvertible {
    /// Why this request was sent.
    public enum Kind: Sendable, Equatable {
        /// The request the caller asked for.
        case initial
        /// Following a redirect of this status from the previous hop.
        case redirect(status: Int)
        /// Answering an authentication challenge of the previous hop.
        case authentication(AuthScheme)
        /// Submitting an auto-submit SAML or WS-Federation form found in the previous hop's page.
        case formPost(HTMLForm.PostBinding)
        /// Following the previous hop's declarative refresh (`<meta http-equiv="refresh">` or a
        /// `Refresh` header) that asked to wait this many seconds.
        case refresh(seconds: Int)
    }

    /// Why it was sent.
    public var kind: Kind
    /// The method sent.
    public var method: String
    /// The URL requested.
    public var url: HTTPSURL
    /// The status received.
    public var status: Int
    /// The `Location` received, when there was one.
    public var location: String?
    /// The challenges of a 401.
    public var challenges: [AuthChallenge]
    /// The scheme of the `Authorization` we sent, when we sent one.
    public var sentAuthorization: AuthScheme?
    /// The names of the cookies sent.
    public var cookiesSent: [String]
    /// What became of each `Set-Cookie` received.
    public var cookieDecisions: [CookieJar.Decision]
    /// Header names removed before this request because it left the first origin.
    public var droppedHeaders: [String]
    /// True when the request went over a kept-alive connection.
    public var reusedConnection: Bool
    /// For an NTLM/Negotiate answer: whether it carried a TLS channel binding (RFC 5929
    /// `tls-server-end-point`, which IIS Extended Protection requires); nil for other hops.
    public var channelBindingSent: Bool? = nil
    /// For a Kerberos (`Negotiate`) hop: principals, mutual authentication, `Persistent-Auth`,
    /// or why Kerberos was not used; nil for other hops.
    public var negotiate: NegotiateOutcome? = nil

    /// `302 GET https://host/path → /next` in one line.
    public var description: String {
        var text = "\(status) \(method) \(url)"
        switch kind {
        case .initial: break
        case .redirect(let status): text += " (after \(status))"
        case .authentication(let scheme): text += " (\(scheme.displayName) answer)"
        case .formPost(let binding): text += " (\(binding.rawValue) form post)"
        case .refresh(let seconds): text += " (refresh after \(seconds) s)"
        }
        if let location { text += " → \(location)" }
        if !challenges.isEmpty { text += " [challenge: \(challenges.map(\.description).joined(separator: ", "))]" }
        if !droppedHeaders.isEmpty { text += " [dropped for another origin: \(droppedHeaders.joined(separator: ", "))]" }
        if channelBindingSent == true { text += " [TLS channel binding sent]" }
        if let negotiate { text += " [\(negotiate)]" }
        return text
    }
}

/// The end of a login flow: the final response and every hop that led to it.
public struct LoginResult: Sendable {
    /// The last response (not a redirect, and not a challenge that was answered).
    public var response: HTTPResponse
    /// Every request sent, in order.
    public var hops: [LoginHop]

    /// The final URL.
    public var url: HTTPSURL { response.url }
    /// True when an NTLM login of this flow sent the TLS channel binding (IIS Extended Protection).
    public var sentChannelBinding: Bool { hops.contains { $0.channelBindingSent == true } }
    /// The final status.
    public var status: Int { response.status }
    /// The final body, decoded to text by its charset.
    public var text: DecodedText { response.decodedText }
}

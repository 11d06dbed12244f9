import Foundation
import MTLSTrust

/// A browser-like login over ``HTTPSClient``: follows redirects, keeps cookies, answers Basic,
/// Digest and NTLM challenges once, and (when asked) submits SAML and WS-Federation HTTP-POST
/// binding forms, recording every hop.
///
/// Security rules, always on:
/// - credentials answer a challenge only from an allowed origin: the first URL's, plus
///   ``authOrigins`` (an IdP must be named explicitly, as `--auth-origin`);
/// - `Authorization`, `Proxy-Authorization`, a caller's `Cookie` header and the request's
///   ``HTTPRequest/firstOriginOnlyHeaders`` are removed once a redirect leaves the first origin;
///   jar cookies go only where their Domain and Path allow;
/// - each challenge is answered once: a second 401 is an ``HTTPSError`` (`.auth`), never a loop
///   (Digest `stale=true` earns one retry with the new nonce);
/// - a redirect from https to http is refused.
///
/// One flow runs at a time per session (calls are serialised).
public final class LoginSession: @unchecked Sendable {
    // @unchecked Sendable: every mutable property is read and written under `flowLock` by `send`,
    // and callers configure the session before sharing it.
    private let flowLock = NSLock()

    /// The HTTPS client (its keep-alive pool carries NTLM's connection-bound handshake).
    public let client: HTTPSClient
    /// The cookie jar, shared across flows.
    public let cookies: CookieJar
    /// The credentials; nil answers no challenge.
    public var credentials: Credentials?
    /// Origins besides the first URL's that may receive the credentials in answer to their own
    /// challenge (`https://idp.example:8443`; the default port may be omitted).
    public var authOrigins: Set<String>
    /// The schemes that may be used (`--auth basic|digest|ntlm|any`).
    public var allowedSchemes: Set<AuthScheme> = Set(AuthScheme.allCases)
    /// Follow 301, 302, 303, 307 and 308 (default: true).
    public var followsRedirects = true
    /// The most redirects followed in one flow (default 10).
    public var maximumRedirects = 10
    /// Submit auto-submit SAML/WS-Federation POST-binding forms as a browser's script would (`--saml`).
    public var submitsPostBindingForms = false
    /// The most forms submitted in one flow (default 5).
    public var maximumFormSubmissions = 5
    /// The hops of the last flow, also when it ended in an error.
    public private(set) var hops: [LoginHop] = []
    /// A sink for one-line hop descriptions (`-v`); secrets are never included.
    public var trace: (@Sendable (String) -> Void)?
    /// The last response received in the last flow, also when the flow ended in an error (a
    /// refused login's 401, with its TLS record).
    public private(set) var lastResponse: HTTPResponse?
    /// Asked for each response head that will end the flow (not a challenge being answered, a
    /// redirect being followed or a form being submitted): a sink returned here receives the body
    /// as it arrives instead of memory (`probe --output` of any size).
    public var finalBodySink: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?

    /// Protection spaces that succeeded, for answering later requests without a new challenge.
    private enum ProtectionSpace {
        case basic(directory: String)
        case digest(DigestAuthenticator, challengedAt: HTTPSURL)
    }
    private var spaces: [String: ProtectionSpace] = [:]
    /// The NTLM challenge (type 2) of the handshake in progress, answered by the next request.
    private var ntlmChallenge: NTLM.Challenge?
    /// The server certificate of the connection that sent the NTLM challenge (for the channel binding).
    private var ntlmServerCertificate: Certificate?
    /// Set when the Authorization being sent carries a channel binding.
    private var sendingChannelBinding = false
    /// The token of the flow in progress (set by `send(_:token:)` under `flowLock`).
    private var currentToken: CancellationToken?
    /// Whether NTLM answers carry the TLS channel binding (RFC 5929 `tls-server-end-point`, which
    /// IIS Extended Protection requires). On by default; off only to diagnose a server, as a
    /// client without bindings (curl) would be seen.
    public var sendsChannelBinding = true

    /// Creates a session over a client.
    ///
    /// - Parameters:
    ///   - client: The HTTPS client.
    ///   - cookies: The jar (a new empty one by default).
    ///   - credentials: The user and password for challenges.
    ///   - authOrigins: Further origins allowed to challenge for the credentials.
    public init(client: HTTPSClient, cookies: CookieJar = CookieJar(), credentials: Credentials? = nil, authOrigins: Set<String> = []) {
        self.client = client
        self.cookies = cookies
        self.credentials = credentials
        self.authOrigins = authOrigins
    }

    /// Creates a session with a new client.
    ///
    /// - Throws: ``HTTPSError`` (`.configuration`) when the TLS configuration is unusable.
    public convenience init(configuration: TLSClientConfiguration, cookies: CookieJar = CookieJar(), credentials: Credentials? = nil, authOrigins: Set<String> = [])
        throws(HTTPSError)
    {
        self.init(client: try HTTPSClient(configuration: configuration), cookies: cookies, credentials: credentials, authOrigins: authOrigins)
    }

    /// `GET url` through the whole flow.
    public func get(_ url: String, headers: HTTPHeaders = [:]) throws(HTTPSError) -> LoginResult {
        try send(HTTPRequest(method: "GET", url: try HTTPSURL(url), headers: headers))
    }

    /// Sends a request and follows the flow to its end: redirects, challenges and (when enabled)
    /// POST-binding forms.
    ///
    /// - Returns: The final response and every hop.
    /// - Throws: ``HTTPSError``: `.auth` when credentials are refused or a non-allowed origin asks
    ///   for them, `.redirect` for too many redirects or an https → http redirect, and every
    ///   transport error of ``HTTPSClient/send(_:bodySink:)``.
    public func send(_ request: HTTPRequest) throws(HTTPSError) -> LoginResult {
        try send(request, token: nil)
    }

    /// ``send(_:)`` with a token that stops the flow: ``CancellationToken/cancel()`` shuts down
    /// the socket of the exchange in progress, and no further hop is made.
    public func send(_ request: HTTPRequest, token: CancellationToken?) throws(HTTPSError) -> LoginResult {
        flowLock.lock()
        defer { flowLock.unlock() }
        currentToken = token
        defer { currentToken = nil }
        hops = []
        lastResponse = nil
        do throws(HTTPSError) {
            return try run(request)
        } catch {
            // A refusal keeps the TLS picture of the connection it happened on.
            var error = error
            if error.report == nil { error.report = lastResponse?.tls }
            throw error
        }
    }

    /// The async form of ``send(_:)``, with the same typed error: run on a dispatch queue (never on
    /// the cooperative pool); cancelling the task closes the connection in use and ends the flow
    /// with phase `.cancelled`.
    public func send(_ request: HTTPRequest) async throws(HTTPSError) -> LoginResult {
        try await HTTPSClient.runCancellable(host: request.url.hostHeader) { token throws(HTTPSError) in try self.send(request, token: token) }
    }

    /// The per-request state of answering challenges.
    private struct AuthAttempt {
        var scheme: AuthScheme?
        var preemptive = false
        var staleRetried = false
        var digest: DigestAuthenticator?
        var ntlmChallengeSeen = false
        var ntlmSchemeName = "NTLM"
        var challenge: AuthChallenge?
    }

    private static let secretHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    private func allowedAuthOrigins(first: HTTPSURL) -> Set<String> {
        var allowed: Set<String> = [first.origin]
        for origin in authOrigins {
            if let url = try? HTTPSURL(origin) { allowed.insert(url.origin) }
        }
        return allowed
    }

    private func run(_ initial: HTTPRequest) throws(HTTPSError) -> LoginResult {
        let firstOrigin = initial.url.origin
        let allowedOrigins = allowedAuthOrigins(first: initial.url)
        var request = initial
        var kind = LoginHop.Kind.initial
        var initiator: HTTPSURL? = nil
        var redirects = 0
        var forms = 0
        var attempt = AuthAttempt()
        var leftFirstOrigin = false
        var dropped: [String] = []

        while true {
            // Leaving the first origin: strip secrets and first-origin-only headers for good.
            if request.url.origin != firstOrigin && !leftFirstOrigin {
                leftFirstOrigin = true
                for name in Self.secretHeaders + request.firstOriginOnlyHeaders.sorted() where request.headers.contains(name) {
                    request.headers.remove(name)
                    dropped.append(name)
                }
            }
            var outgoing = request
            // Cookies from the jar, after any cookie the caller set for the first origin.
            let context: CookieJar.SiteContext =
                initiator.map { Self.site(of: $0) == Self.site(of: request.url) } ?? true ? .sameSite : .crossSiteNavigation(method: request.method)
            let jarCookies = cookies.cookies(for: request.url, context: context)
            if !jarCookies.isEmpty {
                let jarValue = jarCookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
                if let own = outgoing.headers["Cookie"] { outgoing.headers.set("Cookie", own + "; " + jarValue) } else { outgoing.headers.add("Cookie", jarValue) }
            }
            // Authorization: an answer in progress, or a protection space that already succeeded.
            var sentScheme: AuthScheme? = nil
            sendingChannelBinding = false
            if !outgoing.headers.contains("Authorization"), let credentials {
                if let header = try authorization(for: &attempt, request: outgoing, credentials: credentials) {
                    outgoing.headers.set("Authorization", header.value)
                    sentScheme = header.scheme
                }
            }

            if currentToken?.isCancelled == true { throw HTTPSError(.cancelled, host: outgoing.url.hostHeader, "the login was cancelled") }
            let response = try client.send(
                outgoing, bodySinkForHead: finalBodySink.map { sink in { head in self.endsFlow(head) ? sink(head) : nil } }, token: currentToken)
            lastResponse = response
            let decisions = cookies.store(from: response)
            let challenges = response.status == 401 ? AuthChallenge.parse(response.headers.values("WWW-Authenticate")) : []
            var hop = LoginHop(
                kind: kind, method: outgoing.method, url: outgoing.url, status: response.status, location: response.headers["Location"],
                challenges: challenges, sentAuthorization: sentScheme, cookiesSent: jarCookies.map(\.name), cookieDecisions: decisions,
                droppedHeaders: dropped, reusedConnection: response.reusedConnection)
            if sentScheme == .ntlm { hop.channelBindingSent = sendingChannelBinding }
            hops.append(hop)
            trace?(hop.description)
            dropped = []

            // 401: answer once, from an allowed origin.
            if response.status == 401, let credentials, !challenges.isEmpty {
                let host = request.url.hostHeader
                let usable = challenges.filter { challenge in
                    guard let scheme = AuthScheme(challenge: challenge) ?? (challenge.normalizedScheme == "negotiate" ? .ntlm : nil) else { return false }
                    return allowedSchemes.contains(scheme) && (scheme != .digest || (try? DigestAuthenticator(challenge: challenge)) != nil)
                }
                if let scheme = attempt.scheme {
                    if attempt.preemptive {
                        // A remembered answer went stale: forget it and answer this challenge afresh.
                        spaces[request.url.origin] = nil
                        attempt = AuthAttempt()
                    } else if scheme == .digest, let challenge = DigestAuthenticator.preferred(challenges), DigestAuthenticator.isStale(challenge), !attempt.staleRetried,
                        var digest = attempt.digest, let nonce = challenge["nonce"]
                    {
                        digest.renew(nonce: nonce)
                        attempt.digest = digest
                        attempt.staleRetried = true
                        kind = .authentication(.digest)
                        continue
                    } else if scheme == .ntlm, !attempt.ntlmChallengeSeen,
                        let token = challenges.first(where: { ["ntlm", "negotiate"].contains($0.normalizedScheme) && $0.token68 != nil })?.token68
                    {
                        guard let bytes = Data(base64Encoded: token) else {
                            throw HTTPSError(.auth, host: host, "the NTLM challenge is not valid base64")
                        }
                        let challenge = try NTLM.Challenge(bytes: Array(bytes), host: host)
                        attempt.ntlmChallengeSeen = true
                        attempt.challenge = AuthChallenge(scheme: attempt.ntlmSchemeName, token68: token)
                        attempt.digest = nil
                        ntlmChallenge = challenge
                        ntlmServerCertificate = response.tls.serverCertificate
                        kind = .authentication(.ntlm)
                        continue
                    } else {
                        let realm = attempt.challenge?.realm.map { " realm \"\($0)\"" } ?? ""
                        var message = "the server refused the \(scheme.displayName) credentials\(realm) for user '\(credentials.user)' (401 again after one answer)"
                        if scheme == .ntlm && !response.reusedConnection {
                            message += "; the NTLM handshake needs one kept-alive connection, and the server did not keep it"
                        }
                        throw HTTPSError(.auth, host: host, message, hint: "check the user name and password; the request was not repeated")
                    }
                }
                guard !usable.isEmpty else {
                    return LoginResult(response: response, hops: hops)  // nothing we may answer: the 401 is the answer
                }
                guard allowedOrigins.contains(request.url.origin) else {
                    throw HTTPSError(
                        .auth, host: host,
                        "\(request.url.origin) asked for credentials (\(usable.map(\.description).joined(separator: ", "))), but only \(allowedOrigins.sorted().joined(separator: ", ")) may receive them",
                        hint: "if this server should get the password, allow it with --auth-origin \(request.url.origin)")
                }
                attempt = try choose(usable, host: host)
                kind = .authentication(attempt.scheme ?? .basic)
                continue
            }
            if sentScheme != nil && response.status != 401 && !attempt.preemptive {
                remember(attempt, url: request.url)
            }

            // Redirects.
            if followsRedirects, [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"], !location.isEmpty {
                redirects += 1
                guard redirects <= maximumRedirects else {
                    throw HTTPSError(
                        .redirect, host: request.url.hostHeader, "more than \(maximumRedirects) redirects (last: \(response.status) to \(location))",
                        hint: "raise --max-redirects, or look for a redirect loop (often a cookie the client did not keep)")
                }
                let next = try request.url.resolving(location.trimmingCharacters(in: .whitespaces))
                guard next.scheme == "https" else {
                    throw HTTPSError(.redirect, host: request.url.hostHeader, "the server redirected to \(next), which would leave TLS; refused")
                }
                initiator = request.url
                request = Self.redirected(request, to: next, status: response.status)
                attempt = AuthAttempt()
                kind = .redirect(status: response.status)
                continue
            }

            // SAML / WS-Federation HTTP-POST binding.
            let formsApply = submitsPostBindingForms && MediaType(response.headers["Content-Type"] ?? "text/html").isHTML
            if formsApply, let failure = HTMLDocument.parserFailure, response.body.count < 1 << 24,
                String(decoding: response.body, as: UTF8.self).lowercased().contains("<form")
            {
                throw HTTPSError(
                    .configuration, host: request.url.hostHeader, "the page at \(request.url) holds a form, but HTML cannot be parsed: \(failure)",
                    hint: "install libxml2 (Debian: apt-get install libxml2)")
            }
            if formsApply, let form = HTMLForm.forms(in: response).first(where: { $0.postBinding != nil }), let binding = form.postBinding {
                forms += 1
                guard forms <= maximumFormSubmissions else {
                    throw HTTPSError(
                        .redirect, host: request.url.hostHeader, "more than \(maximumFormSubmissions) POST-binding forms in one flow (a login loop?)",
                        hint: "check the service provider's and IdP's clocks and audience settings")
                }
                guard form.action.scheme == "https" else {
                    throw HTTPSError(.redirect, host: request.url.hostHeader, "the \(binding.rawValue) form posts to \(form.action), which would leave TLS; refused")
                }
                initiator = request.url
                var next = try form.submission(origin: response.url.origin)
                next.firstOriginOnlyHeaders = request.firstOriginOnlyHeaders
                for field in request.headers where !["content-type", "content-length", "origin"].contains(field.name.lowercased()) {
                    next.headers.add(field.name, field.value)
                }
                request = next
                attempt = AuthAttempt()
                kind = .formPost(binding)
                continue
            }
            return LoginResult(response: response, hops: hops)
        }
    }

    /// True when a response with this head will be the flow's last (so its body may be streamed).
    private func endsFlow(_ head: HTTPResponseHead) -> Bool {
        if head.status == 401 && credentials != nil { return false }
        if followsRedirects && [301, 302, 303, 307, 308].contains(head.status) && head.headers["Location"]?.isEmpty == false { return false }
        if submitsPostBindingForms && MediaType(head.headers["Content-Type"] ?? "text/html").isHTML { return false }
        return true
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

    /// The site of a URL for SameSite: the scheme and the registrable domain, approximated without a
    /// public-suffix list by the last two labels (the whole host for IP addresses).
    static func site(of url: HTTPSURL) -> String {
        if CookieRules.isIPAddress(url.host) { return "\(url.scheme)://\(url.host)" }
        let labels = url.host.split(separator: ".")
        return "\(url.scheme)://" + labels.suffix(2).joined(separator: ".")
    }

    /// Picks the strongest scheme offered and prepares its answer.
    private func choose(_ challenges: [AuthChallenge], host: String) throws(HTTPSError) -> AuthAttempt {
        var attempt = AuthAttempt()
        let offered = challenges.compactMap { challenge -> (AuthScheme, AuthChallenge)? in
            if let scheme = AuthScheme(challenge: challenge) { return (scheme, challenge) }
            if challenge.normalizedScheme == "negotiate" { return (.ntlm, challenge) }
            return nil
        }
        guard let best = offered.map(\.0).min() else { return attempt }
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
        }
        return attempt
    }

    /// The `Authorization` value for this request, if any.
    private func authorization(for attempt: inout AuthAttempt, request: HTTPRequest, credentials: Credentials) throws(HTTPSError) -> (scheme: AuthScheme, value: String)? {
        let host = request.url.hostHeader
        if attempt.scheme == nil, let space = spaces[request.url.origin] {
            switch space {
            case .basic(let directory) where request.url.path.hasPrefix(directory):
                attempt.scheme = .basic
                attempt.preemptive = true
            case .digest(let digest, let origin) where digest.covers(request.url, challengedAt: origin):
                attempt.scheme = .digest
                attempt.digest = digest
                attempt.preemptive = true
            default:
                break
            }
        }
        guard let scheme = attempt.scheme else { return nil }
        switch scheme {
        case .basic:
            return (.basic, try BasicAuth.authorization(user: credentials.user, password: credentials.password, host: host))
        case .digest:
            guard var digest = attempt.digest else { return nil }
            let value = digest.authorization(credentials: credentials, method: request.method.uppercased(), uri: request.url.target, body: request.body ?? [])
            attempt.digest = digest
            if attempt.preemptive, case .digest(_, let origin) = spaces[request.url.origin] { spaces[request.url.origin] = .digest(digest, challengedAt: origin) }
            return (.digest, value)
        case .ntlm:
            if attempt.ntlmChallengeSeen, let challenge = ntlmChallenge {
                // IIS Extended Protection: bind the login to this TLS connection (RFC 5929 tls-server-end-point).
                let bindings = sendsChannelBinding ? ntlmServerCertificate.map { NTLM.httpsChannelBindingsHash(serverCertificate: $0) } : nil
                let message = try NTLM.authenticateMessage(challenge: challenge, credentials: credentials, channelBindings: bindings, host: host)
                sendingChannelBinding = bindings != nil
                ntlmChallenge = nil
                ntlmServerCertificate = nil
                return (.ntlm, "\(attempt.ntlmSchemeName) " + Data(message).base64EncodedString())
            }
            return (.ntlm, "\(attempt.ntlmSchemeName) " + Data(NTLM.negotiateMessage()).base64EncodedString())
        }
    }

    /// Keeps a successful Basic or Digest answer for later requests in the same protection space.
    private func remember(_ attempt: AuthAttempt, url: HTTPSURL) {
        switch attempt.scheme {
        case .basic:
            let path = url.path
            let directory = String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
            spaces[url.origin] = .basic(directory: directory)
        case .digest:
            if let digest = attempt.digest { spaces[url.origin] = .digest(digest, challengedAt: url) }
        default:
            break
        }
    }

    /// Forgets remembered Basic and Digest answers.
    public func forgetAuthentication() {
        flowLock.lock()
        spaces.removeAll()
        flowLock.unlock()
    }
}

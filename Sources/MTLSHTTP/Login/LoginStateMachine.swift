#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// The login flow of ``LoginSession`` as states and actions. No I/O: the driver looks cookies up
/// in the jar, sends requests, stores `Set-Cookie`s and feeds what came back here; each event
/// returns the one action to perform next.
///
/// States and legal transitions:
/// - `idle` → `lookingUpCookies` on `start`, and again for every further hop;
/// - `lookingUpCookies` → `sending` once the jar's cookies are in (the `Authorization` is added:
///   an answer in progress, or a protection space that already succeeded);
/// - `sending` → `storingCookies` on the response (the jar sees every response first);
/// - `storingCookies` → `lookingUpCookies` for the next hop (a challenge answered, a redirect
///   followed, a POST-binding form submitted), or `finished` with the response that ends the flow
///   (anything else: a 200, an unanswerable 401, a 403 — IIS's 403.7 and 403.16 client-certificate
///   refusals are such final answers, read by the caller from the response and its TLS record);
/// - any state → `failed` with the error.
struct LoginStateMachine {
    enum State {
        case idle, lookingUpCookies, sending, storingCookies, finished, failed
    }

    enum Action {
        /// Ask the jar for the cookies of `url` in `context`, and answer with `cookiesFound`.
        case lookUpCookies(url: HTTPSURL, context: CookieJar.SiteContext)
        /// Send the request, and answer with `responseReceived`.
        case send(HTTPRequest)
        /// Store the response's cookies in the jar, and answer with `cookiesStored`.
        case storeCookies(HTTPResponse)
        /// The flow ended with this response.
        case finish(HTTPResponse)
        case fail(HTTPSError)
    }

    enum Event {
        case start(HTTPRequest)
        case cookiesFound([Cookie])
        case responseReceived(HTTPResponse)
        case cookiesStored([CookieJar.Decision])
    }

    private static let secretHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    let options: LoginOptions
    private(set) var state: State = .idle
    /// The protection spaces, as given and as updated by this flow.
    private(set) var spaces: [String: ProtectionSpace]
    /// Every request sent, in order, with what came back.
    private(set) var hops: [LoginHop] = []
    /// The last response received.
    private(set) var lastResponse: HTTPResponse?

    private var firstOrigin = ""
    private var allowedOrigins: Set<String> = []
    private var request: HTTPRequest?
    private var outgoing: HTTPRequest?
    private var kind = LoginHop.Kind.initial
    private var initiator: HTTPSURL? = nil
    private var redirects = 0
    private var forms = 0
    private var attempt = AuthAttempt()
    private var leftFirstOrigin = false
    private var dropped: [String] = []
    private var jarCookies: [Cookie] = []
    private var sentScheme: AuthScheme? = nil
    /// The NTLM challenge (type 2) of the handshake in progress, answered by the next request.
    private var ntlmChallenge: NTLM.Challenge?
    /// The server certificate of the connection that sent the NTLM challenge (for the channel binding).
    private var ntlmServerCertificate: Certificate?
    /// Set when the Authorization being sent carries a channel binding.
    private var sendingChannelBinding = false

    /// True when the TLS configuration presents a client certificate: like the password, it
    /// answers only the allowed origins, so no hop may take it elsewhere.
    let presentsClientCertificate: Bool

    init(options: LoginOptions, spaces: [String: ProtectionSpace] = [:], presentsClientCertificate: Bool = false) {
        self.options = options
        self.spaces = spaces
        self.presentsClientCertificate = presentsClientCertificate
    }

    mutating func handle(_ event: Event) -> Action {
        do throws(HTTPSError) {
            switch (state, event) {
            case (.idle, .start(let initial)):
                firstOrigin = initial.url.origin
                allowedOrigins = Self.allowedAuthOrigins(first: initial.url, extra: options.authOrigins)
                return nextHop(initial)
            case (.lookingUpCookies, .cookiesFound(let cookies)):
                return try prepare(cookies: cookies)
            case (.sending, .responseReceived(let response)):
                lastResponse = response
                state = .storingCookies
                return .storeCookies(response)
            case (.storingCookies, .cookiesStored(let decisions)):
                return try decide(decisions: decisions)
            default:
                preconditionFailure("LoginStateMachine: \(event) is not valid in state \(state)")
            }
        } catch {
            state = .failed
            return .fail(error)
        }
    }

    /// True when a response with this head will be the flow's last (so its body may be streamed).
    func endsFlow(_ head: HTTPResponseHead) -> Bool {
        if head.status == 401 && answersChallenges { return false }
        if options.followsRedirects && Self.redirectStatuses.contains(head.status) && head.headers["Location"]?.isEmpty == false { return false }
        if options.submitsPostBindingForms && (head.headers.mediaType?.isHTML ?? true) { return false }
        if options.followsRedirects && head.headers["Refresh"] != nil { return false }
        // A successful HTML page may declare a refresh in its markup, so it is read before it is
        // taken as the last (its body is then written out whole; a refresh it does not follow
        // leaves it the flow's page).
        if options.followsRedirects && (200..<300).contains(head.status) && head.headers.mediaType?.isHTML == true { return false }
        return true
    }

    /// True when a 401 may be answered: a password, or a Kerberos source.
    private var answersChallenges: Bool { options.credentials != nil || (options.kerberos != nil && options.allowedSchemes.contains(.negotiate)) }

    // MARK: - Steps

    private mutating func nextHop(_ next: HTTPRequest) -> Action {
        var next = next
        // Leaving the first origin: strip secrets and first-origin-only headers for good.
        if next.url.origin != firstOrigin && !leftFirstOrigin {
            leftFirstOrigin = true
            for name in Self.secretHeaders + next.firstOriginOnlyHeaders.sorted() where next.headers.contains(name) {
                next.headers.remove(name)
                dropped.append(name)
            }
        }
        request = next
        state = .lookingUpCookies
        let context: CookieJar.SiteContext =
            initiator.map { Self.site(of: $0) == Self.site(of: next.url) } ?? true ? .sameSite : .crossSiteNavigation(method: next.method)
        return .lookUpCookies(url: next.url, context: context)
    }

    private mutating func prepare(cookies: [Cookie]) throws(HTTPSError) -> Action {
        guard let request else { preconditionFailure("LoginStateMachine: no request") }
        var outgoing = request
        jarCookies = cookies
        // Cookies from the jar, after any cookie the caller set for the first origin.
        if !cookies.isEmpty {
            let jarValue = cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
            if let own = outgoing.headers["Cookie"] { outgoing.headers.set("Cookie", own + "; " + jarValue) } else { outgoing.headers.add("Cookie", jarValue) }
        }
        // Authorization: an answer in progress, or a protection space that already succeeded.
        sentScheme = nil
        sendingChannelBinding = false
        if !outgoing.headers.contains("Authorization"), answersChallenges {
            if let header = try authorization(request: outgoing, credentials: options.credentials) {
                outgoing.headers.set("Authorization", header.value)
                sentScheme = header.scheme
            }
        }
        self.outgoing = outgoing
        state = .sending
        return .send(outgoing)
    }

    private mutating func decide(decisions: [CookieJar.Decision]) throws(HTTPSError) -> Action {
        guard let request, let outgoing, let response = lastResponse else { preconditionFailure("LoginStateMachine: no exchange") }
        let challenges = response.status == 401 ? AuthChallenge.parse(response.headers.values("WWW-Authenticate")) : []
        var hop = LoginHop(
            kind: kind, method: outgoing.method, url: outgoing.url, status: response.status, location: response.headers["Location"],
            challenges: challenges, sentAuthorization: sentScheme, cookiesSent: jarCookies.map(\.name), cookieDecisions: decisions,
            droppedHeaders: dropped, reusedConnection: response.reusedConnection)
        if sentScheme == .ntlm || sentScheme == .negotiate { hop.channelBindingSent = sendingChannelBinding }
        if sentScheme == .negotiate, let context = attempt.negotiate {
            hop.negotiate = NegotiateOutcome(
                mechanism: "Kerberos", clientPrincipal: context.clientPrincipal, servicePrincipal: context.servicePrincipal,
                persistentAuth: response.headers["Persistent-Auth"])
            hop.negotiate?.ticketSource = NegotiateOutcome.ticketSourceName(context.usedSource)
            if response.status != 401 {
                // Mutual authentication: the server's last token proves it holds the service key.
                let token = challenges.isEmpty ? Self.negotiateToken(in: response) : nil
                if let token {
                    do throws(KerberosFailure) {
                        _ = try context.step(input: token, channelBindings: nil)
                    } catch {
                        hops.append(hop)
                        throw error.httpsError(host: request.url.hostHeader)
                    }
                }
                hop.negotiate?.mutualAuthentication = token != nil && context.isEstablished
            }
        } else if let fallback = attempt.kerberosFallback, sentScheme != nil {
            hop.negotiate = NegotiateOutcome(
                mechanism: sentScheme?.displayName ?? "", clientPrincipal: fallback.clientPrincipal, servicePrincipal: fallback.servicePrincipal, fallback: fallback)
        }
        hops.append(hop)
        dropped = []

        // 401: answer once, from an allowed origin.
        if response.status == 401, answersChallenges, !challenges.isEmpty {
            let host = request.url.hostHeader
            let usable = challenges.filter { challenge in
                guard options.credentials != nil, let scheme = AuthScheme(challenge: challenge) ?? (challenge.normalizedScheme == "negotiate" ? .ntlm : nil) else { return false }
                return options.allowedSchemes.contains(scheme) && (scheme != .digest || (try? DigestAuthenticator(challenge: challenge)) != nil)
            }
            let kerberosOffered = options.kerberos != nil && options.allowedSchemes.contains(.negotiate) && challenges.contains { $0.normalizedScheme == "negotiate" }
            if let scheme = attempt.scheme {
                if scheme == .negotiate, let context = attempt.negotiate {
                    // A 401 after a Kerberos token: the server's token (a KRB-ERROR, or the next
                    // leg) goes back to GSSAPI, so that its reason is read.
                    let token = Self.negotiateToken(in: response)
                    if let token, attempt.negotiateRounds < 4 {
                        do throws(KerberosFailure) {
                            if let next = try context.step(input: token, channelBindings: attempt.negotiateBindings) {
                                attempt.negotiateToken = next
                                attempt.negotiateRounds += 1
                                kind = .authentication(.negotiate)
                                return nextHop(request)
                            }
                        } catch {
                            var failure = error
                            failure.beforeSending = false
                            throw failure.httpsError(host: host)
                        }
                    }
                    throw KerberosFailure(
                        reason: .refused, clientPrincipal: context.clientPrincipal, servicePrincipal: context.servicePrincipal, gssMessage: "", majorStatus: 0,
                        beforeSending: false
                    ).httpsError(host: host)
                }
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
                    return nextHop(request)
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
                    return nextHop(request)
                } else {
                    let realm = attempt.challenge?.realm.map { " realm \(DisplayText.quoted($0))" } ?? ""
                    var message = "the server refused the \(scheme.displayName) credentials\(realm) for user '\(options.credentials?.user ?? "")' (401 again after one answer)"
                    if scheme == .ntlm && !response.reusedConnection {
                        message += "; the NTLM handshake needs one kept-alive connection, and the server did not keep it"
                    }
                    throw HTTPSError(.auth, host: host, message, hint: "check the user name and password; the request was not repeated")
                }
            }
            guard !usable.isEmpty || kerberosOffered else {
                return finish(response)  // nothing we may answer: the 401 is the answer
            }
            guard allowedOrigins.contains(request.url.origin) else {
                throw HTTPSError(
                    .auth, host: host,
                    "\(request.url.origin) asked for credentials (\(usable.map(\.description).joined(separator: ", "))), but only \(allowedOrigins.sorted().joined(separator: ", ")) may receive them",
                    hint: "if this server should get the password, allow it with \(setting: .authOrigins) \(request.url.origin)")
            }
            if kerberosOffered {
                // IIS's provider order: Kerberos first when a ticket can be had.
                let bindings = options.sendsChannelBinding ? response.tls.serverCertificate.map(Self.channelBindingData) : nil
                do throws(KerberosFailure) {
                    let context = try NegotiateContext(host: request.url.host, source: options.kerberos!, credentials: options.credentials)
                    if case .credentialsCache = options.kerberos!, let wanted = options.credentials, options.allowedSchemes.count > 1,
                        !wanted.isUser(ofPrincipal: context.clientPrincipal)
                    {
                        // --auth any with --user: another user's ticket is not that user's login.
                        throw KerberosFailure(
                            reason: .noCredentials, clientPrincipal: context.clientPrincipal, servicePrincipal: context.servicePrincipal,
                            gssMessage: "the credentials cache holds a ticket of \(context.clientPrincipal ?? "another user"), not of \(wanted.user)", majorStatus: 0,
                            beforeSending: true)
                    }
                    let token = try context.step(input: nil, channelBindings: bindings)
                    attempt = AuthAttempt()
                    attempt.scheme = .negotiate
                    attempt.negotiate = context
                    attempt.negotiateToken = token
                    attempt.negotiateBindings = bindings
                    attempt.challenge = challenges.first { $0.normalizedScheme == "negotiate" }
                    kind = .authentication(.negotiate)
                    return nextHop(request)
                } catch {
                    if usable.isEmpty, case .automatic? = options.kerberos {
                        // --auth any without a password: the 401 stands as the answer, and the hop
                        // says why Kerberos could not answer it (no ticket, SPN unknown, ...).
                        options.trace?("Kerberos not used (\(error.reason.rawValue)): \(error.explanation.message)")
                        hops[hops.count - 1].negotiate = NegotiateOutcome(
                            mechanism: "none", clientPrincipal: error.clientPrincipal, servicePrincipal: error.servicePrincipal, fallback: error)
                        return finish(response)
                    }
                    guard !usable.isEmpty, !error.judgesTheAccount else { throw error.httpsError(host: host) }
                    options.trace?("Kerberos not used (\(error.reason.rawValue)): \(error.explanation.message); falling back")
                    attempt = try Self.choose(usable, host: host)
                    attempt.kerberosFallback = error
                    kind = .authentication(attempt.scheme ?? .basic)
                    return nextHop(request)
                }
            }
            attempt = try Self.choose(usable, host: host)
            kind = .authentication(attempt.scheme ?? .basic)
            return nextHop(request)
        }
        if sentScheme != nil && response.status != 401 && !attempt.preemptive {
            remember(attempt, url: request.url)
        }

        // Redirects.
        if options.followsRedirects, Self.redirectStatuses.contains(response.status), let location = response.headers["Location"], !location.isEmpty {
            redirects += 1
            guard redirects <= options.maximumRedirects else {
                throw HTTPSError(
                    .redirect, host: request.url.hostHeader, "more than \(options.maximumRedirects) redirects (last: \(response.status) to \(location))",
                    hint: "raise \(setting: .maximumRedirects), or look for a redirect loop (often a cookie the client did not keep)")
            }
            let next = try request.url.resolving(location.trimmingWhitespace())
            guard next.scheme == "https" else {
                throw HTTPSError(.redirect, host: request.url.hostHeader, "the server redirected to \(next), which would leave TLS; refused")
            }
            let redirected = Self.redirected(request, to: next, status: response.status)
            try checkOrigin(of: redirected, after: "a \(response.status) redirect", from: request)
            initiator = request.url
            attempt = AuthAttempt()
            kind = .redirect(status: response.status)
            return nextHop(redirected)
        }

        // SAML / WS-Federation HTTP-POST binding.
        let formsApply = options.submitsPostBindingForms && (response.headers.mediaType?.isHTML ?? true)
        if formsApply, let failure = HTMLDocument.parserFailure, response.body.count < 1 << 24,
            String(decoding: response.body, as: UTF8.self).lowercased().contains("<form")
        {
            throw HTTPSError(
                .configuration, host: request.url.hostHeader, "the page at \(request.url) holds a form, but HTML cannot be parsed: \(failure)",
                hint: "install libxml2 (Debian: apt-get install libxml2)")
        }
        if formsApply, let form = HTMLForm.forms(in: response).first(where: { $0.postBinding != nil }), let binding = form.postBinding {
            forms += 1
            guard forms <= options.maximumFormSubmissions else {
                throw HTTPSError(
                    .redirect, host: request.url.hostHeader, "more than \(options.maximumFormSubmissions) POST-binding forms in one flow (a login loop?)",
                    hint: "check the service provider's and IdP's clocks and audience settings")
            }
            guard form.action.scheme == "https" else {
                throw HTTPSError(.redirect, host: request.url.hostHeader, "the \(binding.rawValue) form posts to \(form.action), which would leave TLS; refused")
            }
            var next = try form.submission(origin: response.url.origin)
            // The form's own body is for its action (that is the binding); the certificate is not.
            try checkOrigin(of: next, after: "the \(binding.rawValue) form", from: request, bodyIsForTarget: true)
            initiator = request.url
            next.firstOriginOnlyHeaders = request.firstOriginOnlyHeaders
            for field in request.headers where !["content-type", "content-length", "origin"].contains(field.name.lowercased()) {
                next.headers.add(field.name, field.value)
            }
            attempt = AuthAttempt()
            kind = .formPost(binding)
            return nextHop(next)
        }

        // A declarative refresh (meta refresh, `Refresh` header) to another page, as a browser follows it.
        if options.followsRedirects, (200..<300).contains(response.status), let refresh = DeclarativeRefresh.declared(by: response),
            refresh.seconds <= options.maximumRefreshDelay, let target = refresh.url
        {
            var base = request.url
            if let href = refresh.baseHref, let resolved = try? request.url.resolving(href.trimmingWhitespaceAndNewlines()) { base = resolved }
            let next = try base.resolving(target.trimmingWhitespace())
            if next != request.url {
                redirects += 1
                guard redirects <= options.maximumRedirects else {
                    throw HTTPSError(
                        .redirect, host: request.url.hostHeader, "more than \(options.maximumRedirects) redirects (last: a refresh to \(next))",
                        hint: "raise \(setting: .maximumRedirects), or look for a redirect loop (often a cookie the client did not keep)")
                }
                guard next.scheme == "https" else {
                    throw HTTPSError(.redirect, host: request.url.hostHeader, "the page refreshes to \(next), which would leave TLS; refused")
                }
                let refreshed = Self.redirected(request, to: next, status: 303)
                try checkOrigin(of: refreshed, after: "the page's refresh", from: request)
                initiator = request.url
                attempt = AuthAttempt()
                kind = .refresh(seconds: refresh.seconds)
                return nextHop(refreshed)
            }
        }
        return finish(response)
    }

    /// Stops a hop to an origin that is neither the first URL's nor one the user allowed
    /// (``LoginOptions/authOrigins``, `--auth-origin`) when it would re-send the request's body
    /// there (a 307/308 keeps method and body) or present the client certificate there: both
    /// are meant for the origin the user named, as the password is.
    private func checkOrigin(of next: HTTPRequest, after how: String, from request: HTTPRequest, bodyIsForTarget: Bool = false) throws(HTTPSError) {
        let origin = next.url.origin
        guard !allowedOrigins.contains(origin) else { return }
        let hint: Hint = "if \(origin) should receive it, allow it with \(setting: .authOrigins) \(origin)"
        if !bodyIsForTarget, let body = next.body, !body.isEmpty {
            throw HTTPSError(
                .redirect, host: request.url.hostHeader,
                "\(how) from \(request.url.origin) to \(origin) would send the \(next.method) body (\(body.count) bytes) to another origin; stopped before sending it",
                hint: hint)
        }
        if presentsClientCertificate {
            throw HTTPSError(
                .redirect, host: request.url.hostHeader,
                "\(how) from \(request.url.origin) to \(origin) would present the client certificate to another origin; stopped before connecting there",
                hint: hint)
        }
    }

    private mutating func finish(_ response: HTTPResponse) -> Action {
        state = .finished
        return .finish(response)
    }

    /// The `Authorization` value for this request, if any.
    private mutating func authorization(request: HTTPRequest, credentials: Credentials?) throws(HTTPSError) -> (scheme: AuthScheme, value: String)? {
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
        if scheme == .negotiate {
            guard let token = attempt.negotiateToken else { return nil }
            attempt.negotiateToken = nil
            sendingChannelBinding = attempt.negotiateBindings != nil
            return (.negotiate, "Negotiate " + Data(token).base64EncodedString())
        }
        guard let credentials else { return nil }
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
                let bindings = options.sendsChannelBinding ? ntlmServerCertificate.map { NTLM.httpsChannelBindingsHash(serverCertificate: $0) } : nil
                let message = try NTLM.authenticateMessage(challenge: challenge, credentials: credentials, channelBindings: bindings, host: host)
                sendingChannelBinding = bindings != nil
                ntlmChallenge = nil
                ntlmServerCertificate = nil
                return (.ntlm, "\(attempt.ntlmSchemeName) " + Data(message).base64EncodedString())
            }
            return (.ntlm, "\(attempt.ntlmSchemeName) " + Data(NTLM.negotiateMessage()).base64EncodedString())
        case .negotiate:
            return nil
        }
    }

    /// Keeps a successful Basic or Digest answer for later requests in the same protection space.
    private mutating func remember(_ attempt: AuthAttempt, url: HTTPSURL) {
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
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust
import Synchronization

/// What a ``LoginSession`` does, fixed at init (as ``HTTPClientOptions`` is for the client).
public struct LoginOptions: Sendable {
    /// The credentials; nil answers no challenge.
    public var credentials: Credentials?
    /// Origins besides the first URL's that may receive the credentials in answer to their own
    /// challenge (`https://idp.example:8443`; the default port may be omitted).
    public var authOrigins: Set<String>
    /// The schemes that may be used (`--auth basic|digest|ntlm|negotiate|any`).
    public var allowedSchemes: Set<AuthScheme>
    /// Follow 301, 302, 303, 307 and 308, and a page's declarative refresh (`<meta
    /// http-equiv="refresh" content="0; url=…">` or a `Refresh` header) that waits at most
    /// ``maximumRefreshDelay`` seconds, as a browser follows it.
    public var followsRedirects: Bool
    /// The most redirects followed in one flow (refreshes count as redirects).
    public var maximumRedirects: Int
    /// The longest declarative refresh followed, in seconds: one that waits longer is a page's
    /// own timer ("refreshing in 300 seconds") and ends the flow. The wait itself is not slept.
    /// With a body sink, a successful HTML page is still read whole first, for its refresh.
    public var maximumRefreshDelay: Int
    /// Submit auto-submit SAML/WS-Federation POST-binding forms as a browser's script would (`--saml`).
    public var submitsPostBindingForms: Bool
    /// The most forms submitted in one flow.
    public var maximumFormSubmissions: Int
    /// Whether NTLM and Kerberos answers carry the TLS channel binding (RFC 5929 `tls-server-end-point`, which
    /// IIS Extended Protection requires). Off only to diagnose a server, as a client without
    /// bindings (curl) would be seen.
    public var sendsChannelBinding: Bool
    /// Where the Kerberos credentials of a `Negotiate` login come from; nil answers `Negotiate`
    /// with NTLM tokens only (as before Kerberos). With a source and ``AuthScheme/negotiate``
    /// allowed, a Kerberos token is preferred; when none can be had and other schemes are allowed
    /// with ``credentials``, the login falls back to them (IIS's provider order), else fails with
    /// ``HTTPSError/kerberos`` saying why.
    public var kerberos: KerberosCredentialSource?
    /// A sink for one-line hop descriptions (`-v`); secrets are never included.
    public var trace: (@Sendable (String) -> Void)?

    public init(
        credentials: Credentials? = nil, authOrigins: Set<String> = [], allowedSchemes: Set<AuthScheme> = Set(AuthScheme.allCases),
        followsRedirects: Bool = true, maximumRedirects: Int = 10, maximumRefreshDelay: Int = 5, submitsPostBindingForms: Bool = false,
        maximumFormSubmissions: Int = 5, sendsChannelBinding: Bool = true, kerberos: KerberosCredentialSource? = nil, trace: (@Sendable (String) -> Void)? = nil
    ) {
        self.kerberos = kerberos
        self.credentials = credentials
        self.authOrigins = authOrigins
        self.allowedSchemes = allowedSchemes
        self.followsRedirects = followsRedirects
        self.maximumRedirects = maximumRedirects
        self.maximumRefreshDelay = maximumRefreshDelay
        self.submitsPostBindingForms = submitsPostBindingForms
        self.maximumFormSubmissions = maximumFormSubmissions
        self.sendsChannelBinding = sendsChannelBinding
        self.trace = trace
    }
}

/// A browser-like login over ``HTTPSClient``: follows redirects, keeps cookies, answers Basic,
/// Digest and NTLM challenges once, and (when asked) submits SAML and WS-Federation HTTP-POST
/// binding forms, recording every hop.
///
/// Security rules, always on:
/// - credentials answer a challenge only from an allowed origin: the first URL's, plus
///   ``LoginOptions/authOrigins`` (an IdP must be named explicitly, as `--auth-origin`);
/// - `Authorization`, `Proxy-Authorization`, a caller's `Cookie` header and the request's
///   ``HTTPRequest/firstOriginOnlyHeaders`` are removed once a redirect leaves the first origin;
///   jar cookies go only where their Domain and Path allow;
/// - each challenge is answered once: a second 401 is an ``HTTPSError`` (`.auth`), never a loop
///   (Digest `stale=true` earns one retry with the new nonce);
/// - a redirect from https to http is refused;
/// - a hop (redirect, refresh, POST-binding form) to an origin not allowed stops with an
///   ``HTTPSError`` (`.redirect`) when it would re-send the request's body there (307/308) or
///   present the client certificate there: both answer only the allowed origins, as the password.
///
/// One flow runs at a time per session (calls are serialised, awaiting their turn without holding
/// a thread).
public final class LoginSession: Sendable {
    /// Lets one flow run at a time.
    private let gate = FlowGate()
    /// What one flow leaves for the next: hops, last response, remembered answers.
    private struct FlowState {
        var lastHops: [LoginHop] = []
        var lastFinal: HTTPResponse?
        /// Protection spaces that succeeded, for answering later requests without a new challenge.
        var spaces: [String: LoginStateMachine.ProtectionSpace] = [:]
    }
    private let flowState = Locked(FlowState())

    /// The HTTPS client (its keep-alive pool carries NTLM's connection-bound handshake).
    public let client: HTTPSClient
    /// The cookie jar, shared across flows.
    public let cookies: CookieJar
    /// What the session does, fixed at init.
    public let options: LoginOptions

    /// The hops of the last flow, also when it ended in an error (during a flow, its hops so far).
    public var hops: [LoginHop] { flowState.withLock { $0.lastHops } }
    /// The last response received in the last flow, also when the flow ended in an error (a
    /// refused login's 401, with its TLS record).
    public var lastResponse: HTTPResponse? { flowState.withLock { $0.lastFinal } }

    /// Creates a session over a client.
    ///
    /// - Parameters:
    ///   - client: The HTTPS client.
    ///   - cookies: The jar (a new empty one by default).
    ///   - options: Credentials, the origins allowed to challenge for them, redirect and form rules.
    public init(client: HTTPSClient, cookies: CookieJar = CookieJar(), options: LoginOptions = LoginOptions()) {
        self.client = client
        self.cookies = cookies
        self.options = options
    }

    /// Creates a session with a new client.
    ///
    /// - Throws: ``HTTPSError`` (`.configuration`) when the TLS configuration is unusable.
    public convenience init(
        configuration: TLSClientConfiguration, clientOptions: HTTPClientOptions = HTTPClientOptions(), cookies: CookieJar = CookieJar(),
        options: LoginOptions = LoginOptions()
    ) throws(HTTPSError) {
        self.init(client: try HTTPSClient(configuration: configuration, options: clientOptions), cookies: cookies, options: options)
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
    ///
    /// - Parameter finalBodySink: Asked for each response head that will end the flow (not a
    ///   challenge being answered, a redirect being followed or a form being submitted): a sink
    ///   returned here receives the body as it arrives instead of memory (`probe --output` of any size).
    public func send(
        _ request: HTTPRequest, token: CancellationToken?, finalBodySink: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)? = nil
    ) throws(HTTPSError) -> LoginResult {
        try Engine.blocking { () async throws(HTTPSError) -> LoginResult in
            try await self.perform(request, token: token, finalBodySink: finalBodySink)
        }
    }

    /// The async form of ``send(_:)``, with the same typed error: the flow awaits its sockets on
    /// the engine's loops; cancelling the task closes the connection in use and ends the flow with
    /// phase `.cancelled`.
    public func send(_ request: HTTPRequest) async throws(HTTPSError) -> LoginResult {
        try await send(request, finalBodySink: nil)
    }

    /// ``send(_:)`` with the final response's body sink of ``send(_:token:finalBodySink:)``.
    public func send(
        _ request: HTTPRequest, finalBodySink: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?
    ) async throws(HTTPSError) -> LoginResult {
        try await Engine.run(host: request.url.hostHeader) { token async throws(HTTPSError) -> LoginResult in
            try await self.perform(request, token: token, finalBodySink: finalBodySink)
        }
    }

    /// The one flow driver, under both APIs: waits for the flow before it, then runs (where its
    /// caller is: the blocking call's worker or the async call's loop).
    nonisolated(nonsending) private func perform(
        _ request: HTTPRequest, token: CancellationToken?, finalBodySink: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?
    ) async throws(HTTPSError) -> LoginResult {
        await gate.enter()
        defer { gate.leave() }
        flowState.withLock { state in
            state.lastHops = []
            state.lastFinal = nil
        }
        do throws(HTTPSError) {
            return try await run(request, token: token, finalBodySink: finalBodySink)
        } catch {
            // A refusal keeps the TLS picture of the connection it happened on.
            var error = error
            if error.report == nil { error.report = flowState.withLock { $0.lastFinal?.tls } }
            throw error
        }
    }

    /// Drives a ``LoginStateMachine``: the jar, the client and the trace are its hands.
    nonisolated(nonsending) private func run(
        _ initial: HTTPRequest, token: CancellationToken?, finalBodySink: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?
    ) async throws(HTTPSError) -> LoginResult {
        let machine = MachineBox(
            LoginStateMachine(options: options, spaces: flowState.withLock { $0.spaces }, presentsClientCertificate: !client.tls.configuration.identities.isEmpty))
        var tracedHops = 0
        defer {
            let finished = machine
            flowState.withLock { state in
                state.spaces = finished.machine.spaces
                state.lastHops = finished.machine.hops
                state.lastFinal = finished.machine.lastResponse
            }
        }
        var action = machine.handle(.start(initial))
        while true {
            switch action {
            case .lookUpCookies(let url, let context):
                action = machine.handle(.cookiesFound(cookies.cookies(for: url, context: context)))
            case .send(let outgoing):
                if token?.isCancelled == true { throw HTTPSError(.cancelled, host: outgoing.url.hostHeader, "the login was cancelled") }
                let response = try await client.perform(outgoing, bodySink: nil, bodySinkForHead: machine.finalBodySink(finalBodySink), token: token)
                action = machine.handle(.responseReceived(response))
            case .storeCookies(let response):
                action = machine.handle(.cookiesStored(cookies.store(from: response)))
                if let hop = machine.machine.hops.last, machine.machine.hops.count > tracedHops {
                    tracedHops = machine.machine.hops.count
                    let hops = machine.machine.hops
                    flowState.withLock { $0.lastHops = hops }
                    options.trace?(hop.description)
                }
            case .finish(let response):
                return LoginResult(response: response, hops: machine.machine.hops)
            case .fail(let error):
                throw error
            }
        }
    }

    /// Forgets remembered Basic and Digest answers.
    public func forgetAuthentication() {
        flowState.withLock { $0.spaces.removeAll() }
    }
}

/// A flow's ``LoginStateMachine`` (over a kilobyte) on the heap: the locals of an async function
/// live in its task's frame for as long as it awaits, and a fleet has a thousand flows awaiting
/// their servers at once. Its steps are not inlined into `run`, whose frame would keep their
/// temporaries too.
private final class MachineBox {
    var machine: LoginStateMachine
    init(_ machine: LoginStateMachine) { self.machine = machine }

    @inline(never)
    func handle(_ event: LoginStateMachine.Event) -> LoginStateMachine.Action { machine.handle(event) }

    /// The final body sink for the next exchange: it takes the body of the response that ends
    /// the flow, as judged by the machine as it is now.
    @inline(never)
    func finalBodySink(
        _ sink: ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)?
    ) -> ((HTTPResponseHead) -> ((ArraySlice<UInt8>) throws -> Void)?)? {
        guard let sink else { return nil }
        let flow = machine
        return { head in flow.endsFlow(head) ? sink(head) : nil }
    }
}

/// Lets one flow of a session run at a time; the others await their turn in order, holding no
/// thread.
final class FlowGate: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                if !state.busy {
                    state.busy = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

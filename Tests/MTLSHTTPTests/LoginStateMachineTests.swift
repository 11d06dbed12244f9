import MTLSTrust
import XCTest

@testable import MTLSHTTP

/// The login flow's state machine, event by event, with no sockets: responses are made up and the
/// jar's part is played by the test.
final class LoginStateMachineTests: XCTestCase {
    private typealias Machine = LoginStateMachine

    private func response(_ url: HTTPSURL, _ status: Int, _ headers: [(String, String)] = [], body: String = "") -> HTTPResponse {
        HTTPResponse(
            url: url, head: HTTPResponseHead(version: "HTTP/1.1", status: status, reason: "", headers: HTTPHeaders(headers)), body: Array(body.utf8),
            wireBodyLength: body.utf8.count, tls: TLSSessionReport(host: url.host, port: url.port), reusedConnection: true, informational: [])
    }

    /// Feeds the cookie look-up (no cookies) and returns the request the machine sends.
    private func sent(_ machine: inout Machine, after action: Machine.Action, file: StaticString = #filePath, line: UInt = #line) -> HTTPRequest? {
        guard case .lookUpCookies = action else {
            XCTFail("expected a cookie look-up, got \(action)", file: file, line: line)
            return nil
        }
        guard case .send(let request) = machine.handle(.cookiesFound([])) else {
            XCTFail("expected a request", file: file, line: line)
            return nil
        }
        return request
    }

    /// Feeds a response and the jar's decisions, returning the next action.
    private func answer(_ machine: inout Machine, _ response: HTTPResponse) -> Machine.Action {
        guard case .storeCookies = machine.handle(.responseReceived(response)) else {
            XCTFail("the jar must see every response")
            return .fail(HTTPSError(.io, host: "", "no"))
        }
        return machine.handle(.cookiesStored([]))
    }

    private var credentials: Credentials { Credentials(user: "alice", password: Secret("pw")) }

    func testBasicChallengeIsAnsweredOnceAndRemembered() throws {
        let url = try HTTPSURL("https://a.example/dir/page")
        var machine = Machine(options: .init(credentials: credentials))
        let first = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        XCTAssertNil(first?.headers["Authorization"])
        let retry = sent(&machine, after: answer(&machine, response(url, 401, [("WWW-Authenticate", "Basic realm=\"r\"")])))
        XCTAssertEqual(retry?.headers["Authorization"]?.hasPrefix("Basic "), true)
        guard case .finish(let final) = answer(&machine, response(url, 200)) else { return XCTFail("the 200 ends the flow") }
        XCTAssertEqual(final.status, 200)
        XCTAssertEqual(machine.hops.map(\.kind), [.initial, .authentication(.basic)])
        guard case .basic(let directory)? = machine.spaces[url.origin] else { return XCTFail("the space is remembered") }
        XCTAssertEqual(directory, "/dir/")
    }

    func testASecond401IsARefusalNotALoop() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init(credentials: credentials))
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        let challenge = response(url, 401, [("WWW-Authenticate", "Basic realm=\"r\"")])
        _ = sent(&machine, after: answer(&machine, challenge))
        guard case .fail(let error) = answer(&machine, challenge) else { return XCTFail("a second 401 fails") }
        XCTAssertEqual(error.phase, .auth)
        XCTAssertTrue(error.message.contains("refused the Basic credentials realm \"r\" for user 'alice'"), error.message)
        XCTAssertEqual(machine.state, .failed)
    }

    func testDigestIsPreferredOverBasic() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init(credentials: credentials))
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        let retry = sent(
            &machine,
            after: answer(&machine, response(url, 401, [("WWW-Authenticate", "Basic realm=\"r\""), ("WWW-Authenticate", "Digest realm=\"r\", nonce=\"n\", qop=\"auth\"")])))
        XCTAssertEqual(retry?.headers["Authorization"]?.hasPrefix("Digest "), true)
    }

    func testAnotherOriginsChallengeGetsNoPassword() throws {
        let start = try HTTPSURL("https://sp.example/")
        let idp = try HTTPSURL("https://idp.example/login")
        var machine = Machine(options: .init(credentials: credentials))
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: start, headers: ["Authorization": "Bearer x"]))))
        let redirected = sent(&machine, after: answer(&machine, response(start, 302, [("Location", idp.description)])))
        XCTAssertNil(redirected?.headers["Authorization"], "secrets are dropped on leaving the first origin")
        XCTAssertEqual(machine.hops.count, 1)
        guard case .fail(let error) = answer(&machine, response(idp, 401, [("WWW-Authenticate", "Basic realm=\"idp\"")])) else {
            return XCTFail("the IdP may not have the password")
        }
        XCTAssertEqual(error.phase, .auth)
        XCTAssertEqual(error.hint, "if this server should get the password, allow it with \(setting: .authOrigins) \(idp.origin)")
        XCTAssertEqual(error.hint?.settings, [.authOrigins])
        XCTAssertEqual(machine.hops.last?.droppedHeaders, ["Authorization"])
    }

    func testAnUnanswerable401IsTheAnswer() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init(credentials: nil))
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        guard case .finish(let final) = answer(&machine, response(url, 401, [("WWW-Authenticate", "Basic realm=\"r\"")])) else { return XCTFail() }
        XCTAssertEqual(final.status, 401)
    }

    func testAClientCertificateRefusalEndsTheFlow() throws {
        let url = try HTTPSURL("https://iis.example/secure")
        var machine = Machine(options: .init(credentials: credentials))
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        guard case .finish(let final) = answer(&machine, response(url, 403, body: "403.7 - Forbidden: Client certificate required")) else { return XCTFail() }
        XCTAssertEqual(final.status, 403)
    }

    func testRedirectLimitAndPostBecomesGet() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init(maximumRedirects: 2))
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(method: "POST", url: url, body: Array("x=1".utf8)))))
        let loop = response(url, 302, [("Location", "/again")])
        let second = sent(&machine, after: answer(&machine, loop))
        XCTAssertEqual(second?.method, "GET")
        XCTAssertNil(second?.body)
        _ = sent(&machine, after: answer(&machine, loop))
        guard case .fail(let error) = answer(&machine, loop) else { return XCTFail("the third redirect is one too many") }
        XCTAssertEqual(error.message, "more than 2 redirects (last: 302 to /again)")
    }

    func testARedirectToPlainHTTPIsRefused() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init())
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        guard case .fail(let error) = answer(&machine, response(url, 301, [("Location", "http://a.example/")])) else { return XCTFail() }
        XCTAssertEqual(error.phase, .redirect)
    }

    func testRedirectsAreReturnedWhenNotFollowing() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init(followsRedirects: false))
        XCTAssertTrue(machine.endsFlow(HTTPResponseHead(version: "HTTP/1.1", status: 302, reason: "", headers: ["Location": "/x"])))
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        guard case .finish(let final) = answer(&machine, response(url, 302, [("Location", "/x")])) else { return XCTFail() }
        XCTAssertEqual(final.status, 302)
    }

    func testCrossSiteNavigationIsTheJarsContext() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init())
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: url))))
        _ = machine.handle(.responseReceived(response(url, 302, [("Location", "https://b.test/")])))
        guard case .lookUpCookies(let next, let context) = machine.handle(.cookiesStored([])) else { return XCTFail() }
        XCTAssertEqual(next.host, "b.test")
        guard case .crossSiteNavigation(let method) = context else { return XCTFail("\(context)") }
        XCTAssertEqual(method, "GET")
    }

    func testJarCookiesFollowTheCallersCookie() throws {
        let url = try HTTPSURL("https://a.example/")
        var machine = Machine(options: .init())
        _ = machine.handle(.start(HTTPRequest(url: url, headers: ["Cookie": "own=1"])))
        let cookie = Cookie(name: "jar", value: "2", domain: "a.example")
        guard case .send(let request) = machine.handle(.cookiesFound([cookie])) else { return XCTFail() }
        XCTAssertEqual(request.headers["Cookie"], "own=1; jar=2")
    }

    /// A declarative refresh is followed as a browser follows it (a GET of the target, counted as
    /// a redirect) when it waits at most `maximumRefreshDelay`; a longer timer, a reload of the
    /// same page and a page without one end the flow, and a refresh to http is refused.
    func testDeclarativeRefreshIsFollowedLikeABrowser() throws {
        try XCTSkipIf(HTMLDocument.parserFailure != nil, HTMLDocument.parserFailure ?? "")
        let start = try HTTPSURL("https://sp.example/sso/acs")
        let page = "<html><head><META HTTP-EQUIV=Refresh CONTENT=\"0; URL='/app/?a=1&amp;b=2'\"></head><body>Signing in&hellip;</body></html>"
        var machine = Machine(options: .init())
        _ = sent(&machine, after: machine.handle(.start(HTTPRequest(method: "POST", url: start, body: Array("x=1".utf8)))))
        let next = sent(&machine, after: answer(&machine, response(start, 200, [("Content-Type", "text/html; charset=utf-8")], body: page)))
        XCTAssertEqual(next?.method, "GET")
        XCTAssertNil(next?.body)
        XCTAssertEqual(next?.url.description, "https://sp.example/app/?a=1&b=2")
        let header = sent(&machine, after: answer(&machine, response(try HTTPSURL("https://sp.example/app/?a=1&b=2"), 200, [("Refresh", "1;url=https://app.example/home")])))
        XCTAssertEqual(header?.url.description, "https://app.example/home")
        guard case .finish = answer(&machine, response(try HTTPSURL("https://app.example/home"), 200, [("Content-Type", "text/html")], body: "<p>no refresh here</p>")) else {
            return XCTFail("a page without a refresh ends the flow")
        }
        XCTAssertEqual(machine.hops.map(\.kind), [.initial, .refresh(seconds: 0), .refresh(seconds: 1)])

        // A meta refresh's URL is resolved against the page's <base href>.
        var based = Machine(options: .init())
        _ = sent(&based, after: based.handle(.start(HTTPRequest(url: start))))
        let basePage = "<head><base href=\"https://sp.example/app/\"><meta http-equiv=refresh content=\"0;url=next\"></head>"
        XCTAssertEqual(sent(&based, after: answer(&based, response(start, 200, [("Content-Type", "text/html")], body: basePage)))?.url.description, "https://sp.example/app/next")

        for (headers, body) in [
            ([("Content-Type", "text/html")], "<meta http-equiv=refresh content=\"300; url=/later\">"),  // a page's own timer
            ([("Content-Type", "text/html")], "<meta http-equiv=refresh content=\"0\">"),  // a reload
            ([("Content-Type", "text/html")], "<meta http-equiv=refresh content=\"0; url=/sso/acs\">"),  // the same page
            ([("Content-Type", "text/plain")], "<meta http-equiv=refresh content=\"0; url=/x\">"),  // not HTML
        ] {
            var machine = Machine(options: .init())
            _ = sent(&machine, after: machine.handle(.start(HTTPRequest(url: start))))
            guard case .finish = answer(&machine, response(start, 200, headers, body: body)) else { return XCTFail("\(body) ends the flow") }
        }
        var unfollowed = Machine(options: .init(followsRedirects: false))
        _ = sent(&unfollowed, after: unfollowed.handle(.start(HTTPRequest(url: start))))
        guard case .finish = answer(&unfollowed, response(start, 200, [("Refresh", "0; url=/x")])) else { return XCTFail("not following: finished") }

        var insecure = Machine(options: .init())
        _ = sent(&insecure, after: insecure.handle(.start(HTTPRequest(url: start))))
        guard case .fail(let error) = answer(&insecure, response(start, 200, [("Refresh", "0; url=http://sp.example/")])) else { return XCTFail("http refused") }
        XCTAssertTrue(error.message.contains("would leave TLS"), error.message)
    }
}

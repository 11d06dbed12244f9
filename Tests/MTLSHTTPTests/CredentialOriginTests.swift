import MTLSTrust
import XCTest

@testable import MTLSHTTP

/// The client certificate and a request's body, like the password, go only to the URL's origin
/// and the origins the user allowed (`--auth-origin`): a hop elsewhere that would carry either
/// stops and explains (issue 38).
final class CredentialOriginTests: XCTestCase {
    private typealias Machine = LoginStateMachine

    private func response(_ url: HTTPSURL, _ status: Int, _ headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(
            url: url, head: HTTPResponseHead(version: "HTTP/1.1", status: status, reason: "", headers: HTTPHeaders(headers)), body: [],
            wireBodyLength: 0, tls: TLSSessionReport(host: url.host, port: url.port), reusedConnection: true, informational: [])
    }

    /// Starts a flow, answers its first request with `status` to `location`, returns the next action.
    private func redirect(
        _ machine: inout Machine, from start: HTTPSURL, method: String = "GET", body: [UInt8]? = nil, status: Int, to location: HTTPSURL
    ) -> Machine.Action {
        guard case .lookUpCookies = machine.handle(.start(HTTPRequest(method: method, url: start, body: body))),
            case .send = machine.handle(.cookiesFound([])),
            case .storeCookies = machine.handle(.responseReceived(response(start, status, [("Location", location.description)])))
        else {
            XCTFail("unexpected flow")
            return .fail(HTTPSError(.io, host: "", "no"))
        }
        return machine.handle(.cookiesStored([]))
    }

    func testA307ToAnotherOriginDoesNotResendTheBody() throws {
        let start = try HTTPSURL("https://api.example/upload")
        let other = try HTTPSURL("https://evil.example/collect")
        var machine = Machine(options: .init())
        guard case .fail(let error) = redirect(&machine, from: start, method: "POST", body: Array("secret=1".utf8), status: 307, to: other) else {
            return XCTFail("the body must not follow a 307 to another origin")
        }
        XCTAssertEqual(error.phase, .redirect)
        XCTAssertTrue(error.message.contains("https://evil.example"), error.message)
        XCTAssertTrue(error.message.contains("body"), error.message)
        XCTAssertEqual(error.hint?.settings, [.authOrigins])
    }

    func testA307WithinTheOriginOrToAnAllowedOriginKeepsTheBody() throws {
        let start = try HTTPSURL("https://api.example/upload")
        for (target, allowed) in [("https://api.example/v2/upload", Set<String>()), ("https://store.example/upload", ["https://store.example"])] {
            var machine = Machine(options: .init(authOrigins: allowed))
            guard case .lookUpCookies = redirect(&machine, from: start, method: "POST", body: Array("x=1".utf8), status: 307, to: try HTTPSURL(target)),
                case .send(let next) = machine.handle(.cookiesFound([]))
            else { return XCTFail("\(target) is allowed") }
            XCTAssertEqual(next.body, Array("x=1".utf8))
        }
    }

    func testARedirectToAnotherOriginDoesNotPresentTheClientCertificate() throws {
        let start = try HTTPSURL("https://iis.example/secure")
        let other = try HTTPSURL("https://tracker.example/")
        var machine = Machine(options: .init(), presentsClientCertificate: true)
        guard case .fail(let error) = redirect(&machine, from: start, status: 302, to: other) else {
            return XCTFail("the certificate must not be presented to another origin")
        }
        XCTAssertTrue(error.message.contains("client certificate"), error.message)
        // Without a certificate, the same redirect (a GET, no body) is followed.
        var plain = Machine(options: .init())
        guard case .lookUpCookies = redirect(&plain, from: start, status: 302, to: other) else { return XCTFail("a plain redirect is followed") }
        // With the origin allowed, the certificate may go there.
        var allowed = Machine(options: .init(authOrigins: ["https://tracker.example"]), presentsClientCertificate: true)
        guard case .lookUpCookies = redirect(&allowed, from: start, status: 302, to: other) else { return XCTFail("--auth-origin allows it") }
    }

    func testA303AfterAPostDropsTheBodyAndMayLeave() throws {
        let start = try HTTPSURL("https://api.example/form")
        var machine = Machine(options: .init())
        guard case .lookUpCookies = redirect(&machine, from: start, method: "POST", body: Array("x=1".utf8), status: 303, to: try HTTPSURL("https://elsewhere.example/done")),
            case .send(let next) = machine.handle(.cookiesFound([]))
        else { return XCTFail("a 303 turns into a GET without a body") }
        XCTAssertNil(next.body)
    }
}

import Foundation
import MTLSHTTP
import XCTest
import MTLSTestSupport

final class LoginSessionTests: XCTestCase {
    private func sp(_ peer: LoginPeer, _ path: String) -> String { "https://127.0.0.1:\(peer["SP_PORT"])\(path)" }
    private func other(_ peer: LoginPeer, _ path: String) -> String { "https://localhost:\(peer["OTHER_PORT"])\(path)" }

    private func post(_ url: String, body: String, headers: HTTPHeaders = ["Content-Type": "text/plain"]) throws -> HTTPRequest {
        HTTPRequest(method: "POST", url: try HTTPSURL(url), headers: headers, body: Array(body.utf8))
    }

    func testApacheRedirectIsFollowedAndEachHopRecorded() throws {
        let apache = try LoginPeers.shared.apache()
        let result = try LoginFixtures.session().get("https://127.0.0.1:\(apache.port)/redirect")
        XCTAssertEqual(result.status, 200)
        XCTAssertTrue(result.text.text.contains("mtls apache root"))
        XCTAssertEqual(result.hops.map(\.status), [302, 200])
        XCTAssertEqual(result.hops[1].kind, .redirect(status: 302))
        XCTAssertEqual(result.url.path, "/")
    }

    func testPostRedirectedBy301Or302Or303BecomesGetWithoutBody() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session()
        for status in [301, 302, 303] {
            let result = try session.send(try post(sp(saml, "/r\(status)"), body: "payload"))
            let echo = LoginFixtures.fields(result.text.text)
            XCTAssertEqual(echo["method"], "GET", "\(status)")
            XCTAssertEqual(echo["body_bytes"], "0", "\(status)")
            XCTAssertEqual(echo["content_type"], "", "\(status)")
            XCTAssertEqual(result.hops.map(\.method), ["POST", "GET"])
        }
    }

    func testPostRedirectedBy307Or308KeepsMethodAndBody() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session()
        for status in [307, 308] {
            let result = try session.send(try post(sp(saml, "/r\(status)"), body: "a+b=c"))
            let echo = LoginFixtures.fields(result.text.text)
            XCTAssertEqual(echo["method"], "POST", "\(status)")
            XCTAssertEqual(echo["body"], "a+b=c", "\(status)")
            XCTAssertEqual(echo["content_type"], "text/plain", "\(status)")
        }
    }

    func testSameOriginRedirectKeepsTheCallersHeaders() throws {
        let saml = try LoginPeers.shared.saml()
        let result = try LoginFixtures.session().get(sp(saml, "/r302"), headers: ["Authorization": "Bearer t0k", "X-Custom": "c"])
        let echo = LoginFixtures.fields(result.text.text)
        XCTAssertEqual(echo["authorization"], "Bearer t0k")
        XCTAssertEqual(echo["x_custom"], "c")
    }

    func testCrossOriginRedirectDropsAuthorizationCookiesAndFirstOriginOnlyHeaders() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session()
        var request = HTTPRequest(url: try HTTPSURL(sp(saml, "/to-other")), headers: ["Authorization": "Bearer t0k", "Cookie": "own=1", "X-Secret": "s3cret", "X-Custom": "kept"])
        request.firstOriginOnlyHeaders = ["X-Secret"]
        let result = try session.send(request)
        let echo = LoginFixtures.fields(result.text.text)
        XCTAssertEqual(echo["host"], "localhost:\(saml["OTHER_PORT"])")
        XCTAssertEqual(echo["authorization"], "")
        XCTAssertEqual(echo["cookie"], "")
        XCTAssertEqual(echo["x_secret"], "")
        XCTAssertEqual(echo["x_custom"], "kept", "headers not marked first-origin-only still follow")
        XCTAssertEqual(Set(result.hops[1].droppedHeaders), ["Authorization", "Cookie", "X-Secret"])
    }

    func testJarCookiesOfTheFirstDomainDoNotFollowToAnotherDomain() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session()
        _ = try session.get(sp(saml, "/set-cookies"))
        let result = try session.get(sp(saml, "/to-other"))
        XCTAssertFalse(result.hops[0].cookiesSent.isEmpty)
        XCTAssertEqual(result.hops[1].cookiesSent, [])
        XCTAssertEqual(LoginFixtures.fields(result.text.text)["cookie"], "")
    }

    func testRedirectLoopEndsAtTheLimitWithAClearError() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session(LoginOptions(maximumRedirects: 3))
        XCTAssertThrowsError(try session.get(sp(saml, "/loop"))) { error in
            let error = error as? HTTPSError
            XCTAssertEqual(error?.phase, .redirect)
            XCTAssertTrue(error?.message.contains("more than 3 redirects") ?? false, String(describing: error))
        }
        XCTAssertEqual(session.hops.count, 4)
    }

    func testRedirectToPlainHTTPIsRefused() throws {
        let saml = try LoginPeers.shared.saml()
        XCTAssertThrowsError(try LoginFixtures.session().get(sp(saml, "/to-http"))) { error in
            XCTAssertEqual((error as? HTTPSError)?.phase, .redirect)
            XCTAssertTrue(String(describing: error).contains("leave TLS"), String(describing: error))
        }
    }

    func testRedirectsAreReturnedWhenNotFollowing() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session(LoginOptions(followsRedirects: false))
        let result = try session.get(sp(saml, "/r307"))
        XCTAssertEqual(result.status, 307)
        XCTAssertEqual(result.hops.first?.location, "https://127.0.0.1:\(saml["SP_PORT"])/echo")
    }

    func testCredentialsAreWithheldFromAChallengeAtAnotherOrigin() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session(credentials: Credentials(user: "mtls", password: "pässword+1"))
        XCTAssertThrowsError(try session.get(sp(saml, "/to-other-basic"))) { error in
            let error = error as? HTTPSError
            XCTAssertEqual(error?.phase, .auth)
            XCTAssertTrue(error?.hint?.description.contains("LoginOptions.authOrigins https://localhost:\(saml["OTHER_PORT"])") ?? false, String(describing: error))
        }
        XCTAssertEqual(session.hops.map(\.status), [302, 401])
        XCTAssertNil(session.hops.last?.sentAuthorization)
    }

    func testAnAllowedAuthOriginGetsTheCredentialsForItsOwnChallenge() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session(credentials: Credentials(user: "mtls", password: "pässword+1"), authOrigins: ["https://localhost:\(saml["OTHER_PORT"])"])
        let result = try session.get(sp(saml, "/to-other-basic"))
        XCTAssertEqual(result.status, 200)
        XCTAssertEqual(result.hops.map(\.status), [302, 401, 200])
        XCTAssertNil(result.hops[0].sentAuthorization, "nothing is sent before a challenge")
        XCTAssertEqual(LoginFixtures.fields(result.text.text)["remote_user"], "mtls")
    }

    func testBasicIsSentWithoutANewChallengeInTheSameProtectionSpace() throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session(credentials: Credentials(user: "mtls", password: "pässword+1"))
        XCTAssertEqual(try session.get(sp(saml, "/basic-stay")).hops.count, 2)
        let again = try session.get(sp(saml, "/basic-stay"))
        XCTAssertEqual(again.hops.map(\.status), [200])
        XCTAssertEqual(again.hops[0].sentAuthorization, .basic)
        // …but never to another origin.
        let elsewhere = try session.get(other(saml, "/echo"))
        XCTAssertNil(elsewhere.hops[0].sentAuthorization)
        XCTAssertEqual(LoginFixtures.fields(elsewhere.text.text)["authorization"], "")
    }

    func testAsyncSendRunsTheSameFlow() async throws {
        let saml = try LoginPeers.shared.saml()
        let session = try LoginFixtures.session()
        let result = try await session.send(HTTPRequest(url: try HTTPSURL(sp(saml, "/r303"))))
        XCTAssertEqual(result.status, 200)
        XCTAssertEqual(result.hops.count, 2)
    }
}

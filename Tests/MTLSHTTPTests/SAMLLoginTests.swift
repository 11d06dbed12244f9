import Foundation
import MTLSHTTP
import MTLSTrust
import XCTest
import MTLSTestSupport

/// A SAML 2.0 login end to end: Apache mod_auth_mellon as the service provider, the pysaml2 IdP of
/// scripts/peers/saml/idp.py behind Basic auth, signed responses posted back through an
/// auto-submitting form (HTTP-POST binding) with an entity-encoded action.
final class SAMLLoginTests: XCTestCase {
    private func session(_ peer: LoginPeer, password: String? = nil, allowIdP: Bool = true, forms: Bool = true) throws -> LoginSession {
        try LoginFixtures.session(
            LoginOptions(
                credentials: Credentials(user: peer["IDP_USER"], password: Secret(password ?? peer["IDP_PASSWORD"])),
                authOrigins: allowIdP ? ["https://localhost:\(peer["IDP_PORT"])"] : [], submitsPostBindingForms: forms))
    }

    private func protected(_ peer: LoginPeer) -> String { "https://127.0.0.1:\(peer["SP_PORT"])/secret/" }

    func testLoginStartsAtTheProtectedURLAndEndsWithItsContent() throws {
        let peer = try LoginPeers.shared.saml()
        let session = try session(peer)
        let result = try session.get(protected(peer))
        XCTAssertEqual(result.status, 200, result.hops.map(\.description).joined(separator: "\n"))
        XCTAssertEqual(result.url.description, protected(peer))
        let fields = LoginFixtures.fields(result.text.text)
        XCTAssertTrue(result.text.text.hasPrefix("saml protected content"), result.text.text)
        XCTAssertEqual(fields["MELLON_uid"], peer["IDP_USER"])

        let hops = result.hops
        let idpOrigin = "https://localhost:\(peer["IDP_PORT"])"
        // SP → IdP redirect, the IdP's Basic challenge answered once, the form posted back, SP → resource.
        XCTAssertEqual(hops.filter { $0.url.origin == idpOrigin }.map(\.status), [401, 200])
        XCTAssertEqual(hops.first { $0.url.origin == idpOrigin && $0.status == 200 }?.sentAuthorization, .basic)
        let post = try XCTUnwrap(hops.first { $0.kind == .formPost(.samlResponse) })
        XCTAssertEqual(post.method, "POST")
        XCTAssertEqual(post.url.path, "/mellon/postResponse", "the entity-encoded action was decoded")
        XCTAssertTrue(post.cookiesSent.contains("mellon-cookie"), "the SP's cookie test cookie went back with the POST")
        // Credentials only ever went to the IdP; the SP's cookies never did.
        XCTAssertTrue(hops.filter { $0.url.origin != idpOrigin }.allSatisfy { $0.sentAuthorization == nil })
        XCTAssertTrue(hops.filter { $0.url.origin == idpOrigin }.allSatisfy { $0.cookiesSent.isEmpty })
        XCTAssertLessThanOrEqual(hops.count, 8, hops.map(\.description).joined(separator: "\n"))

        // The session cookie now opens the resource directly.
        let again = try session.get(protected(peer))
        XCTAssertEqual(again.hops.map(\.status), [200])
    }

    func testWrongPasswordAtTheIdPEndsInAClear401Error() throws {
        let peer = try LoginPeers.shared.saml()
        let session = try session(peer, password: "wrong password")
        XCTAssertThrowsError(try session.get(protected(peer))) { error in
            let error = error as? HTTPSError
            XCTAssertEqual(error?.phase, .auth)
            XCTAssertEqual(error?.host, "localhost:\(peer["IDP_PORT"])")
            XCTAssertTrue(error?.message.contains("refused the Basic credentials") ?? false, String(describing: error))
            XCTAssertTrue(error?.message.contains("mtls idp") ?? false, "the realm is named: \(String(describing: error))")
        }
        XCTAssertEqual(session.hops.last?.status, 401)
        XCTAssertEqual(session.hops.filter { $0.status == 401 }.count, 2, "one challenge, one refused answer, no loop")
    }

    func testTheIdPGetsNoPasswordUnlessItsOriginIsAllowed() throws {
        let peer = try LoginPeers.shared.saml()
        let session = try session(peer, allowIdP: false)
        XCTAssertThrowsError(try session.get(protected(peer))) { error in
            let error = error as? HTTPSError
            XCTAssertEqual(error?.phase, .auth)
            XCTAssertTrue(error?.hint?.description.contains("LoginOptions.authOrigins https://localhost:\(peer["IDP_PORT"])") ?? false, String(describing: error))
        }
        XCTAssertTrue(session.hops.allSatisfy { $0.sentAuthorization == nil })
    }

    func testWithoutFormSubmissionTheFlowStopsAtThePostBindingPage() throws {
        let peer = try LoginPeers.shared.saml()
        let session = try session(peer, forms: false)
        let result = try session.get(protected(peer))
        XCTAssertEqual(result.status, 200)
        let form = try XCTUnwrap(HTMLForm.forms(in: result.response).first)
        XCTAssertEqual(form.postBinding, .samlResponse)
        XCTAssertEqual(form.action.description, "https://127.0.0.1:\(peer["SP_PORT"])/mellon/postResponse")
        XCTAssertEqual(form["RelayState"], protected(peer))
        // The base64 SAMLResponse decodes to a signed Response.
        let xml = String(decoding: Data(base64Encoded: try XCTUnwrap(form["SAMLResponse"])) ?? Data(), as: UTF8.self)
        XCTAssertTrue(xml.contains("Signature"), "the IdP signs its responses")
    }

    func testTheCookieJarSurvivesASaveAndLoadInCurlFormat() throws {
        let peer = try LoginPeers.shared.saml()
        let first = try session(peer)
        XCTAssertEqual(try first.get(protected(peer)).status, 200)
        let path = NSTemporaryDirectory() + "mtls-saml-cookies-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try first.cookies.save(toPath: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains("#HttpOnly_127.0.0.1\tFALSE\t/\tTRUE\t"), text)

        let jar = CookieJar()
        try jar.load(fromPath: path)
        let second = try LoginSession(configuration: LoginFixtures.configuration(), cookies: jar)
        let result = try second.get(protected(peer))
        XCTAssertEqual(result.hops.map(\.status), [200], "logged in by the saved session cookie alone")
    }
}

import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTestSupport

/// `mtls probe --saml`: one command from a SAML-protected URL (mod_auth_mellon) to its content,
/// through the pysaml2 IdP's Basic challenge and the POST-binding form — run as the built binary.
final class SAMLProbeCLITests: XCTestCase {
    private func binary() throws -> String {
        let path = SupportFixtures.mtlsExecutable
        guard FileManager.default.isExecutableFile(atPath: path) else { throw XCTSkip("build the mtls executable first (swift build): \(path)") }
        return path
    }

    private func passwordFile(_ password: String) throws -> String {
        let path = NSTemporaryDirectory() + "mtls-saml-\(UUID().uuidString)"
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: path))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testProbeFollowsTheSAMLLoginToTheProtectedContent() throws {
        let mtls = try binary()
        let peer = try LoginPeers.shared.saml()
        let idp = "https://localhost:\(peer["IDP_PORT"])"
        let jar = NSTemporaryDirectory() + "mtls-jar-\(UUID().uuidString).txt"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: jar) }
        let arguments = [
            "probe", "https://127.0.0.1:\(peer["SP_PORT"])/secret/", "--saml", "--user", peer["IDP_USER"],
            "--user-password", "file:" + (try passwordFile(peer["IDP_PASSWORD"])), "--auth-origin", idp,
            "--anchors", SupportFixtures.path("root-ca.pem"),
        ]
        let json = Subprocess.run(mtls, arguments + ["--json", "--cookie-jar", jar])
        XCTAssertEqual(json.status, 0, json.stdout)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let hops = try XCTUnwrap(object["http"] as? [[String: Any]])
        XCTAssertEqual(hops.last?["status"] as? Int, 200)
        XCTAssertTrue(hops.contains { $0["kind"] as? String == "form-post" }, "\(hops)")
        XCTAssertTrue(hops.contains { $0["kind"] as? String == "authentication" && ($0["url"] as? String)?.hasPrefix(idp) == true }, "\(hops)")
        XCTAssertTrue((try String(contentsOfFile: jar, encoding: .utf8)).contains("mellon"), "the SP's session cookie was saved in curl's format")
        XCTAssertFalse(json.stdout.contains(peer["IDP_PASSWORD"]), "the password never appears in the output")

        let human = Subprocess.run(mtls, arguments + ["-v"])
        XCTAssertTrue(human.stdout.contains("SAML form post"), human.stdout)
        // With the saved jar, the SP's session cookie opens the resource at once.
        let again = Subprocess.run(mtls, arguments + ["--json", "--cookie-jar", jar])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])?["http"].flatMap { ($0 as? [Any])?.count }, 1, again.stdout)
        XCTAssertTrue(human.stdout.contains("Verdict: OK"), human.stdout)
        XCTAssertFalse(human.stdout.contains(peer["IDP_PASSWORD"]), "verbose traces redact secrets")
    }

    func testWrongPasswordEndsInAClearRefusalAndTheIdPGetsNothingWithoutAuthOrigin() throws {
        let mtls = try binary()
        let peer = try LoginPeers.shared.saml()
        let base = ["probe", "https://127.0.0.1:\(peer["SP_PORT"])/secret/", "--saml", "--user", peer["IDP_USER"], "--anchors", SupportFixtures.path("root-ca.pem")]
        let wrong = Subprocess.run(mtls, base + ["--user-password", "file:" + (try passwordFile("not the password")), "--auth-origin", "https://localhost:\(peer["IDP_PORT"])"])
        XCTAssertEqual(wrong.status, 1, wrong.stdout)
        let noOrigin = Subprocess.run(mtls, base + ["--user-password", "file:" + (try passwordFile(peer["IDP_PASSWORD"]))])
        XCTAssertEqual(noOrigin.status, 1, noOrigin.stdout)
        XCTAssertTrue(noOrigin.stdout.contains("--auth-origin"), "the refusal names the option that allows the IdP: \(noOrigin.stdout)")
    }
}

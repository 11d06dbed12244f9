import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestSupport

/// `mtls probe` against the NTLM peer's `/epa` path (IIS Extended Protection, tokenChecking
/// "Require"): with the TLS channel binding that mtls sends by default the login succeeds; with
/// `--no-channel-binding` (how curl and other clients without bindings are seen) the server
/// answers 401 after a correct password, and the `epa-channel-binding` rule names it from the real
/// facts. `/ntlm` (Extended Protection off) accepts the login either way, so the rule only fires
/// where the server requires the binding.
final class ProbeExtendedProtectionTests: XCTestCase {
    private var mtlsPath: String { HTTPFixtures.root.appendingPathComponent(".build/debug/mtls").path }

    private func probe(_ ntlm: LoginPeer, _ path: String, _ extra: [String] = []) throws -> (status: Int32, json: [String: Any]) {
        guard FileManager.default.isExecutableFile(atPath: mtlsPath) else { throw XCTSkip("build the mtls executable first: \(mtlsPath)") }
        let result = Subprocess.run(
            mtlsPath,
            [
                "probe", "https://localhost:\(ntlm.port)\(path)", "--json", "--anchors", HTTPFixtures.path("root-ca.pem"), "--user", "\(ntlm["NTLM_DOMAIN"])\\\(ntlm["NTLM_USER"])",
                "--user-password", "pass:\(ntlm["NTLM_PASSWORD"])",
            ] + extra)
        let json = try XCTUnwrap(
            try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "no JSON (exit \(result.status)): \(result.stdout.prefix(300))")
        return (result.status, json)
    }

    private func causes(_ json: [String: Any]) -> [[String: Any]] { (json["verdict"] as? [String: Any])?["causes"] as? [[String: Any]] ?? [] }
    private func ok(_ json: [String: Any]) -> Bool? { (json["verdict"] as? [String: Any])?["ok"] as? Bool }
    private func status(_ json: [String: Any]) -> Int? { (json["http"] as? [[String: Any]])?.last?["status"] as? Int }

    func testWithoutTheBindingExtendedProtectionIsNamedFromTheServersRefusal() throws {
        guard OpenSSLInfo.legacyProviderAvailable else { throw XCTSkip("OpenSSL's legacy provider (MD4) is not installed") }
        let ntlm = try LoginPeers.shared.ntlm()

        // The default sends the binding: /epa lets us in.
        let bound = try probe(ntlm, "/epa")
        XCTAssertEqual(bound.status, 0, "\(causes(bound.json))")
        XCTAssertEqual(status(bound.json), 200)
        XCTAssertEqual(ok(bound.json), true)

        // Without it: 401 after the right password, named as Extended Protection, exit 1.
        let unbound = try probe(ntlm, "/epa", ["--no-channel-binding"])
        XCTAssertEqual(unbound.status, 1, "\(causes(unbound.json))")
        XCTAssertEqual(unbound.json["exitCode"] as? Int, 1)
        XCTAssertEqual(ok(unbound.json), false)
        XCTAssertEqual(status(unbound.json), 401)
        let top = try XCTUnwrap(causes(unbound.json).first)
        XCTAssertEqual(top["rule"] as? String, "epa-channel-binding", "\(causes(unbound.json))")
        let text = top["cause"] as? String ?? ""
        XCTAssertTrue(text.contains("no TLS channel binding (--no-channel-binding)") && text.contains("Extended Protection"), text)
        XCTAssertTrue(text.contains("for user '\(ntlm["NTLM_USER"])'"), text)
        XCTAssertTrue((top["fix"] as? String ?? "").contains("retry without --no-channel-binding"), "\(top)")

        // Where the server does not require the binding, leaving it out changes nothing.
        let plain = try probe(ntlm, "/ntlm", ["--no-channel-binding"])
        XCTAssertEqual(plain.status, 0, "\(causes(plain.json))")
        XCTAssertEqual(status(plain.json), 200)

        // curl, the judge: it sends no binding, and /epa refuses it the same way.
        let curl = Subprocess.run(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", HTTPFixtures.path("root-ca.pem"), "--ntlm", "-u",
                "\(ntlm["NTLM_DOMAIN"])\\\(ntlm["NTLM_USER"]):\(ntlm["NTLM_PASSWORD"])", "https://localhost:\(ntlm.port)/epa",
            ])
        XCTAssertEqual(curl.stdout, "401")
    }
}

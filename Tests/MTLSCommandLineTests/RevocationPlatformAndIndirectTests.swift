import Foundation
import MTLSHTTP
import MTLSTestServer
import MTLSTrust
import XCTest

/// `verify --platform … --revocation`: the status is fetched once and each platform applies it as
/// it does by default (PlatformRules.revocation), on the revocation bed (private anchor).
extension RevocationCommandTests {
    func testPlatformVerdictsApplyRevocationAsEachPlatformDoes() throws {
        // `--revocation` alone means hard; the plain verdict refuses the revoked leaf …
        let plain = mtls(["verify", "\(dir)/chain-revoked.pem", "--anchors", "\(dir)/root.pem", "--revocation"])
        XCTAssertEqual(plain.exitCode, 1, "\(plain)")
        XCTAssertContains(plain.stdout, "Revocation (hard-fail, as IIS")
        // … while no platform checks revocation under a private anchor by default: all accept, and say so.
        let arguments = ["verify", "\(dir)/chain-revoked.pem", "--anchors", "\(dir)/root.pem", "--platform", "all", "--revocation"]
        let result = mtls(arguments + ["--json"])
        XCTAssertEqual(result.exitCode, 0, "\(result)")
        let json = try result.json()
        XCTAssertEqual(json["refused"] as? Bool, false)
        let report = try XCTUnwrap(json["revocation"] as? [String: Any], "\(json)")
        let entries = report["certificates"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.first?["status"] as? String, "revoked", "\(report)")
        let platforms = json["platforms"] as? [[String: Any]] ?? []
        XCTAssertEqual(platforms.count, 4)
        for platform in platforms {
            let notes = platform["notes"] as? [String] ?? []
            XCTAssertTrue(notes.contains { $0.hasPrefix("revocation: ") && $0.contains("is revoked (keyCompromise)") && $0.contains("accepts it") }, "\(platform)")
        }
        let text = mtls(arguments)
        XCTAssertEqual(text.exitCode, 0, "\(text)")
        XCTAssertContains(text.stdout, "Revocation (fetched once; each platform applies it as it does by default):")
        XCTAssertContains(text.stdout, "CRL GET http://127.0.0.1:\(httpPort)/issuing.crl [HTTP 200")
        XCTAssertContains(text.stdout, "Chrome does not check revocation under a private anchor")
        XCTAssertContains(text.stdout, "-Dcom.sun.net.ssl.checkRevocation=true")

        // A good chain: every platform notes that all is good.
        let good = try mtls(["verify", "\(dir)/chain-good.pem", "--anchors", "\(dir)/root.pem", "--platform", "java", "--revocation", "soft", "--json"]).json()
        let notes = (good["platforms"] as? [[String: Any]])?.first?["notes"] as? [String] ?? []
        XCTAssertTrue(notes.contains { $0.contains("every certificate below the anchor is good") }, "\(notes)")
    }

    /// `--revocation FILE`: only hard or soft are its value; anything else is the next argument.
    func testRevocationAloneBeforeAFileMeansHard() throws {
        let result = mtls(["verify", "--revocation", "\(dir)/chain-stale-crl.pem", "--anchors", "\(dir)/root.pem", "--json"])
        XCTAssertEqual(result.exitCode, 1, "hard: a stale CRL fails\n\(result)")
        let json = try result.json()
        XCTAssertEqual((json["revocation"] as? [String: Any])?["mode"] as? String, "hard", "\(json)")
        let soft = mtls(["verify", "--revocation", "soft", "\(dir)/chain-stale-crl.pem", "--anchors", "\(dir)/root.pem"])
        XCTAssertEqual(soft.exitCode, 0, "\(soft)")
        let help = mtls(["verify", "--help"])
        XCTAssertContains(help.stdout, "--revocation [<MODE>]")
        XCTAssertContains(help.stdout, "alone: hard")
    }
}

/// `probe --revocation`: the client certificate's chain is completed through the run's revocation
/// fetcher (its cache), and what the server will find is tied into the 403.16/403.13 explanation.
extension RevocationCommandTests {
    func startRefusingServer() throws -> TestServer {
        // Trusts only an unrelated CA for client certificates: every client certificate gets 403.16.
        let configuration = TLSServerConfiguration(
            certificate: try CertificateLoader.certificates(atPath: "\(dir)/leaf-good.pem")[0],
            privateKey: try PrivateKey(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/leaf-good.key")))),
            chain: try CertificateLoader.certificates(atPath: "\(dir)/issuing.pem"),
            clientCAs: try CertificateLoader.certificates(atPath: Fixtures.path("root-ca.pem")))
        let server = try TestServer(configuration: TestServerConfiguration(tls: configuration, port: 0))
        try server.start()
        return server
    }

    func testProbeCompletesOurChainThroughTheRevocationCacheAndExplains403() throws {
        let server = try startRefusingServer()
        defer { server.stop() }
        // Only the leaf: its issuer comes from its caIssuers URL, the root from --anchors.
        let arguments = [
            "probe", "https://127.0.0.1:\(server.boundPort)/secure", "--anchors", "\(dir)/root.pem", "--cert", "\(dir)/leaf-revoked.pem", "--key",
            "\(dir)/leaf-revoked.key", "--revocation",
        ]
        let json = try mtls(arguments + ["--json"]).json()
        let client = try XCTUnwrap(json["clientRevocation"] as? [String: Any], "\(json)")
        let entries = client["certificates"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.count, 2, "the leaf and the issuing CA fetched for it\n\(client)")
        let fetch = try XCTUnwrap((entries.first?["attempts"] as? [[String: Any]])?.first)
        XCTAssertEqual(fetch["kind"] as? String, "CA issuers")
        XCTAssertEqual(fetch["url"] as? String, "http://127.0.0.1:\(httpPort)/issuing.crt")
        XCTAssertContains(fetch["outcome"] as? String ?? "", "issuer CN=Corp Issuing CA 1")
        // The issuing CA's status comes from the root's CRL, fetched once per run: the server chain's
        // check fetched it first, so ours is served from the cache.
        let rootCRL = try XCTUnwrap((entries.last?["attempts"] as? [[String: Any]])?.first { $0["url"] as? String == "http://127.0.0.1:\(httpPort)/root.crl" })
        XCTAssertEqual(rootCRL["cached"] as? Bool, true, "\(entries)")
        let text = mtls(arguments)
        XCTAssertEqual(text.exitCode, 1, "\(text)")
        XCTAssertContains(text.stdout, "IIS 403.16")
        XCTAssertContains(text.stdout, "our own revocation check of it, as the server makes it: the certificate is REVOKED (keyCompromise)")

        // An undeterminable status: the 403.16 fix says what the server cannot reach.
        let offline = mtls([
            "probe", "https://127.0.0.1:\(server.boundPort)/secure", "--anchors", "\(dir)/root.pem", "--cert", "\(dir)/chain-unreachable-cdp.pem", "--key",
            "\(dir)/leaf-unreachable-cdp.key", "--revocation",
        ])
        XCTAssertEqual(offline.exitCode, 1, "\(offline)")
        XCTAssertContains(offline.stdout, "cannot be checked")
        XCTAssertContains(offline.stdout, "the server cannot determine our certificate's revocation status and IIS fails closed (CertCheckMode 0)")
    }
}

extension RevocationCommandTests {
    /// A fleet shares one fetcher: the second target's caIssuers fetch and CRLs come from the cache.
    func testFleetFetchesOurIssuerOnce() throws {
        let server = try SServerPeer(
            certificate: "\(dir)/leaf-good.pem", key: "\(dir)/leaf-good.key", ["-cert_chain", "\(dir)/issuing.pem", "-verify", "1"])
        defer { server.stop() }
        let targets = FileManager.default.temporaryDirectory.appendingPathComponent("revocation-fleet-\(UUID().uuidString).txt")
        try "https://127.0.0.1:\(server.port)/\nhttps://127.0.0.1:\(server.port)/\n".write(to: targets, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: targets) }
        let result = mtls([
            "probe", "--targets", targets.path, "--concurrency", "1", "--anchors", "\(dir)/root.pem", "--cert", "\(dir)/leaf-revoked.pem", "--key",
            "\(dir)/leaf-revoked.key", "--revocation", "soft", "--json",
        ])
        let lines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("{") }
        XCTAssertEqual(lines.count, 2, "\(result)")
        let fetches = try lines.map { line -> [String: Any] in
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let entries = (json["clientRevocation"] as? [String: Any])?["certificates"] as? [[String: Any]] ?? []
            return try XCTUnwrap((entries.first?["attempts"] as? [[String: Any]])?.first { $0["kind"] as? String == "CA issuers" }, "\(json)")
        }
        XCTAssertEqual(fetches.map { $0["cached"] as? Bool }, [false, true], "\(fetches)")
    }
}

/// Indirect CRLs (RFC 5280 5.2.5, 6.3.3): indirect.crl is signed by "Corp Indirect CRL Issuer" (under
/// the root); the issuing CA's certificates name it as cRLIssuer. `openssl verify -extended_crl` judges.
extension RevocationCommandTests {
    func testIndirectCRLGoodRevokedAndUnauthorised() throws {
        let (good, _, goodEntries) = try check("indirect-good")
        XCTAssertEqual(good.exitCode, 0, "\(good)")
        XCTAssertEqual(goodEntries[0]["status"] as? String, "good", "\(goodEntries[0])")
        let kinds = attempts(goodEntries[0]).map { "\($0["kind"] ?? "") \($0["url"] ?? "")" }
        XCTAssertTrue(kinds.contains("CRL issuer http://127.0.0.1:\(httpPort)/crl-issuer.crt"), "the CRL issuer's certificate from the CRL's caIssuers: \(kinds)")
        XCTAssertTrue(kinds.contains("CRL issuer's CRL http://127.0.0.1:\(httpPort)/root.crl"), "the CRL issuer's own status, from the root's CRL: \(kinds)")
        XCTAssertEqual(try opensslIndirect("good"), "OK")

        let (revoked, revokedJSON, revokedEntries) = try check("indirect-revoked", "soft")
        XCTAssertEqual(revoked.exitCode, 1, "\(revoked)")
        XCTAssertEqual(revokedEntries[0]["status"] as? String, "revoked", "\(revokedEntries[0])")
        XCTAssertEqual(revokedEntries[0]["revocationReason"] as? String, "keyCompromise")
        XCTAssertTrue(findings(revokedJSON).contains { $0["error"] as? String == "X509_V_ERR_CERT_REVOKED" && $0["depth"] as? Int == 0 })
        XCTAssertContains(try opensslIndirect("revoked"), "certificate revoked")

        let (unauthorised, _, unauthorisedEntries) = try check("indirect-unauthorized")
        XCTAssertEqual(unauthorised.exitCode, 1, "\(unauthorised)")
        XCTAssertEqual(unauthorisedEntries[0]["status"] as? String, "invalid", "\(unauthorisedEntries[0])")
        XCTAssertContains(unauthorisedEntries[0]["detail"] as? String ?? "", "does not name as its cRLIssuer")
        XCTAssertContains(try opensslIndirect("unauthorized"), "different CRL scope")
        // The CRL issuer is named, but the CRL covers another distribution point (RFC 5280 6.3.3 (b)(2)(i)).
        let (scope, _, scopeEntries) = try check("indirect-other-scope")
        XCTAssertEqual(scope.exitCode, 1, "\(scope)")
        XCTAssertEqual(scopeEntries[0]["status"] as? String, "invalid", "\(scopeEntries[0])")
        XCTAssertContains(scopeEntries[0]["detail"] as? String ?? "", "covers another distribution point")
        XCTAssertContains(try opensslIndirect("other-scope"), "different CRL scope")
        // A CRL issuer the root has revoked cannot vouch for anything (RFC 5280 6.3.3 (f)).
        let (revokedIssuer, _, revokedIssuerEntries) = try check("indirect-revoked-issuer", "soft")
        XCTAssertEqual(revokedIssuer.exitCode, 0, "soft: invalid data passes\n\(revokedIssuer)")
        XCTAssertEqual(revokedIssuerEntries[0]["status"] as? String, "invalid", "\(revokedIssuerEntries[0])")
        XCTAssertContains(revokedIssuerEntries[0]["detail"] as? String ?? "", "is itself revoked according to CRL http://127.0.0.1:\(httpPort)/root.crl")
        XCTAssertEqual(try check("indirect-revoked-issuer").result.exitCode, 1, "hard: invalid data fails")
        // Soft-fail lets invalid data pass, as it does for an unauthorised OCSP responder.
        XCTAssertEqual(try check("indirect-unauthorized", "soft").result.exitCode, 0)
    }

    /// `openssl verify -crl_check -extended_crl` with the indirect CRL and the CRL issuer's certificate.
    func opensslIndirect(_ name: String) throws -> String {
        let crl = "\(dir)/indirect-crl.pem"
        let untrusted = "\(dir)/indirect-untrusted.pem"
        if !FileManager.default.fileExists(atPath: untrusted) {
            _ = try runProcess("/usr/bin/openssl", ["crl", "-inform", "DER", "-in", "\(dir)/www/indirect.crl", "-out", crl])
            let bundle = try String(contentsOfFile: "\(dir)/issuing.pem", encoding: .utf8) + String(contentsOfFile: "\(dir)/crl-issuer.pem", encoding: .utf8)
            try bundle.write(toFile: untrusted, atomically: true, encoding: .utf8)
        }
        let result = try runProcess(
            "/usr/bin/timeout",
            ["10", "openssl", "verify", "-crl_check", "-extended_crl", "-CAfile", "\(dir)/root.pem", "-untrusted", untrusted, "-CRLfile", crl, "\(dir)/leaf-indirect-\(name).pem"])
        let text = result.stdoutText + result.stderr
        return text.contains("leaf-indirect-\(name).pem: OK") ? "OK" : text
    }
}

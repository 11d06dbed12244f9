import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls verify`: every verdict on the TestCerts cases is checked against
/// `openssl verify -attime 1780272000 …`, the independent judge, and the JSON carries the same
/// `X509_V_ERR_*` code at the same depth.
final class VerifyCommandTests: XCTestCase {
    private let root = Fixtures.path("root-ca.pem")
    private let intermediate = Fixtures.path("intermediate-ca.pem")

    // MARK: - Helpers

    /// Runs our verify with `--json` and `openssl verify` on the same inputs; asserts that the
    /// verdicts agree (exit 0 ⇔ openssl OK, exit 1 otherwise) and that a failure carries openssl's
    /// error code at openssl's depth among our findings. Returns our JSON for further checks.
    @discardableResult
    private func assertAgreesWithOpenSSL(
        ours: [String], openssl: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws -> [String: Any] {
        let judge = try OpenSSL.verify(openssl)
        let result = verify(ours + ["--json"])
        XCTAssertExit(result, judge.ok ? 0 : 1, "openssl says \(judge)", file: file, line: line)
        let json = try result.json(file: file, line: line)
        XCTAssertEqual(json["trusted"] as? Bool, judge.ok, "openssl says \(judge)\n\(result)", file: file, line: line)
        let findings = findingsOf(json)
        if judge.ok {
            XCTAssertTrue(findings.isEmpty, "openssl accepts, we report \(findings)", file: file, line: line)
        } else if let code = judge.code {
            let same = findings.filter { int($0["code"]) == code }
            XCTAssertFalse(same.isEmpty, "openssl: \(judge); our findings: \(findings)", file: file, line: line)
            if let depth = judge.depth, !same.isEmpty {
                XCTAssertTrue(same.contains { int($0["depth"]) == depth }, "openssl: \(judge); our findings: \(same)", file: file, line: line)
            }
        } else {
            XCTFail("could not read openssl's verdict:\n\(judge.raw)", file: file, line: line)
        }
        return json
    }

    private func findingsOf(_ json: [String: Any]) -> [[String: Any]] { json["findings"] as? [[String: Any]] ?? [] }

    private func int(_ value: Any?) -> Int? {
        if let value = value as? Int { return value }
        return (value as? NSNumber)?.intValue
    }

    // MARK: - Verdicts judged by openssl

    func testGoodChainIsTrustedForLocalhostLikeOpenSSL() throws {
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server.pem"), "--intermediates", intermediate, "--anchors", root, "--host", "localhost"],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", "-verify_hostname", "localhost", Fixtures.path("server.pem")])
    }

    func testWithoutAnchorsTheSystemRootsAreUsedAndTheTestRootIsNotAmongThem() throws {
        // openssl without -CAfile uses its default store too: the test root is in neither.
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server.pem"), intermediate],
            openssl: ["-untrusted", intermediate, "-purpose", "sslserver", Fixtures.path("server.pem")])
        let json = try verify([Fixtures.path("server.pem"), intermediate, "--json"]).json()
        XCTAssertEqual(json["anchors"] as? String, "system")
        // --system-roots adds the system's roots to the given ones; the given root still decides here.
        let both = try verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--system-roots", "--json"]).json()
        XCTAssertEqual(both["trusted"] as? Bool, true)
        XCTAssertEqual(both["anchors"] as? String, "given+system")
    }

    func testIntermediateGivenAsSecondPositionalBuildsTheChain() throws {
        let result = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost"])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stdout, "Verdict: trusted")
        XCTAssertContains(result.stdout, "CN=mtls Test Intermediate CA")
        XCTAssertContains(result.stdout, "(anchor)")
    }

    func testFullChainFileAndOtherKeyTypesAreTrustedLikeOpenSSL() throws {
        for name in ["server-rsa2048", "server-rsa4096", "server-p384", "server-ed25519"] {
            try assertAgreesWithOpenSSL(
                ours: [Fixtures.path("\(name).pem"), "--intermediates", intermediate, "--anchors", root, "--host", "localhost"],
                openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", "-verify_hostname", "localhost", Fixtures.path("\(name).pem")])
        }
        let full = verify([Fixtures.path("server-fullchain.pem"), "--anchors", root, "--host", "localhost"])
        XCTAssertExit(full, 0)
    }

    func testDERAndPKCS12InputsAreDetectedFromContent() throws {
        XCTAssertExit(verify([Fixtures.path("server.cer"), intermediate, "--anchors", Fixtures.path("root-ca.der")]), 0)
        let p12 = verify([Fixtures.path("p12/server.p12"), "--password", "pass:mtls", "--anchors", root, "--host", "localhost"])
        XCTAssertExit(p12, 0)
    }

    func testExpiredLeafIsRejectedWithItsSubjectAndDateInTheReason() throws {
        let json = try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server-expired.pem"), "--intermediates", intermediate, "--anchors", root],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", Fixtures.path("server-expired.pem")])
        let finding = findingsOf(json).first { $0["error"] as? String == "X509_V_ERR_CERT_HAS_EXPIRED" }
        XCTAssertNotNil(finding, "\(json)")
        XCTAssertContains(finding?["reason"] as? String ?? "", "CN=localhost")
        XCTAssertContains(finding?["reason"] as? String ?? "", "2021-01-01T00:00:00Z")
        XCTAssertEqual(json["summary"] as? String, "recoverableTrustFailure")

        let human = verify([Fixtures.path("server-expired.pem"), "--intermediates", intermediate, "--anchors", root])
        XCTAssertExit(human, 1)
        XCTAssertContains(human.stdout, "NOT trusted")
        XCTAssertContains(human.stdout, "expired on 2021-01-01T00:00:00Z")
        XCTAssertContains(human.stdout, "X509_V_ERR_CERT_HAS_EXPIRED")
        XCTAssertContains(human.stdout, "hint:")
    }

    func testExpiredClientCertificateIsRejectedForClientAuthentication() throws {
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("client-alice-expired.pem"), "--intermediates", intermediate, "--anchors", root, "--purpose", "client"],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslclient", Fixtures.path("client-alice-expired.pem")])
    }

    func testNotYetValidLeafIsRejectedLikeOpenSSL() throws {
        let json = try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server-notyetvalid.pem"), "--intermediates", intermediate, "--anchors", root],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", Fixtures.path("server-notyetvalid.pem")])
        XCTAssertTrue(findingsOf(json).contains { $0["error"] as? String == "X509_V_ERR_CERT_NOT_YET_VALID" }, "\(json)")
    }

    func testAtTakesRFC3339AndTheVerdictFollowsTheTimeLikeOpenSSLAttime() throws {
        // 2036-01-01T00:00:00Z = 2082758400: the leaf and the intermediate (good until 2035) have expired.
        let ours = mtls(["verify", Fixtures.path("server.pem"), intermediate, "--anchors", root, "--at", "2036-01-01T00:00:00Z", "--json"])
        let judge = try OpenSSL.run(["verify", "-attime", "2082758400", "-CAfile", root, "-untrusted", intermediate, Fixtures.path("server.pem")])
        XCTAssertNotEqual(judge.status, 0, "\(judge)")
        XCTAssertExit(ours, 1)
        let json = try ours.json()
        XCTAssertEqual(json["time"] as? String, "2036-01-01T00:00:00Z")
        XCTAssertTrue(findingsOf(json).contains { $0["error"] as? String == "X509_V_ERR_CERT_HAS_EXPIRED" }, "\(json)")

        let now = mtls(["verify", Fixtures.path("server.pem"), intermediate, "--anchors", root, "--at", fixedTimeRFC3339])
        XCTAssertExit(now, 0)
        XCTAssertContains(now.stdout, "at \(fixedTimeRFC3339)")
    }

    func testWrongHostIsRejectedAndTheReasonNamesTheNamesItCarries() throws {
        let json = try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server-wronghost.pem"), "--intermediates", intermediate, "--anchors", root, "--host", "localhost"],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", "-verify_hostname", "localhost", Fixtures.path("server-wronghost.pem")])
        let finding = findingsOf(json).first { $0["error"] as? String == "X509_V_ERR_HOSTNAME_MISMATCH" }
        XCTAssertContains(finding?["reason"] as? String ?? "", "wrong.example.com")
        XCTAssertContains(finding?["reason"] as? String ?? "", "localhost")
        XCTAssertEqual(json["host"] as? String, "localhost")
    }

    func testNoHostnameCheckSkipsTheNameCheck() throws {
        let result = verify([Fixtures.path("server-wronghost.pem"), intermediate, "--anchors", root, "--no-hostname-check"])
        XCTAssertExit(result, 0)
        let contradiction = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost", "--no-hostname-check"])
        XCTAssertExit(contradiction, 2)
    }

    func testIPLiteralHostIsMatchedAgainstIPSubjectAltNamesLikeOpenSSLVerifyIP() throws {
        let selfSigned = Fixtures.path("self-signed.pem")
        try assertAgreesWithOpenSSL(
            ours: [selfSigned, "--anchors", selfSigned, "--host", "127.0.0.1"],
            openssl: ["-CAfile", selfSigned, "-purpose", "sslserver", "-verify_ip", "127.0.0.1", selfSigned])
        let json = try assertAgreesWithOpenSSL(
            ours: [selfSigned, "--anchors", selfSigned, "--host", "10.0.0.1"],
            openssl: ["-CAfile", selfSigned, "-purpose", "sslserver", "-verify_ip", "10.0.0.1", selfSigned])
        let finding = findingsOf(json).first { $0["error"] as? String == "X509_V_ERR_IP_ADDRESS_MISMATCH" }
        XCTAssertContains(finding?["reason"] as? String ?? "", "127.0.0.1", "the reason lists the names it is valid for")
    }

    func testSelfSignedLeafIsRejectedAgainstAnotherRootWithAHintToAnchorIt() throws {
        let json = try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("self-signed.pem"), "--anchors", root, "--host", "localhost"],
            openssl: ["-CAfile", root, "-purpose", "sslserver", "-verify_hostname", "localhost", Fixtures.path("self-signed.pem")])
        let finding = findingsOf(json).first { $0["error"] as? String == "X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT" }
        XCTAssertNotNil(finding, "\(json)")
        XCTAssertContains(finding?["hint"] as? String ?? "", "--anchors")
    }

    func testSelfSignedLeafIsTrustedWhenItIsItsOwnAnchor() throws {
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("self-signed.pem"), "--anchors", Fixtures.path("self-signed.pem"), "--host", "localhost"],
            openssl: ["-CAfile", Fixtures.path("self-signed.pem"), "-purpose", "sslserver", "-verify_hostname", "localhost", Fixtures.path("self-signed.pem")])
    }

    func testMissingIntermediateIsRejectedAndTheHintNamesTheIssuer() throws {
        let json = try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server.pem"), "--anchors", root],
            openssl: ["-CAfile", root, "-purpose", "sslserver", Fixtures.path("server.pem")])
        let finding = findingsOf(json).first { $0["error"] as? String == "X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY" }
        XCTAssertContains(finding?["reason"] as? String ?? "", "mtls Test Intermediate CA")
        XCTAssertContains(finding?["hint"] as? String ?? "", "--intermediates")
    }

    func testClientFromAnotherPKIIsUntrustedUnlessItsRootIsAnAnchor() throws {
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("client-other.pem"), "--anchors", root, "--purpose", "client"],
            openssl: ["-CAfile", root, "-purpose", "sslclient", Fixtures.path("client-other.pem")])
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("client-other.pem"), "--anchors", Fixtures.path("all-roots.pem"), "--purpose", "client"],
            openssl: ["-CAfile", Fixtures.path("all-roots.pem"), "-purpose", "sslclient", Fixtures.path("client-other.pem")])
    }

    func testRevokedLeafIsRejectedWithTheCRLsAndIsFatal() throws {
        let crls = Fixtures.path("crls.pem")
        let json = try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server-revoked.pem"), "--intermediates", intermediate, "--anchors", root, "--crl", crls],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", "-crl_check", "-CRLfile", crls, Fixtures.path("server-revoked.pem")])
        XCTAssertTrue(findingsOf(json).contains { $0["error"] as? String == "X509_V_ERR_CERT_REVOKED" }, "\(json)")
        XCTAssertEqual(json["summary"] as? String, "fatalTrustFailure")
        // The same certificate passes without revocation checking (as openssl without -crl_check).
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server-revoked.pem"), "--intermediates", intermediate, "--anchors", root],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", Fixtures.path("server-revoked.pem")])
    }

    func testUnrevokedLeafIsTrustedWithTheCRLs() throws {
        let crls = Fixtures.path("crls.pem")
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server.pem"), "--intermediates", intermediate, "--anchors", root, "--crl", crls],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", "-crl_check_all", "-CRLfile", crls, Fixtures.path("server.pem")])
    }

    func testClientAuthOnlyCertificateIsRejectedForTheDefaultServerPurpose() throws {
        let json = try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server-clientauth-only.pem"), "--intermediates", intermediate, "--anchors", root, "--purpose", "server"],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", Fixtures.path("server-clientauth-only.pem")])
        XCTAssertTrue(findingsOf(json).contains { $0["error"] as? String == "X509_V_ERR_INVALID_PURPOSE" }, "\(json)")
        XCTAssertEqual(json["purpose"] as? String, "server")
        // The default purpose is server.
        XCTAssertExit(verify([Fixtures.path("server-clientauth-only.pem"), intermediate, "--anchors", root]), 1)
        // --purpose any ignores the EKU.
        XCTAssertExit(verify([Fixtures.path("server-clientauth-only.pem"), intermediate, "--anchors", root, "--purpose", "any"]), 0)
    }

    func testClientCertificateIsTrustedForClientPurposeAndNotForServer() throws {
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("client-alice.pem"), "--intermediates", intermediate, "--anchors", root, "--purpose", "client"],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslclient", Fixtures.path("client-alice.pem")])
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("client-alice.pem"), "--intermediates", intermediate, "--anchors", root, "--purpose", "server"],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", Fixtures.path("client-alice.pem")])
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("client-serverauth-only.pem"), "--intermediates", intermediate, "--anchors", root, "--purpose", "client"],
            openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslclient", Fixtures.path("client-serverauth-only.pem")])
    }

    func testCNOnlyCertificateIsRejectedForLocalhostBecauseNamesComeFromSANsOnly() throws {
        // openssl falls back to the subject CN and accepts; we deliberately do not (SAN-only, as
        // browsers, rustls and the CA/B Forum rules). Both facts are asserted.
        let judge = try OpenSSL.verify(["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", "-verify_hostname", "localhost", Fixtures.path("server-cn-only.pem")])
        XCTAssertTrue(judge.ok, "the fixture premise changed: openssl now rejects server-cn-only: \(judge)")

        let result = verify([Fixtures.path("server-cn-only.pem"), "--intermediates", intermediate, "--anchors", root, "--host", "localhost", "--json"])
        XCTAssertExit(result, 1)
        let finding = findingsOf(try result.json()).first { $0["error"] as? String == "X509_V_ERR_HOSTNAME_MISMATCH" }
        XCTAssertNotNil(finding, "\(result)")
        let reason = finding?["reason"] as? String ?? ""
        XCTAssertContains(reason, "subjectAltName", "the reason must say why: no SAN, and the CN is not used")
        XCTAssertContains(reason, "CN")
        XCTAssertContains(finding?["hint"] as? String ?? "", "subjectAltName")

        // Without a host to check, the chain itself is fine under RFC 5280; the Baseline
        // Requirements refuse a server certificate without subjectAltName (7.1.2.7.12).
        XCTAssertExit(verify([Fixtures.path("server-cn-only.pem"), intermediate, "--anchors", root, "--profile", "rfc5280"]), 0)
        let webpki = verify([Fixtures.path("server-cn-only.pem"), intermediate, "--anchors", root, "--profile", "webpki", "--json"])
        XCTAssertExit(webpki, 1)
        XCTAssertTrue(findingsOf(try webpki.json()).contains { $0["error"] as? String == "MTLS_WEBPKI_EE_SAN_MISSING" })
        // By default (what clients do) it is trusted, with the rule as a warning.
        let byDefault = verify([Fixtures.path("server-cn-only.pem"), intermediate, "--anchors", root, "--json"])
        XCTAssertExit(byDefault, 0)
        let warnings = (try byDefault.json()["warnings"] as? [[String: Any]]) ?? []
        XCTAssertTrue(warnings.contains { $0["error"] as? String == "MTLS_WEBPKI_EE_SAN_MISSING" }, "\(warnings)")
        let text = verify([Fixtures.path("server-cn-only.pem"), intermediate, "--anchors", root])
        XCTAssertContains(text.stdout, "Profile: clients")
        XCTAssertContains(text.stdout, "⚠")
        XCTAssertContains(text.stdout, "a public CA could not issue it")
    }

    func testPartialChainAcceptsTheIntermediateAsAnAnchorOnlyWhenAsked() throws {
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server.pem"), "--anchors", intermediate, "--partial-chain"],
            openssl: ["-CAfile", intermediate, "-partial_chain", "-purpose", "sslserver", Fixtures.path("server.pem")])
        try assertAgreesWithOpenSSL(
            ours: [Fixtures.path("server.pem"), "--anchors", intermediate],
            openssl: ["-CAfile", intermediate, "-purpose", "sslserver", Fixtures.path("server.pem")])
    }

    func testMaxDepthCountsLikeOpenSSLVerifyDepth() throws {
        for depth in ["0", "1", "2"] {
            try assertAgreesWithOpenSSL(
                ours: [Fixtures.path("server.pem"), "--intermediates", intermediate, "--anchors", root, "--max-depth", depth],
                openssl: ["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", "-verify_depth", depth, Fixtures.path("server.pem")])
        }
        XCTAssertExit(verify([Fixtures.path("server.pem"), "--anchors", root, "--max-depth", "-1"]), 2)
        XCTAssertExit(verify([Fixtures.path("server.pem"), "--anchors", root, "--max-depth", "deep"]), 2)
    }

    // MARK: - Pins

    func testMatchingPinKeepsTheChainTrustedAndNamesTheDepth() throws {
        let intermediatePin = try OpenSSL.spkiPin(certificate: intermediate)
        let result = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--pin", intermediatePin, "--json"])
        XCTAssertExit(result, 0)
        let pins = try result.json()["pins"] as? [String: Any]
        XCTAssertEqual(pins?["satisfied"] as? Bool, true)
        let matched = pins?["matched"] as? [[String: Any]] ?? []
        XCTAssertEqual(matched.first?["pin"] as? String, intermediatePin)
        XCTAssertEqual(int(matched.first?["depth"]), 1)
    }

    func testPinThatMatchesNothingFailsAndPrintsExpectedAndPresented() throws {
        let backupPin = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout"]))
        let leafPin = try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem"))
        let result = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--pin", backupPin])
        XCTAssertExit(result, 1)
        XCTAssertContains(result.stdout, "NOT trusted")
        XCTAssertContains(result.stdout, "expected:  \(backupPin)")
        XCTAssertContains(result.stdout, leafPin, "the presented pins are listed")

        let json = try verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--pin", backupPin, "--json"]).json()
        XCTAssertEqual(json["trusted"] as? Bool, false)
        let pins = json["pins"] as? [String: Any]
        XCTAssertEqual(pins?["satisfied"] as? Bool, false)
        XCTAssertEqual(pins?["expected"] as? [String], [backupPin])
        XCTAssertEqual((pins?["presented"] as? [String])?.first, leafPin)
    }

    func testAPinDoesNotRescueAnUntrustedChain() throws {
        let leafPin = try OpenSSL.spkiPin(certificate: Fixtures.path("server-expired.pem"))
        XCTAssertExit(verify([Fixtures.path("server-expired.pem"), intermediate, "--anchors", root, "--pin", leafPin]), 1)
    }

    func testPinsFileIsReadWithCommentsAndAnyPinMayMatch() throws {
        let directory = try TemporaryDirectory(self)
        let intermediatePin = try OpenSSL.spkiPin(certificate: intermediate)
        let pinsFile = try directory.write(
            "pins.txt",
            text: """
                # production pins
                sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=   # retired

                \(intermediatePin)  # issuing CA
                """)
        XCTAssertExit(verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--pins", pinsFile]), 0)

        let stale = try directory.write("stale.txt", text: "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
        XCTAssertExit(verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--pins", stale]), 1)
    }

    func testPinsFilesOfEveryPerHostFormatAreEnforcedForTheCheckedHost() throws {
        // What `mtls pin` writes for a pinned host and a backup key, read back by `verify --pins`
        // (it read only pin lists and JSON before): the chain's host is pinned, another host is not.
        let directory = try TemporaryDirectory(self)
        let backup = Fixtures.path("keys/backup.key")
        for format in ["android", "okhttp", "trustkit-plist", "ats", "json"] {
            let out = directory.file("pins-\(format)")
            let made = mtls(["pin", intermediate, backup, "--host", "localhost", "--format", format, "--offline", "--out", out, "--expires", "2030-01-01"])
            XCTAssertExit(made, 0, format)
            XCTAssertExit(
                verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost", "--pins", out]), 0,
                "\(format): localhost is pinned to the intermediate")

            let wrong = directory.file("wrong-\(format)")
            XCTAssertExit(
                mtls(["pin", backup, Fixtures.path("keys/ec-p256-public.pem"), "--host", "localhost", "--format", format, "--offline", "--out", wrong, "--expires", "2030-01-01"]),
                0, format)
            let refused = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost", "--pins", wrong, "--json"])
            XCTAssertExit(refused, 1, "\(format): only keys outside the chain are pinned for localhost")
            XCTAssertEqual((try refused.json()["pins"] as? [String: Any])?["satisfied"] as? Bool, false, format)
        }
    }

    func testEveryChainPinAsPrintedByOpenSSLIsAcceptedByPin() throws {
        // A base64 digest may begin with "/", so "sha256/" + digest can begin "sha256//": that must
        // still be read as the 44-character digest, not as curl's "sha256//" prefix.
        let slashPin = "sha256//" + String(repeating: "A", count: 42) + "="
        let synthetic = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--pin", slashPin])
        try KnownBugs.skipIfSlashPinIsRejected(synthetic)
        XCTAssertExit(synthetic, 1, "a well-formed pin that matches nothing: pin mismatch, not a usage error")

        for certificate in [Fixtures.path("server.pem"), intermediate, root] {
            let pin = try OpenSSL.spkiPin(certificate: certificate)
            let result = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--pin", pin])
            try KnownBugs.skipIfSlashPinIsRejected(result)
            XCTAssertExit(result, 0, "pin \(pin) of \(certificate)")
        }
    }

    func testMalformedPinIsAUsageErrorAndAMissingPinsFileIsBadInput() throws {
        let bad = verify([Fixtures.path("server.pem"), "--anchors", root, "--pin", "sha256/not-base64", "--json"])
        try XCTAssertJSONError(bad, code: 2)
        XCTAssertContains(bad.stderr, "sha256/not-base64")
        let missing = verify([Fixtures.path("server.pem"), "--anchors", root, "--pins", "/nonexistent/pins.txt"])
        XCTAssertExit(missing, 3)
        XCTAssertContains(missing.stderr, "/nonexistent/pins.txt")
    }

    // MARK: - JSON

    func testJSONIsOneObjectWithVerdictChainAndFindings() throws {
        let result = verify([Fixtures.path("server-expired.pem"), intermediate, "--anchors", root, "--host", "localhost", "--json"])
        XCTAssertExit(result, 1)
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).components(separatedBy: "\n").count, 1, "one object, one line")
        let json = try result.json()
        for key in ["trusted", "summary", "chain", "findings"] { XCTAssertNotNil(json[key], "missing \(key): \(json)") }
        XCTAssertEqual(json["time"] as? String, fixedTimeRFC3339)
        let chain = json["chain"] as? [[String: Any]] ?? []
        XCTAssertEqual(
            chain.map { $0["subject"] as? String ?? "" },
            [
                "CN=localhost,O=mtls test,C=US", "CN=mtls Test Intermediate CA,O=mtls test,C=US", "CN=mtls Test Root CA,O=mtls test,C=US",
            ])
        XCTAssertEqual(chain.map { int($0["depth"]) ?? -1 }, [0, 1, 2])
        XCTAssertEqual(chain.last?["isAnchor"] as? Bool, true)
        XCTAssertEqual(chain.first?["serial"] as? String, "2006")
        XCTAssertEqual(chain.first?["spkiSHA256"] as? String, try OpenSSL.spkiPin(certificate: Fixtures.path("server-expired.pem")))
        for finding in findingsOf(json) {
            XCTAssertTrue((finding["error"] as? String ?? "").hasPrefix("X509_V_ERR_"), "\(finding)")
            XCTAssertNotNil(int(finding["code"]), "\(finding)")
            XCTAssertFalse((finding["hint"] as? String ?? "").isEmpty, "every finding has a hint: \(finding)")
            XCTAssertFalse((finding["reason"] as? String ?? "").isEmpty, "\(finding)")
            XCTAssertNotNil(finding["subject"] as? String, "\(finding)")
        }
        XCTAssertTrue(result.stderr.isEmpty, "a verdict is not an error: \(result.stderr)")
    }

    func testTrustedJSONHasNoFindingsAndProceeds() throws {
        let json = try verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost", "--json"]).json()
        XCTAssertEqual(json["trusted"] as? Bool, true)
        XCTAssertEqual(json["summary"] as? String, "proceed")
        XCTAssertEqual((json["findings"] as? [Any])?.count, 0)
        XCTAssertEqual(json["anchors"] as? String, "given")
    }

    // MARK: - Batch

    func testBatchEvaluatesEveryFileAsItsOwnLeaf() throws {
        let leaves = ["server.pem", "server-expired.pem", "server-rsa2048.pem", "server-notyetvalid.pem"].map(Fixtures.path)
        let human = verify(["--batch"] + leaves + ["--intermediates", intermediate, "--anchors", root])
        XCTAssertExit(human, 1, "one leaf is bad, so the batch is not trusted")
        let lines = human.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, human.stdout)
        XCTAssertTrue(lines[0].hasSuffix("server.pem: trusted"), lines[0])
        XCTAssertContains(lines[1], "NOT trusted")
        XCTAssertContains(lines[1], "expired")
        XCTAssertTrue(lines[2].hasSuffix(": trusted"), lines[2])
        XCTAssertContains(lines[3], "not valid before")

        let json = try verify(["--batch"] + leaves + ["--intermediates", intermediate, "--anchors", root, "--json"]).json()
        XCTAssertEqual(json["trusted"] as? Bool, false)
        XCTAssertEqual(int(json["count"]), 4)
        XCTAssertEqual(int(json["trustedCount"]), 2)
        let results = json["results"] as? [[String: Any]] ?? []
        XCTAssertEqual(results.map { $0["source"] as? String ?? "" }, leaves)
        XCTAssertEqual(results.map { $0["trusted"] as? Bool ?? false }, [true, false, true, false])
        for (leaf, result) in zip(leaves, results) {
            let judge = try OpenSSL.verify(["-CAfile", root, "-untrusted", intermediate, "-purpose", "sslserver", leaf])
            XCTAssertEqual(result["trusted"] as? Bool, judge.ok, "\(leaf): openssl says \(judge)")
        }
    }

    func testBatchOfGoodLeavesExitsZero() throws {
        let leaves = ["server.pem", "server-p384.pem", "server-ed25519.pem"].map(Fixtures.path)
        XCTAssertExit(verify(["--batch"] + leaves + ["--intermediates", intermediate, "--anchors", root, "--host", "localhost"]), 0)
    }

    // MARK: - Bad input and usage

    func testBadInputFilesExitThreeAndTheMessageNamesTheFile() throws {
        let directory = try TemporaryDirectory(self)
        let cases: [(String, String)] = [
            ("empty", Fixtures.path("bad/empty.pem")),
            ("truncated DER", Fixtures.path("bad/truncated.der")),
            ("garbage", Fixtures.path("bad/garbage.bin")),
            ("broken base64", Fixtures.path("bad/broken-base64.pem")),
            ("key where a certificate belongs", Fixtures.path("bad/key-as-cert.pem")),
            ("plain text", Fixtures.path("bad/not-a-cert.txt")),
            ("bundle without certificates", Fixtures.path("bad/no-certs-bundle.pem")),
            ("truncated PKCS#12", Fixtures.path("bad/truncated.p12")),
            ("directory", directory.path),
            ("missing file", directory.file("missing.pem")),
        ]
        for (name, path) in cases {
            let result = verify([path, "--anchors", root])
            XCTAssertExit(result, 3, name)
            XCTAssertContains(result.stderr, path, "\(name): the error names the file")
            XCTAssertTrue(result.stdout.isEmpty, "\(name): nothing on stdout without --json:\n\(result)")
            XCTAssertNotContains(result.stderr, "error:0", "\(name): no raw OpenSSL codes")

            let json = verify([path, "--anchors", root, "--json"])
            try XCTAssertJSONError(json, code: 3)
        }
    }

    func testBadAnchorsAndCRLFilesAreBadInput() throws {
        let garbage = Fixtures.path("bad/garbage.bin")
        let anchors = verify([Fixtures.path("server.pem"), "--anchors", garbage])
        XCTAssertExit(anchors, 3)
        XCTAssertContains(anchors.stderr, garbage)
        XCTAssertExit(verify([Fixtures.path("server.pem"), "--anchors", root, "--intermediates", Fixtures.path("bad/empty.pem")]), 3)
        let crl = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--crl", Fixtures.path("server.pem")])
        XCTAssertExit(crl, 3, "a certificate is not a CRL")
    }

    func testUnparseableTimeIsAUsageError() throws {
        for time in ["yesterday", "2026-13-45T00:00:00Z", ""] {
            let result = mtls(["verify", Fixtures.path("server.pem"), "--anchors", root, "--at", time])
            XCTAssertExit(result, 2, "--at '\(time)'")
            XCTAssertContains(result.stderr, "--at")
            let json = mtls(["verify", Fixtures.path("server.pem"), "--anchors", root, "--at", time, "--json"])
            try XCTAssertJSONError(json, code: 2)
        }
    }

    func testUnknownFlagIsAUsageErrorWithASuggestionAndAJSONEnvelope() throws {
        let result = verify([Fixtures.path("server.pem"), "--anchor", root])
        XCTAssertExit(result, 2)
        XCTAssertContains(result.stderr, "Unknown option '--anchor'")
        XCTAssertContains(result.stderr, "Did you mean '--anchors'?")
        XCTAssertContains(result.stderr, "mtls verify --help")
        XCTAssertTrue(result.stdout.isEmpty, result.stdout)

        let json = verify([Fixtures.path("server.pem"), "--anchor", root, "--json"])
        try XCTAssertJSONError(json, code: 2)
        let message = (try json.json()["error"] as? [String: Any])?["message"] as? String ?? ""
        XCTAssertContains(message, "--anchor")
    }

    func testMissingCertificateArgumentAndBadPurposeAreUsageErrors() throws {
        let missing = verify(["--anchors", root])
        XCTAssertExit(missing, 2)
        XCTAssertContains(missing.stderr, "CERT")
        let purpose = verify([Fixtures.path("server.pem"), "--anchors", root, "--purpose", "email"])
        XCTAssertExit(purpose, 2)
        XCTAssertContains(purpose.stderr, "server, client or any")
    }

    func testHelpGoesToStandardOutputAndExitsZero() throws {
        let result = mtls(["verify", "--help"])
        XCTAssertExit(result, 0)
        for fragment in ["OVERVIEW:", "USAGE:", "OPTIONS:", "--anchors", "--partial-chain", "--max-depth", "--pins", "--batch"] {
            XCTAssertContains(result.stdout, fragment)
        }
        XCTAssertTrue(result.stderr.isEmpty)
    }

    // MARK: - Profiles, email and key usage (issue 16)

    func testProfileIsChosenByPurposeAndNamedInTextAndJSON() throws {
        let server = try verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost", "--json"]).json()
        XCTAssertEqual(server["profile"] as? String, "clients")
        let explicit = try verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--profile", "rfc5280", "--json"]).json()
        XCTAssertEqual(explicit["profile"] as? String, "rfc5280")
        let client = try verify([Fixtures.path("client-alice.pem"), intermediate, "--anchors", root, "--purpose", "client", "--json"]).json()
        XCTAssertEqual(client["profile"] as? String, "clients")
        let text = verify([Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost", "--profile", "webpki"])
        XCTAssertContains(text.stdout, "Profile: webpki")
        let bad = verify([Fixtures.path("server.pem"), "--anchors", root, "--profile", "browser"])
        XCTAssertExit(bad, 2)
        XCTAssertContains(bad.stderr, "clients, webpki or rfc5280")
    }

    /// A CA certificate as the leaf: RFC 5280 lets it end a path, the Baseline Requirements do not.
    func testCACertificateAsLeafDependsOnTheProfile() throws {
        let leaf = intermediate
        XCTAssertExit(verify([leaf, "--anchors", root, "--profile", "rfc5280"]), 0)
        let webpki = verify([leaf, "--anchors", root, "--profile", "webpki", "--json"])
        XCTAssertExit(webpki, 1)
        XCTAssertTrue(findingsOf(try webpki.json()).contains { $0["error"] as? String == "MTLS_WEBPKI_EE_IS_CA" })
    }

    func testEmailIsMatchedAgainstTheRFC822NameOnly() throws {
        let alice = [Fixtures.path("client-alice.pem"), intermediate, "--anchors", root, "--purpose", "client"]
        XCTAssertExit(verify(alice + ["--email", "alice@example.com"]), 0)
        XCTAssertExit(verify(alice + ["--email", "alice@EXAMPLE.com"]), 0)  // the domain ignores case
        let other = verify(alice + ["--email", "Alice@example.com", "--json"])  // the local part does not
        XCTAssertExit(other, 1)
        let finding = findingsOf(try other.json()).first { $0["error"] as? String == "X509_V_ERR_EMAIL_MISMATCH" }
        XCTAssertTrue((finding?["reason"] as? String)?.contains("alice@example.com") == true, "\(String(describing: finding))")
        XCTAssertExit(verify(alice + ["--email", "not-an-address"]), 2)
    }

    func testKeyUsageRequirementUsesRFC5280Names() throws {
        let server = [Fixtures.path("server.pem"), intermediate, "--anchors", root, "--host", "localhost"]
        XCTAssertExit(verify(server + ["--key-usage", "digitalSignature"]), 0)
        let missing = verify(server + ["--key-usage", "digitalSignature,keyEncipherment", "--json"])
        XCTAssertExit(missing, 1)
        XCTAssertTrue(findingsOf(try missing.json()).contains { $0["error"] as? String == "MTLS_KEY_USAGE_NOT_ALLOWED" })
        let unknown = verify(server + ["--key-usage", "signing"])
        XCTAssertExit(unknown, 2)
        XCTAssertContains(unknown.stderr, "digitalSignature")
    }
}

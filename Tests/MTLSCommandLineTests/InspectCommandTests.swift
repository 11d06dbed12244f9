import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls inspect FILE`: what a certificate, key, CRL, CSR or PKCS#12 file holds, detected from content.
final class InspectCommandTests: XCTestCase {
    private func items(_ result: CLIResult, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        XCTAssertExit(result, 0, file: file, line: line)
        return try result.json(file: file, line: line)["items"] as? [[String: Any]] ?? []
    }

    private func int(_ value: Any?) -> Int? { (value as? Int) ?? (value as? NSNumber)?.intValue }

    /// `AA:BB:…` as `openssl x509 -noout -fingerprint -sha256` prints it.
    private func opensslFingerprint(_ path: String) throws -> String {
        let text = String(decoding: try OpenSSL.output(["x509", "-in", path, "-noout", "-fingerprint", "-sha256"]), as: UTF8.self)
        return text.components(separatedBy: "=").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    // MARK: - Certificates

    func testCertificateInPEMDERAndCerFormsShowsTheSameFactsAsOpenSSL() throws {
        let pin = try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem"))
        let fingerprint = try opensslFingerprint(Fixtures.path("server.pem"))
        for name in ["server.pem", "server.der", "server.cer"] {
            let list = try items(mtls(["inspect", Fixtures.path(name), "--json"]))
            XCTAssertEqual(list.count, 1, name)
            XCTAssertEqual(list.first?["type"] as? String, "certificate", name)
            let certificate = list.first?["certificate"] as? [String: Any] ?? [:]
            XCTAssertEqual(certificate["subject"] as? String, "CN=localhost,O=mtls test,C=US", name)
            XCTAssertEqual(certificate["issuer"] as? String, "CN=mtls Test Intermediate CA,O=mtls test,C=US", name)
            XCTAssertEqual(certificate["serial"] as? String, "2001", name)
            XCTAssertEqual(certificate["notBefore"] as? String, "2025-01-01T00:00:00Z", name)
            XCTAssertEqual(certificate["notAfter"] as? String, "2035-01-01T00:00:00Z", name)
            XCTAssertEqual(certificate["spkiSHA256"] as? String, pin, name)
            XCTAssertEqual(certificate["sha256"] as? String, fingerprint, name)
            XCTAssertEqual(certificate["extendedKeyUsage"] as? [String], ["serverAuth"], name)
            XCTAssertEqual(certificate["isCA"] as? Bool, false, name)
            XCTAssertTrue((certificate["subjectAltNames"] as? [String] ?? []).contains("DNS:localhost"), name)
        }
    }

    func testHumanOutputListsTheFieldsAPersonLooksFor() throws {
        let result = mtls(["inspect", Fixtures.path("server-multi.pem")])
        XCTAssertExit(result, 0)
        for fragment in ["Certificate", "CN=api.example.com", "DNS:api.example.com, DNS:www.example.com", "2009", "ECDSA P-256", "serverAuth", "SPKI pin", "sha256/"] {
            XCTAssertContains(result.stdout, fragment)
        }
        XCTAssertTrue(result.stderr.isEmpty, result.stderr)
        XCTAssertNotContains(result.stdout, "\u{1B}[", "no colour when stdout is not a terminal")
    }

    func testColourOnlyOnATerminalAndNeverWithNO_COLOR() throws {
        let terminal = mtls(["inspect", Fixtures.path("server.pem")], stdoutIsTerminal: true)
        XCTAssertContains(terminal.stdout, "\u{1B}[")
        let noColor = mtls(["inspect", Fixtures.path("server.pem")], environment: ["NO_COLOR": "1"], stdoutIsTerminal: true)
        XCTAssertNotContains(noColor.stdout, "\u{1B}[")
    }

    func testBundlesListEveryCertificateAndSkipTextBetweenBlocks() throws {
        let expected = ["CN=localhost,O=mtls test,C=US", "CN=mtls Test Intermediate CA,O=mtls test,C=US", "CN=mtls Test Root CA,O=mtls test,C=US"]
        for name in ["server-fullchain.pem", "bundle-with-text.pem"] {
            let list = try items(mtls(["inspect", Fixtures.path(name), "--json"]))
            XCTAssertEqual(list.map { ($0["certificate"] as? [String: Any])?["subject"] as? String ?? "" }, expected, name)
        }
        let human = mtls(["inspect", Fixtures.path("server-fullchain.pem")])
        XCTAssertContains(human.stdout, "[1] Certificate")
        XCTAssertContains(human.stdout, "[3] Certificate")
    }

    // MARK: - Keys, CSRs, CRLs

    /// The encoding of a DER private key as `openssl asn1parse` shows it: the element after the
    /// version is a SEQUENCE (AlgorithmIdentifier: PKCS#8), an OCTET STRING (SEC1) or an INTEGER (PKCS#1).
    private func derKeyFormat(_ path: String) throws -> String {
        let lines = String(decoding: try OpenSSL.output(["asn1parse", "-inform", "DER", "-in", path]), as: UTF8.self).split(separator: "\n")
        guard lines.count > 2 else { return "?" }
        if lines[2].contains("SEQUENCE") { return "PKCS#8" }
        if lines[2].contains("OCTET STRING") { return "SEC1" }
        if lines[2].contains("INTEGER") { return "PKCS#1" }
        return "?"
    }

    func testTrueDERPKCS8KeysAreReportedAsPKCS8() throws {
        let directory = try TemporaryDirectory(self)
        for (input, key) in [("keys/rsa-pkcs1.pem", "RSA 2048"), ("keys/ec-p256-sec1.pem", "ECDSA P-256"), ("keys/ed25519-pkcs8.pem", "Ed25519")] {
            let der = directory.file(URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent + ".p8.der")
            _ = try OpenSSL.output(["pkcs8", "-topk8", "-nocrypt", "-in", Fixtures.path(input), "-outform", "DER", "-out", der])
            XCTAssertEqual(try derKeyFormat(der), "PKCS#8")
            let item = try items(mtls(["inspect", der, "--json"])).first
            XCTAssertEqual(item?["format"] as? String, "PKCS#8", input)
            XCTAssertEqual(item?["key"] as? String, key, input)
        }
    }

    func testPrivateKeysShowTheirEncodingAndThePinOfTheirPublicHalf() throws {
        let rsaPin = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/rsa-pkcs8.pem"), "-pubout"]))
        let ecPin = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/ec-p256-pkcs8.pem"), "-pubout"]))
        // The DER fixtures' encodings are judged by `openssl asn1parse`, not by their names:
        // keys/rsa-pkcs8.der and keys/ec-p256.der are traditional DER (see derKeyFormat).
        let cases: [(String, String, String, String)] = [
            ("keys/rsa-pkcs1.pem", "RSA 2048", "PKCS#1", rsaPin),
            ("keys/rsa-pkcs1.der", "RSA 2048", try derKeyFormat(Fixtures.path("keys/rsa-pkcs1.der")), rsaPin),
            ("keys/rsa-pkcs8.pem", "RSA 2048", "PKCS#8", rsaPin),
            ("keys/rsa-pkcs8.der", "RSA 2048", try derKeyFormat(Fixtures.path("keys/rsa-pkcs8.der")), rsaPin),
            ("keys/ec-p256-sec1.pem", "ECDSA P-256", "SEC1", ecPin),
            ("keys/ec-p256-pkcs8.pem", "ECDSA P-256", "PKCS#8", ecPin),
            ("keys/ec-p256.der", "ECDSA P-256", try derKeyFormat(Fixtures.path("keys/ec-p256.der")), ecPin),
        ]
        for (path, key, format, pin) in cases {
            let list = try items(mtls(["inspect", Fixtures.path(path), "--json"]))
            XCTAssertEqual(list.first?["type"] as? String, "private key", path)
            XCTAssertEqual(list.first?["key"] as? String, key, path)
            XCTAssertEqual(list.first?["format"] as? String, format, path)
            XCTAssertEqual(list.first?["encrypted"] as? Bool, false, path)
            XCTAssertEqual(list.first?["spkiSHA256"] as? String, pin, path)
        }
        XCTAssertEqual(try items(mtls(["inspect", Fixtures.path("keys/ed25519-pkcs8.pem"), "--json"])).first?["key"] as? String, "Ed25519")
        XCTAssertContains(try items(mtls(["inspect", Fixtures.path("keys/ec-p384-sec1.pem"), "--json"])).first?["key"] as? String ?? "", "P-384")
    }

    func testEncryptedKeysAreRecognisedWithoutAPasswordAndOpenedWithIt() throws {
        for path in ["keys/rsa-pkcs8-encrypted.pem", "keys/rsa-traditional-encrypted.pem"] {
            let locked = try items(mtls(["inspect", Fixtures.path(path), "--json"]))
            XCTAssertEqual(locked.first?["encrypted"] as? Bool, true, path)
            XCTAssertNil(locked.first?["key"], "the key type is not known without the password: \(locked)")
            let human = mtls(["inspect", Fixtures.path(path)])
            XCTAssertContains(human.stdout, "--password")
        }
        let rsaPin = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/rsa-pkcs8.pem"), "-pubout"]))
        for (path, format) in [("keys/rsa-pkcs8-encrypted.pem", "encrypted PKCS#8"), ("keys/rsa-traditional-encrypted.pem", "traditional encrypted PEM")] {
            let open = try items(mtls(["inspect", Fixtures.path(path), "--password", "env:KEY_PASSWORD", "--json"], environment: ["KEY_PASSWORD": "secret"]))
            XCTAssertEqual(open.first?["key"] as? String, "RSA 2048", path)
            XCTAssertEqual(open.first?["format"] as? String, format, path)
            XCTAssertEqual(open.first?["spkiSHA256"] as? String, rsaPin, path)
        }
    }

    func testWrongKeyPasswordIsBadInputThatSaysSo() throws {
        for path in ["keys/rsa-pkcs8-encrypted.pem", "keys/rsa-traditional-encrypted.pem"] {
            let result = mtls(["inspect", Fixtures.path(path), "--password", "env:P"], environment: ["P": "not-the-password"])
            XCTAssertExit(result, 3, path)
            XCTAssertContains(result.stderr, "password", path)
            XCTAssertContains(result.stderr, Fixtures.path(path))
        }
    }

    func testPublicKeyAndCSRShowTheSPKIPinOpenSSLComputes() throws {
        let rsaPublic = Fixtures.path("keys/rsa-public.pem")
        let publicItem = try items(mtls(["inspect", rsaPublic, "--json"])).first
        XCTAssertEqual(publicItem?["type"] as? String, "public key")
        XCTAssertEqual(publicItem?["key"] as? String, "RSA 2048")
        XCTAssertEqual(publicItem?["spkiSHA256"] as? String, try OpenSSL.spkiPin(publicKeyPEM: try Fixtures.bytes("keys/rsa-public.pem")))

        let csr = try items(mtls(["inspect", Fixtures.path("keys/backup.csr"), "--json"])).first
        XCTAssertEqual(csr?["type"] as? String, "csr")
        XCTAssertEqual(csr?["subject"] as? String, "CN=mtls backup key,O=mtls test,C=US")
        XCTAssertEqual(csr?["signatureValid"] as? Bool, true)
        let backupPin = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["req", "-in", Fixtures.path("keys/backup.csr"), "-pubkey", "-noout"]))
        XCTAssertEqual(csr?["spkiSHA256"] as? String, backupPin)
    }

    func testCRLsShowIssuerAndUpdateTimes() throws {
        let list = try items(mtls(["inspect", Fixtures.path("crls.pem"), "--json"]))
        XCTAssertEqual(list.count, 2)
        XCTAssertEqual(list.map { $0["type"] as? String ?? "" }, ["crl", "crl"])
        XCTAssertEqual(list.first?["issuer"] as? String, "CN=mtls Test Intermediate CA,O=mtls test,C=US")
        XCTAssertEqual(list.last?["issuer"] as? String, "CN=mtls Test Root CA,O=mtls test,C=US")
        XCTAssertEqual(list.first?["lastUpdate"] as? String, "2025-01-01T00:00:00Z")
        XCTAssertEqual(list.first?["nextUpdate"] as? String, "2035-01-01T00:00:00Z")
    }

    // MARK: - PKCS#12

    func testPKCS12ShowsIdentityChainAndProtection() throws {
        let list = try items(mtls(["inspect", Fixtures.path("p12/client-alice-modern.p12"), "--password", "pass:mtls", "--json"]))
        let p12 = list.first ?? [:]
        XCTAssertEqual(p12["type"] as? String, "pkcs12")
        XCTAssertEqual((p12["leaf"] as? [String: Any])?["subject"] as? String, "CN=client-alice,O=mtls test,C=US")
        XCTAssertEqual((p12["leaf"] as? [String: Any])?["friendlyName"] as? String, "alice")
        XCTAssertEqual(p12["privateKey"] as? String, "ECDSA P-256")
        XCTAssertEqual(
            (p12["chain"] as? [[String: Any]])?.map { $0["subject"] as? String ?? "" },
            [
                "CN=mtls Test Intermediate CA,O=mtls test,C=US", "CN=mtls Test Root CA,O=mtls test,C=US",
            ])
        XCTAssertEqual((p12["mac"] as? [String: Any])?["digest"] as? String, "sha256")
        XCTAssertEqual(int((p12["mac"] as? [String: Any])?["iterations"]), 2048)
        XCTAssertEqual(p12["legacy"] as? Bool, false)
    }

    func testLegacyRC2PKCS12IsReadAndFlaggedAsNeedingTheLegacyProvider() throws {
        let p12 = try items(mtls(["inspect", Fixtures.path("p12/client-alice-legacy-rc2.p12"), "--password", "pass:mtls", "--json"])).first ?? [:]
        XCTAssertEqual(p12["legacy"] as? Bool, true)
        XCTAssertEqual((p12["readableBy"] as? [String: Any])?["openssl3"] as? Bool, false)
        XCTAssertEqual((p12["leaf"] as? [String: Any])?["subject"] as? String, "CN=client-alice,O=mtls test,C=US")
        // The judge: plain `openssl pkcs12` without -legacy refuses this file.
        let plain = try OpenSSL.run(["pkcs12", "-in", Fixtures.path("p12/client-alice-legacy-rc2.p12"), "-passin", "pass:mtls", "-info", "-noout"])
        XCTAssertNotEqual(plain.status, 0, "premise: OpenSSL 3 without -legacy cannot read RC2-40\n\(plain)")
        let human = mtls(["inspect", Fixtures.path("p12/client-alice-legacy-rc2.p12"), "--password", "pass:mtls"])
        XCTAssertContains(human.stdout, "Legacy algorithms")
        XCTAssertContains(human.stdout, "RC2")
    }

    func testPKCS12WithoutKeyShowsNoIdentity() throws {
        let p12 = try items(mtls(["inspect", Fixtures.path("p12/certs-only.p12"), "--password", "pass:mtls", "--json"])).first ?? [:]
        XCTAssertTrue(p12["leaf"] is NSNull || p12["leaf"] == nil, "\(p12)")
        XCTAssertTrue(p12["privateKey"] is NSNull || p12["privateKey"] == nil, "\(p12)")
        let bags = (p12["safes"] as? [[String: Any]] ?? []).flatMap { $0["bags"] as? [[String: Any]] ?? [] }
        XCTAssertEqual(bags.map { $0["kind"] as? String ?? "" }, ["certificate", "certificate"], "\(p12)")
        let human = mtls(["inspect", Fixtures.path("p12/certs-only.p12"), "--password", "pass:mtls"])
        XCTAssertContains(human.stdout, "Identity            none")
    }

    func testPKCS12WithoutOrWithAWrongPasswordIsBadInput() throws {
        let path = Fixtures.path("p12/client-alice-modern.p12")
        let none = mtls(["inspect", path])
        XCTAssertExit(none, 3)
        XCTAssertContains(none.stderr, "password")
        XCTAssertContains(none.stderr, path)
        let wrong = mtls(["inspect", path, "--password", "pass:wrong", "--json"])
        try XCTAssertJSONError(wrong, code: 3)
        XCTAssertContains(wrong.stderr, "wrong")
        let corrupt = mtls(["inspect", Fixtures.path("bad/corrupt-mac.p12"), "--password", "pass:mtls"])
        XCTAssertExit(corrupt, 3)
    }

    // MARK: - Standard input and bad input

    func testDashReadsStandardInput() throws {
        let der = try Fixtures.bytes("server.der")
        let result = mtls(["inspect", "-", "--json"], stdin: der)
        XCTAssertEqual((try items(result).first?["certificate"] as? [String: Any])?["serial"] as? String, "2001")
    }

    func testBadInputExitsThreeAndNamesTheFile() throws {
        let directory = try TemporaryDirectory(self)
        for path in [
            Fixtures.path("bad/empty.pem"), Fixtures.path("bad/truncated.der"), Fixtures.path("bad/garbage.bin"),
            Fixtures.path("bad/broken-base64.pem"), Fixtures.path("bad/not-a-cert.txt"), Fixtures.path("bad/truncated.p12"),
            directory.path, directory.file("missing.pem"),
        ] {
            let result = mtls(["inspect", path])
            XCTAssertExit(result, 3, path)
            XCTAssertContains(result.stderr, path)
            XCTAssertTrue(result.stdout.isEmpty, "\(path):\n\(result)")
            try XCTAssertJSONError(mtls(["inspect", path, "--json"]), code: 3)
        }
    }

    func testMissingArgumentAndUnknownOptionAreUsageErrors() throws {
        XCTAssertExit(mtls(["inspect"]), 2)
        let unknown = mtls(["inspect", Fixtures.path("server.pem"), "--pasword", "pass:x", "--json"])
        try XCTAssertJSONError(unknown, code: 2)
        XCTAssertContains(unknown.stderr, "Did you mean '--password'?")
    }
}

import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls pin`: SPKI SHA-256 pins equal to the documented openssl pipeline
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
final class PinCommandTests: XCTestCase {
    /// The pins of a run's default output, one per line (`sha256/…  # label [level]`).
    private func pins(_ result: CLIResult) -> [String] {
        result.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    func testSPKIPinsEqualTheOpenSSLPipelineForEveryKeyType() throws {
        for name in ["server.pem", "server.der", "server-rsa2048.pem", "server-rsa4096.pem", "server-p384.pem", "server-ed25519.pem", "root-ca.pem", "self-signed.pem"] {
            let result = mtls(["pin", Fixtures.path(name)])
            XCTAssertExit(result, 0, name)
            XCTAssertEqual(pins(result), [try OpenSSL.spkiPin(certificate: Fixtures.path(name))], name)
        }
    }

    func testChainFilesGiveOnePinPerCertificateLabelledBySubjectAndLevel() throws {
        let result = mtls(["pin", Fixtures.path("server-fullchain.pem")])
        XCTAssertExit(result, 0)
        let expected = try ["server.pem", "intermediate-ca.pem", "root-ca.pem"].map { try OpenSSL.spkiPin(certificate: Fixtures.path($0)) }
        XCTAssertEqual(pins(result), expected)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertContains(lines[0], "CN=localhost")
        XCTAssertContains(lines[0], "[leaf]")
        XCTAssertContains(lines[1], "CN=mtls Test Intermediate CA")
        XCTAssertContains(lines[1], "[intermediate]")
        XCTAssertContains(lines[2], "CN=mtls Test Root CA")
        XCTAssertContains(lines[2], "[root]")
    }

    func testLevelSelectsLeafIntermediateOrRoot() throws {
        let chain = Fixtures.path("server-fullchain.pem")
        XCTAssertEqual(pins(mtls(["pin", chain, "--level", "leaf"])), [try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem"))])
        XCTAssertEqual(pins(mtls(["pin", chain, "--level", "intermediate"])), [try OpenSSL.spkiPin(certificate: Fixtures.path("intermediate-ca.pem"))])
        XCTAssertEqual(pins(mtls(["pin", chain, "--level", "root"])), [try OpenSSL.spkiPin(certificate: Fixtures.path("root-ca.pem"))])
        let bad = mtls(["pin", chain, "--level", "middle"])
        XCTAssertExit(bad, 2)
        XCTAssertContains(bad.stderr, "middle")
    }

    func testBackupCSRPinEqualsThePinOfTheBackupKeysPublicKey() throws {
        let keyPin = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout"]))
        let result = mtls(["pin", Fixtures.path("keys/backup.csr")])
        XCTAssertExit(result, 0)
        XCTAssertEqual(pins(result), [keyPin])
        XCTAssertContains(result.stdout, "[backup]")
        XCTAssertContains(result.stdout, "CN=mtls backup key")
    }

    func testPublicKeyFilesArePinnedAsBackupKeys() throws {
        let result = mtls(["pin", Fixtures.path("keys/ec-p256-public.pem")])
        XCTAssertExit(result, 0)
        XCTAssertEqual(pins(result), [try OpenSSL.spkiPin(publicKeyPEM: try Fixtures.bytes("keys/ec-p256-public.pem"))])
    }

    func testPKCS12SourcesArePinnedWithTheirPassword() throws {
        let result = mtls(["pin", Fixtures.path("p12/server.p12"), "--password", "env:P"], environment: ["P": "mtls"])
        XCTAssertExit(result, 0)
        XCTAssertEqual(pins(result).first, try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem")))
        XCTAssertEqual(pins(result).count, 3)
    }

    // MARK: - Formats

    func testCertificateFormatIsTheSHA256OfTheDER() throws {
        let digest = try OpenSSL.output(["dgst", "-sha256", "-binary", Fixtures.path("server.der")])
        let result = mtls(["pin", Fixtures.path("server.pem"), "--format", "cert"])
        XCTAssertExit(result, 0)
        XCTAssertEqual(pins(result), ["cert-sha256/" + Data(digest).base64EncodedString()])
    }

    func testJSONFormatIsOneObjectWithPinsSubjectsAndLevels() throws {
        let result = mtls(["pin", Fixtures.path("server-chain.pem"), "--format", "json"])
        XCTAssertExit(result, 0)
        let entries = try result.json()["pins"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.map { $0["pin"] as? String ?? "" }, try ["server.pem", "intermediate-ca.pem"].map { try OpenSSL.spkiPin(certificate: Fixtures.path($0)) })
        XCTAssertEqual(entries.map { $0["level"] as? String ?? "" }, ["leaf", "intermediate"])
        XCTAssertEqual(entries.first?["subject"] as? String, "CN=localhost,O=mtls test,C=US")
        XCTAssertEqual(entries.first?["notAfter"] as? String, "2035-01-01T00:00:00Z")
    }

    func testCurlFormatKeepsLeafAndBackupPinsAndWarnsAboutCAPins() throws {
        let leaf = try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem"))
        let backup = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout"]))
        let result = mtls(["pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", "curl"])
        XCTAssertExit(result, 0)
        let curl = { (pin: String) in "sha256//" + pin.dropFirst("sha256/".count) }
        XCTAssertEqual(result.stdout, "\(curl(leaf));\(curl(backup))\n")
        XCTAssertContains(result.stderr, "leaf only")
        let unknown = mtls(["pin", Fixtures.path("server.pem"), "--format", "xml"])
        XCTAssertExit(unknown, 2)
    }

    // MARK: - --check

    func testCheckExitsZeroWhenAPinMatches() throws {
        let directory = try TemporaryDirectory(self)
        let pinFile = try directory.write(
            "pins.txt",
            text: """
                # our pins
                \(try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout"])))
                \(try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem")))

                """)
        let result = mtls(["pin", Fixtures.path("server-chain.pem"), "--check", pinFile])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stdout, "OK")
        XCTAssertContains(result.stdout, "✓ pinned")
    }

    func testCheckExitsOneOnDriftAndShowsBothSides() throws {
        let directory = try TemporaryDirectory(self)
        let backup = try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout"]))
        let pinFile = try directory.write("pins.txt", text: backup + "\n")
        let result = mtls(["pin", Fixtures.path("server-rsa2048.pem"), "--check", pinFile])
        XCTAssertExit(result, 1)
        XCTAssertContains(result.stdout, "DRIFT")
        XCTAssertContains(result.stdout, backup)
        XCTAssertContains(result.stdout, try OpenSSL.spkiPin(certificate: Fixtures.path("server-rsa2048.pem")))
    }

    func testPinsWrittenByPinAreReadBackByCheck() throws {
        let directory = try TemporaryDirectory(self)
        let pinFile = directory.file("pins.txt")
        let written = mtls(["pin", Fixtures.path("server-fullchain.pem"), Fixtures.path("keys/backup.csr"), "--out", pinFile])
        XCTAssertExit(written, 0)
        XCTAssertEqual(try permissions(pinFile), 0o644)
        let check = mtls(["pin", Fixtures.path("server-fullchain.pem"), "--check", pinFile])
        try KnownBugs.skipIfSlashPinIsRejected(check)
        XCTAssertExit(check, 0)
        XCTAssertContains(check.stdout, "3 pins match")
    }

    /// With certificate files there is no URL host: the report names the --host the pins were
    /// looked up for, and an Android domain-config without pins says that it exempts the host.
    func testCheckNamesTheHostGivenWithHostAndTheDomainThatExemptsIt() throws {
        let directory = try TemporaryDirectory(self)
        let pin = try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem"))
        let pinFile = try directory.write(
            "network_security_config.xml",
            text: """
                <network-security-config>
                  <domain-config>
                    <domain includeSubdomains="true">localhost</domain>
                    <pin-set><pin digest="SHA-256">\(pin.dropFirst("sha256/".count))</pin></pin-set>
                  </domain-config>
                  <domain-config><domain>open.localhost</domain></domain-config>
                </network-security-config>
                """)
        let elsewhere = mtls(["pin", Fixtures.path("server.pem"), "--check", pinFile, "--host", "example.com"])
        XCTAssertExit(elsewhere, 1)
        XCTAssertContains(elsewhere.stdout, "Pinned certificates for example.com:")
        XCTAssertContains(elsewhere.stdout, "NOT PINNED: \(pinFile) pins localhost and its subdomains, nothing for example.com")
        let json = mtls(["pin", Fixtures.path("server.pem"), "--check", pinFile, "--host", "example.com", "--json"])
        XCTAssertExit(json, 1)
        XCTAssertContains(json.stdout, #""host":"example.com""#)
        XCTAssertContains(json.stdout, #""verdict":"not-pinned""#)
        let exempt = mtls(["pin", Fixtures.path("server.pem"), "--check", pinFile, "--host", "open.localhost"])
        XCTAssertExit(exempt, 1)
        XCTAssertContains(exempt.stdout, "lists open.localhost without pins")
        XCTAssertContains(exempt.stdout, "exempts open.localhost, which applies to open.localhost")
        XCTAssertExit(mtls(["pin", Fixtures.path("server.pem"), "--check", pinFile, "--host", "api.localhost"]), 0)
    }

    /// OkHttp still enforces `sha1/` pins beside `sha256/` ones: a pattern pinned only by SHA-1
    /// is pinned, and checked against the SHA-1 of each certificate's SubjectPublicKeyInfo.
    func testOkHttpSHA1PinsAreCheckedAsOkHttpChecksThem() throws {
        let directory = try TemporaryDirectory(self)
        let der = try OpenSSL.output(["pkey", "-pubin", "-outform", "DER"], stdin: try OpenSSL.output(["x509", "-in", Fixtures.path("server.pem"), "-pubkey", "-noout"]))
        let sha1 = String(decoding: try OpenSSL.output(["base64"], stdin: try OpenSSL.output(["dgst", "-sha1", "-binary"], stdin: der)), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let pinFile = try directory.write(
            "Pinning.kt",
            text: """
                val certificatePinner = CertificatePinner.Builder()
                    .add("localhost", "sha1/\(sha1)")
                    .add("*.localhost",
                         "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=")
                    .build()
                """)
        let matched = mtls(["pin", Fixtures.path("server.pem"), "--check", pinFile, "--host", "localhost"])
        XCTAssertExit(matched, 0)
        XCTAssertContains(matched.stdout, "sha1/\(sha1)  ✓ presented")
        XCTAssertContains(matched.stderr, "include sha1/ pins")
        let drift = mtls(["pin", Fixtures.path("server.pem"), "--check", pinFile, "--host", "api.localhost"])
        XCTAssertExit(drift, 1)
        XCTAssertContains(drift.stdout, "DRIFT")
        XCTAssertContains(drift.stdout, "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=  - not presented")
        let malformed = try directory.write("Bad.kt", text: #"CertificatePinner.Builder().add("localhost", "sha1/short=").build()"#)
        let refused = mtls(["pin", Fixtures.path("server.pem"), "--check", malformed])
        XCTAssertExit(refused, 3)
        XCTAssertContains(refused.stderr, "28 base64 characters")
    }

    /// A backup key in PKCS#1 form (`RSA PUBLIC KEY`, from `openssl rsa -RSAPublicKey_out` or
    /// `ssh-keygen -e -m PEM`) pins as the SubjectPublicKeyInfo that certificates carry.
    func testAnRSAPublicKeyInPKCS1FormPinsAsItsSubjectPublicKeyInfo() throws {
        let directory = try TemporaryDirectory(self)
        let spki = try OpenSSL.output(["x509", "-in", Fixtures.path("client-bob-rsa.pem"), "-pubkey", "-noout"])
        let pkcs1 = directory.file("backup-rsa.pem")
        _ = try OpenSSL.output(["rsa", "-pubin", "-RSAPublicKey_out", "-out", pkcs1], stdin: spki)
        XCTAssertTrue(try String(contentsOfFile: pkcs1, encoding: .utf8).hasPrefix("-----BEGIN RSA PUBLIC KEY-----"))
        let pinned = mtls(["pin", pkcs1])
        XCTAssertExit(pinned, 0)
        XCTAssertContains(pinned.stdout, try OpenSSL.spkiPin(publicKeyPEM: spki))
        XCTAssertContains(mtls(["inspect", pkcs1]).stdout, "RSA 2048")
    }

    func testCheckWithAMissingOrEmptyPinFileIsBadInput() throws {
        let directory = try TemporaryDirectory(self)
        let empty = try directory.write("empty.txt", text: "# nothing here\n")
        let result = mtls(["pin", Fixtures.path("server.pem"), "--check", empty])
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, empty)
        XCTAssertExit(mtls(["pin", Fixtures.path("server.pem"), "--check", directory.file("missing.txt")]), 3)
    }

    // MARK: - Output files and bad input

    func testOutRefusesToOverwriteWithoutForce() throws {
        let directory = try TemporaryDirectory(self)
        let out = try directory.write("pins.txt", text: "old\n")
        let refused = mtls(["pin", Fixtures.path("server.pem"), "--out", out])
        XCTAssertExit(refused, 3)
        XCTAssertEqual(contents(out), Array("old\n".utf8))
        XCTAssertExit(mtls(["pin", Fixtures.path("server.pem"), "--out", out, "--force"]), 0)
        XCTAssertContains(String(decoding: contents(out) ?? [], as: UTF8.self), try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem")))
    }

    func testSourcesWithoutAnythingToPinAreBadInputEvenAfterAGoodSource() throws {
        let noCerts = Fixtures.path("bad/no-certs-bundle.pem")
        let alone = mtls(["pin", noCerts])
        XCTAssertExit(alone, 3)
        XCTAssertContains(alone.stderr, noCerts)
        let afterGood = mtls(["pin", Fixtures.path("server.pem"), noCerts])
        XCTAssertExit(afterGood, 3, "a source with nothing to pin is an error wherever it appears")
        XCTAssertContains(afterGood.stderr, noCerts)
    }

    func testBadSourcesExitThreeAndNameTheFile() throws {
        for path in [Fixtures.path("bad/garbage.bin"), Fixtures.path("bad/empty.pem"), Fixtures.path("bad/truncated.der"), "/nonexistent.pem"] {
            let result = mtls(["pin", path])
            XCTAssertExit(result, 3, path)
            XCTAssertContains(result.stderr, path)
        }
        XCTAssertExit(mtls(["pin"]), 2)
    }
}

import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls export`: PKCS#12 files that `openssl pkcs12 -info` reads with the expected algorithms and
/// that our own `import` turns back into the same certificate and key; written 0600.
final class ExportCommandTests: XCTestCase {
    private let cert = Fixtures.path("client-alice.pem")
    private let key = Fixtures.path("client-alice.key")
    private let intermediate = Fixtures.path("intermediate-ca.pem")
    private let root = Fixtures.path("root-ca.pem")
    private let password = ["P12_PASSWORD": "correct horse"]

    /// `openssl pkcs12 -info -noout` of a file (no -legacy: modern and 3DES files need none).
    private func opensslInfo(_ path: String, password: String) throws -> String {
        let result = try OpenSSL.run(["pkcs12", "-info", "-noout", "-in", path, "-passin", "pass:\(password)"])
        XCTAssertEqual(result.status, 0, "openssl cannot read what we exported:\n\(result)")
        return result.stdoutText + result.stderr
    }

    private func count(_ fragment: String, in text: String) -> Int { text.components(separatedBy: fragment).count - 1 }

    private func publicKey(_ path: String) throws -> String {
        String(decoding: try OpenSSL.output(["pkey", "-in", path, "-pubout"]), as: UTF8.self)
    }

    // MARK: - Modern and legacy

    func testModernExportIsAES256WithSHA256MACAndMode0600() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("alice.p12")
        let result = mtls(
            ["export", "--cert", cert, "--key", key, "--chain", intermediate, "--chain", root, "--out", out, "--password", "env:P12_PASSWORD", "--name", "alice"],
            environment: password)
        XCTAssertExit(result, 0)
        XCTAssertEqual(try permissions(out), 0o600)
        XCTAssertEqual(try directory.contents(), ["alice.p12"], "no temporary file left behind")

        let info = try opensslInfo(out, password: "correct horse")
        XCTAssertContains(info, "MAC: sha256")
        XCTAssertContains(info, "PBES2, PBKDF2, AES-256-CBC")
        XCTAssertContains(info, "Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC")
        XCTAssertEqual(count("Certificate bag", in: info), 3, info)
        XCTAssertNotContains(info, "RC2")
        XCTAssertNotContains(info, "TripleDES")

        let friendly = String(decoding: try OpenSSL.output(["pkcs12", "-in", out, "-passin", "pass:correct horse", "-nokeys", "-clcerts"]), as: UTF8.self)
        XCTAssertContains(friendly, "friendlyName: alice")
        XCTAssertEqual(pemBodies(friendly), pemBodies(try Fixtures.text("client-alice.pem")))
    }

    func testLegacyExportIs3DESWithSHA1MACAndReadableByOpenSSL() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("alice-legacy.p12")
        let result = mtls(["export", "--cert", cert, "--key", key, "--chain", intermediate, "--out", out, "--password", "env:P12_PASSWORD", "--legacy"], environment: password)
        XCTAssertExit(result, 0)
        XCTAssertEqual(try permissions(out), 0o600)
        let info = try opensslInfo(out, password: "correct horse")
        XCTAssertContains(info, "MAC: sha1")
        XCTAssertContains(info, "PKCS7 Encrypted data: pbeWithSHA1And3-KeyTripleDES-CBC")
        XCTAssertContains(info, "Shrouded Keybag: pbeWithSHA1And3-KeyTripleDES-CBC")
        XCTAssertEqual(count("Certificate bag", in: info), 2, info)
        XCTAssertNotContains(info, "AES")
    }

    func testExportRoundTripsThroughOpenSSLAndOurOwnImport() throws {
        for legacy in [false, true] {
            let directory = try TemporaryDirectory(self)
            let out = directory.file("alice.p12")
            let result = mtls(
                ["export", "--cert", cert, "--key", key, "--chain", intermediate, "--chain", root, "--out", out, "--password", "env:P12_PASSWORD"] + (legacy ? ["--legacy"] : []),
                environment: password)
            XCTAssertExit(result, 0)

            // openssl extracts the same key and certificate.
            let keyPEM = try OpenSSL.output(["pkcs12", "-in", out, "-passin", "pass:correct horse", "-nodes", "-nocerts"])
            XCTAssertEqual(String(decoding: try OpenSSL.output(["pkey", "-pubout"], stdin: keyPEM), as: UTF8.self), try publicKey(key), "legacy=\(legacy)")

            // Our import writes back the same files.
            let back = directory.file("back")
            let imported = mtls(["import", out, "--password", "env:P12_PASSWORD", "--out-dir", back], environment: password)
            XCTAssertExit(imported, 0, "legacy=\(legacy)")
            XCTAssertEqual(pemBodies(String(decoding: contents(back + "/cert.pem") ?? [], as: UTF8.self)), pemBodies(try Fixtures.text("client-alice.pem")))
            XCTAssertEqual(try publicKey(back + "/key.pem"), try publicKey(key))
            XCTAssertEqual(
                Set(pemBodies(String(decoding: contents(back + "/chain.pem") ?? [], as: UTF8.self))),
                Set(pemBodies(try Fixtures.text("intermediate-ca.pem")) + pemBodies(try Fixtures.text("root-ca.pem"))))
        }
    }

    func testEmptyPasswordIsAllowedWithPassColon() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("empty.p12")
        let result = mtls(["export", "--cert", cert, "--key", key, "--out", out, "--password", "pass:"])
        XCTAssertExit(result, 0)
        _ = try opensslInfo(out, password: "")
    }

    func testChainInTheCertificateFileAndAnEncryptedKeyAreAccepted() throws {
        let directory = try TemporaryDirectory(self)
        let encryptedKey = directory.file("alice-encrypted.key")
        _ = try OpenSSL.output(["pkey", "-in", key, "-aes256", "-passout", "pass:keypass", "-out", encryptedKey])
        let out = directory.file("alice.p12")
        let result = mtls(
            [
                "export", "--cert", Fixtures.path("client-alice-chain.pem"), "--key", encryptedKey, "--key-password", "env:KEYPASS", "--out", out, "--password", "env:P12_PASSWORD",
                "--json",
            ],
            environment: password.merging(["KEYPASS": "keypass"]) { $1 })
        XCTAssertExit(result, 0)
        let json = try result.json()
        XCTAssertEqual(json["leaf"] as? String, "CN=client-alice,O=mtls test,C=US")
        XCTAssertEqual((json["chain"] as? NSNumber)?.intValue, 1)
        XCTAssertEqual(json["protection"] as? String, "modern")
        XCTAssertEqual(count("Certificate bag", in: try opensslInfo(out, password: "correct horse")), 2)
    }

    // MARK: - Refusals

    func testKeyThatDoesNotBelongToTheCertificateExitsThreeAndWritesNothing() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("mismatch.p12")
        let result = mtls(["export", "--cert", cert, "--key", Fixtures.path("server.key"), "--out", out, "--password", "env:P12_PASSWORD"], environment: password)
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, "does not belong")
        XCTAssertContains(result.stderr, "CN=client-alice")
        XCTAssertContains(result.stderr, Fixtures.path("server.key"))
        XCTAssertEqual(try directory.contents(), [])
        try XCTAssertJSONError(
            mtls(["export", "--cert", cert, "--key", Fixtures.path("server.key"), "--out", out, "--password", "env:P12_PASSWORD", "--json"], environment: password), code: 3)
    }

    func testExistingOutputIsNotOverwrittenWithoutForce() throws {
        let directory = try TemporaryDirectory(self)
        let out = try directory.write("alice.p12", text: "precious\n")
        let refused = mtls(["export", "--cert", cert, "--key", key, "--out", out, "--password", "env:P12_PASSWORD"], environment: password)
        XCTAssertExit(refused, 3)
        XCTAssertContains(refused.stderr, "--force")
        XCTAssertEqual(contents(out), Array("precious\n".utf8))

        let forced = mtls(["export", "--cert", cert, "--key", key, "--out", out, "--password", "env:P12_PASSWORD", "--force"], environment: password)
        XCTAssertExit(forced, 0)
        XCTAssertEqual(try permissions(out), 0o600)
        _ = try opensslInfo(out, password: "correct horse")
    }

    func testMissingOptionsAreUsageErrors() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("x.p12")
        for (arguments, option) in [
            (["--key", key, "--out", out, "--password", "pass:x"], "--cert"),
            (["--cert", cert, "--out", out, "--password", "pass:x"], "--key"),  // the certificate file holds no key
            (["--cert", cert, "--key", key, "--password", "pass:x"], "--out"),
            (["--cert", cert, "--key", key, "--out", out], "--password"),
        ] {
            let result = mtls(["export"] + arguments)
            XCTAssertExit(result, 2, option)
            XCTAssertContains(result.stderr, option)
        }
        XCTAssertEqual(try directory.contents(), [])
    }

    /// A PEM file with the certificate and its key (what curl's `--cert` and HAProxy take) needs no
    /// `--key`; a certificate file without a key still does, as a usage error that says so.
    func testACombinedPEMNeedsNoKeyOption() throws {
        let directory = try TemporaryDirectory(self)
        let combined = try directory.write(
            "combined.pem", text: try String(contentsOfFile: cert, encoding: .utf8) + (try String(contentsOfFile: key, encoding: .utf8)))
        let out = directory.file("combined.p12")
        let written = mtls(["export", "--cert", combined, "--out", out, "--password", "pass:x"])
        XCTAssertExit(written, 0)
        let read = try OpenSSL.run(["pkcs12", "-in", out, "-passin", "pass:x", "-nodes"])
        XCTAssertEqual(read.status, 0, read.description)
        XCTAssertTrue(read.stdoutText.contains("PRIVATE KEY-----") && read.stdoutText.contains("BEGIN CERTIFICATE"), read.stdoutText)
        let withoutKey = mtls(["export", "--cert", cert, "--out", directory.file("none.p12"), "--password", "pass:x"])
        XCTAssertExit(withoutKey, 2)
        XCTAssertContains(withoutKey.stderr, "holds no private key: give it with --key FILE")
    }

    func testBadCertificateOrKeyFilesAreBadInput() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("x.p12")
        let badCert = mtls(["export", "--cert", Fixtures.path("bad/garbage.bin"), "--key", key, "--out", out, "--password", "pass:x"])
        XCTAssertExit(badCert, 3)
        XCTAssertContains(badCert.stderr, Fixtures.path("bad/garbage.bin"))
        let badKey = mtls(["export", "--cert", cert, "--key", Fixtures.path("client-alice.pem"), "--out", out, "--password", "pass:x"])
        XCTAssertExit(badKey, 3, "a certificate where the key belongs")
        XCTAssertContains(badKey.stderr, Fixtures.path("client-alice.pem"))
        XCTAssertEqual(try directory.contents(), [])
    }
}

import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls import P12`: modern and legacy PKCS#12 files, written out as key.pem (0600), cert.pem and
/// chain.pem that match what `openssl pkcs12 -legacy -nodes` extracts.
final class ImportCommandTests: XCTestCase {
    /// The PKCS#12 fixtures that hold client-alice's key, certificate and chain, with their passwords.
    private let identities: [(file: String, password: String)] = [
        ("p12/client-alice-modern.p12", "mtls"),
        ("p12/client-alice-legacy-rc2.p12", "mtls"),
        ("p12/client-alice-3des.p12", "mtls"),
        ("p12/client-alice-emptypass.p12", ""),
        ("p12/client-alice-nopass.p12", ""),
    ]

    /// What `openssl pkcs12 -legacy -nodes` extracts: (leaf PEM bodies, CA PEM bodies, public key PEM).
    private func opensslExtract(_ file: String, password: String) throws -> (leaf: [String], chain: [String], publicKey: String) {
        let base = ["pkcs12", "-legacy", "-nodes", "-in", Fixtures.path(file), "-passin", "pass:\(password)"]
        let leaf = String(decoding: try OpenSSL.output(base + ["-clcerts", "-nokeys"]), as: UTF8.self)
        let chain = String(decoding: try OpenSSL.output(base + ["-cacerts", "-nokeys"]), as: UTF8.self)
        let key = try OpenSSL.output(base + ["-nocerts"])
        let publicKey = String(decoding: try OpenSSL.output(["pkey", "-pubout"], stdin: key), as: UTF8.self)
        return (pemBodies(leaf), pemBodies(chain), publicKey)
    }

    private func publicKey(ofKeyFile path: String, der: Bool = false) throws -> String {
        String(decoding: try OpenSSL.output(["pkey", "-in", path, "-pubout"] + (der ? ["-inform", "DER"] : [])), as: UTF8.self)
    }

    // MARK: - Every kind of PKCS#12

    func testEveryAliceIdentityImportsToFilesThatMatchOpenSSL() throws {
        for (file, password) in identities {
            let directory = try TemporaryDirectory(self)
            let out = directory.file("alice")
            let result = mtls(["import", Fixtures.path(file), "--password", "env:P12_PASSWORD", "--out-dir", out], environment: ["P12_PASSWORD": password])
            XCTAssertExit(result, 0, file)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), ["cert.pem", "chain.pem", "key.pem"], file)
            XCTAssertEqual(try permissions(out + "/key.pem"), 0o600, "\(file): the key is private")
            XCTAssertEqual(try permissions(out + "/cert.pem"), 0o644, file)

            let judge = try opensslExtract(file, password: password)
            let cert = String(decoding: contents(out + "/cert.pem") ?? [], as: UTF8.self)
            let chain = String(decoding: contents(out + "/chain.pem") ?? [], as: UTF8.self)
            XCTAssertEqual(pemBodies(cert), judge.leaf, "\(file): cert.pem is the leaf openssl extracts")
            XCTAssertEqual(Set(pemBodies(chain)), Set(judge.chain), "\(file): chain.pem holds the CA certificates openssl extracts")
            XCTAssertEqual(pemBodies(chain).count, 2, file)
            XCTAssertEqual(try publicKey(ofKeyFile: out + "/key.pem"), judge.publicKey, "\(file): key.pem is the key openssl extracts")
            XCTAssertTrue(String(decoding: contents(out + "/key.pem") ?? [], as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"), file)
            // And the pieces are alice's, as the fixtures say.
            XCTAssertEqual(pemBodies(cert), pemBodies(try Fixtures.text("client-alice.pem")), file)
            XCTAssertEqual(try publicKey(ofKeyFile: out + "/key.pem"), try publicKey(ofKeyFile: Fixtures.path("client-alice.key")), file)
            XCTAssertContains(result.stdout, "CN=client-alice", file)
        }
    }

    func testLegacyRC2IsReadWhereOpenSSLNeedsTheLegacyFlag() throws {
        let result = mtls(["import", Fixtures.path("p12/client-alice-legacy-rc2.p12"), "--password", "env:P", "--json"], environment: ["P": "mtls"])
        XCTAssertExit(result, 0)
        let json = try result.json()
        XCTAssertEqual(json["legacy"] as? Bool, true)
        XCTAssertEqual((json["leaf"] as? [String: Any])?["subject"] as? String, "CN=client-alice,O=mtls test,C=US")
        XCTAssertEqual((json["chain"] as? [Any])?.count, 2)
        XCTAssertEqual(json["written"] as? [String], [])
    }

    func testIdentityWithoutChainWritesNoChainFile() throws {
        let directory = try TemporaryDirectory(self)
        let result = mtls(["import", Fixtures.path("p12/client-alice-nochain.p12"), "--password", "env:P", "--out-dir", directory.path], environment: ["P": "mtls"])
        XCTAssertExit(result, 0)
        XCTAssertEqual(try directory.contents(), ["cert.pem", "key.pem"])
    }

    func testRSAIdentityImports() throws {
        let directory = try TemporaryDirectory(self)
        let result = mtls(["import", Fixtures.path("p12/client-bob-rsa.p12"), "--password", "env:P", "--out-dir", directory.path], environment: ["P": "mtls"])
        XCTAssertExit(result, 0)
        XCTAssertEqual(try publicKey(ofKeyFile: directory.file("key.pem")), try publicKey(ofKeyFile: Fixtures.path("client-bob-rsa.key")))
    }

    func testDERFormatWritesKeyCertAndOneFilePerChainCertificate() throws {
        let directory = try TemporaryDirectory(self)
        let result = mtls(["import", Fixtures.path("p12/client-alice-3des.p12"), "--password", "env:P", "--out-dir", directory.path, "--to", "der"], environment: ["P": "mtls"])
        XCTAssertExit(result, 0)
        XCTAssertEqual(try directory.contents(), ["cert.der", "chain-1.der", "chain-2.der", "key.der"])
        XCTAssertEqual(try permissions(directory.file("key.der")), 0o600)
        XCTAssertEqual(contents(directory.file("cert.der")), try Fixtures.bytes("client-alice.der"))
        XCTAssertEqual(
            Set([contents(directory.file("chain-1.der")) ?? [], contents(directory.file("chain-2.der")) ?? []]),
            Set([try Fixtures.bytes("intermediate-ca.der"), try Fixtures.bytes("root-ca.der")]))
        XCTAssertEqual(try publicKey(ofKeyFile: directory.file("key.der"), der: true), try publicKey(ofKeyFile: Fixtures.path("client-alice.key")))
        XCTAssertEqual(contents(directory.file("key.der")), try OpenSSL.output(["pkcs8", "-topk8", "-nocrypt", "-in", Fixtures.path("client-alice.key"), "-outform", "DER"]))
    }

    // MARK: - Failures write nothing

    func testWrongPasswordExitsThreeSaysSoAndWritesNothing() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("alice")
        for file in ["p12/client-alice-modern.p12", "p12/client-alice-legacy-rc2.p12", "p12/client-alice-3des.p12"] {
            let result = mtls(["import", Fixtures.path(file), "--password", "env:P", "--out-dir", out], environment: ["P": "Mtls"])
            XCTAssertExit(result, 3, file)
            XCTAssertContains(result.stderr, "password", file)
            XCTAssertContains(result.stderr, "wrong", file)
            XCTAssertContains(result.stderr, Fixtures.path(file), "\(file): names the file")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(file): nothing is created on a wrong password")
            XCTAssertTrue(result.stdout.isEmpty, file)
            try XCTAssertJSONError(mtls(["import", Fixtures.path(file), "--password", "env:P", "--json"], environment: ["P": "Mtls"]), code: 3)
        }
        XCTAssertEqual(try directory.contents(), [])
    }

    func testMissingPasswordWithoutATerminalIsBadInputWithAHint() throws {
        let result = mtls(["import", Fixtures.path("p12/client-alice-modern.p12")])
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, "--password")
    }

    func testTamperedMACIsRejected() throws {
        let result = mtls(["import", Fixtures.path("bad/corrupt-mac.p12"), "--password", "env:P"], environment: ["P": "mtls"])
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, Fixtures.path("bad/corrupt-mac.p12"))
    }

    func testCertificateOnlyPKCS12WritesCertAndChain() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("truststore")
        let result = mtls(["import", Fixtures.path("p12/certs-only.p12"), "--password", "env:P", "--out-dir", out], environment: ["P": "mtls"])
        XCTAssertExit(result, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), ["cert.pem", "chain.pem"])
        // The same certificates, in the same order, as `openssl pkcs12 -nokeys` prints.
        let openssl = String(decoding: try OpenSSL.output(["pkcs12", "-nokeys", "-in", Fixtures.path("p12/certs-only.p12"), "-passin", "pass:mtls"]), as: UTF8.self)
        let written = String(decoding: (contents(out + "/cert.pem") ?? []) + (contents(out + "/chain.pem") ?? []), as: UTF8.self)
        XCTAssertEqual(pemBodies(written), pemBodies(openssl))
        // --name/--index pick identities: there is none here.
        let picked = mtls(["import", Fixtures.path("p12/certs-only.p12"), "--password", "env:P", "--index", "1", "--out-dir", directory.file("x")], environment: ["P": "mtls"])
        XCTAssertExit(picked, 3)
        XCTAssertContains(picked.stderr, "no private key")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("x")), "a failed import leaves nothing behind, not even an empty directory")
    }

    func testSeveralIdentitiesAreNeverDroppedSilently() throws {
        let file = Fixtures.path("p12/two-identities.p12")
        let directory = try TemporaryDirectory(self)
        // No choice: refused with the list, nothing written.
        let refused = mtls(["import", file, "--out-dir", directory.file("none")])
        XCTAssertExit(refused, 2)
        XCTAssertContains(refused.stderr, "2 identities")
        XCTAssertContains(refused.stderr, "\"alice\"")
        XCTAssertContains(refused.stderr, "\"bob\"")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("none")))
        // By name and by index: the key and certificate of that identity, matching each other.
        for (selection, expected) in [(["--name", "bob"], "client-bob-rsa.pem"), (["--index", "1"], "client-alice.pem")] {
            let out = directory.file(selection.joined())
            let result = mtls(["import", file, "--out-dir", out] + selection)
            XCTAssertExit(result, 0, selection.joined(separator: " "))
            XCTAssertContains(result.stderr, "2 repeated")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), ["cert.pem", "key.pem"])
            XCTAssertEqual(pemBodies(String(decoding: contents(out + "/cert.pem") ?? [], as: UTF8.self)), pemBodies(try Fixtures.text(expected)))
            XCTAssertEqual(try OpenSSL.output(["pkey", "-in", out + "/key.pem", "-pubout"]), try OpenSSL.output(["x509", "-in", Fixtures.path(expected), "-noout", "-pubkey"]))
        }
        XCTAssertExit(mtls(["import", file, "--out-dir", directory.file("carol"), "--name", "carol"]), 2)
        XCTAssertExit(mtls(["import", file, "--out-dir", directory.file("three"), "--index", "3"]), 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("carol")))
        // A client identity is one of them: probe --p12 refuses to pick, before connecting.
        let probe = mtls(["probe", "https://127.0.0.1:9/", "--p12", file])
        XCTAssertExit(probe, 3)
        XCTAssertContains(probe.stderr, "2 identities")
        // inspect lists both, numbered, and the repeats.
        let listing = mtls(["inspect", file])
        XCTAssertContains(listing.stdout, "Identity 1          CN=client-alice")
        XCTAssertContains(listing.stdout, "Identity 2          CN=client-bob")
        XCTAssertContains(listing.stdout, "Duplicates          2")
    }

    func testKeyOnlyPKCS12WritesKeyPEMAlone() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("key")
        let file = Fixtures.path("third-party/pkcs12/pyca/no-cert-key-aes256cbc.p12")
        let result = mtls(["import", file, "--password", "env:P", "--out-dir", out], environment: ["P": "cryptography"])
        XCTAssertExit(result, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), ["key.pem"])
        XCTAssertEqual(try permissions(out + "/key.pem"), 0o600)
        let theirs = try OpenSSL.output(["pkcs12", "-legacy", "-in", file, "-passin", "pass:cryptography", "-nocerts", "-nodes"])
        XCTAssertEqual(try OpenSSL.output(["pkey", "-in", out + "/key.pem", "-pubout"]), try OpenSSL.output(["pkey", "-pubout"], stdin: theirs))
    }

    func testExistingFilesAreNotOverwrittenWithoutForceAndNothingIsHalfWritten() throws {
        let directory = try TemporaryDirectory(self)
        try directory.write("cert.pem", text: "mine\n")
        let refused = mtls(["import", Fixtures.path("p12/client-alice-modern.p12"), "--password", "env:P", "--out-dir", directory.path], environment: ["P": "mtls"])
        XCTAssertExit(refused, 3)
        XCTAssertContains(refused.stderr, "--force")
        XCTAssertEqual(try directory.contents(), ["cert.pem"], "no key.pem or chain.pem written beside the refused file")
        XCTAssertEqual(contents(directory.file("cert.pem")), Array("mine\n".utf8))

        let forced = mtls(["import", Fixtures.path("p12/client-alice-modern.p12"), "--password", "env:P", "--out-dir", directory.path, "--force"], environment: ["P": "mtls"])
        XCTAssertExit(forced, 0)
        XCTAssertEqual(try directory.contents(), ["cert.pem", "chain.pem", "key.pem"])
        XCTAssertEqual(pemBodies(String(decoding: contents(directory.file("cert.pem")) ?? [], as: UTF8.self)), pemBodies(try Fixtures.text("client-alice.pem")))
    }

    func testOutDirThatIsAFileIsBadInput() throws {
        let directory = try TemporaryDirectory(self)
        let file = try directory.write("not-a-dir", text: "x")
        let result = mtls(["import", Fixtures.path("p12/client-alice-modern.p12"), "--password", "env:P", "--out-dir", file], environment: ["P": "mtls"])
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, file)
    }

    func testNonPKCS12InputsExitThreeAndNameTheFile() throws {
        for path in [Fixtures.path("server.pem"), Fixtures.path("bad/garbage.bin"), Fixtures.path("bad/truncated.p12"), Fixtures.path("bad/empty.pem"), "/nonexistent.p12"] {
            let result = mtls(["import", path, "--password", "env:P"], environment: ["P": "mtls"])
            XCTAssertExit(result, 3, path)
            XCTAssertContains(result.stderr, path)
        }
    }

    // MARK: - Output

    func testJSONListsTheWrittenFiles() throws {
        let directory = try TemporaryDirectory(self)
        let result = mtls(["import", Fixtures.path("p12/client-alice-modern.p12"), "--password", "env:P", "--out-dir", directory.path, "--json"], environment: ["P": "mtls"])
        XCTAssertExit(result, 0)
        let json = try result.json()
        XCTAssertEqual(json["file"] as? String, Fixtures.path("p12/client-alice-modern.p12"))
        XCTAssertEqual(json["type"] as? String, "pkcs12")
        XCTAssertEqual((json["written"] as? [String])?.map { URL(fileURLWithPath: $0).lastPathComponent }, ["key.pem", "cert.pem", "chain.pem"])
    }

    func testUsageErrors() throws {
        XCTAssertExit(mtls(["import"]), 2)
        let format = mtls(["import", Fixtures.path("p12/client-alice-modern.p12"), "--to", "jks"])
        XCTAssertExit(format, 2)
        XCTAssertContains(format.stderr, "jks")
    }
}

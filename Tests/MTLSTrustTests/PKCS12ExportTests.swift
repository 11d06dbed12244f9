import Foundation
import XCTest

@testable import MTLSTrust

/// Writing PKCS#12: files the library writes are read by OpenSSL, NSS (`pk12util`) and Java
/// (`keytool`), and by the library itself, with the algorithms each protection promises.
final class PKCS12ExportTests: XCTestCase {
    typealias T = TestCertificates

    private struct Written {
        var bytes: [UInt8]
        var url: URL
        var password: String
    }

    /// Exports client-alice with her chain and writes the file to a fresh temporary directory.
    private func exportAlice(
        protection: PKCS12Bundle.Protection, password: String = "export-pw", friendlyName: String? = "alice", iterations: Int = 2048
    ) throws -> Written {
        let bytes = try PKCS12Bundle.export(
            certificate: T.certificate(T.clientAlice), privateKey: T.privateKey(T.clientAlice),
            chain: [T.certificate(T.intermediateCA), T.certificate(T.rootCA)], password: Secret(password),
            friendlyName: friendlyName, protection: protection, iterations: iterations)
        let url = try T.temporaryDirectory(for: self).appendingPathComponent("alice-\(protection).p12")
        try Data(bytes).write(to: url)
        return Written(bytes: bytes, url: url, password: password)
    }

    private func requireTool(_ name: String, package: String) throws -> String {
        guard let path = ExternalTool.find(name) else {
            throw XCTSkip("\(name) is not installed (Debian package \(package)); this importer check was skipped")
        }
        return path
    }

    // MARK: Read back by the library

    func testModernExportRoundTripsThroughTheLibrary() throws {
        let written = try exportAlice(protection: .modern)
        let bundle = try PKCS12Bundle(derBytes: written.bytes, password: Secret(written.password))
        XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(bundle.chain.map(\.certificate), [try T.certificate(T.intermediateCA), try T.certificate(T.rootCA)])
        XCTAssertEqual(try bundle.privateKey?.pkcs8DER(), try T.privateKey(T.clientAlice).pkcs8DER())
        XCTAssertFalse(bundle.neededLegacyProvider)
        XCTAssertEqual(DER.shape(of: written.bytes), .pkcs12)
    }

    func testModernExportIsAES256WithAnHMACSHA256KeyDerivationAndASHA256MAC() throws {
        let inspection = try PKCS12Bundle(derBytes: exportAlice(protection: .modern).bytes, password: "export-pw").inspection
        XCTAssertEqual(inspection.mac?.digest, "sha256")
        XCTAssertEqual(inspection.mac?.iterations, 2048)
        XCTAssertEqual(inspection.algorithms.count, 2, "the certificate safe and the key bag")
        for algorithm in inspection.algorithms {
            XCTAssertEqual(algorithm.name, "PBES2 (PBKDF2 hmacWithSHA256, AES-256-CBC)")
            XCTAssertEqual(algorithm.iterations, 2048)
        }
        XCTAssertFalse(inspection.usesLegacyAlgorithms)
        XCTAssertEqual(inspection.compatibility, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: false))
    }

    func testLegacyExportIsTripleDESWithASHA1MACAndSuitsOlderImporters() throws {
        let written = try exportAlice(protection: .legacy3DES)
        let bundle = try PKCS12Bundle(derBytes: written.bytes, password: Secret(written.password))
        let inspection = bundle.inspection
        XCTAssertEqual(inspection.mac?.digest, "sha1")
        XCTAssertEqual(inspection.algorithms.count, 2)
        XCTAssertTrue(inspection.algorithms.allSatisfy { $0.name == "pbeWithSHA1And3-KeyTripleDES-CBC" && $0.isPKCS12PBE && !$0.isLegacy })
        XCTAssertFalse(bundle.neededLegacyProvider, "3DES is in OpenSSL 3's default provider")
        XCTAssertEqual(inspection.compatibility, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: true))
        XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(bundle.chain.count, 2)
    }

    func testIterationCountIsUsedForTheMACAndTheKeyDerivation() throws {
        let written = try exportAlice(protection: .modern, iterations: 10_000)
        let inspection = try PKCS12Bundle(derBytes: written.bytes, password: Secret(written.password)).inspection
        XCTAssertEqual(inspection.mac?.iterations, 10_000)
        XCTAssertEqual(inspection.algorithms.map(\.iterations), [10_000, 10_000])
        let info = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-in", written.url.path, "-passin", "pass:export-pw"])
        XCTAssertTrue(info.combined.contains("MAC: sha256, Iteration 10000"), info.combined)
    }

    func testFriendlyNameRoundTripsOnTheCertificateAndTheKey() throws {
        for name in ["alice", "Alice's laptop – ünïcode ✓"] {
            let written = try exportAlice(protection: .modern, friendlyName: name)
            let bundle = try PKCS12Bundle(derBytes: written.bytes, password: Secret(written.password))
            XCTAssertEqual(bundle.leaf?.friendlyName, name)
            XCTAssertEqual(bundle.keyFriendlyName, name)
            XCTAssertEqual(bundle.leaf?.localKeyID, bundle.inspection.safes.flatMap(\.bags).first { $0.kind == .shroudedKey }?.localKeyID)
            XCTAssertTrue(bundle.chain.allSatisfy { $0.friendlyName == nil })
        }
        let unnamed = try exportAlice(protection: .legacy3DES, friendlyName: nil)
        let bundle = try PKCS12Bundle(derBytes: unnamed.bytes, password: Secret(unnamed.password))
        XCTAssertNil(bundle.leaf?.friendlyName)
        XCTAssertNil(bundle.keyFriendlyName)
    }

    func testEveryKeyTypeCanBeExportedAndReadBack() throws {
        for identity in [T.clientBobRSA, T.serverRSA4096, T.serverP384, T.serverEd25519, T.server] {
            let certificate = try T.certificate(identity)
            let key = try T.privateKey(identity)
            for protection in [PKCS12Bundle.Protection.modern, .legacy3DES] {
                let bytes = try PKCS12Bundle.export(certificate: certificate, privateKey: key, password: "pw", protection: protection)
                let bundle = try PKCS12Bundle(derBytes: bytes, password: "pw")
                XCTAssertEqual(bundle.leaf?.certificate, certificate, "\(identity) \(protection)")
                XCTAssertEqual(bundle.privateKey?.algorithm, key.algorithm, "\(identity) \(protection)")
                XCTAssertEqual(bundle.chain.count, 0)
            }
        }
    }

    func testAnEmptyPasswordIsAllowedAndReadWithEmptyOrNoPassword() throws {
        let written = try exportAlice(protection: .modern, password: "")
        XCTAssertEqual(try PKCS12Bundle(derBytes: written.bytes, password: "").leaf?.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(try PKCS12Bundle(derBytes: written.bytes, password: nil).leaf?.certificate, try T.certificate(T.clientAlice))
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: written.bytes, password: "x") }
        let info = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-in", written.url.path, "-passin", "pass:"])
        XCTAssertEqual(info.status, 0, info.combined)
    }

    func testTheExportedFileIsProtectedByItsPassword() throws {
        let written = try exportAlice(protection: .modern)
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: written.bytes, password: "wrong") }
        assertThrowsMTLSError(.passwordRequired) { try PKCS12Bundle(derBytes: written.bytes, password: nil) }
        let info = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-in", written.url.path, "-passin", "pass:wrong"])
        XCTAssertNotEqual(info.status, 0)
    }

    // MARK: Errors

    func testAKeyThatIsNotTheCertificatesIsRefused() throws {
        let error = assertThrowsMTLSError(.keyMismatch) {
            try PKCS12Bundle.export(certificate: T.certificate(T.clientAlice), privateKey: T.privateKey(T.clientBobRSA), password: "pw")
        }
        XCTAssertTrue(error?.message.contains("CN=client-alice") ?? false, error?.message ?? "")
        assertThrowsMTLSError(.keyMismatch) {
            try PKCS12Bundle.export(certificate: T.certificate(T.server), privateKey: T.privateKey(T.serverRevoked), password: "pw", protection: .legacy3DES)
        }
    }

    func testAnIterationCountOutsideOneToInt32MaxIsAnInvalidArgument() throws {
        let certificate = try T.certificate(T.clientAlice)
        let key = try T.privateKey(T.clientAlice)
        for iterations in [0, -1, Int(Int32.max) + 1] {
            assertThrowsMTLSError(.invalidArgument, "\(iterations)") {
                try PKCS12Bundle.export(certificate: certificate, privateKey: key, password: "pw", iterations: iterations)
            }
        }
        let one = try PKCS12Bundle.export(certificate: certificate, privateKey: key, password: "pw", iterations: 1)
        XCTAssertEqual(try PKCS12Bundle(derBytes: one, password: "pw").inspection.mac?.iterations, 1)
    }

    // MARK: Read by other importers

    func testOpenSSLReadsTheModernExportWithoutLegacyAndReportsAES256AndSHA256() throws {
        let written = try exportAlice(protection: .modern)
        let info = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-in", written.url.path, "-passin", "pass:\(written.password)"])
        XCTAssertEqual(info.status, 0, info.combined)
        XCTAssertTrue(info.combined.contains("MAC: sha256, Iteration 2048"), info.combined)
        XCTAssertTrue(info.combined.contains("PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256"), info.combined)
        XCTAssertTrue(info.combined.contains("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256"), info.combined)
        // And the key openssl extracts is Alice's.
        let key = try OpenSSLCLI.run(["pkcs12", "-in", written.url.path, "-passin", "pass:\(written.password)", "-nocerts", "-nodes"])
        XCTAssertEqual(try PrivateKey(bytes: key).publicKey, try T.certificate(T.clientAlice).publicKey)
        let certificates = try OpenSSLCLI.run(["pkcs12", "-in", written.url.path, "-passin", "pass:\(written.password)", "-nokeys"])
        XCTAssertEqual(try Certificate.fromPEM(certificates).count, 3)
    }

    func testOpenSSLReadsTheLegacyExportWithoutTheLegacyOptionAndReportsTripleDESAndSHA1() throws {
        let written = try exportAlice(protection: .legacy3DES)
        let info = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-in", written.url.path, "-passin", "pass:\(written.password)"])
        XCTAssertEqual(info.status, 0, info.combined)
        XCTAssertTrue(info.combined.contains("MAC: sha1, Iteration 2048"), info.combined)
        XCTAssertTrue(info.combined.contains("PKCS7 Encrypted data: pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048"), info.combined)
        XCTAssertTrue(info.combined.contains("Shrouded Keybag: pbeWithSHA1And3-KeyTripleDES-CBC, Iteration 2048"), info.combined)
    }

    func testOpenSSLWithTheLegacyOptionReadsBothExportsWithAlicesLeafKeyAndChain() throws {
        let alice = try T.certificate(T.clientAlice)
        for protection in [PKCS12Bundle.Protection.modern, .legacy3DES] {
            let written = try exportAlice(protection: protection)
            let base = ["pkcs12", "-legacy", "-in", written.url.path, "-passin", "pass:\(written.password)"]
            let key = try OpenSSLCLI.run(base + ["-nocerts", "-nodes"])
            XCTAssertEqual(try PrivateKey(bytes: key).publicKey, alice.publicKey, "\(protection)")
            let leaf = try Certificate.fromPEM(try OpenSSLCLI.run(base + ["-nokeys", "-clcerts"]))
            XCTAssertEqual(leaf, [alice], "\(protection)")
            XCTAssertEqual(try Certificate.fromPEM(try OpenSSLCLI.run(base + ["-nokeys", "-cacerts"])).count, 2, "\(protection)")
        }
    }

    /// Python `cryptography` (pyca, its own OpenSSL), in the venv that scripts/pyca-venv.sh makes.
    func testPycaReadsBothExportsWithAlicesLeafAndKey() throws {
        let root = T.directory.deletingLastPathComponent()
        let venv = try ExternalTool.run("/bin/bash", [root.appendingPathComponent("scripts/pyca-venv.sh").path])
        XCTAssertEqual(venv.status, 0, "scripts/pyca-venv.sh (pip install cryptography): \(venv.stderr)")
        let python = venv.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let alice = try T.certificate(T.clientAlice)
        for protection in [PKCS12Bundle.Protection.modern, .legacy3DES] {
            let written = try exportAlice(protection: protection)
            let read = { (password: String) in
                try ExternalTool.run(
                    "/usr/bin/env", ["P12_PASSWORD=\(password)", python, "-W", "ignore", root.appendingPathComponent("scripts/pkcs12-pyca.py").path, written.url.path])
            }
            let output = try read(written.password)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.stdout)) as? [String: Any], output.combined)
            XCTAssertEqual(object["ok"] as? Bool, true, "\(protection): \(output.combined)")
            XCTAssertEqual(object["leaf"] as? String, alice.derBytes.hex, "\(protection)")
            XCTAssertEqual(object["keySPKI"] as? String, alice.publicKey.spkiDER.hex, "\(protection)")
            XCTAssertEqual((object["certificates"] as? [String])?.count, 3, "\(protection)")
            let wrong = try JSONSerialization.jsonObject(with: Data(try read("wrong").stdout)) as? [String: Any]
            XCTAssertEqual(wrong?["ok"] as? Bool, false, "\(protection): pyca must refuse the wrong password")
        }
    }

    func testNSSPk12utilListsBothExportsWithTheKeyAndFriendlyName() throws {
        let pk12util = try requireTool("pk12util", package: "libnss3-tools")
        for protection in [PKCS12Bundle.Protection.modern, .legacy3DES] {
            let written = try exportAlice(protection: protection)
            let output = try ExternalTool.run(pk12util, ["-l", written.url.path, "-W", written.password])
            XCTAssertEqual(output.status, 0, "\(protection): \(output.combined)")
            XCTAssertTrue(output.text.contains("Certificate(has private key):"), "\(protection): \(output.text.prefix(200))")
            XCTAssertTrue(output.text.contains("Friendly Name: alice"), "\(protection)")
            XCTAssertTrue(output.text.contains("Key(shrouded):"), "\(protection)")
            XCTAssertTrue(output.text.contains("CN=client-alice"), "\(protection)")
            let wrong = try ExternalTool.run(pk12util, ["-l", written.url.path, "-W", "wrong"])
            XCTAssertNotEqual(wrong.status, 0, "\(protection): pk12util must refuse the wrong password")
        }
    }

    func testJavaKeytoolListsBothExportsAsAPrivateKeyEntryNamedByTheFriendlyName() throws {
        let keytool = try requireTool("keytool", package: "default-jre-headless")
        let fingerprint = try T.certificate(T.clientAlice).sha256Fingerprint.colonHex
        for protection in [PKCS12Bundle.Protection.modern, .legacy3DES] {
            let written = try exportAlice(protection: protection)
            let output = try ExternalTool.run(keytool, ["-list", "-keystore", written.url.path, "-storetype", "PKCS12", "-storepass", written.password])
            XCTAssertEqual(output.status, 0, "\(protection): \(output.combined)")
            XCTAssertTrue(output.text.contains("Your keystore contains 1 entry"), "\(protection): \(output.text)")
            XCTAssertTrue(output.text.contains("alice, "), "\(protection): \(output.text)")
            XCTAssertTrue(output.text.contains("PrivateKeyEntry"), "\(protection): \(output.text)")
            XCTAssertTrue(output.text.contains(fingerprint), "\(protection): \(output.text)")
        }
    }
}

import Foundation
import XCTest

@testable import MTLSTrust

/// `PrivateKey`: every encoding in `TestCerts/keys`, passwords, matching, and PKCS#8 output that
/// `openssl pkey` reads back.
final class PrivateKeyTests: XCTestCase {
    typealias T = TestCertificates
    typealias K = TestCertificates.Keys

    private func key(_ path: String, password: String? = nil) throws -> PrivateKey {
        try PrivateKey(bytes: T.bytes(path), password: password.map(Secret.init))
    }

    private func publicKeyDER(ofPEM path: String) throws -> [UInt8] {
        try XCTUnwrap(PEM.parse(T.bytes(path)).first).derBytes
    }

    /// The structure of a DER key file as `openssl asn1parse` shows it: the element after the
    /// version is an INTEGER (PKCS#1), an OCTET STRING (SEC1) or a SEQUENCE (PKCS#8).
    private func formatOfDERKeyFile(_ path: String) throws -> PrivateKey.SourceFormat {
        let lines = try OpenSSLCLI.text(["asn1parse", "-inform", "DER", "-in", T.url(path).path]).split(separator: "\n")
        let second = try XCTUnwrap(lines.dropFirst(2).first, path)
        if second.contains("prim: INTEGER") { return .pkcs1 }
        if second.contains("prim: OCTET STRING") { return .sec1 }
        if second.contains("cons: SEQUENCE") { return .pkcs8 }
        return .unknown
    }

    // MARK: Reading every encoding

    func testEveryRSAEncodingIsReadAsTheSameRSA2048KeyWithItsFormatNamed() throws {
        // The DER files' formats are judged by openssl asn1parse rather than by their names: OpenSSL
        // 3.0's `openssl pkey -outform DER`, which made `rsa-pkcs8.der`, writes PKCS#1, not PKCS#8.
        let expected: [(String, PrivateKey.SourceFormat)] = [
            (K.rsaPKCS1PEM, .pkcs1), (K.rsaPKCS1DER, try formatOfDERKeyFile(K.rsaPKCS1DER)), (K.rsaPKCS8PEM, .pkcs8),
            (K.rsaPKCS8DER, try formatOfDERKeyFile(K.rsaPKCS8DER)),
            (K.rsaPKCS8Encrypted, .encryptedPKCS8), (K.rsaTraditionalEncrypted, .traditionalEncrypted),
        ]
        XCTAssertEqual(expected[1].1, .pkcs1)
        let publicKey = try publicKeyDER(ofPEM: K.rsaPublic)
        for (path, format) in expected {
            let key = try key(path, password: K.password)
            XCTAssertEqual(key.sourceFormat, format, path)
            XCTAssertEqual(key.algorithm, .rsa(bits: 2048), path)
            XCTAssertEqual(key.publicKey.spkiDER, publicKey, "\(path) is the same key as rsa-public.pem")
        }
    }

    func testEveryP256EncodingIsReadAsTheSameKeyWithItsFormatNamed() throws {
        let expected: [(String, PrivateKey.SourceFormat)] = [
            (K.ecP256SEC1, .sec1), (K.ecP256PKCS8, .pkcs8), (K.ecP256DER, try formatOfDERKeyFile(K.ecP256DER)),
        ]
        let publicKey = try publicKeyDER(ofPEM: K.ecP256Public)
        for (path, format) in expected {
            let key = try key(path)
            XCTAssertEqual(key.sourceFormat, format, path)
            XCTAssertEqual(key.algorithm, .ec(curve: "P-256", bits: 256), path)
            XCTAssertEqual(key.algorithm.description, "ECDSA P-256", path)
            XCTAssertEqual(key.publicKey.spkiDER, publicKey, "\(path) is the same key as ec-p256-public.pem")
        }
    }

    func testP384Ed25519AndBackupKeysAreReadWithTheirAlgorithms() throws {
        let p384 = try key(K.ecP384SEC1)
        XCTAssertEqual(p384.algorithm, .ec(curve: "P-384", bits: 384))
        XCTAssertEqual(p384.sourceFormat, .sec1)

        let ed25519 = try key(K.ed25519PKCS8)
        XCTAssertEqual(ed25519.algorithm, .ed25519)
        XCTAssertEqual(ed25519.algorithm.description, "Ed25519")
        XCTAssertEqual(ed25519.sourceFormat, .pkcs8)

        let backup = try key(K.backupKey)
        XCTAssertEqual(backup.algorithm, .ec(curve: "P-256", bits: 256))
        let csrPublicKey = try OpenSSLCLI.run(["req", "-in", T.url(K.backupCSR).path, "-noout", "-pubkey"])
        XCTAssertEqual(backup.publicKey.pemString, String(decoding: csrPublicKey, as: UTF8.self), "backup.csr is for backup.key")
    }

    func testTheDerivedPublicKeyKnowsItsAlgorithmAndPin() throws {
        for path in [K.rsaPKCS8PEM, K.ecP256PKCS8, K.ecP384SEC1, K.ed25519PKCS8] {
            let key = try key(path)
            XCTAssertEqual(key.publicKey.algorithm, key.algorithm, path)
        }
        let certificate = try T.certificate(T.server)
        let key = try T.privateKey(T.server)
        XCTAssertEqual(key.publicKey, certificate.publicKey)
        XCTAssertEqual(key.publicKey.spkiPin, certificate.spkiPin)
    }

    func testEveryCertificateKeyIsAnUnencryptedPKCS8PEMOfTheCertificatesAlgorithm() throws {
        for identity in T.allIdentities {
            let key = try T.privateKey(identity)
            XCTAssertEqual(key.sourceFormat, .pkcs8, "\(identity)")
            XCTAssertEqual(key.algorithm, try T.certificate(identity).publicKey.algorithm, "\(identity)")
        }
    }

    func testRealPKCS8DERIsReadAsPKCS8() throws {
        for path in [K.rsaPKCS8PEM, K.ecP256PKCS8, K.ed25519PKCS8] {
            let der = try OpenSSLCLI.run(["pkcs8", "-topk8", "-nocrypt", "-in", T.url(path).path, "-outform", "DER"])
            let key = try PrivateKey(bytes: der)
            XCTAssertEqual(key.sourceFormat, .pkcs8, path)
            XCTAssertEqual(key.publicKey, try self.key(path).publicKey, path)
        }
    }

    func testSEC1DERIsReadAsSEC1() throws {
        let der = try OpenSSLCLI.run(["ec", "-in", T.url(K.ecP256SEC1).path, "-outform", "DER"])
        let key = try PrivateKey(bytes: der)
        XCTAssertEqual(key.sourceFormat, .sec1)
        XCTAssertEqual(key.publicKey, try self.key(K.ecP256SEC1).publicKey)
    }

    func testEncryptedPKCS8AndTraditionalPEMAreDecryptedWithTheRightPassword() throws {
        let plain = try key(K.rsaPKCS8PEM)
        for path in [K.rsaPKCS8Encrypted, K.rsaTraditionalEncrypted] {
            let key = try key(path, password: "secret")
            XCTAssertEqual(key.publicKey, plain.publicKey, path)
            XCTAssertEqual(try key.pkcs8DER(), try plain.pkcs8DER(), "\(path) decrypts to the same key material")
        }
    }

    func testTraditionallyEncryptedECKeyIsReadToo() throws {
        let pem = try OpenSSLCLI.run(["ec", "-in", T.url(K.ecP256SEC1).path, "-aes-128-cbc", "-passout", "pass:secret"])
        XCTAssertTrue(String(decoding: pem, as: UTF8.self).contains("Proc-Type: 4,ENCRYPTED"))
        let key = try PrivateKey(bytes: pem, password: "secret")
        XCTAssertEqual(key.sourceFormat, .traditionalEncrypted)
        XCTAssertEqual(key.publicKey, try self.key(K.ecP256SEC1).publicKey)
        assertThrowsMTLSError(.passwordRequired) { try PrivateKey(bytes: pem) }
        assertThrowsMTLSError(.wrongPassword) { try PrivateKey(bytes: pem, password: "wrong") }
    }

    func testEncryptedPKCS8DERIsReadWithItsPassword() throws {
        let der = try OpenSSLCLI.run([
            "pkcs8", "-in", T.url(K.rsaPKCS8Encrypted).path, "-passin", "pass:secret", "-topk8", "-v2", "aes-256-cbc", "-passout", "pass:secret", "-outform", "DER",
        ])
        XCTAssertEqual(DER.shape(of: der), .encryptedPrivateKey)
        let key = try PrivateKey(bytes: der, password: "secret")
        XCTAssertEqual(key.sourceFormat, .encryptedPKCS8)
        XCTAssertEqual(key.publicKey, try self.key(K.rsaPKCS8PEM).publicKey)
        assertThrowsMTLSError(.passwordRequired) { try PrivateKey(bytes: der) }
        assertThrowsMTLSError(.wrongPassword) { try PrivateKey(bytes: der, password: "Secret") }
    }

    /// A wrong password decrypts to garbage; about one time in 256 that garbage ends in valid CBC
    /// padding, decryption "succeeds" and OpenSSL's decoder then says "unsupported" because no
    /// decoder accepts the bytes. That is still a wrong password, not a missing algorithm. The
    /// salt is fresh for every encryption, so search for such a password rather than fixing one.
    func testAWrongPasswordWhoseGarbageHasValidPaddingIsStillAWrongPassword() throws {
        let encrypted = try self.key(K.ecP256PKCS8).pkcs8DER(password: "secret")
        var paddingAccepted = 0
        for attempt in 0..<20_000 where paddingAccepted == 0 {
            do {
                _ = try PrivateKey(bytes: encrypted, password: Secret("wrong-\(attempt)"))
                XCTFail("wrong-\(attempt) decrypted the key")
            } catch {
                XCTAssertEqual(error.reason, .wrongPassword, "wrong-\(attempt): \(error.message) \(error.openSSLDetail)")
                guard error.reason == .wrongPassword else { return }
                if !error.openSSLDetail.contains(where: { $0.contains("bad decrypt") }) { paddingAccepted += 1 }
            }
        }
        XCTAssertEqual(paddingAccepted, 1, "no wrong password among 20,000 got past the padding check: the case this test is for was not reached")
    }

    func testKeysEncryptedWithLegacyCiphersAreReadWithTheLegacyProvider() throws {
        let legacy = ["-provider", "legacy", "-provider", "default"]
        let pkcs8 = try OpenSSLCLI.run(["pkcs8", "-topk8", "-v1", "PBE-SHA1-RC2-40", "-in", T.url(K.ecP256PKCS8).path, "-passout", "pass:secret"] + legacy)
        let traditional = try OpenSSLCLI.run(["ec", "-in", T.url(K.ecP256SEC1).path, "-des", "-passout", "pass:secret"] + legacy)
        XCTAssertTrue(String(decoding: traditional, as: UTF8.self).contains("DEK-Info: DES-CBC"))
        let expected = try key(K.ecP256PKCS8).publicKey
        for (bytes, format) in [(pkcs8, PrivateKey.SourceFormat.encryptedPKCS8), (traditional, .traditionalEncrypted)] {
            let key = try PrivateKey(bytes: bytes, password: "secret")
            XCTAssertEqual(key.sourceFormat, format)
            XCTAssertEqual(key.publicKey, expected)
            XCTAssertTrue(key.matches(try T.certificate(T.server)) == false)
            XCTAssertEqual(try PrivateKey(bytes: key.pkcs8PEM()).publicKey, expected, "usable after loading")
            assertThrowsMTLSError(.wrongPassword, "\(format)") { try PrivateKey(bytes: bytes, password: "wrong") }
            assertThrowsMTLSError(.passwordRequired, "\(format)") { try PrivateKey(bytes: bytes) }
        }
    }

    func testAPasswordGivenForAnUnencryptedKeyIsIgnored() throws {
        XCTAssertEqual(try key(K.rsaPKCS8PEM, password: "unused").publicKey, try key(K.rsaPKCS8PEM).publicKey)
        XCTAssertEqual(try key(K.ecP256DER, password: "unused").publicKey, try key(K.ecP256DER).publicKey)
    }

    // MARK: Password errors

    func testAWrongPasswordIsReportedAsWrong() throws {
        for path in [K.rsaPKCS8Encrypted, K.rsaTraditionalEncrypted] {
            for password in ["wrong", "Secret", "secret ", ""] {
                assertThrowsMTLSError(.wrongPassword, "\(path) with '\(password)'") { try key(path, password: password) }
            }
        }
    }

    func testAMissingPasswordIsReportedAsRequired() throws {
        for path in [K.rsaPKCS8Encrypted, K.rsaTraditionalEncrypted] {
            let error = assertThrowsMTLSError(.passwordRequired, path) { try key(path) }
            XCTAssertTrue(error?.message.contains("password") ?? false, error?.message ?? "")
        }
    }

    // MARK: Wrong objects and bad input

    func testACertificateGivenAsAKeyIsTheWrongKindOfObject() throws {
        let pem = assertThrowsMTLSError(.wrongObjectKind) { try key(T.server.pem) }
        XCTAssertTrue(pem?.message.contains("CERTIFICATE") ?? false, pem?.message ?? "")
        assertThrowsMTLSError(.wrongObjectKind) { try key(T.server.der) }
        assertThrowsMTLSError(.wrongObjectKind) { try key(T.serverCER) }
        assertThrowsMTLSError(.wrongObjectKind) { try key(T.serverChain) }
    }

    func testOtherObjectsGivenAsAKeyAreTheWrongKind() throws {
        assertThrowsMTLSError(.wrongObjectKind) { try key(K.rsaPublic) }
        assertThrowsMTLSError(.wrongObjectKind) { try key(K.backupCSR) }
        assertThrowsMTLSError(.wrongObjectKind) { try key(T.intermediateCRL) }
        assertThrowsMTLSError(.wrongObjectKind) { try key(T.P12.modern) }
        assertThrowsMTLSError(.wrongObjectKind) { try PrivateKey(bytes: try self.publicKeyDER(ofPEM: K.rsaPublic)) }
    }

    func testEmptyGarbageAndDamagedInputAreReportedWithTheirReasons() throws {
        assertThrowsMTLSError(.emptyInput) { try key(T.Bad.empty) }
        assertThrowsMTLSError(.malformedInput) { try key(T.Bad.garbage) }
        assertThrowsMTLSError(.malformedInput) { try key(T.Bad.notACert) }
        assertThrowsMTLSError(.malformedInput) { try key(T.Bad.truncatedDER) }
        let der = try T.bytes(K.rsaPKCS8DER)
        assertThrowsMTLSError(.malformedInput) { try PrivateKey(bytes: Array(der.prefix(der.count / 2))) }
        // A PRIVATE KEY block whose base64 is fine but whose content is not a key.
        let bogus = PEM.encode([0x30, 0x03, 0x02, 0x01, 0x00], label: "PRIVATE KEY")
        assertThrowsMTLSError(.malformedInput) { try PrivateKey(bytes: Array(bogus.utf8)) }
        let damaged = String(decoding: try T.bytes(K.ecP256PKCS8), as: UTF8.self).replacingOccurrences(of: "\n", with: "!\n", options: [], range: nil)
        assertThrowsMTLSError(.malformedInput) { try PrivateKey(bytes: Array(damaged.utf8)) }
    }

    // MARK: Matching certificates

    func testEveryKeyMatchesItsOwnCertificateAndNoOther() throws {
        let identities = T.allIdentities
        let certificates = try identities.map { try T.certificate($0) }
        for identity in identities {
            let key = try T.privateKey(identity)
            for (other, certificate) in zip(identities, certificates) {
                XCTAssertEqual(key.matches(certificate), other.basename == identity.basename, "\(identity).key vs \(other).pem")
            }
        }
    }

    func testStandaloneKeysMatchNoCertificate() throws {
        let certificates = try T.allIdentities.map { try T.certificate($0) }
        for path in [K.rsaPKCS1PEM, K.ecP256SEC1, K.ecP384SEC1, K.ed25519PKCS8, K.backupKey] {
            let key = try key(path)
            XCTAssertFalse(certificates.contains { key.matches($0) }, path)
        }
    }

    /// A DSA certificate whose key inherits its parameters from the issuer (RFC 3279 2.3.2), made
    /// by scripts/make-dsa-inherited.sh: OpenSSL cannot decode its public key alone, and the key
    /// still has to find its certificate (`import` wrote no certificate file for such a PKCS#12).
    func testADSAKeyMatchesItsCertificateWhoseParametersAreInherited() throws {
        let certificate = try XCTUnwrap(Certificate.fromPEM(T.bytes("dsa-inherited/leaf.pem")).first)
        XCTAssertTrue(try key("dsa-inherited/leaf.key").matches(certificate))
        XCTAssertFalse(try key("dsa-inherited/ca.key").matches(certificate), "an RSA key")
        for other in T.allIdentities {
            XCTAssertFalse(try key("dsa-inherited/leaf.key").matches(try T.certificate(other)), other.basename)
        }
        // Another DSA key with the same parameters but its own public value.
        XCTAssertFalse(try key("dsa-inherited/other.key").matches(certificate), "another DSA key with the same parameters")
    }

    // MARK: Writing PKCS#8

    func testUnencryptedPKCS8PEMAndDERAreByteIdenticalToOpenSSLs() throws {
        for path in [K.rsaPKCS1PEM, K.ecP256SEC1, K.ecP384SEC1, K.ed25519PKCS8, T.server.key] {
            let key = try key(path)
            XCTAssertEqual(try key.pkcs8PEM(), try OpenSSLCLI.run(["pkey", "-in", T.url(path).path]), path)
            let der = try key.pkcs8DER()
            XCTAssertEqual(der, try OpenSSLCLI.run(["pkcs8", "-topk8", "-nocrypt", "-in", T.url(path).path, "-outform", "DER"]), path)
            XCTAssertEqual(DER.shape(of: der), .privateKey)
            XCTAssertEqual(try PEM.parse(key.pkcs8PEM()).first?.derBytes, der, path)
        }
        XCTAssertEqual(try key(K.rsaPKCS1PEM).pkcs8PEM(), try T.bytes(K.rsaPKCS8PEM))
        XCTAssertEqual(try key(K.ecP256SEC1).pkcs8PEM(), try T.bytes(K.ecP256PKCS8))
    }

    func testPKCS8PEMRoundTripsThroughTheLibrary() throws {
        for path in [K.rsaTraditionalEncrypted, K.ecP256DER, K.ed25519PKCS8] {
            let original = try key(path, password: K.password)
            let again = try PrivateKey(bytes: original.pkcs8PEM())
            XCTAssertEqual(again.sourceFormat, .pkcs8)
            XCTAssertEqual(again.publicKey, original.publicKey, path)
            XCTAssertEqual(try again.pkcs8DER(), try original.pkcs8DER(), path)
            let fromDER = try PrivateKey(bytes: original.pkcs8DER())
            XCTAssertEqual(fromDER.publicKey, original.publicKey, path)
        }
    }

    func testEncryptedPKCS8PEMIsAESAndPBKDF2AndReadableByOpenSSLWithThePassword() throws {
        let directory = try T.temporaryDirectory(for: self)
        for path in [K.rsaPKCS8PEM, K.ecP256SEC1, K.ed25519PKCS8] {
            let key = try key(path)
            let pem = try key.pkcs8PEM(password: "hunter2")
            let text = String(decoding: pem, as: UTF8.self)
            XCTAssertTrue(text.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"), "\(path): \(text.prefix(40))")
            let file = directory.appendingPathComponent("encrypted.pem")
            try Data(pem).write(to: file)

            let decrypted = try OpenSSLCLI.run(["pkey", "-in", file.path, "-passin", "pass:hunter2"])
            XCTAssertEqual(decrypted, try key.pkcs8PEM(), "\(path): openssl decrypts to the same key")
            let wrong = try OpenSSLCLI.runAllowingFailure(["pkey", "-in", file.path, "-passin", "pass:hunter3"])
            XCTAssertNotEqual(wrong.status, 0, "openssl must refuse the wrong password")

            let structure = try OpenSSLCLI.text(["asn1parse", "-in", file.path])
            XCTAssertTrue(structure.contains("PBES2"), structure)
            XCTAssertTrue(structure.contains("PBKDF2"), structure)
            XCTAssertTrue(structure.contains("aes-256-cbc"), structure)

            let again = try PrivateKey(bytes: pem, password: "hunter2")
            XCTAssertEqual(again.sourceFormat, .encryptedPKCS8)
            XCTAssertEqual(again.publicKey, key.publicKey)
            assertThrowsMTLSError(.wrongPassword) { try PrivateKey(bytes: pem, password: "hunter3") }
            assertThrowsMTLSError(.passwordRequired) { try PrivateKey(bytes: pem) }
        }
    }

    func testEncryptedPKCS8DERIsReadableByOpenSSLAndByTheLibrary() throws {
        let key = try key(K.ecP256PKCS8)
        let der = try key.pkcs8DER(password: "pw")
        XCTAssertEqual(DER.shape(of: der), .encryptedPrivateKey)
        let directory = try T.temporaryDirectory(for: self)
        let file = directory.appendingPathComponent("encrypted.der")
        try Data(der).write(to: file)
        XCTAssertEqual(try OpenSSLCLI.run(["pkey", "-inform", "DER", "-in", file.path, "-passin", "pass:pw"]), try key.pkcs8PEM())
        XCTAssertEqual(try PrivateKey(bytes: der, password: "pw").publicKey, key.publicKey)
    }

    func testEncryptingWithAnEmptyPasswordStillEncrypts() throws {
        let key = try key(K.ecP256PKCS8)
        let pem = try key.pkcs8PEM(password: "")
        XCTAssertTrue(String(decoding: pem, as: UTF8.self).hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        XCTAssertEqual(try PrivateKey(bytes: pem, password: "").publicKey, key.publicKey)
        assertThrowsMTLSError(.wrongPassword) { try PrivateKey(bytes: pem, password: "x") }
    }

    func testEncryptionUsesAFreshSaltEachTime() throws {
        let key = try key(K.ecP256PKCS8)
        XCTAssertNotEqual(try key.pkcs8DER(password: "pw"), try key.pkcs8DER(password: "pw"))
    }
}

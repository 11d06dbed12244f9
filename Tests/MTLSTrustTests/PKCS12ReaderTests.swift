import COpenSSL
import Foundation
import XCTest

@testable import MTLSTrust

/// The PKCS#12 reader on what other software writes: PBMAC1 (RFC 9579) and its tampered and
/// short-key forms, BER, NULL vs empty and Unicode passwords, several identities, key-only files,
/// repeated bags, and truncation told apart from damage.
final class PKCS12ReaderTests: XCTestCase {
    private typealias T = TestCertificates
    private let rfcA1 = "third-party/pkcs12/rfc9579/A1-pbmac1-sha256.p12"

    // MARK: PBMAC1

    func testPBMAC1IsVerifiedWithTheRightPasswordAndRefusedWithAWrongOne() throws {
        let bytes = try T.bytes(rfcA1)
        let bundle = try PKCS12Bundle(derBytes: bytes, password: "1234")
        XCTAssertEqual(bundle.inspection.mac?.digest, "PBMAC1 (HMAC-SHA256, PBKDF2 HMAC-SHA256)")
        XCTAssertEqual(bundle.inspection.mac?.iterations, 2048)
        XCTAssertNotNil(bundle.leaf)
        XCTAssertTrue(bundle.privateKey?.matches(bundle.leaf!.certificate) ?? false)
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: bytes, password: "12345") }
        assertThrowsMTLSError(.passwordRequired) { try PKCS12Bundle(derBytes: bytes, password: nil) }
    }

    /// The MacData of A.1 ends the file: `30 7C` MacData, `30 6D` DigestInfo, `30 49` PBMAC1 AlgId,
    /// `30 3C` params, `30 2C` KDF AlgId, `30 1F` PBKDF2-params { salt, 2048, keyLength 32, prf }.
    private func a1Offsets(_ bytes: [UInt8]) throws -> (macData: Int, keyLength: Int, digest: Int) {
        let keyLength = try XCTUnwrap(find([0x02, 0x02, 0x08, 0x00, 0x02, 0x01, 0x20], in: bytes)) + 4
        let macData = try XCTUnwrap(find([0x30, 0x7C, 0x30, 0x6D, 0x30, 0x49], in: bytes))
        let digest = try XCTUnwrap(find([0x04, 0x20, 0x7A, 0xA5], in: bytes)) + 2
        return (macData, keyLength, digest)
    }

    private func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).last { Array(bytes[$0..<$0 + needle.count]) == needle }
    }

    func testTamperedPBMAC1IsDamagedNotAWrongPassword() throws {
        let bytes = try T.bytes(rfcA1)
        let offsets = try a1Offsets(bytes)
        var flipped = bytes
        flipped[offsets.digest + 5] ^= 0x01
        let error = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: flipped, password: "1234") }
        XCTAssertTrue(error?.message.contains("damaged") ?? false, error?.message ?? "")
        // Another iteration count derives another key: the MAC fails, the password still decrypts.
        var iterations = bytes
        iterations[offsets.keyLength - 2] = 0x01
        assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: iterations, password: "1234") }
        // With a wrong password the same files are a password problem.
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: flipped, password: "4321") }
    }

    func testPBMAC1WithAShortOrMissingKeyLengthIsDamaged() throws {
        let bytes = try T.bytes(rfcA1)
        let offsets = try a1Offsets(bytes)
        var short = bytes
        short[offsets.keyLength + 2] = 0x10  // 16-byte HMAC key
        let shortError = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: short, password: "1234") }
        XCTAssertTrue(shortError?.message.contains("16-byte key") ?? false, shortError?.message ?? "")
        // keyLength removed (RFC 9579 A.6): every enclosing length shrinks by 3.
        var missing = bytes
        missing.removeSubrange(offsets.keyLength..<offsets.keyLength + 3)
        for offset in [offsets.macData, offsets.macData + 2, offsets.macData + 4, offsets.macData + 17, offsets.macData + 19, offsets.macData + 32] {
            XCTAssertEqual(missing[offset], 0x30, "offset \(offset)")
            missing[offset + 1] -= 3
        }
        XCTAssertEqual(Array(missing[0..<4]), [0x30, 0x82, 0x0A, 0x8A])
        missing[3] -= 3
        let missingError = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: missing, password: "1234") }
        XCTAssertTrue(missingError?.message.contains("key length") ?? false, missingError?.message ?? "")
    }

    /// RFC 9579 A.2 and A.3 (SHA-512 as PRF, then as HMAC too) hold A.1's identity; A.4–A.6 and
    /// OpenSSL's malformed PBMAC1 files (CVE-2025-11187, CVE-2026-34181) are damaged, each for its
    /// reason, and never a password problem with the right password.
    func testRFC9579AndOpenSSLPBMAC1FilesAreReadOrRefusedForTheirReason() throws {
        let reference = try PKCS12Bundle(derBytes: try T.bytes(rfcA1), password: "1234")
        let good: [(file: String, mac: String)] = [
            ("rfc9579/A2-pbmac1-sha256-prf-sha512.p12", "PBMAC1 (HMAC-SHA256, PBKDF2 HMAC-SHA512)"),
            ("rfc9579/A3-pbmac1-sha512.p12", "PBMAC1 (HMAC-SHA512, PBKDF2 HMAC-SHA512)"),
            ("openssl/pbmac1_sha1_hmac_and_prf.p12", "PBMAC1 (HMAC-SHA1, PBKDF2 HMAC-SHA1)"),
        ]
        for (file, mac) in good {
            let bytes = try T.bytes("third-party/pkcs12/\(file)")
            let bundle = try PKCS12Bundle(derBytes: bytes, password: "1234")
            XCTAssertEqual(bundle.inspection.mac?.digest, mac, file)
            XCTAssertEqual(bundle.leaf?.certificate, reference.leaf?.certificate, file)
            XCTAssertTrue(bundle.privateKey?.isSameKey(as: reference.privateKey!) ?? false, file)
            assertThrowsMTLSError(.wrongPassword, file) { try PKCS12Bundle(derBytes: bytes, password: "4321") }
        }
        // A 20-byte key is the shortest accepted (OpenSSL's good-shorter-key-len); 19 is refused.
        let shorter = try PKCS12Bundle(derBytes: try T.bytes("third-party/pkcs12/openssl/pbmac1_256_256.good-shorter-key-len.p12"), password: "1234")
        XCTAssertNotNil(shorter.privateKey)
        let bad: [(file: String, phrase: String)] = [
            ("rfc9579/A4-invalid-iteration-count.p12", "integrity check (MAC) fails although the password decrypts"),
            ("rfc9579/A5-invalid-salt.p12", "integrity check (MAC) fails although the password decrypts"),
            ("rfc9579/A6-invalid-missing-key-length.p12", "lacks the key length RFC 9579 requires"),
            ("openssl/pbmac1_256_256.bad-key-len.p12", "uses a 19-byte key; PBMAC1 HMAC keys are 20 to 64 bytes"),
            ("openssl/pbmac1_256_256.bad-len.p12", "uses a 256-byte key"),
            ("openssl/pbmac1_256_256.negative-len.p12", "uses a 255-byte key"),
            ("openssl/pbmac1_256_256.zero-len.p12", "uses a 0-byte key"),
            ("openssl/pbmac1_256_256.very-big-len.p12", "key length too large to be a byte count (a 9-byte INTEGER)"),
            ("openssl/pbmac1_256_256.no-salt.p12", "has no OCTET STRING salt: its PBKDF2 parameters start with an INTEGER"),
            ("openssl/pbmac1_256_256.bad-salt-type.p12", "has no OCTET STRING salt"),
        ]
        for (file, phrase) in bad {
            let bytes = try T.bytes("third-party/pkcs12/\(file)")
            let error = assertThrowsMTLSError(.corruptInput, file) { try PKCS12Bundle(derBytes: bytes, password: "1234") }
            XCTAssertTrue(error?.message.contains(phrase) ?? false, "\(file): \(error?.message ?? "no error")")
            XCTAssertFalse(error?.message.contains("1234") ?? true, "\(file): no password in messages")
        }
    }

    /// SSLMate go-pkcs12's forged trust store: a 1-byte PBMAC1 key whose salt makes the MAC pass
    /// for a password the file was not made with. Refused for the key length, whichever password.
    func testAOneByteKeyPBMAC1FileIsRefusedWhateverThePassword() throws {
        let bytes = try T.bytes("third-party/pkcs12/sslmate-go/pbmac1-short-key-bypass.p12")
        for password: Secret? in ["realpassword", "fakepassword", "", nil] {
            let error = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: bytes, password: password) }
            XCTAssertTrue(error?.message.contains("uses a 1-byte key") ?? false, error?.message ?? "")
        }
    }

    /// Key lengths at the edges, made from A.1: 64 bytes is a valid parameter (the MAC then fails,
    /// as A.1 was made with 32), 65 is refused before any MAC is computed, as is a negative length.
    func testPBMAC1KeyLengthIsBetween20And64Bytes() throws {
        let bytes = try T.bytes(rfcA1)
        let offsets = try a1Offsets(bytes)
        var longest = bytes
        longest[offsets.keyLength + 2] = 64
        let macError = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: longest, password: "1234") }
        XCTAssertTrue(macError?.message.contains("integrity check (MAC) fails") ?? false, macError?.message ?? "")
        var tooLong = bytes
        tooLong[offsets.keyLength + 2] = 65
        let longError = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: tooLong, password: "1234") }
        XCTAssertTrue(longError?.message.contains("uses a 65-byte key") ?? false, longError?.message ?? "")
        var negative = bytes
        negative[offsets.keyLength + 2] = 0xE0
        let negativeError = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: negative, password: "1234") }
        XCTAssertTrue(negativeError?.message.contains("negative key length") ?? false, negativeError?.message ?? "")
    }

    // MARK: Malformed structure (OpenSSL's CVE test files)

    /// A friendlyName or localKeyId that is a BOOLEAN (CVE-2026-22795): damaged, naming the
    /// attribute and the bag, under both MACs; a wrong password is still a password problem.
    func testBagAttributesOfTheWrongTypeAreDamaged() throws {
        for attribute in ["friendlyName", "localKeyID"] {
            for bag in ["cert", "key"] {
                for mac in ["pbmac1", "pkcs12-sha256mac"] {
                    let file = "third-party/pkcs12/openssl/BOOLEAN-in-\(attribute)-of-\(bag)-\(mac).p12"
                    let bytes = try T.bytes(file)
                    let error = assertThrowsMTLSError(.corruptInput, file) { try PKCS12Bundle(derBytes: bytes, password: "RedHatEnterpriseLinux10.0") }
                    let expected =
                        "the \(attribute == "localKeyID" ? "localKeyId" : attribute) attribute of \(bag == "cert" ? "a certificate bag" : "a shrouded key bag") is a BOOLEAN"
                    XCTAssertTrue(error?.message.contains(expected) ?? false, "\(file): \(error?.message ?? "no error")")
                    assertThrowsMTLSError(.wrongPassword, file) { try PKCS12Bundle(derBytes: bytes, password: "RedHatEnterpriseLinux9") }
                }
            }
        }
    }

    /// An encrypted safe without its encrypted content (CVE-2025-69421: OpenSSL before 3.0.19
    /// dereferenced the NULL) is damaged, with the right password; with a wrong one, a password problem.
    func testAnEncryptedSafeWithoutContentIsDamaged() throws {
        for file in ["pbmac1_cert.oct-is-null.p12", "sha256mac_cert.oct-is-null.p12"] {
            let bytes = try T.bytes("third-party/pkcs12/openssl/\(file)")
            let error = assertThrowsMTLSError(.corruptInput, file) { try PKCS12Bundle(derBytes: bytes, password: "RedHatEnterpriseLinux10.0") }
            XCTAssertTrue(error?.message.contains("has no encrypted content") ?? false, "\(file): \(error?.message ?? "no error")")
            assertThrowsMTLSError(.wrongPassword, file) { try PKCS12Bundle(derBytes: bytes, password: "not it") }
        }
    }

    /// RFC 7292's PFX is version 3; any other number (the version byte of OpenSSL's signer.p12
    /// changed here, and OpenSSL's garbage-pkcs12.p12 with 123456789) is damaged, not read.
    func testAPFXVersionOtherThan3IsDamaged() throws {
        let original = try T.bytes("third-party/pkcs12/openssl/signer.p12")
        XCTAssertNotNil(try PKCS12Bundle(derBytes: original, password: "12345").privateKey)
        let at = try XCTUnwrap(find([0x02, 0x01, 0x03], in: Array(original.prefix(8))))
        for version: UInt8 in [0, 1, 2, 4, 0x7F] {
            var bytes = original
            bytes[at + 2] = version
            XCTAssertEqual(DER.shape(of: bytes), .pkcs12, "version \(version) is still recognised as a PKCS#12 file")
            let error = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: bytes, password: "12345") }
            XCTAssertTrue(error?.message.contains("PFX version \(version), and PKCS#12 files (RFC 7292) are version 3") ?? false, error?.message ?? "")
        }
        let garbage = try T.bytes("third-party/pkcs12/openssl/garbage-pkcs12.p12")
        let error = assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: garbage, password: "invalidapass") }
        XCTAssertTrue(error?.message.contains("PFX version 123456789") ?? false, error?.message ?? "")
    }

    /// A safe encrypted to a public key (envelopedData: OpenSSL's nomac_parse.p12) is listed as
    /// such and not read: the file yields no key and no certificate.
    func testAnEnvelopedSafeIsListedAndNotRead() throws {
        let bundle = try PKCS12Bundle(derBytes: try T.bytes("third-party/pkcs12/openssl/nomac_parse.p12"), password: "testpassword")
        XCTAssertNil(bundle.inspection.mac)
        XCTAssertEqual(bundle.inspection.safes.flatMap(\.bags).map(\.kind), [.enveloped])
        XCTAssertFalse(bundle.inspection.isUnprotected, "a public-key encrypted safe is protected, though not by a password")
        XCTAssertTrue(bundle.identities.isEmpty)
        XCTAssertTrue(bundle.certificates.isEmpty)
    }

    // MARK: Other writers' quirks (NSS, Bouncy Castle)

    /// NSS 3.21–3.30 keyed PBES2 with the password as a BMPString (UTF-16BE + 00 00) instead of
    /// UTF-8: NSS's TestOldCA.p12 opens with the password typed, as in NSS (openssl and pyca fail).
    func testPBES2KeyedWithABMPStringPasswordIsReadLikeNSSReadsIt() throws {
        let bytes = try T.bytes("third-party/pkcs12/nss/TestOldCA.p12")
        let bundle = try PKCS12Bundle(derBytes: bytes, password: "nss")
        let leaf = try XCTUnwrap(bundle.leaf?.certificate)
        XCTAssertTrue(leaf.subject.contains("NSS Test Old CA"), leaf.subject)
        XCTAssertTrue(bundle.privateKey?.matches(leaf) ?? false)
        XCTAssertTrue(bundle.inspection.pbes2PasswordIsBMPString)
        XCTAssertFalse(bundle.inspection.compatibility.openSSL3WithLegacy, "OpenSSL cannot open it")
        XCTAssertFalse(try PKCS12Bundle(derBytes: try T.bytes(rfcA1), password: "1234").inspection.pbes2PasswordIsBMPString)
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: bytes, password: "NSS") }
        func hex(_ secret: Secret) -> String { secret.withUnsafeBytes { Array($0) }.hex }
        XCTAssertEqual(hex(PKCS12Bundle.SafeReader.bmpString(Secret("nss"), terminated: true)), "006e007300730000")
        XCTAssertEqual(hex(PKCS12Bundle.SafeReader.bmpString(Secret("é🔑"), terminated: false)), "00e9d83ddd11")
    }

    /// A MAC over MD4 (`openssl pkcs12 -export -legacy -macalg md4`, as Red Hat's keyfile corpus
    /// has one) is computed with the legacy provider, as `openssl pkcs12 -legacy` and pyca do:
    /// it was "an algorithm this OpenSSL cannot use". A wrong password is still a password problem.
    func testAMACOverALegacyDigestIsVerifiedWithTheLegacyProvider() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-md4-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("md4.p12").path
        _ = try OpenSSLCLI.run([
            "pkcs12", "-export", "-legacy", "-macalg", "md4", "-inkey", T.url("client-alice.key").path, "-in", T.url("client-alice.pem").path,
            "-passout", "pass:md4 test", "-out", out,
        ])
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: out).map { Array($0) })
        let bundle = try PKCS12Bundle(derBytes: bytes, password: "md4 test")
        XCTAssertEqual(bundle.inspection.mac?.digest, "md4")
        XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: bytes, password: "md5 test") }
    }

    /// OpenSSL 3.0's PBE table lacks the PBKDF2 PRFs HMAC-SHA3-* and HMAC-SHA-512/224, /256 (3.2
    /// added them; pyca reads such files). They are added before the first read.
    func testPBKDF2PRFsMissingFromOpenSSL30AreKnownAfterTheFirstRead() throws {
        _ = try PKCS12Bundle(derBytes: try T.bytes(rfcA1), password: "1234")
        for nid in [NID_hmac_sha3_224, NID_hmac_sha3_256, NID_hmac_sha3_384, NID_hmac_sha3_512, NID_hmacWithSHA512_224, NID_hmacWithSHA512_256] {
            var digest: Int32 = 0
            XCTAssertEqual(EVP_PBE_find(EVP_PBE_TYPE_PRF, nid, nil, &digest, nil), 1, "PRF \(nid)")
            XCTAssertNotEqual(digest, NID_undef)
        }
    }

    /// Files this OpenSSL cannot decrypt or decode are refused naming why: NSS 3.29.5's PBKDF2 key
    /// length that is not AES-128's, GOST and ML-KEM keys, a GOST MAC.
    func testKeysAndParametersThisOpenSSLCannotUseAreNamed() throws {
        let cases: [(file: String, password: String, phrase: String)] = [
            ("nss/TestOldAES128CA.p12", "nss", "asks PBKDF2 for a 32-byte key for AES-128-CBC, whose key is 16 bytes"),
            ("nss/openssl-ml-kem-768-both.p12", "test", "the private key's algorithm (2.16.840.1.101.3.4.4.2) is not one this OpenSSL can use"),
            ("bouncycastle/bc-gostOpenSSLIntegerDPfx.p12", "password", "the private key's algorithm (gost2001) is not one this OpenSSL can use"),
            ("bouncycastle/bc-gostPfx.p12", "1", "digest this OpenSSL cannot compute"),
        ]
        for (file, password, phrase) in cases {
            let bytes = try T.bytes("third-party/pkcs12/\(file)")
            let error = assertThrowsMTLSError(.unsupportedAlgorithm, file) { try PKCS12Bundle(derBytes: bytes, password: Secret(password)) }
            XCTAssertTrue(error?.message.contains(phrase) ?? false, "\(file): \(error?.message ?? "no error")")
        }
        let jks = try T.bytes("third-party/pkcs12/bouncycastle/bc-JKS_Store.jks")
        let error = assertThrowsMTLSError(.wrongObjectKind) { try PKCS12Bundle(derBytes: jks, password: "jkstest") }
        XCTAssertTrue(error?.message.contains("it is a Java KeyStore (JKS), not a PKCS#12 file") ?? false, error?.message ?? "")
    }

    // MARK: BER, passwords

    func testBERIndefiniteLengthFilesAreRead() throws {
        for file in ["boringssl/nss.p12", "boringssl/empty_password_ber.p12"] {
            let bytes = try T.bytes("third-party/pkcs12/\(file)")
            // nss.p12 is indefinite-length from its first byte; the other one inside.
            if file.contains("nss") { XCTAssertEqual(Array(bytes.prefix(2)), [0x30, 0x80], file) }
            XCTAssertEqual(DER.shape(of: bytes), .pkcs12, file)
            let bundle = try PKCS12Bundle(derBytes: bytes, password: file.contains("empty") ? "" : "foo")
            XCTAssertNotNil(bundle.leaf, file)
            XCTAssertNotNil(bundle.privateKey, file)
        }
    }

    func testNullAndEmptyPasswordsAreBothTriedAndUnicodePasswordsAreUTF8() throws {
        for file in ["boringssl/null_password.p12", "boringssl/empty_password.p12"] {
            let bytes = try T.bytes("third-party/pkcs12/\(file)")
            XCTAssertNotNil(try PKCS12Bundle(derBytes: bytes, password: nil).privateKey, file)
            XCTAssertNotNil(try PKCS12Bundle(derBytes: bytes, password: "").privateKey, file)
            assertThrowsMTLSError(.wrongPassword, file) { try PKCS12Bundle(derBytes: bytes, password: "foo") }
        }
        let unicode = try T.bytes("third-party/pkcs12/boringssl/unicode_password.p12")
        XCTAssertNotNil(try PKCS12Bundle(derBytes: unicode, password: Secret("Hello, 世界")).privateKey)
        assertThrowsMTLSError(.passwordRequired) { try PKCS12Bundle(derBytes: unicode, password: nil) }
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: unicode, password: "Hello, ??") }
    }

    /// OpenSSL before 1.1.0 took each byte of a password as one character. Such a file (made here
    /// by giving today's OpenSSL the UTF-8 of that reading) opens with the password the user typed.
    func testPre110OpenSSLFilesWithNonASCIIPasswordsOpenWithTheTypedPassword() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-latin1-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("old.p12").path
        let typed = "pässwörd"
        let oldReading = String(typed.utf8.map { Character(Unicode.Scalar($0)) })  // "pÃ¤sswÃ¶rd"
        _ = try OpenSSLCLI.run([
            "pkcs12", "-export", "-inkey", T.url("client-alice.key").path, "-in", T.url("client-alice.pem").path, "-passout", "pass:\(oldReading)", "-out", out,
        ])
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: out).map { Array($0) })
        XCTAssertNotNil(try PKCS12Bundle(derBytes: bytes, password: Secret(typed)).privateKey)
        assertThrowsMTLSError(.wrongPassword) { try PKCS12Bundle(derBytes: bytes, password: Secret("passwort")) }
    }

    // MARK: What the file holds

    func testSeveralIdentitiesAreAllKeptAndRepeatsCountedOnce() throws {
        // alice and bob, alice's bags twice (made by scripts/make-pkcs12-two-identities.py).
        let bundle = try PKCS12Bundle(derBytes: try T.bytes("p12/two-identities.p12"), password: nil)
        XCTAssertEqual(bundle.identities.count, 2)
        XCTAssertEqual(bundle.identities.map(\.friendlyName), ["alice", "bob"])
        XCTAssertEqual(bundle.identities[0].certificate?.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(bundle.identities[1].certificate?.certificate, try T.certificate(T.clientBobRSA))
        XCTAssertTrue(bundle.identities.allSatisfy { identity in identity.certificate.map { identity.privateKey.matches($0.certificate) } ?? false })
        XCTAssertEqual(bundle.duplicatesRemoved, 2, "alice's certificate and key appear twice")
        XCTAssertEqual(bundle.certificates.count, 2)
        XCTAssertEqual(bundle.chain.count, 0)
        XCTAssertEqual(try bundle.identity(named: "bob").certificate?.certificate, try T.certificate(T.clientBobRSA))
        XCTAssertEqual(try bundle.identity(index: 2).friendlyName, "bob")
        assertThrowsMTLSError(.invalidArgument) { try bundle.identity(named: "carol") }
        assertThrowsMTLSError(.invalidArgument) { try bundle.identity(index: 3) }
    }

    func testKeyOnlyAndCertificateOnlyFilesHoldWhatTheyHold() throws {
        let keyOnly = try PKCS12Bundle(derBytes: try T.bytes("third-party/pkcs12/pyca/no-cert-key-aes256cbc.p12"), password: "cryptography")
        XCTAssertEqual(keyOnly.identities.count, 1)
        XCTAssertNil(keyOnly.identities[0].certificate)
        XCTAssertTrue(keyOnly.certificates.isEmpty)
        let truststore = try PKCS12Bundle(derBytes: try T.bytes("third-party/pkcs12/pyca/java-truststore.p12"), password: nil)
        XCTAssertTrue(truststore.identities.isEmpty)
        XCTAssertFalse(truststore.certificates.isEmpty)
        XCTAssertEqual(truststore.chain.count, truststore.certificates.count)
    }

    // MARK: Truncated vs damaged

    func testEveryCutOfADEROrBERFileIsTruncatedAndAStructuralErrorIsDamaged() throws {
        for file in ["third-party/pkcs12/boringssl/nss.p12", "third-party/pkcs12/golang/go-testing-example-com.p12", rfcA1] {
            let bytes = try T.bytes(file)
            for length in stride(from: 7, to: bytes.count, by: 97) {
                assertThrowsMTLSError(.truncatedInput, "\(file) cut at \(length)") { try PKCS12Bundle(derBytes: Array(bytes.prefix(length)), password: "foo") }
            }
        }
        let nested = try T.bytes("third-party/pkcs12/boringssl/empty_password_ber_nested.p12")
        assertThrowsMTLSError(.corruptInput) { try PKCS12Bundle(derBytes: nested, password: "") }
    }
}

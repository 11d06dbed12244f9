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

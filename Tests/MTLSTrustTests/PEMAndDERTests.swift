import Foundation
import XCTest

@testable import MTLSTrust

/// `PEM` and `DER`: block parsing and writing, and the outer-structure reader.
final class PEMAndDERTests: XCTestCase {
    typealias T = TestCertificates

    // MARK: PEM parsing

    func testEveryBlockOfABundleIsParsedWithItsLabelAndBytes() throws {
        let blocks = try PEM.parse(T.bytes(T.serverFullChain))
        XCTAssertEqual(blocks.map(\.label), ["CERTIFICATE", "CERTIFICATE", "CERTIFICATE"])
        XCTAssertEqual(blocks.map(\.derBytes), [try T.bytes(T.server.der), try T.bytes(T.intermediateCA.der), try T.bytes(T.rootCA.der)])
        XCTAssertTrue(blocks.allSatisfy { $0.headers.isEmpty && !$0.isTraditionallyEncrypted })
    }

    func testBlockTextIsTheOriginalBlockFromBeginToEnd() throws {
        let pem = try T.bytes(T.server.pem)
        let block = try XCTUnwrap(PEM.parse(pem).first)
        XCTAssertEqual(block.text, String(decoding: pem, as: UTF8.self))
    }

    func testTextBetweenBeforeAndAfterBlocksIsIgnored() throws {
        let blocks = try PEM.parse(T.bytes(T.bundleWithText))
        XCTAssertEqual(blocks.count, 3)
        XCTAssertEqual(blocks[1].derBytes, try T.bytes(T.intermediateCA.der))

        let padded = "leading words\n\n" + String(decoding: try T.bytes(T.server.pem), as: UTF8.self) + "trailing words\n"
        XCTAssertEqual(try PEM.parse(Array(padded.utf8)).map(\.derBytes), [try T.bytes(T.server.der)])
    }

    func testDifferentKindsOfBlocksAreKeptApart() throws {
        let mixed = try T.bytes(T.Keys.ecP256PKCS8) + T.bytes(T.server.pem) + T.bytes(T.intermediateCRL) + T.bytes(T.Keys.ecP256Public)
        XCTAssertEqual(try PEM.parse(mixed).map(\.label), ["PRIVATE KEY", "CERTIFICATE", "X509 CRL", "PUBLIC KEY"])
        XCTAssertEqual(try PEM.parse(T.bytes(T.Keys.backupCSR)).map(\.label), ["CERTIFICATE REQUEST"])
        XCTAssertEqual(try PEM.parse(T.bytes(T.Keys.rsaPKCS1PEM)).map(\.label), ["RSA PRIVATE KEY"])
        XCTAssertEqual(try PEM.parse(T.bytes(T.Keys.ecP256SEC1)).map(\.label), ["EC PRIVATE KEY"])
        XCTAssertEqual(try PEM.parse(T.bytes(T.Keys.rsaPKCS8Encrypted)).map(\.label), ["ENCRYPTED PRIVATE KEY"])
    }

    func testTraditionalEncryptionHeadersAreReadAndSeparatedFromTheBody() throws {
        let block = try XCTUnwrap(PEM.parse(T.bytes(T.Keys.rsaTraditionalEncrypted)).first)
        XCTAssertEqual(block.label, "RSA PRIVATE KEY")
        XCTAssertTrue(block.isTraditionallyEncrypted)
        XCTAssertEqual(block.headers.map(\.0), ["Proc-Type", "DEK-Info"])
        XCTAssertEqual(block.headers.first?.1, "4,ENCRYPTED")
        XCTAssertTrue(block.headers.last?.1.hasPrefix("AES-128-CBC,") ?? false)
        // The body is the ciphertext (a multiple of the AES block size), not the headers.
        XCTAssertEqual(block.derBytes.count % 16, 0)
        XCTAssertTrue(block.text.contains("Proc-Type: 4,ENCRYPTED\nDEK-Info: "))
    }

    func testWindowsLineEndingsAndIndentationAreAccepted() throws {
        let original = String(decoding: try T.bytes(T.serverChain), as: UTF8.self)
        let crlf = original.replacingOccurrences(of: "\n", with: "\r\n")
        XCTAssertEqual(try PEM.parse(Array(crlf.utf8)).map(\.derBytes), try PEM.parse(Array(original.utf8)).map(\.derBytes))
        let indented = original.split(separator: "\n").map { "  \($0)  " }.joined(separator: "\n")
        XCTAssertEqual(try PEM.parse(Array(indented.utf8)).map(\.derBytes), try PEM.parse(Array(original.utf8)).map(\.derBytes))
    }

    func testBase64WrappedAtAnyWidthIsAccepted() throws {
        let der = try T.bytes(T.server.der)
        let base64 = Data(der).base64EncodedString()
        var wrapped = "-----BEGIN CERTIFICATE-----\n"
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 76, limitedBy: base64.endIndex) ?? base64.endIndex
            wrapped += base64[index..<end] + "\n"
            index = end
        }
        wrapped += "-----END CERTIFICATE-----\n"
        XCTAssertEqual(try PEM.parse(Array(wrapped.utf8)).first?.derBytes, der)
        let oneLine = "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----"
        XCTAssertEqual(try PEM.parse(Array(oneLine.utf8)).first?.derBytes, der, "no final newline is fine")
    }

    func testInputWithoutAnyBlockYieldsNoBlocks() throws {
        XCTAssertEqual(try PEM.parse([]), [])
        XCTAssertEqual(try PEM.parse(T.bytes(T.Bad.notACert)), [])
        XCTAssertEqual(try PEM.parse(T.bytes(T.Bad.garbage)), [])
        XCTAssertEqual(try PEM.parse(T.bytes(T.server.der)), [])
    }

    func testDamagedBase64IsMalformedAndNamesTheBlock() throws {
        let good = try T.bytes(T.server.pem)
        let error = assertThrowsMTLSError(.malformedInput) { try PEM.parse(good + T.bytes(T.Bad.brokenBase64)) }
        XCTAssertTrue(error?.message.contains("PEM block 2 (CERTIFICATE)") ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("base64") ?? false, error?.message ?? "")
    }

    func testABlockWithoutItsEndLineIsMalformed() throws {
        let lines = String(decoding: try T.bytes(T.server.pem), as: UTF8.self).split(separator: "\n")
        let cut = lines.dropLast().joined(separator: "\n") + "\n"
        let error = assertThrowsMTLSError(.malformedInput) { try PEM.parse(Array(cut.utf8)) }
        XCTAssertTrue(error?.message.contains("END line is missing") ?? false, error?.message ?? "")

        let interleaved = cut + String(decoding: try T.bytes(T.rootCA.pem), as: UTF8.self)
        let second = assertThrowsMTLSError(.malformedInput) { try PEM.parse(Array(interleaved.utf8)) }
        XCTAssertTrue(second?.message.contains("before the next BEGIN") ?? false, second?.message ?? "")
    }

    func testAnEndLineWithAnotherLabelDoesNotCloseTheBlock() {
        let text = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END X509 CRL-----\n"
        assertThrowsMTLSError(.malformedInput) { try PEM.parse(Array(text.utf8)) }
    }

    func testAnEmptyBlockIsMalformed() {
        let text = "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"
        assertThrowsMTLSError(.malformedInput) { try PEM.parse(Array(text.utf8)) }
    }

    func testLooksLikePEMFindsTheMarkerAnywhereButNotInBinary() throws {
        XCTAssertTrue(PEM.looksLikePEM(try T.bytes(T.server.pem)))
        XCTAssertTrue(PEM.looksLikePEM(try T.bytes(T.bundleWithText)))
        XCTAssertFalse(PEM.looksLikePEM(try T.bytes(T.server.der)))
        XCTAssertFalse(PEM.looksLikePEM(try T.bytes(T.Bad.garbage)))
        XCTAssertFalse(PEM.looksLikePEM(try T.bytes(T.Bad.notACert)))
        XCTAssertFalse(PEM.looksLikePEM([]))
        XCTAssertFalse(PEM.looksLikePEM(Array("-----BEGIN".utf8)))
        // A bundle preceded by more than a megabyte of comments is still PEM.
        let padded = [UInt8](repeating: 0x23, count: 2 << 20) + [0x0A] + (try T.bytes(T.server.pem))
        XCTAssertTrue(PEM.looksLikePEM(padded))
        XCTAssertEqual(try Certificate.fromPEM(padded), [try T.certificate(T.server)])
    }

    // MARK: PEM writing

    func testEncodingWritesSixtyFourColumnLinesExactlyAsOpenSSLDoes() throws {
        for identity in [T.server, T.serverRSA4096, T.serverEd25519, T.rootCA] {
            let der = try T.bytes(identity.der)
            XCTAssertEqual(Array(PEM.encode(der, label: "CERTIFICATE").utf8), try T.bytes(identity.pem), "\(identity)")
        }
        let encoded = PEM.encode([UInt8](repeating: 7, count: 100), label: "TEST")
        let lines = encoded.split(separator: "\n")
        XCTAssertEqual(lines.first, "-----BEGIN TEST-----")
        XCTAssertEqual(lines.last, "-----END TEST-----")
        XCTAssertEqual(lines[1].count, 64)
        XCTAssertTrue(encoded.hasSuffix("-----\n"))
    }

    func testEncodingAndParsingRoundTripForEveryLength() throws {
        for length in [1, 2, 3, 47, 48, 49, 95, 96, 97, 1000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            let blocks = try PEM.parse(Array(PEM.encode(bytes, label: "DATA").utf8))
            XCTAssertEqual(blocks.count, 1)
            XCTAssertEqual(blocks.first?.derBytes, bytes, "length \(length)")
            XCTAssertEqual(blocks.first?.label, "DATA")
        }
    }

    func testPublicKeyPEMEqualsTheFixtureFile() throws {
        let block = try XCTUnwrap(PEM.parse(T.bytes(T.Keys.ecP256Public)).first)
        XCTAssertEqual(try PublicKey(spkiDER: block.derBytes).pemString, String(decoding: try T.bytes(T.Keys.ecP256Public), as: UTF8.self))
    }

    // MARK: DER

    func testElementReadsShortAndLongFormLengths() {
        XCTAssertEqual(DER.element(in: [0x04, 0x02, 0xAA, 0xBB], at: 0), DER.Element(tag: 0x04, headerStart: 0, contentStart: 2, contentEnd: 4))
        let long = [0x30, 0x81, 0x80] + [UInt8](repeating: 0, count: 0x80)
        XCTAssertEqual(DER.element(in: long, at: 0)?.contentStart, 3)
        XCTAssertEqual(DER.element(in: long, at: 0)?.end, 0x83)
        let twoBytes = [0x30, 0x82, 0x01, 0x00] + [UInt8](repeating: 0, count: 0x100)
        XCTAssertEqual(DER.element(in: twoBytes, at: 0)?.end, 0x104)
    }

    func testElementRefusesTruncatedIndefiniteAndNonMinimalLengths() {
        XCTAssertNil(DER.element(in: [0x30], at: 0), "no length byte")
        XCTAssertNil(DER.element(in: [0x30, 0x05, 0x00], at: 0), "content runs past the end")
        XCTAssertNil(DER.element(in: [0x30, 0x80, 0x00, 0x00], at: 0), "indefinite length")
        XCTAssertNil(DER.element(in: [0x30, 0x81, 0x05, 0, 0, 0, 0, 0], at: 0), "short length written long")
        XCTAssertNil(DER.element(in: [0x30, 0x82, 0x00, 0x80] + [UInt8](repeating: 0, count: 0x80), at: 0), "leading zero length byte")
        XCTAssertNil(DER.element(in: [0x30, 0x85, 1, 0, 0, 0, 0], at: 0), "five length bytes")
        XCTAssertNil(DER.element(in: [0x1F, 0x01, 0x00], at: 0), "high tag number")
        XCTAssertNil(DER.element(in: [0x04, 0x02, 0xAA, 0xBB], at: 0, limit: 3), "runs past the limit")
    }

    func testSubjectPublicKeyInfoRangeIsFoundInEveryCertificate() throws {
        for identity in T.allIdentities {
            let der = try T.bytes(identity.der)
            let range = try XCTUnwrap(DER.subjectPublicKeyInfoRange(inCertificate: der), "\(identity)")
            XCTAssertEqual(Array(der[range]), try T.certificate(identity).publicKey.spkiDER, "\(identity)")
        }
        XCTAssertNil(DER.subjectPublicKeyInfoRange(inCertificate: try T.bytes(T.Bad.truncatedDER)))
        XCTAssertNil(DER.subjectPublicKeyInfoRange(inCertificate: try T.bytes(T.server.der) + [0]), "trailing data")
        XCTAssertNil(DER.subjectPublicKeyInfoRange(inCertificate: try T.bytes(T.Keys.rsaPKCS8DER)))
    }

    func testShapeTellsEveryFixtureKindApart() throws {
        func der(ofPEM path: String) throws -> [UInt8] { try XCTUnwrap(PEM.parse(T.bytes(path)).first).derBytes }
        for identity in T.allIdentities {
            XCTAssertEqual(DER.shape(of: try T.bytes(identity.der)), .certificate, "\(identity)")
        }
        XCTAssertEqual(DER.shape(of: try T.bytes(T.serverCER)), .certificate)
        for path in T.P12.allWithPassword + [T.P12.noPassword, T.P12.emptyPassword, T.Bad.corruptMAC] {
            XCTAssertEqual(DER.shape(of: try T.bytes(path)), .pkcs12, path)
        }
        XCTAssertEqual(DER.shape(of: try T.bytes(T.Keys.rsaPKCS1DER)), .privateKey)
        XCTAssertEqual(DER.shape(of: try T.bytes(T.Keys.rsaPKCS8DER)), .privateKey)
        XCTAssertEqual(DER.shape(of: try T.bytes(T.Keys.ecP256DER)), .privateKey)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.Keys.ecP256SEC1)), .privateKey)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.Keys.ed25519PKCS8)), .privateKey)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.Keys.rsaPKCS8Encrypted)), .encryptedPrivateKey)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.Keys.rsaPublic)), .publicKey)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.Keys.ecP256Public)), .publicKey)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.intermediateCRL)), .crl)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.rootCRL)), .crl)
        XCTAssertEqual(DER.shape(of: try der(ofPEM: T.Keys.backupCSR)), .unknown, "a CSR is not a certificate")
        XCTAssertEqual(DER.shape(of: try T.bytes(T.Bad.truncatedDER)), .unknown)
        // A PFX is known by its header, so that a truncated one reaches the PKCS#12 reader (which says "truncated").
        XCTAssertEqual(DER.shape(of: try T.bytes(T.Bad.truncatedP12)), .pkcs12)
        XCTAssertEqual(DER.shape(of: [0x30, 0x80, 0x02, 0x01, 0x03, 0x30, 0x80]), .pkcs12, "BER, indefinite length")
        XCTAssertEqual(DER.shape(of: [0x30, 0x82, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30]), .unknown, "version 0 is not a PFX")
        XCTAssertEqual(DER.shape(of: try T.bytes(T.Bad.garbage)), .unknown)
        XCTAssertEqual(DER.shape(of: try T.bytes(T.server.pem)), .unknown)
        XCTAssertEqual(DER.shape(of: []), .unknown)
    }

    func testShapeRecognisesAVersionOneCertificate() throws {
        let directory = try T.temporaryDirectory(for: self)
        let out = directory.appendingPathComponent("v1.der").path
        // `openssl x509 -req` without extensions writes a v1 certificate.
        let csr = directory.appendingPathComponent("req.pem").path
        try OpenSSLCLI.run(["req", "-new", "-key", T.url(T.server.key).path, "-subj", "/CN=v1", "-out", csr])
        try OpenSSLCLI.run(["x509", "-req", "-in", csr, "-key", T.url(T.server.key).path, "-days", "1", "-outform", "DER", "-out", out])
        let der = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: out)))
        let certificate = try Certificate(derBytes: der)
        XCTAssertEqual(certificate.version, 1)
        XCTAssertEqual(DER.shape(of: der), .certificate)
        XCTAssertNil(certificate.basicConstraints)
        XCTAssertNil(certificate.keyUsage)
        XCTAssertNil(certificate.extendedKeyUsage)
        XCTAssertEqual(certificate.subjectAlternativeNames, [])
        XCTAssertEqual(certificate.subjectPublicKeyInfoDER, try T.certificate(T.server).subjectPublicKeyInfoDER)
    }
}

final class CertificateIdentityTests: XCTestCase {
    func testTheSameCertificateFromPEMAndDERIsOneSetMemberAndDifferentOnesAreNot() throws {
        // Certificate hashes its length and signature only; equality still compares every byte.
        let names = ["root-ca", "intermediate-ca", "client-alice", "client-bob-rsa", "client-other", "other-root-ca"]
        var set = Set<Certificate>()
        for name in names {
            set.insert(try CertificateLoader.certificates(atPath: TestCertificates.url("\(name).pem").path)[0])
            set.insert(try Certificate(derBytes: try TestCertificates.bytes("\(name).der")))
        }
        XCTAssertEqual(set.count, names.count, "PEM and DER of one certificate are one member")
        let alice = try Certificate(derBytes: try TestCertificates.bytes("client-alice.der"))
        XCTAssertTrue(set.contains(alice))
        XCTAssertEqual(alice.hashValue, try CertificateLoader.certificates(atPath: TestCertificates.url("client-alice.pem").path)[0].hashValue)
        XCTAssertFalse(set.contains(try Certificate(derBytes: try TestCertificates.bytes("client-alice-expired.der"))), "same subject and key, another certificate")
    }
}

final class ReadFileTests: XCTestCase {
    func testFilesPipesAndFailuresAreReadOrNamed() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-read-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Every size around the first read's boundaries reads back byte for byte.
        for size in [0, 1, 4095, 4096, 65535, 65536, 65537, 300_000] {
            let file = directory.appendingPathComponent("f\(size)")
            let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try Data(content).write(to: file)
            XCTAssertEqual(try CertificateLoader.readFile(file.path), content, "size \(size)")
        }
        // The size limit, for files and for what is not a regular file (/dev/zero never ends).
        let big = directory.appendingPathComponent("big")
        try Data(repeating: 7, count: 2 << 20).write(to: big)
        for path in [big.path, "/dev/zero"] {
            XCTAssertThrowsError(try CertificateLoader.readFile(path, maximumSize: 1 << 20)) { error in
                XCTAssertEqual((error as? MTLSTrustError)?.reason, .malformedInput, path)
                XCTAssertTrue("\(error)".contains("larger than 1 MiB"), "\(error)")
            }
        }
        XCTAssertEqual(try CertificateLoader.readFile(big.path, maximumSize: 2 << 20).count, 2 << 20, "exactly the limit is allowed")
        // A pipe (what `<(cat file)` gives) is read to its end.
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let piped = [UInt8](repeating: 0x42, count: 200_000)
        let writeEnd = ends[1]
        let writer = Thread {
            piped.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(writeEnd, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        XCTAssertEqual(try CertificateLoader.readFile("/proc/self/fd/\(ends[0])"), piped)
        close(ends[0])
        // Failures name the file and say why.
        let cases: [(String, String)] = [
            (directory.appendingPathComponent("missing").path, "no such file"),
            (directory.appendingPathComponent("f1/below-a-file").path, "no such file"),
            (directory.path, "is a directory"),
        ]
        for (path, fragment) in cases {
            XCTAssertThrowsError(try CertificateLoader.readFile(path)) { error in
                XCTAssertEqual((error as? MTLSTrustError)?.reason, .unreadableFile, path)
                XCTAssertTrue("\(error)".contains(path) && "\(error)".contains(fragment), "\(error)")
            }
        }
    }
}

final class PEMBlockLocationTests: XCTestCase {
    func testLocationsAgreeWithTheParserOnEveryPEMFixture() throws {
        let root = TestCertificates.directory
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)!.compactMap { $0 as? URL }
            .filter { $0.pathExtension == "pem" || $0.pathExtension == "key" }
        XCTAssertGreaterThan(files.count, 20)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            guard let blocks = try? PEM.parse(bytes) else { continue }
            let located = PEM.blockLocations(in: bytes)
            XCTAssertEqual(located.map(\.label), blocks.map(\.label), file.lastPathComponent)
            XCTAssertEqual(located.map(\.isTraditionallyEncrypted), blocks.map(\.isTraditionallyEncrypted), file.lastPathComponent)
            for (location, block) in zip(located, blocks) {
                // `text` always ends with a line break; a file may end without one after its END line.
                let atEOFWithoutBreak = location.range.upperBound == bytes.count && bytes.last != 0x0A
                XCTAssertEqual(
                    String(decoding: bytes[location.range], as: UTF8.self) + (atEOFWithoutBreak ? "\n" : ""), block.text,
                    "\(file.lastPathComponent): the range is the block's text")
            }
        }
    }

    func testIncompleteBlocksCRLFIndentationAndHeadersAreHandled() throws {
        let key = try TestCertificates.bytes("keys/rsa-traditional-encrypted.pem")
        let located = PEM.blockLocations(in: key)
        XCTAssertEqual(located.map(\.label), ["RSA PRIVATE KEY"])
        XCTAssertEqual(located.first?.isTraditionallyEncrypted, true, "Proc-Type: 4,ENCRYPTED")
        // CRLF line ends and indentation: found, the range from the BEGIN marker over the original bytes.
        let crlf = Array("junk\r\n  -----BEGIN PRIVATE KEY-----\r\n  QUJD\r\n  -----END PRIVATE KEY-----  \r\ntail".utf8)
        let found = PEM.blockLocations(in: crlf)
        XCTAssertEqual(found.map(\.label), ["PRIVATE KEY"])
        XCTAssertEqual(found.first.map { String(decoding: crlf[$0.range], as: UTF8.self) }, "-----BEGIN PRIVATE KEY-----\r\n  QUJD\r\n  -----END PRIVATE KEY-----  \r\n")
        // A block without its END line, or cut by another BEGIN, is not listed.
        XCTAssertEqual(PEM.blockLocations(in: Array("-----BEGIN PRIVATE KEY-----\nQUJD\n".utf8)).count, 0)
        let cut = Array("-----BEGIN PRIVATE KEY-----\nQUJD\n-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n".utf8)
        XCTAssertEqual(PEM.blockLocations(in: cut).map(\.label), ["CERTIFICATE"])
        XCTAssertEqual(PEM.blockLocations(in: Array("no pem here".utf8)).count, 0)
        XCTAssertEqual(PEM.blockLocations(in: []).count, 0)
    }

    func testParsingKeepsKeyBlocksInPlaceAndOtherwiseMatchesTheParser() throws {
        let key = try TestCertificates.bytes("keys/ec-p256-pkcs8.pem")
        let certificate = try TestCertificates.bytes("client-alice.pem")
        let mixed = certificate + key + Array("text between\n".utf8) + certificate
        let elements = try PEM.parseKeepingKeysInPlace(mixed)
        XCTAssertEqual(elements.count, 3)
        guard elements.count == 3, case .parsed(let first) = elements[0], case .privateKey(let location) = elements[1], case .parsed(let last) = elements[2] else {
            return XCTFail("certificate, key in place, certificate: \(elements)")
        }
        XCTAssertEqual(first, try PEM.parse(certificate)[0])
        XCTAssertEqual(last, first)
        XCTAssertEqual(Array(mixed[location.range]), key, "the key block's own bytes")
        XCTAssertEqual(PEM.occurrences(of: "-----BEGIN ", in: mixed), 3)
        // Without a key it is the parser; a damaged block gets the parser's error, naming it by number.
        XCTAssertEqual(try PEM.parseKeepingKeysInPlace(certificate).count, 1)
        let damaged = key + Array("-----BEGIN CERTIFICATE-----\nQUJD\n".utf8)
        XCTAssertThrowsError(try PEM.parseKeepingKeysInPlace(damaged)) { error in
            XCTAssertEqual((error as? MTLSTrustError)?.reason, .malformedInput)
            XCTAssertTrue("\(error)".contains("block 2"), "\(error)")
        }
    }

    func testAnIndentedKeyStillLoadsThroughTheParsersNormalisedCopy() throws {
        // OpenSSL cannot read the block where it stands when its lines are indented; the parser's
        // trimmed copy is tried then, as before.
        let text = String(decoding: try TestCertificates.bytes("keys/ec-p256-pkcs8.pem"), as: UTF8.self)
        let indented = text.split(separator: "\n").map { "    " + $0 }.joined(separator: "\r\n") + "\r\n"
        let key = try PrivateKey(bytes: Array(indented.utf8))
        XCTAssertEqual(key.sourceFormat, .pkcs8)
        XCTAssertEqual(key.publicKey.spkiDER, try PrivateKey(bytes: TestCertificates.bytes("keys/ec-p256-pkcs8.pem")).publicKey.spkiDER)
    }
}

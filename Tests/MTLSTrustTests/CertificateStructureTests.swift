import COpenSSL
import Foundation
import XCTest

@testable import MTLSTrust

/// The one certificate walk (``CertificateStructure``) against OpenSSL's decode: the facts the Swift
/// policies judge (``CertificateFacts``) and the strict layout (``CertificateLayout``) must read what
/// `d2i_X509` reads, on every fixture and on mutated certificates.
final class CertificateStructureTests: XCTestCase {
    private func fixtureCertificates() throws -> [(String, Certificate)] {
        var result: [(String, Certificate)] = []
        let files = FileManager.default.enumerator(atPath: TestCertificates.directory.path)?.compactMap { $0 as? String } ?? []
        for name in files.sorted() where name.hasSuffix(".pem") || name.hasSuffix(".der") || name.hasSuffix(".cer") || name.hasSuffix(".crt") {
            guard let loaded = try? CertificateLoader.certificates(from: try TestCertificates.bytes(name), source: name) else { continue }
            for (index, certificate) in loaded.certificates.enumerated() { result.append(("\(name)#\(index)", certificate)) }
        }
        return result
    }

    func testTheWalkReadsWhatOpenSSLReadsOnEveryFixture() throws {
        let certificates = try fixtureCertificates()
        XCTAssertGreaterThan(certificates.count, 200, "the fixtures should give a few hundred certificates")
        var withExtensions = 0
        var versionOne = 0
        for (label, certificate) in certificates {
            let facts = CertificateFacts(certificate)
            XCTAssertEqual(facts.differences(from: certificate.reference.pointer), [], label)
            if !facts.extensions.isEmpty { withExtensions += 1 }
            if facts.version == 0 { versionOne += 1 }
            // Where the strict layout reads the certificate too, it reads the same fields.
            guard let layout = CertificateLayout(certificate.derBytes) else { continue }
            XCTAssertEqual(Array(certificate.derBytes[layout.issuer]), facts.issuerDER, label)
            XCTAssertEqual(Array(certificate.derBytes[layout.subject]), facts.subjectDER, label)
            XCTAssertEqual(Date(timeIntervalSince1970: TimeInterval(layout.notBefore)), certificate.notBefore, label)
            XCTAssertEqual(Date(timeIntervalSince1970: TimeInterval(layout.notAfter)), certificate.notAfter, label)
            XCTAssertEqual(layout.extensions.map(\.critical), facts.extensions.map(\.critical), label)
            XCTAssertEqual(Array(certificate.derBytes[layout.subjectPublicKeyInfo]), opensslSPKI(certificate), label)
        }
        XCTAssertGreaterThan(withExtensions, 100, "v3 certificates with extensions")
        XCTAssertGreaterThan(versionOne, 0, "a v1 certificate (no version field) is among the fixtures")
    }

    /// `i2d_X509_PUBKEY` of the decoded key: what the walk's SubjectPublicKeyInfo range must hold.
    private func opensslSPKI(_ certificate: Certificate) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate.reference.pointer), &out)
        guard length > 0, let out else { return [] }
        defer { CRYPTO_free(out, #filePath, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    func testMutatedCertificatesOpenSSLAcceptsAreReadAlike() throws {
        var compared = 0
        var declined = 0
        for (iteration, bytes) in try MutatedCertificates(seed: 0x7374_7275, count: 3_000).enumerated() {
            guard let certificate = try? Certificate(derBytes: bytes) else { continue }
            let facts = CertificateFacts(certificate)
            guard facts.isReadable else {
                declined += 1  // BER OpenSSL tolerates: the policies that need the facts stay silent
                continue
            }
            compared += 1
            XCTAssertEqual(facts.differences(from: certificate.reference.pointer), [], "iteration \(iteration): \(bytes.hex)")
        }
        XCTAssertGreaterThan(compared, 100, "the mutations should leave many certificates that OpenSSL accepts")
        XCTAssertLessThan(declined, compared / 10, "the walk should decline only the rare BER forms")
    }

    func testObjectIdentifierArcsPast64BitsAreReadInFull() throws {
        // 2.5.29.(2^70 + 19): an arc that a 64-bit accumulator would wrap into basicConstraints' 19.
        let contents: [[UInt8]] = [
            [0x55, 0x1D, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x13],
            [0x55, 0x1D, 0x13],
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x01],
            [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B],
        ]
        for content in contents {
            let der = [0x06, UInt8(content.count)] + content
            let openssl = try der.withUnsafeBufferPointer { buffer -> String in
                var cursor = buffer.baseAddress
                let object = try XCTUnwrap(d2i_ASN1_OBJECT(nil, &cursor, buffer.count))
                defer { ASN1_OBJECT_free(object) }
                var text = [CChar](repeating: 0, count: 256)
                XCTAssertGreaterThan(OBJ_obj2txt(&text, Int32(text.count), object, 1), 0)
                return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            XCTAssertEqual(CertificateFacts.dotted(content), openssl, content.hex)
        }
        XCTAssertNotEqual(CertificateFacts.dotted(contents[0]), CertificateFacts.OID.basicConstraints)
    }
}

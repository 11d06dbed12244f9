import Foundation
import XCTest

@testable import MTLSTrust

/// ``CertificateSummaryReader`` (the pin path's DER walk) against the full parse: whenever the walk
/// accepts an input, `d2i_X509` must accept it too and give the same facts; whatever it does not
/// cover must come back nil so that callers take the full parse.
final class CertificateSummaryTests: XCTestCase {
    /// The facts of the full parse that a summary stands for.
    private func assertSame(_ summary: CertificateSummary, _ certificate: Certificate, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(summary.spkiSHA256, certificate.spkiSHA256, "\(label): SPKI digest", file: file, line: line)
        XCTAssertEqual(summary.subject, certificate.subject, "\(label): subject", file: file, line: line)
        XCTAssertEqual(summary.notAfter, certificate.notAfter, "\(label): notAfter", file: file, line: line)
        XCTAssertEqual(summary.isCA, certificate.basicConstraints?.isCA ?? false, "\(label): cA", file: file, line: line)
        if !summary.mayBeSelfSigned { XCTAssertFalse(certificate.isSelfSigned, "\(label): self-signed", file: file, line: line) }
    }

    func testEveryFixtureTheWalkAcceptsMatchesTheFullParse() throws {
        var accepted: Set<String> = []
        let files = FileManager.default.enumerator(atPath: TestCertificates.directory.path)?.compactMap { $0 as? String } ?? []
        for name in files where name.hasSuffix(".pem") || name.hasSuffix(".der") || name.hasSuffix(".cer") {
            let bytes = try TestCertificates.bytes(name)
            guard let summaries = CertificateSummaryReader.summaries(ofFile: bytes) else { continue }
            accepted.insert(name)
            let certificates = try CertificateLoader.certificates(from: bytes, source: name).certificates
            XCTAssertEqual(summaries.count, certificates.count, name)
            for (summary, certificate) in zip(summaries, certificates) { assertSame(summary, certificate, name) }
        }
        // The plain fixtures are covered: PEM, DER, chains, RSA, P-384 and Ed25519 keys.
        for name in ["server.pem", "server.der", "server-fullchain.pem", "server-rsa2048.pem", "server-p384.der", "server-ed25519.pem", "client-alice.pem"] {
            XCTAssertTrue(accepted.contains(name), "\(name) should take the fast path")
        }
        // Keys, CSRs, CRLs and damaged files never do.
        for name in ["keys/backup.csr", "keys/ec-p256-public.pem", "keys/rsa-pkcs8.der", "bad/broken-base64.pem", "bad/truncated.der", "bad/key-as-cert.pem", "crls.pem"] {
            XCTAssertFalse(accepted.contains(name), "\(name) must be left to the full parse")
        }
    }

    func testSubjectsAreOpenSSLsTextWhateverTheCharacters() throws {
        let key = try CertificateIssuer.generateKey()
        let now = Date()
        let root = try CertificateIssuer.issue(
            .init(role: .rootCA, commonName: "Summary Root", notBefore: now, notAfter: now.addingTimeInterval(86_400)), key: key, issuer: nil, serial: 1)
        let names = [
            "plain name", "a,b", "a+b", "q\"r", "x=y", "semi;colon", "<angle>", " leading", "trailing ", "#hash", "back\\slash",
            "Grüße", "東京", "tab\there", "*.example.com", "user@example.com", "(paren) 'quote' path/x:1",
        ]
        for (index, name) in names.enumerated() {
            let leaf = try CertificateIssuer.issue(
                .init(role: .server, commonName: name, organization: "O \(name)", dnsNames: ["x.test"], notBefore: now, notAfter: now.addingTimeInterval(86_400)),
                key: try CertificateIssuer.generateKey(), issuer: (root, key), serial: UInt64(index + 2))
            guard let summary = CertificateSummaryReader.summary(ofDER: leaf.derBytes) else {
                XCTFail("\(name): an issued certificate should take the fast path")
                continue
            }
            assertSame(summary, leaf, name)
        }
        // The self-signed root may be self-signed: only the full parse can tell.
        let rootSummary = try XCTUnwrap(CertificateSummaryReader.summary(ofDER: root.derBytes))
        XCTAssertTrue(rootSummary.mayBeSelfSigned)
        assertSame(rootSummary, root, "root")
    }

    func testMutatedCertificatesNeverMakeTheWalkDisagree() throws {
        var fastAccepted = 0
        for (iteration, bytes) in try MutatedCertificates(seed: 0x6D74_6C73, count: 3_000, truncating: true).enumerated() {
            guard let summary = CertificateSummaryReader.summary(ofDER: bytes) else { continue }
            fastAccepted += 1
            guard let certificate = try? Certificate(derBytes: bytes) else {
                XCTFail("iteration \(iteration): the walk accepted what d2i_X509 refuses: \(bytes.hex)")
                continue
            }
            assertSame(summary, certificate, "iteration \(iteration)")
        }
        XCTAssertGreaterThan(fastAccepted, 100, "the mutations should leave many certificates valid")
    }

    func testPEMOutsideThePlainFormIsLeftToTheFullParse() throws {
        let pem = try TestCertificates.bytes("server.pem")
        let text = String(decoding: pem, as: UTF8.self)
        XCTAssertEqual(CertificateSummaryReader.summaries(ofFile: pem)?.count, 1)
        XCTAssertEqual(CertificateSummaryReader.summaries(ofFile: Array(("Bag Attributes\n    friendlyName: x\n" + text).utf8))?.count, 1, "text before the block")
        XCTAssertEqual(CertificateSummaryReader.summaries(ofFile: Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8))?.count, 1, "CRLF")
        XCTAssertEqual(CertificateSummaryReader.summaries(ofFile: Array((text + text).utf8))?.count, 2, "two blocks")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let blankInside = ([lines[0], ""] + lines[1...]).joined(separator: "\n")
        XCTAssertNil(CertificateSummaryReader.summaries(ofFile: Array(blankInside.utf8)), "blank line inside the block")
        let header = ([lines[0], "Proc-Type: 4,ENCRYPTED"] + lines[1...]).joined(separator: "\n")
        XCTAssertNil(CertificateSummaryReader.summaries(ofFile: Array(header.utf8)), "header")
        XCTAssertNil(CertificateSummaryReader.summaries(ofFile: Array(text.replacingOccurrences(of: "CERTIFICATE", with: "TRUSTED CERTIFICATE").utf8)), "other label")
        XCTAssertNil(CertificateSummaryReader.summaries(ofFile: Array((text + "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n").utf8)), "another block")
        XCTAssertNil(CertificateSummaryReader.summaries(ofFile: Array(text.replacingOccurrences(of: "-----END CERTIFICATE-----", with: "").utf8)), "no END line")
        XCTAssertNil(CertificateSummaryReader.summaries(ofFile: Array(" \(text)".utf8)), "indented BEGIN line")
        // Base64: canonical only.
        XCTAssertEqual(CertificateSummaryReader.decodeBase64(Array("TWFu".utf8)), Array("Man".utf8))
        XCTAssertEqual(CertificateSummaryReader.decodeBase64(Array("TWE=".utf8)), Array("Ma".utf8))
        XCTAssertEqual(CertificateSummaryReader.decodeBase64(Array("TQ==".utf8)), Array("M".utf8))
        XCTAssertNil(CertificateSummaryReader.decodeBase64(Array("TR==".utf8)), "non-zero padding bits")
        XCTAssertNil(CertificateSummaryReader.decodeBase64(Array("TWF".utf8)), "not a multiple of four")
        XCTAssertNil(CertificateSummaryReader.decodeBase64(Array("T=Fu".utf8)), "padding inside")
    }

    /// The strict decoder accepts exactly the canonical encodings: text that Foundation decodes and
    /// that encodes back to itself. Random data of every length near the quantum boundaries, and
    /// each with one character replaced (by another letter, `=`, a dash, a NUL or a high byte).
    func testBase64IsDecodedExactlyWhenCanonical() {
        var generator = SystemRandomNumberGenerator()
        let replacements: [UInt8] = Array("AQgw+/=-".utf8) + [0, 0x80, 0xFF]
        func reference(_ text: [UInt8]) -> [UInt8]? {
            guard let string = String(bytes: text, encoding: .isoLatin1), let data = Data(base64Encoded: string), data.base64EncodedString() == string else { return nil }
            return [UInt8](data)
        }
        for length in Array(1...40) + [600, 601, 602, 1_000] {
            for _ in 0..<8 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let text = Array(Data(bytes).base64EncodedString().utf8)
                XCTAssertEqual(CertificateSummaryReader.decodeBase64(text), bytes)
                var mutated = text
                mutated[Int.random(in: 0..<text.count, using: &generator)] = replacements.randomElement(using: &generator)!
                XCTAssertEqual(CertificateSummaryReader.decodeBase64(mutated), reference(mutated), String(decoding: mutated, as: UTF8.self))
            }
        }
    }

    func testTheLoaderGivesTheFullParsesFactsWithAnExactSelfSignedFlag() throws {
        for name in ["server.pem", "server.der", "server-fullchain.pem", "self-signed.pem", "intermediate-ca.pem", "root-ca.pem"] {
            let path = TestCertificates.url(name).path
            let summaries = try CertificateLoader.summaries(atPath: path)
            let certificates = try CertificateLoader.certificates(atPath: path)
            XCTAssertEqual(summaries.count, certificates.count, name)
            for (summary, certificate) in zip(summaries, certificates) {
                XCTAssertEqual(summary.spkiSHA256, certificate.spkiSHA256, name)
                XCTAssertEqual(summary.subject, certificate.subject, name)
                XCTAssertEqual(summary.notAfter, certificate.notAfter, name)
                XCTAssertEqual(summary.isCA, certificate.basicConstraints?.isCA ?? false, name)
                XCTAssertEqual(summary.mayBeSelfSigned, certificate.isSelfSigned, "\(name): exact from the loader")
            }
        }
        XCTAssertThrowsError(try CertificateLoader.summaries(atPath: TestCertificates.url("no-such-file.pem").path))
        XCTAssertThrowsError(try CertificateLoader.summaries(atPath: TestCertificates.directory.path), "a directory")
    }
}

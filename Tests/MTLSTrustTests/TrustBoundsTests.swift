import Foundation
import XCTest

@testable import MTLSTrust

/// Hostile chains end in a verdict within the evaluator's structural bounds (paths tried, work
/// done), never a hang: a loop of CAs issuing each other, and 10,000 candidate intermediates that
/// all carry the issuer's name.
final class TrustBoundsTests: XCTestCase {
    private let time = Date(timeIntervalSince1970: 1_780_272_000)
    private let start = Date(timeIntervalSince1970: 1_735_689_600)
    private let end = Date(timeIntervalSince1970: 2_051_222_400)

    private func ca(_ name: String, key: PrivateKey, issuer: (Certificate, PrivateKey)?, serial: UInt64) throws -> Certificate {
        try CertificateIssuer.issue(.init(role: .rootCA, commonName: name, notBefore: start, notAfter: end), key: key, issuer: issuer, serial: serial)
    }

    func testCAsThatIssueEachOtherEndInAVerdictNotALoop() throws {
        let keyA = try CertificateIssuer.generateKey()
        let keyB = try CertificateIssuer.generateKey()
        let placeholderB = try ca("Loop B", key: keyB, issuer: nil, serial: 1)
        let a = try ca("Loop A", key: keyA, issuer: (placeholderB, keyB), serial: 2)  // A issued by B
        let b = try ca("Loop B", key: keyB, issuer: (a, keyA), serial: 3)  // B issued by A
        let leafKey = try CertificateIssuer.generateKey()
        let leaf = try CertificateIssuer.issue(
            .init(role: .server, commonName: "loop.example", dnsNames: ["loop.example"], notBefore: start, notAfter: end), key: leafKey, issuer: (a, keyA), serial: 4)
        let unrelated = try ca("Unrelated Root", key: try CertificateIssuer.generateKey(), issuer: nil, serial: 5)
        let evaluator = try TrustEvaluator(policy: TrustPolicy(anchors: [unrelated], intermediates: [a, b], evaluationTime: time, hostname: "loop.example"))
        let evaluation = evaluator.evaluate(leaf)
        XCTAssertFalse(evaluation.isTrusted)
        XCTAssertFalse(evaluation.findings.isEmpty)
        XCTAssertLessThanOrEqual(evaluation.pathsTried, 33, "the path search is bounded")
    }

    func testTenThousandLookAlikeIntermediatesAreRefusedWithinTheSearchBound() throws {
        let root = try CertificateLoader.certificates(atPath: TestCertificates.url("root-ca.pem").path)[0]
        let server = try CertificateLoader.certificates(atPath: TestCertificates.url("server.pem").path)[0]
        let intermediate = try CertificateLoader.certificates(atPath: TestCertificates.url("intermediate-ca.pem").path)[0]
        // Same subject as the real intermediate, other keys: every one is a candidate issuer by name.
        let key = try CertificateIssuer.generateKey()
        let lookAlike = try CertificateIssuer.issue(
            .init(role: .rootCA, commonName: "mtls Test Intermediate CA", notBefore: start, notAfter: end), key: key, issuer: nil, serial: 7)
        XCTAssertEqual(lookAlike.subject, intermediate.subject)
        var decoys = [lookAlike]
        for serial in 8..<(8 + 9_999) {
            decoys.append(
                try CertificateIssuer.issue(
                    .init(role: .rootCA, commonName: "mtls Test Intermediate CA", notBefore: start, notAfter: end), key: key, issuer: nil, serial: UInt64(serial)))
        }
        XCTAssertEqual(Set(decoys.map(\.serialNumberHex)).count, 10_000, "10,000 distinct certificates")
        let evaluator = try TrustEvaluator(policy: TrustPolicy(anchors: [root], intermediates: decoys, evaluationTime: time, hostname: "localhost"))
        let refused = evaluator.evaluate(server)
        XCTAssertFalse(refused.isTrusted, "no decoy can issue the leaf")
        XCTAssertLessThanOrEqual(refused.pathsTried, 33)
        // With the real intermediate hidden among the decoys, the chain is still found.
        let found = evaluator.evaluate(server, extraIntermediates: [intermediate])
        XCTAssertTrue(found.isTrusted, found.findings.map(\.description).joined(separator: "; "))
    }
}

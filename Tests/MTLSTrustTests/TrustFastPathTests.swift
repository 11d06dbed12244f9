import Foundation
import XCTest

@testable import MTLSTrust

/// The evaluator's fast path (`TrustFastPath.swift`): taken for leaves under an intermediate whose
/// chain the full path has accepted, declined for everything it is not sure of — and never a
/// different verdict from the full (reference) path.
final class TrustFastPathTests: XCTestCase {
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    private func fixture(_ name: String) throws -> Certificate {
        let certificates = try CertificateLoader.certificates(atPath: TestCertificates.url(name).path)
        return try XCTUnwrap(certificates.first, name)
    }

    private func evaluator(
        host: String? = "localhost", purpose: TrustPolicy.Purpose = .server, profile: TrustPolicy.Profile = .automatic,
        intermediates: [String] = ["intermediate-ca.pem"], crls: [CertificateRevocationList] = [], time: Date = TrustFastPathTests.fixedTime
    ) throws -> TrustEvaluator {
        try TrustEvaluator(
            policy: TrustPolicy(
                anchors: [try fixture("root-ca.pem")], intermediates: try intermediates.map(fixture), evaluationTime: time, purpose: purpose,
                hostname: host, crls: crls, profile: profile))
    }

    /// `evaluate` (fast path allowed) and the reference path give the same verdict, chain and
    /// findings; returns the evaluation.
    ///
    /// The leaf is evaluated as a fresh, undecoded copy first (as a leaf read from DER reaches the
    /// evaluator, so that the check on the DER is exercised), and when the fast path accepted it on
    /// its DER, the copy must still be undecoded: nothing in the fast path needed its `X509`.
    @discardableResult
    private func assertSameVerdict(_ evaluator: TrustEvaluator, _ leaf: Certificate, _ label: String, file: StaticString = #filePath, line: UInt = #line) -> TrustEvaluation {
        let fresh = (try? Certificate(derBytes: leaf.derBytes)) ?? leaf
        let onDERBefore = evaluator.fastPathStatistics.acceptedOnDER
        let evaluation = evaluator.evaluate(fresh)
        if evaluator.fastPathStatistics.acceptedOnDER > onDERBefore {
            XCTAssertNil(fresh.reference.decodedPointer, "\(label): accepted on its DER, but the leaf was decoded", file: file, line: line)
        }
        let reference = evaluator.referenceEvaluation(leaf, extraIntermediates: [])
        XCTAssertEqual(evaluation.isTrusted, reference.isTrusted, "\(label): fast path and reference disagree", file: file, line: line)
        XCTAssertEqual(evaluation.chain, reference.chain, "\(label): chains differ", file: file, line: line)
        XCTAssertEqual(evaluation.findings, reference.findings, "\(label): findings differ", file: file, line: line)
        XCTAssertEqual(evaluation.pathsTried, reference.pathsTried, "\(label): paths tried differ", file: file, line: line)
        return evaluation
    }

    /// The common chain: the first leaf arms the fast path (full path), every later good leaf under
    /// the same intermediate is accepted by the fast path.
    func testTakenOnTheCommonChain() throws {
        let evaluator = try evaluator()
        XCTAssertTrue(assertSameVerdict(evaluator, try fixture("server.pem"), "server").isTrusted)
        XCTAssertEqual(evaluator.fastPathStatistics, .init(accepted: 0, declined: 1))
        for name in ["server-p384.pem", "server-rsa2048.pem", "server-rsa4096.pem", "server.der"] {
            XCTAssertTrue(assertSameVerdict(evaluator, try fixture(name), name).isTrusted, name)
        }
        // All four on their DER alone (P-384, RSA 2048 and 4096, P-256 from DER).
        XCTAssertEqual(evaluator.fastPathStatistics, .init(accepted: 4, declined: 1, reachedChecks: 4, acceptedOnDER: 4))
        // The fast path's chain is the full path's: leaf, intermediate, root.
        let evaluation = evaluator.evaluate(try fixture("server-p384.pem"))
        XCTAssertEqual(evaluation.chain.map(\.commonName), ["localhost", "mtls Test Intermediate CA", "mtls Test Root CA"])
        XCTAssertEqual(evaluation.pathsTried, 1)
    }

    /// Each leaf the full path rejects is declined by the fast path (the full path then gives the
    /// verdict and reasons), and so are the excluded situations.
    func testDeclinesWhatItIsNotSureOf() throws {
        let evaluator = try evaluator()
        _ = evaluator.evaluate(try fixture("server.pem"))  // arms
        let rejected = [
            "server-expired.pem", "server-notyetvalid.pem", "server-wronghost.pem", "server-multi.pem", "server-cn-only.pem",
            "server-clientauth-only.pem", "client-alice.pem", "client-other.pem", "self-signed.pem",
        ]
        for name in rejected {
            let before = evaluator.fastPathStatistics
            XCTAssertFalse(assertSameVerdict(evaluator, try fixture(name), name).isTrusted, name)
            XCTAssertEqual(evaluator.fastPathStatistics.accepted, before.accepted, "\(name) was accepted by the fast path")
            // Leaves of the armed intermediate are declined by the checks themselves, not before.
            let underIntermediate = !["client-other.pem", "self-signed.pem"].contains(name)
            XCTAssertEqual(evaluator.fastPathStatistics.reachedChecks > before.reachedChecks, underIntermediate, "\(name): checks ran")
        }
        // A known certificate as the leaf (the intermediate itself): declined.
        let before = evaluator.fastPathStatistics
        assertSameVerdict(evaluator, try fixture("intermediate-ca.pem"), "intermediate as leaf")
        XCTAssertEqual(evaluator.fastPathStatistics.accepted, before.accepted)
        // Extra intermediates: the full path only, not even counted.
        let counted = evaluator.fastPathStatistics
        XCTAssertTrue(evaluator.evaluate(try fixture("server-p384.pem"), extraIntermediates: [try fixture("intermediate-ca.pem")]).isTrusted)
        XCTAssertEqual(evaluator.fastPathStatistics, counted)
    }

    /// CRLs: revocation concerns every certificate of the chain, so no fast path at all.
    func testNoFastPathWithCRLs() throws {
        let crls = try CertificateLoader.crls(atPath: TestCertificates.url("crls.pem").path)
        let evaluator = try evaluator(crls: crls)
        for name in ["server.pem", "server-p384.pem", "server-revoked.pem"] { assertSameVerdict(evaluator, try fixture(name), name) }
        XCTAssertEqual(evaluator.fastPathStatistics, .init())
    }

    /// A leaf issued directly by an anchor never arms nor takes the fast path (it needs an armed
    /// intermediate); with a second, unrelated root among the anchors the intermediate's leaves still do.
    func testNotArmedIssuerIsDeclined() throws {
        let evaluator = try TrustEvaluator(
            policy: TrustPolicy(
                anchors: [try fixture("root-ca.pem"), try fixture("other-root-ca.pem")], intermediates: [try fixture("intermediate-ca.pem")],
                evaluationTime: Self.fixedTime, purpose: .client))
        // client-other is issued by the other root directly: never armed (no intermediate).
        for _ in 0..<2 { XCTAssertTrue(assertSameVerdict(evaluator, try fixture("client-other.pem"), "client-other").isTrusted) }
        XCTAssertEqual(evaluator.fastPathStatistics.accepted, 0)
        XCTAssertTrue(assertSameVerdict(evaluator, try fixture("client-alice.pem"), "alice").isTrusted)
        XCTAssertTrue(assertSameVerdict(evaluator, try fixture("client-bob-rsa.pem"), "bob").isTrusted)
        XCTAssertEqual(evaluator.fastPathStatistics.accepted, 1)
    }

    /// Name constraints or policy constraints anywhere above the leaf constrain it from above:
    /// such a chain never arms the fast path, however often it is accepted.
    func testConstrainedIntermediatesNeverArm() throws {
        for id in ["rfc5280.nc-violation", "rfc5280.pc-not-critical"] {
            let directory = TestCertificates.url("rules/\(id)").path
            let good = try CertificateLoader.certificates(atPath: "\(directory)/good.pem")
            let evaluator = try TrustEvaluator(
                policy: TrustPolicy(
                    anchors: try CertificateLoader.certificates(atPath: "\(directory)/anchors.pem"), intermediates: Array(good.dropFirst()),
                    evaluationTime: Self.fixedTime, purpose: .server, hostname: "rules.example", profile: .rfc5280))
            for _ in 0..<3 { XCTAssertTrue(assertSameVerdict(evaluator, good[0], id).isTrusted, id) }
            XCTAssertEqual(evaluator.fastPathStatistics, .init(accepted: 0, declined: 3, reachedChecks: 0), id)
        }
    }

    /// Differential: every single-certificate fixture as the leaf, under every purpose, host and
    /// profile, after the fast path was armed with a good leaf, at the fixed time and at a time
    /// when the leaves have expired: the same verdict as the reference path each time.
    func testEveryFixtureUnderEveryPolicyGivesTheReferenceVerdict() throws {
        let directory = TestCertificates.url("").path
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".pem") || $0.hasSuffix(".der") }.sorted()
        let leaves: [(String, Certificate)] = names.compactMap { name in
            guard let certificates = try? CertificateLoader.certificates(atPath: "\(directory)/\(name)"), certificates.count == 1 else { return nil }
            return (name, certificates[0])
        }
        XCTAssertGreaterThan(leaves.count, 25)
        var compared = 0
        var accepted = 0
        var onDER = 0
        for purpose in TrustPolicy.Purpose.allCases {
            for host in ["localhost", "api.example.com", "127.0.0.1", nil] as [String?] {
                for profile in TrustPolicy.Profile.allCases {
                    for time in [Self.fixedTime, Date(timeIntervalSince1970: 2_200_000_000)] {
                        let evaluator = try evaluator(host: host, purpose: purpose, profile: profile, time: time)
                        _ = evaluator.evaluate(try fixture(purpose == .client ? "client-alice.pem" : "server.pem"))
                        for (name, leaf) in leaves {
                            assertSameVerdict(evaluator, leaf, "\(name) \(purpose) \(host ?? "-") \(profile) \(time)")
                            compared += 1
                        }
                        accepted += evaluator.fastPathStatistics.accepted
                        onDER += evaluator.fastPathStatistics.acceptedOnDER
                    }
                }
            }
        }
        XCTAssertGreaterThan(accepted, 0)
        XCTAssertGreaterThan(onDER, 0)
        print("fast path differential over the fixtures: \(compared) evaluations, \(accepted) fast acceptances (\(onDER) on the DER alone), 0 differences")
    }

    /// Differential over the trust-rule fixture pairs (`TestCerts/rules/`): one evaluator for both
    /// chains of a pair, the compliant one first (it arms the fast path when it is trusted), then
    /// the violating one, then the compliant one again.
    func testRuleFixturePairsGiveTheReferenceVerdict() throws {
        let rules = TestCertificates.url("rules").path
        var pairs = 0
        for id in try FileManager.default.contentsOfDirectory(atPath: rules).sorted() where !id.hasPrefix(".") {
            let directory = "\(rules)/\(id)"
            guard let good = try? CertificateLoader.certificates(atPath: "\(directory)/good.pem"),
                let bad = try? CertificateLoader.certificates(atPath: "\(directory)/bad.pem"),
                let anchors = try? CertificateLoader.certificates(atPath: "\(directory)/anchors.pem")
            else { continue }
            let host = (try? String(contentsOfFile: "\(directory)/host", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            for profile in [TrustPolicy.Profile.webPKI, .rfc5280] {
                let evaluator = try TrustEvaluator(
                    policy: TrustPolicy(
                        anchors: anchors, intermediates: Array(good.dropFirst()) + Array(bad.dropFirst()), evaluationTime: Self.fixedTime, purpose: .server,
                        hostname: host, allowsPartialChain: anchors.contains { $0.subject != $0.issuer }, profile: profile))
                assertSameVerdict(evaluator, good[0], "\(id) good \(profile)")
                assertSameVerdict(evaluator, bad[0], "\(id) bad \(profile)")
                assertSameVerdict(evaluator, good[0], "\(id) good again \(profile)")
                pairs += 1
            }
        }
        XCTAssertGreaterThan(pairs, 40)
    }

    /// What ``Certificate`` answers from the strict DER walk while undecoded (subject, CN, key
    /// algorithm, key usage) is what it answers from its `X509`, for every fixture the walk accepts.
    func testUndecodedAccessorsMatchTheDecodedOnes() throws {
        var paths: [String] = []
        for directory in [TestCertificates.url("").path]
            + (try FileManager.default.contentsOfDirectory(atPath: TestCertificates.url("rules").path)).map({ TestCertificates.url("rules/\($0)").path })
        {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".pem") || name.hasSuffix(".der") {
                paths.append("\(directory)/\(name)")
            }
        }
        var deferred = 0
        var plainLeaves = 0
        for path in paths {
            guard let certificates = try? CertificateLoader.certificates(atPath: path) else { continue }
            for certificate in certificates {
                let lazy = try Certificate(derBytes: certificate.derBytes)
                guard lazy.reference.decodedPointer == nil else { continue }
                deferred += 1
                if lazy.reference.layout?.plainLeaf != nil { plainLeaves += 1 }
                let (subject, commonName, keyAlgorithm, keyUsage) = (lazy.subject, lazy.commonName, lazy.keyAlgorithm, lazy.keyUsage)
                if lazy.reference.layout?.plainLeaf != nil {
                    XCTAssertNil(lazy.reference.decodedPointer, "\(path): an accessor decoded a plain leaf")
                }
                let decoded = try Certificate(derBytes: certificate.derBytes)
                _ = decoded.reference.pointer
                XCTAssertEqual(subject, decoded.subject, path)
                XCTAssertEqual(commonName, decoded.commonName, path)
                XCTAssertEqual(keyAlgorithm, decoded.keyAlgorithm, path)
                XCTAssertEqual(keyUsage, decoded.keyUsage, path)
                let fresh = try Certificate(derBytes: certificate.derBytes)
                XCTAssertEqual(fresh.notBefore, decoded.notBefore, path)
                XCTAssertEqual(fresh.notAfter, decoded.notAfter, path)
                XCTAssertNil(fresh.reference.decodedPointer, "\(path): the validity decoded")
                XCTAssertEqual(lazy.derBytes, decoded.derBytes, path)
            }
        }
        XCTAssertGreaterThan(deferred, 100)
        XCTAssertGreaterThan(plainLeaves, 20)
    }

    /// A server's chain (leaf and the intermediate it sends) accepted once is answered from memory
    /// the next time, with the reference path's verdict and chain; a rejected one never is.
    func testAcceptedServerChainsAreRemembered() throws {
        let evaluator = try TrustEvaluator(
            policy: TrustPolicy(anchors: [try fixture("root-ca.pem")], evaluationTime: Self.fixedTime, purpose: .server, hostname: "localhost"))
        let intermediate = try fixture("intermediate-ca.pem")
        let leaf = try fixture("server.pem")
        let reference = evaluator.referenceEvaluation(leaf, extraIntermediates: [intermediate])
        XCTAssertTrue(reference.isTrusted)
        for round in 0..<3 {
            let evaluation = evaluator.evaluate(try Certificate(derBytes: leaf.derBytes), extraIntermediates: [intermediate])
            XCTAssertEqual(evaluation.chain, reference.chain, "round \(round)")
            XCTAssertEqual(evaluation.findings, reference.findings, "round \(round)")
        }
        XCTAssertEqual(evaluator.fastPathStatistics.rememberedVerdicts, 2)
        // Other intermediates sent, or a rejected leaf: evaluated in full every time.
        XCTAssertTrue(evaluator.evaluate(leaf, extraIntermediates: [intermediate, try fixture("other-root-ca.pem")]).isTrusted)
        for _ in 0..<2 { XCTAssertFalse(evaluator.evaluate(try fixture("server-wronghost.pem"), extraIntermediates: [intermediate]).isTrusted) }
        XCTAssertEqual(evaluator.fastPathStatistics.rememberedVerdicts, 2)
        // The window a verdict is kept for: every certificate of the chain within its validity.
        let window = try XCTUnwrap(TrustEvaluator.validityWindow(reference.chain))
        let starts = reference.chain.map { Int($0.notBefore.timeIntervalSince1970) }
        let ends = reference.chain.map { Int($0.notAfter.timeIntervalSince1970) }
        XCTAssertEqual(window, starts.max()!..<ends.min()!)
        XCTAssertEqual(TrustEvaluator.validityWindow([try Certificate(derBytes: leaf.derBytes)] + reference.chain.dropFirst()), window, "from the DER as from the X509")
        // A time outside it: an evaluator at that time does not find the verdict valid.
        let later = try TrustEvaluator(
            policy: TrustPolicy(
                anchors: [try fixture("root-ca.pem")], evaluationTime: Date(timeIntervalSince1970: Double(window.upperBound + 1)), purpose: .server, hostname: "localhost"))
        for _ in 0..<2 { XCTAssertFalse(later.evaluate(leaf, extraIntermediates: [intermediate]).isTrusted) }
        XCTAssertEqual(later.fastPathStatistics.rememberedVerdicts, 0)
    }
}

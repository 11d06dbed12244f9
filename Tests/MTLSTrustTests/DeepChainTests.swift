import Foundation
import XCTest

@testable import MTLSTrust

/// A valid chain of 100 intermediate CAs in a line under a trusted root (`TestCerts/deep/`, made by
/// `scripts/make-deep-chain.sh`) is accepted by default, as `openssl verify` accepts it; one more
/// intermediate is refused, as OpenSSL refuses it; a lower ``TrustPolicy/maximumDepth`` refuses the
/// chain with a depth finding that names the limit. "Depth" is OpenSSL's verify depth: the number
/// of intermediates between leaf and anchor (neither counts), default limit 100.
final class DeepChainTests: XCTestCase {
    private let time = Date(timeIntervalSince1970: 1_780_272_000)

    private func certificates(_ name: String) throws -> [Certificate] {
        try CertificateLoader.certificates(atPath: TestCertificates.url("deep/\(name)").path)
    }

    private func evaluator(maximumDepth: Int? = nil, extra: [Certificate] = [], hostname: String? = "deep.example.com") throws -> TrustEvaluator {
        try TrustEvaluator(
            policy: TrustPolicy(
                anchors: try certificates("root.pem"), intermediates: try certificates("intermediates.pem") + extra, evaluationTime: time, purpose: .server,
                hostname: hostname, maximumDepth: maximumDepth))
    }

    /// `openssl verify -attime 1780272000 ARGS` in `TestCerts/deep`: (passed, output).
    private func opensslVerify(_ arguments: [String]) throws -> (ok: Bool, output: String) {
        let deep = TestCertificates.url("deep").path
        let output = try OpenSSLCLI.runAllowingFailure(
            ["verify", "-attime", "1780272000"] + arguments.map { $0.hasSuffix(".pem") ? "\(deep)/\($0)" : $0 })
        return (output.status == 0, output.combined)
    }

    /// OpenSSL stops building at the depth limit and, when the verify callback lets it go on (the
    /// evaluator collects every failure), then also reports that the cut chain reaches no anchor:
    /// "the issuer … was not found among the intermediates and anchors", which is false — the next
    /// issuer is there, it was not looked for. The evaluator drops it; these tests keep it dropped.
    /// The findings other than the depth finding: none (in particular no "issuer not found" at the
    /// depth where OpenSSL cut the chain).
    private func assertOnlyTheDepthFinding(_ evaluation: TrustEvaluation, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let depth = evaluation.findings.first { $0.name == "X509_V_ERR_CERT_CHAIN_TOO_LONG" }?.depth
        let others = evaluation.findings.filter { $0.name != "X509_V_ERR_CERT_CHAIN_TOO_LONG" }
        XCTAssertNotNil(depth, "\(label): refused for its depth: \(describe(evaluation))", file: file, line: line)
        XCTAssertEqual(others, [], "\(label): nothing else is wrong with the chain: \(describe(evaluation))", file: file, line: line)
    }

    private func describe(_ evaluation: TrustEvaluation) -> String {
        "chain of \(evaluation.chain.count), \(evaluation.pathsTried) path(s) tried: " + evaluation.findings.map(\.description).joined(separator: "; ")
    }

    func testTheFixturesAreAChainOfOneHundredIntermediatesInALine() throws {
        let root = try certificates("root.pem")
        let intermediates = try certificates("intermediates.pem")
        let leaf = try certificates("leaf.pem")[0]
        XCTAssertEqual(root.count, 1)
        XCTAssertEqual(intermediates.count, 100)
        XCTAssertEqual(Set(intermediates.map(\.subject)).count, 100, "100 distinct CAs, none self-issued")
        // Nearest the leaf first: each issued by the next, the last by the root.
        XCTAssertEqual(leaf.issuer, intermediates[0].subject)
        for (certificate, issuer) in zip(intermediates, intermediates.dropFirst()) {
            XCTAssertEqual(certificate.issuer, issuer.subject)
        }
        XCTAssertEqual(intermediates[99].issuer, root[0].subject)
        for certificate in intermediates + [leaf] {
            XCTAssertLessThan(certificate.notBefore, time, certificate.subject)
            XCTAssertGreaterThan(certificate.notAfter, time, certificate.subject)
        }
    }

    func testOneHundredIntermediatesAreAcceptedByDefaultAsOpenSSLAcceptsThem() throws {
        let judge = try opensslVerify([
            "-x509_strict", "-purpose", "sslserver", "-verify_hostname", "deep.example.com", "-CAfile", "root.pem", "-untrusted", "intermediates.pem", "leaf.pem",
        ])
        XCTAssertTrue(judge.ok, "openssl verify refuses the fixture:\n\(judge.output)")

        let leaf = try certificates("leaf.pem")[0]
        let started = Date()
        let evaluation = try evaluator().evaluate(leaf)
        XCTAssertTrue(evaluation.isTrusted, describe(evaluation))
        XCTAssertEqual(evaluation.chain.count, 102, "leaf, 100 intermediates, root")
        XCTAssertEqual(evaluation.chain.last?.subject, try certificates("root.pem")[0].subject)
        XCTAssertEqual(evaluation.pathsTried, 1, "the first path OpenSSL builds is the right one")
        // Completes (no bound on speed is asserted; the time is printed for the record).
        print("DeepChainTests: 102-certificate chain evaluated in \(String(format: "%.3f", Date().timeIntervalSince(started))) s")
    }

    func testTheChainAsAServerSendsItIsAcceptedWithoutPolicyIntermediates() throws {
        let sent = try certificates("chain.pem")
        XCTAssertEqual(sent.count, 101)
        let evaluator = try TrustEvaluator(
            policy: TrustPolicy(anchors: try certificates("root.pem"), evaluationTime: time, purpose: .server, hostname: "deep.example.com"))
        let evaluation = evaluator.evaluate(sent[0], extraIntermediates: Array(sent.dropFirst()))
        XCTAssertTrue(evaluation.isTrusted, describe(evaluation))
        XCTAssertEqual(evaluation.chain.count, 102)
    }

    func testOneHundredAndOneIntermediatesAreRefusedAsTooLongAsOpenSSLRefusesThem() throws {
        let judge = try opensslVerify(["-CAfile", "root.pem", "-untrusted", "intermediates.pem", "-untrusted", "intermediate-101.pem", "leaf-101.pem"])
        XCTAssertFalse(judge.ok, "openssl verify accepts 101 intermediates:\n\(judge.output)")
        XCTAssertTrue(judge.output.contains("certificate chain too long"), judge.output)

        let leaf = try certificates("leaf-101.pem")[0]
        let evaluation = try evaluator(extra: try certificates("intermediate-101.pem"), hostname: "deeper.example.com").evaluate(leaf)
        XCTAssertFalse(evaluation.isTrusted, describe(evaluation))
        XCTAssertEqual(evaluation.findings.first?.name, "X509_V_ERR_CERT_CHAIN_TOO_LONG", describe(evaluation))
        // OpenSSL reports it at depth 101: the first certificate beyond the limit.
        XCTAssertEqual(evaluation.findings.first?.depth, 101, describe(evaluation))
        XCTAssertTrue(evaluation.findings.first?.reason.contains("100, OpenSSL's default") ?? false, "the reason names the default limit: \(describe(evaluation))")

        // Allowed one more, both accept it.
        XCTAssertTrue(
            try opensslVerify(["-verify_depth", "101", "-CAfile", "root.pem", "-untrusted", "intermediates.pem", "-untrusted", "intermediate-101.pem", "leaf-101.pem"]).ok)
        let allowed = try evaluator(maximumDepth: 101, extra: try certificates("intermediate-101.pem"), hostname: "deeper.example.com").evaluate(leaf)
        XCTAssertTrue(allowed.isTrusted, describe(allowed))
        XCTAssertEqual(allowed.chain.count, 103)

        try assertOnlyTheDepthFinding(evaluation, "101 intermediates")
    }

    func testALowerMaximumDepthRefusesTheChainWithADepthFindingLikeOpenSSL() throws {
        let leaf = try certificates("leaf.pem")[0]
        var refused: [(Int, TrustEvaluation)] = []
        for limit in [0, 1, 5, 99] {
            let judge = try opensslVerify(["-verify_depth", "\(limit)", "-CAfile", "root.pem", "-untrusted", "intermediates.pem", "leaf.pem"])
            XCTAssertFalse(judge.ok, "openssl verify -verify_depth \(limit) accepts 100 intermediates:\n\(judge.output)")
            XCTAssertTrue(judge.output.contains("error 22 at \(limit + 1) depth lookup: certificate chain too long"), judge.output)

            let evaluation = try evaluator(maximumDepth: limit).evaluate(leaf)
            XCTAssertFalse(evaluation.isTrusted, "maximumDepth \(limit): \(describe(evaluation))")
            let depthFindings = evaluation.findings.filter { $0.name == "X509_V_ERR_CERT_CHAIN_TOO_LONG" }
            XCTAssertEqual(depthFindings.count, 1, "maximumDepth \(limit): one depth finding: \(describe(evaluation))")
            XCTAssertEqual(evaluation.findings.first?.name, "X509_V_ERR_CERT_CHAIN_TOO_LONG", "maximumDepth \(limit): the depth finding comes first")
            XCTAssertEqual(depthFindings.first?.depth, limit + 1, "maximumDepth \(limit): at the first certificate beyond the limit, as OpenSSL")
            refused.append((limit, evaluation))
        }
        // At the limit, accepted.
        let exact = try evaluator(maximumDepth: 100).evaluate(leaf)
        XCTAssertTrue(exact.isTrusted, describe(exact))
        for (limit, evaluation) in refused { try assertOnlyTheDepthFinding(evaluation, "maximumDepth \(limit)") }
    }

    func testTheDepthFindingSaysWhatTheLimitIs() throws {
        let evaluation = try evaluator(maximumDepth: 5).evaluate(try certificates("leaf.pem")[0])
        let reason = evaluation.findings.first?.reason ?? ""
        XCTAssertTrue(reason.contains("maximum depth (5)"), "the reason names the limit: \(reason)")
        XCTAssertFalse(evaluation.findings.first?.hint.isEmpty ?? true, "a hint is given")
    }
}

import Foundation
import XCTest

@testable import MTLSTrust

/// Path validation judged by NIST's Public Key Interoperability Test Suite (PKITS 1.0.1, the
/// certificates and CRLs as BoringSSL keeps them; `TestCerts/third-party/nist-pkits`, see its
/// README). `CASES.tsv` lists the 249 cases of PKITS.pdf section 4 (the path, the CRLs, inputs
/// other than RFC 5280's defaults, and the verdict PKITS requires); each runs through
/// ``TrustEvaluator`` — the trust anchor as the one anchor, the CRLs with `--crl` semantics (every
/// certificate's status must be known), purpose any, the RFC 5280 profile, the case's policy inputs
/// (``TrustPolicy/initialPolicies``, ``TrustPolicy/requiresExplicitPolicy``,
/// ``TrustPolicy/inhibitsPolicyMapping``, ``TrustPolicy/inhibitsAnyPolicy``), and no key-size or
/// digest floor (PKITS signs with SHA-1 and RSA-1024; the suite judges the path logic, and
/// `TrustPolicy.enforcesAlgorithmStrength` is the library's switch for that).
///
/// `EXPECTED.tsv` records mtls's verdict and findings for every case and a class — `agree` or
/// `stricter` (mtls refuses a path PKITS calls valid, on purpose) — with a reason key explained at
/// its end. The test fails on any verdict or finding that differs from the table, on a difference
/// the table does not justify, and on any path PKITS calls invalid that mtls accepts.
///
/// `MTLS_WRITE_PKITS_EXPECTED=1` rewrites the verdict and finding columns (class and reason kept).
final class PKITSSuiteTests: XCTestCase {
    static let corpus = "third-party/nist-pkits"
    /// Within every PKITS certificate's and CRL's validity (2010-01-01 to 2030-12-31).
    static let time = Date(timeIntervalSince1970: 1_338_508_800)  // 2012-06-01T00:00:00Z

    struct Case {
        var key: String  // "4.1.1 Valid Signatures Test1"
        var inputs: String
        var certificates: [String]
        var crls: [String]
        var valid: Bool
    }

    static func cases() throws -> [Case] {
        try String(decoding: TestCertificates.bytes("\(corpus)/CASES.tsv"), as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard c.count == 6 else { throw SuiteError.malformed("CASES.tsv: \(line)") }
            return Case(
                key: "\(c[0]) \(c[1])", inputs: c[2], certificates: c[3].split(separator: ",").map(String.init),
                crls: c[4] == "-" ? [] : c[4].split(separator: ",").map(String.init), valid: c[5] == "valid")
        }
    }

    enum SuiteError: Error { case malformed(String) }

    /// The policy inputs of a case (`CASES.tsv`'s third column: `name=value` pairs split by `;`)
    /// set on `policy`: PKITS's NIST-test-policy-N is 2.16.840.1.101.3.2.1.48.N.
    static func applyInputs(_ inputs: String, to policy: inout TrustPolicy) throws {
        guard inputs != "-" else { return }
        for pair in inputs.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw SuiteError.malformed("inputs \(inputs)") }
            switch parts[0] {
            case "initial-explicit-policy": policy.requiresExplicitPolicy = parts[1] == "true"
            case "initial-policy-mapping-inhibit": policy.inhibitsPolicyMapping = parts[1] == "true"
            case "initial-any-policy-inhibit": policy.inhibitsAnyPolicy = parts[1] == "true"
            case "user-initial-policy-set":
                policy.initialPolicies = try parts[1].split(separator: ",").map { name in
                    guard name.hasPrefix("NIST-test-policy-"), let number = Int(name.dropFirst("NIST-test-policy-".count)) else {
                        throw SuiteError.malformed("policy \(name)")
                    }
                    return "2.16.840.1.101.3.2.1.48.\(number)"
                }
            default: throw SuiteError.malformed("input \(parts[0])")
            }
        }
    }

    /// mtls's verdict and findings for a case.
    static func run(_ testCase: Case) throws -> (verdict: String, findings: [String])? {
        let certificates = try testCase.certificates.map { try CertificateLoader.certificates(atPath: TestCertificates.url("\(corpus)/certs/\($0).crt").path)[0] }
        let crls = try testCase.crls.flatMap { try CertificateLoader.crls(atPath: TestCertificates.url("\(corpus)/crls/\($0).crl").path) }
        var policy = TrustPolicy(
            anchors: [certificates[0]], intermediates: Array(certificates.dropFirst().dropLast()), evaluationTime: time, purpose: .any, crls: crls,
            profile: .rfc5280)
        policy.enforcesAlgorithmStrength = false
        try applyInputs(testCase.inputs, to: &policy)
        let evaluation = try TrustEvaluator(policy: policy).evaluate(certificates[certificates.count - 1])
        for finding in evaluation.findings {
            XCTAssertFalse(finding.reason.isEmpty || finding.hint.description.isEmpty, "\(testCase.key): \(finding.name) without reason or hint")
        }
        return (evaluation.isTrusted ? "accept" : "reject", Array(Set(evaluation.findings.map(\.name))).sorted())
    }

    static let header = [
        "# NIST PKITS (CASES.tsv) against mtls. Checked by Tests/MTLSTrustTests/PKITSSuiteTests.swift; MTLS_WRITE_PKITS_EXPECTED=1",
        "# rewrites the mtls and findings columns and keeps class and reason. Lines 'reason KEY TEXT' explain the reason keys.",
        "# case\tpkits\tmtls\tfindings\tclass\treason",
    ]

    func testAnInitialPolicyMustBeAnObjectIdentifier() throws {
        var policy = TrustPolicy(anchors: [])
        policy.initialPolicies = ["NIST-test-policy-1"]
        XCTAssertThrowsError(try TrustEvaluator(policy: policy)) { error in
            XCTAssertEqual((error as? MTLSTrustError)?.reason, .invalidArgument, "\(error)")
            XCTAssertTrue("\(error)".contains("'NIST-test-policy-1' is not an object identifier"), "\(error)")
        }
        for text in ["2.16.840.1.101.3.2.1.48.1", "1.2", "0.0"] { XCTAssertTrue(CertificateFacts.isDottedOID(text), text) }
        for text in ["", "1", "3.1", "1..2", "1.02", "1.2.", "1.-2", "1.2x"] { XCTAssertFalse(CertificateFacts.isDottedOID(text), text) }
    }

    func testEveryFileIsTheBytesTheManifestRecords() throws {
        let rows = try CorpusTally.manifest(Self.corpus)
        XCTAssertEqual(rows.count, 579, "files in MANIFEST.tsv")
        for row in rows {
            XCTAssertEqual(Digest.sha256(try TestCertificates.bytes("\(Self.corpus)/\(row[0])")).hex, row[3], "\(row[0]): not the bytes MANIFEST.tsv records")
        }
    }

    func testEveryCaseAgreesWithPKITSOrIsJustified() throws {
        let cases = try Self.cases()
        XCTAssertEqual(cases.count, 249, "the cases of CASES.tsv")
        var recorded: [String: [String]] = [:]
        var reasons: [String] = []
        for line in String(decoding: try TestCertificates.bytes("\(Self.corpus)/EXPECTED.tsv"), as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if c.first == "reason", c.count == 3 {
                reasons.append(String(line))
            } else if c.count == 6 {
                recorded[c[0]] = c
            } else {
                XCTFail("EXPECTED.tsv: a line that is neither a case row (6 columns) nor 'reason KEY TEXT': \(line)")
            }
        }
        let reasonKeys = Set(reasons.map { $0.split(separator: "\t")[1] }.map(String.init))
        var computed: [String] = []
        var tally: [String: Int] = [:]
        for testCase in cases {
            let pkits = testCase.valid ? "accept" : "reject"
            let outcome = try Self.run(testCase)
            let ours = outcome?.verdict ?? "-"
            let findings = outcome.map { $0.findings.isEmpty ? "-" : $0.findings.joined(separator: ",") } ?? "-"
            let old = recorded[testCase.key]
            var verdictClass = old?[4] ?? ""
            var reason = old?[5] ?? ""
            if ours == pkits {
                (verdictClass, reason) = ("agree", "-")
            } else if verdictClass == "agree" || verdictClass.isEmpty {
                verdictClass = "unreviewed"
            }
            let row = [testCase.key, pkits, ours, findings, verdictClass, reason]
            computed.append(row.joined(separator: "\t"))
            tally[verdictClass, default: 0] += 1
            guard let old else {
                XCTFail("\(testCase.key): not in EXPECTED.tsv; its row would be: \(row.joined(separator: "\t"))")
                continue
            }
            XCTAssertEqual(old, row, "\(testCase.key): mtls now gives \(ours) with \(findings); EXPECTED.tsv records \(old[2]) with \(old[3])")
            if pkits == "reject" && ours == "accept" {
                XCTFail("\(testCase.key): PKITS requires this path to be rejected and mtls accepts it")
            }
            if verdictClass == "stricter" { XCTAssertTrue(pkits == "accept" && ours == "reject", "\(testCase.key): class stricter") }
            if verdictClass == "excluded" { XCTAssertEqual(ours, "-", "\(testCase.key): excluded cases are the ones not run") }
            XCTAssertTrue(["agree", "stricter", "excluded"].contains(verdictClass), "\(testCase.key): class \(verdictClass); a difference needs a class and a reason")
            if verdictClass != "agree" { XCTAssertTrue(reasonKeys.contains(reason), "\(testCase.key): reason key \(reason.debugDescription) is not explained") }
        }
        if ProcessInfo.processInfo.environment["MTLS_WRITE_PKITS_EXPECTED"] == "1" {
            let text = (Self.header + computed + reasons).joined(separator: "\n") + "\n"
            try text.write(to: TestCertificates.url("\(Self.corpus)/EXPECTED.tsv"), atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(tally["agree"], 212, "cases agreeing with PKITS: \(tally)")
        XCTAssertEqual(tally["stricter"], 37, "paths PKITS calls valid that mtls refuses on purpose: \(tally)")
        XCTAssertNil(tally["excluded"], "every case runs: \(tally)")
    }
}

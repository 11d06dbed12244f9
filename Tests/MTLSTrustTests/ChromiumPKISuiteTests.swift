import Foundation
import XCTest

@testable import MTLSTrust

/// Path validation judged by the Chromium certificate verifier's own suite, as BoringSSL keeps it
/// (`pki/testdata/verify_certificate_chain_unittest/`, copied to `TestCerts/third-party/chromium-pki`;
/// see its README). Every `*.test` case (a chain, the trust of its last certificate, a time, a key
/// purpose, Chromium's expected errors) runs through ``TrustEvaluator`` with the matching policy,
/// once under the RFC 5280 profile and, for purpose server, once under the Web PKI profile (what
/// `mtls verify` applies to servers by default).
///
/// `EXPECTED.tsv` records, per case, Chromium's verdict (read from the `.test` file here too, so
/// the table cannot drift from it), mtls's verdicts, the findings of the RFC 5280 run, and a class:
/// `agree`, `stricter` (mtls refuses what Chromium accepts, on purpose) or `excluded` (a Chromium
/// setting mtls does not model), each difference with a reason. The test fails on any verdict or
/// finding that differs from the table, on a difference the table does not justify, and — above
/// all — on a chain Chromium rejects that mtls accepts, unless the case is excluded with a reason.
///
/// `MTLS_WRITE_CHROMIUM_PKI_EXPECTED=1` rewrites the verdict and finding columns (class and reason
/// kept; a new difference is written as `unreviewed`, which fails until a reason is given).
final class ChromiumPKISuiteTests: XCTestCase {
    static let corpus = "third-party/chromium-pki"
    /// `utc_time: DEFAULT` in the suite (BoringSSL's test_helpers.cc).
    static let defaultTime = "211005120000Z"

    // MARK: The cases

    struct Case {
        var name: String
        var chain: [Certificate]
        var trust: String
        var time: Date
        var keyPurpose: String
        var chromiumAccepts: Bool
    }

    /// Reads one `.test` file: `key: value` lines, `#` comments, and everything after
    /// `expected_errors:` as Chromium's expected errors (a line `ERROR: …` makes it a rejection;
    /// `WARNING: …` lines do not).
    static func readCase(_ name: String) throws -> Case {
        let text = String(decoding: try TestCertificates.bytes("\(corpus)/\(name)"), as: UTF8.self)
        var values: [String: String] = [:]
        var errors = ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            if line.hasPrefix("#") || line.isEmpty { continue }
            if line.hasPrefix("expected_errors:") {
                errors = lines.joined(separator: "\n")
                break
            }
            guard let colon = line.firstIndex(of: ":") else { throw SuiteError.malformed("\(name): a line that is not 'key: value': \(line)") }
            values[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let chainFile = values["chain"], let trust = values["last_cert_trust"], let time = values["utc_time"], let purpose = values["key_purpose"] else {
            throw SuiteError.malformed("\(name): chain, last_cert_trust, utc_time or key_purpose is missing")
        }
        let directory = (name as NSString).deletingLastPathComponent
        let chain = try CertificateLoader.certificates(from: try TestCertificates.bytes("\(corpus)/\(directory)/\(chainFile)"), source: chainFile).certificates
        guard !chain.isEmpty else { throw SuiteError.malformed("\(name): \(chainFile) holds no certificate") }
        guard let date = utcTime(time == "DEFAULT" ? defaultTime : time) else { throw SuiteError.malformed("\(name): utc_time \(time) is not YYMMDDHHMMSSZ") }
        let rejects = errors.split(separator: "\n").contains { $0.hasPrefix("ERROR: ") }
        return Case(name: name, chain: chain, trust: trust, time: date, keyPurpose: purpose, chromiumAccepts: !rejects)
    }

    enum SuiteError: Error { case malformed(String) }

    /// A UTCTime `YYMMDDHHMMSSZ` (years 50–99 are 19YY, RFC 5280 4.1.2.5.1).
    static func utcTime(_ text: String) -> Date? {
        let digits = Array(text.utf8)
        guard digits.count == 13, digits.last == UInt8(ascii: "Z"), digits.dropLast().allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        func field(_ at: Int) -> Int { Int(digits[at] - 0x30) * 10 + Int(digits[at + 1] - 0x30) }
        let year = field(0) < 50 ? 2000 + field(0) : 1900 + field(0)
        var components = DateComponents()
        (components.year, components.month, components.day, components.hour, components.minute, components.second) = (year, field(2), field(4), field(6), field(8), field(10))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)
    }

    /// Every `.test` file of the corpus, by its path relative to the corpus (from MANIFEST.tsv).
    static func caseNames() throws -> [String] {
        try CorpusTally.manifest(corpus).map { $0[0] }.filter { $0.hasSuffix(".test") }
    }

    // MARK: The mapping to a TrustPolicy

    /// The purpose Chromium's key purpose maps to, or nil when mtls has none (a purpose of another
    /// protocol). The `_STRICT` variants map to the plain purpose; the table names those cases.
    static func purpose(_ keyPurpose: String) -> TrustPolicy.Purpose? {
        switch keyPurpose {
        case "SERVER_AUTH", "SERVER_AUTH_STRICT", "SERVER_AUTH_STRICT_LEAF": .server
        case "CLIENT_AUTH", "CLIENT_AUTH_STRICT", "CLIENT_AUTH_STRICT_LEAF": .client
        case "ANY_EKU": .any
        default: nil
        }
    }

    /// The policy for a case, or nil when it cannot be run (see ``purpose(_:)``).
    ///
    /// - `TRUSTED_ANCHOR…` (with or without Chromium's expiration and constraint enforcement): the
    ///   last certificate is the one anchor; mtls always enforces an anchor's validity and
    ///   constraints. As in the x509-limbo runner, an anchor that is not self-issued needs
    ///   `--partial-chain` — unless the chain is that one certificate, which Chromium does not trust
    ///   as a leaf here (its `TRUSTED_ANCHOR_OR_LEAF` does).
    /// - `TRUSTED_ANCHOR_OR_LEAF`: the last certificate is the anchor, with `--partial-chain`.
    /// - `TRUSTED_LEAF…`: a lone certificate is trusted as itself (`--partial-chain`, the pinning
    ///   mtls offers); ending a longer chain it anchors nothing, and no anchor is given.
    /// - `DISTRUSTED`, `UNSPECIFIED`: no anchor; the last certificate is one more intermediate.
    static func policy(_ testCase: Case, profile: TrustPolicy.Profile) -> TrustPolicy? {
        guard let purpose = purpose(testCase.keyPurpose) else { return nil }
        let chain = testCase.chain
        let last = chain[chain.count - 1]
        var anchors: [Certificate] = []
        var intermediates = Array(chain.dropFirst())
        var partialChain = false
        switch testCase.trust {
        case let trust where trust.hasPrefix("TRUSTED_ANCHOR"):
            anchors = [last]
            intermediates = Array(chain.dropFirst().dropLast())
            partialChain = trust == "TRUSTED_ANCHOR_OR_LEAF" || (chain.count > 1 && last.subject != last.issuer)
        case let trust where trust.hasPrefix("TRUSTED_LEAF"):
            if chain.count == 1 {
                anchors = [last]
                intermediates = []
                partialChain = true
            }
        default:
            break
        }
        return TrustPolicy(
            anchors: anchors, intermediates: intermediates, evaluationTime: testCase.time, purpose: purpose, allowsPartialChain: partialChain, profile: profile)
    }

    /// The verdict of one run: `accept`, `reject`, or `-` when not run; and the finding names.
    static func run(_ testCase: Case, profile: TrustPolicy.Profile) throws -> (verdict: String, findings: [String]) {
        guard let policy = policy(testCase, profile: profile) else { return ("-", []) }
        let evaluation = try TrustEvaluator(policy: policy).evaluate(testCase.chain[0])
        for finding in evaluation.findings {
            // Every failure message says what happened, to which certificate, and what to do.
            XCTAssertFalse(finding.reason.isEmpty || finding.hint.description.isEmpty, "\(testCase.name): \(finding.name) without reason or hint")
        }
        return (evaluation.isTrusted ? "accept" : "reject", Array(Set(evaluation.findings.map(\.name))).sorted())
    }

    // MARK: The table

    struct Row: Equatable {
        var name: String
        var chromium: String
        var rfc5280: String
        var webPKI: String
        var findings: String
        var verdictClass: String
        var reason: String

        var line: String { [name, chromium, rfc5280, webPKI, findings, verdictClass, reason].joined(separator: "\t") }
    }

    static let header = [
        "# Chromium's path-validation suite (BoringSSL pki/testdata/verify_certificate_chain_unittest) against mtls.",
        "# Checked by Tests/MTLSTrustTests/ChromiumPKISuiteTests.swift; MTLS_WRITE_CHROMIUM_PKI_EXPECTED=1 rewrites the verdict",
        "# and findings columns and keeps class and reason. Lines 'reason KEY TEXT' explain the reason keys.",
        "# case\tchromium\trfc5280\twebpki\tfindings (rfc5280 run)\tclass\treason",
    ]

    /// The case rows and the reason texts by key.
    static func readTable() throws -> (rows: [String: Row], order: [String], reasons: [(key: String, text: String)]) {
        var rows: [String: Row] = [:]
        var order: [String] = []
        var reasons: [(String, String)] = []
        for line in String(decoding: try TestCertificates.bytes("\(corpus)/EXPECTED.tsv"), as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if columns.first == "reason", columns.count == 3 {
                reasons.append((columns[1], columns[2]))
            } else if columns.count == 7 {
                rows[columns[0]] = Row(
                    name: columns[0], chromium: columns[1], rfc5280: columns[2], webPKI: columns[3], findings: columns[4], verdictClass: columns[5], reason: columns[6])
                order.append(columns[0])
            } else {
                XCTFail("EXPECTED.tsv: a line that is neither a case row (7 columns) nor 'reason KEY TEXT': \(line)")
            }
        }
        return (rows, order, reasons)
    }

    // MARK: The tests

    func testEveryFileIsTheBytesTheManifestRecords() throws {
        let rows = try CorpusTally.manifest(Self.corpus)
        XCTAssertEqual(rows.count, 287, "files in MANIFEST.tsv")
        for row in rows {
            XCTAssertEqual(row.count, 4, "MANIFEST.tsv: \(row)")
            XCTAssertEqual(Digest.sha256(try TestCertificates.bytes("\(Self.corpus)/\(row[0])")).hex, row[3], "\(row[0]): not the bytes MANIFEST.tsv records")
        }
    }

    func testEveryCaseAgreesWithChromiumOrIsJustified() throws {
        let names = try Self.caseNames()
        XCTAssertEqual(names.count, 197, "the .test files of the suite")
        let table = try Self.readTable()
        let reasonKeys = Set(table.reasons.map(\.key))
        var computed: [Row] = []
        var tally: [String: Int] = [:]
        for name in names {
            let testCase = try Self.readCase(name)
            let rfc = try Self.run(testCase, profile: .rfc5280)
            let web = Self.purpose(testCase.keyPurpose) == .server ? try Self.run(testCase, profile: .webPKI).verdict : "-"
            let chromium = testCase.chromiumAccepts ? "accept" : "reject"
            let recorded = table.rows[name]
            var row = Row(
                name: name, chromium: chromium, rfc5280: rfc.verdict, webPKI: web, findings: rfc.findings.isEmpty ? "-" : rfc.findings.joined(separator: ","),
                verdictClass: recorded?.verdictClass ?? "", reason: recorded?.reason ?? "")
            if rfc.verdict == chromium && row.verdictClass != "excluded" {
                row.verdictClass = "agree"
                row.reason = "-"
            } else if row.verdictClass == "agree" || row.verdictClass.isEmpty {
                row.verdictClass = "unreviewed"
            }
            computed.append(row)
            tally[row.verdictClass, default: 0] += 1

            guard let recorded else {
                XCTFail("\(name): not in EXPECTED.tsv; its row would be: \(row.line)")
                continue
            }
            XCTAssertEqual(recorded.chromium, chromium, "\(name): EXPECTED.tsv records Chromium's verdict as \(recorded.chromium), the .test file says \(chromium)")
            XCTAssertEqual(
                recorded, row,
                "\(name): mtls now gives rfc5280=\(row.rfc5280) webpki=\(row.webPKI) findings=\(row.findings), EXPECTED.tsv records rfc5280=\(recorded.rfc5280) webpki=\(recorded.webPKI) findings=\(recorded.findings) class=\(recorded.verdictClass)"
            )
            // The rule that matters most: nothing Chromium rejects is accepted, unless the case
            // tests a Chromium setting mtls does not model (and says so).
            if chromium == "reject" && (row.rfc5280 == "accept" || row.webPKI == "accept") {
                XCTAssertEqual(row.verdictClass, "excluded", "\(name): Chromium rejects this chain and mtls accepts it (rfc5280=\(row.rfc5280) webpki=\(row.webPKI))")
            }
            if row.verdictClass == "stricter" {
                XCTAssertTrue(chromium == "accept" && row.rfc5280 == "reject", "\(name): class stricter, but Chromium \(chromium)s and mtls \(row.rfc5280)s")
            }
            XCTAssertTrue(["agree", "stricter", "excluded"].contains(row.verdictClass), "\(name): class \(row.verdictClass); a difference needs a class and a reason")
            if row.verdictClass != "agree" {
                XCTAssertTrue(reasonKeys.contains(row.reason), "\(name): the reason key \(row.reason.debugDescription) is not explained in EXPECTED.tsv")
            }
        }
        XCTAssertEqual(Set(table.order), Set(names), "EXPECTED.tsv names exactly the .test files")
        if ProcessInfo.processInfo.environment["MTLS_WRITE_CHROMIUM_PKI_EXPECTED"] == "1" {
            let reasons = table.reasons.map { "reason\t\($0.key)\t\($0.text)" }
            let text = (Self.header + computed.map(\.line) + reasons).joined(separator: "\n") + "\n"
            try text.write(to: TestCertificates.url("\(Self.corpus)/EXPECTED.tsv"), atomically: true, encoding: .utf8)
        }
        // The figures docs/CONFORMANCE.md gives.
        XCTAssertEqual(tally["agree"], 144, "cases agreeing with Chromium: \(tally)")
        XCTAssertEqual(tally["stricter"], 31, "cases mtls refuses on purpose where Chromium accepts: \(tally)")
        XCTAssertEqual(tally["excluded"], 22, "cases testing a Chromium setting mtls does not model: \(tally)")
    }

    /// The reading of the `.test` format itself.
    func testUTCTime() {
        XCTAssertEqual(Self.utcTime("211005120000Z")?.timeIntervalSince1970, 1_633_435_200)
        XCTAssertEqual(Self.utcTime("500101000000Z")?.timeIntervalSince1970, -631_152_000, "years 50–99 are 19YY")
        XCTAssertNil(Self.utcTime("2110051200Z"))
        XCTAssertNil(Self.utcTime("211005120000+0100"))
    }
}

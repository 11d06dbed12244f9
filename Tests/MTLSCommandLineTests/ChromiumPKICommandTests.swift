import Foundation
import XCTest

@testable import MTLSCommandLine
@testable import MTLSTrust

/// `mtls verify` on every case of the Chromium verifier's path-validation suite
/// (`TestCerts/third-party/chromium-pki`; the verdicts and their reasons are judged against
/// Chromium's by `ChromiumPKISuiteTests` in MTLSTrustTests): the command, given the options a
/// user would give for the case, exits 0 or 1 exactly as `EXPECTED.tsv` records, under
/// `--profile rfc5280` with the findings recorded there, and with the default profile for purpose
/// server. A rejection names the certificate at fault and what to do.
final class ChromiumPKICommandTests: XCTestCase {
    private static let corpus = "third-party/chromium-pki"

    private struct Row {
        var name: String
        var rfc5280: String
        var webPKI: String
        var findings: [String]
    }

    private func rows() throws -> [Row] {
        let text = String(decoding: try Fixtures.bytes("\(Self.corpus)/EXPECTED.tsv"), as: UTF8.self)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("reason\t") }.map { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Row(name: columns[0], rfc5280: columns[2], webPKI: columns[3], findings: columns[4] == "-" ? [] : columns[4].split(separator: ",").map(String.init))
        }
    }

    /// The `key: value` lines of a `.test` file, up to `expected_errors:`.
    private func settings(_ name: String) throws -> [String: String] {
        var values: [String: String] = [:]
        for line in String(decoding: try Fixtures.bytes("\(Self.corpus)/\(name)"), as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("expected_errors:") { break }
            guard !line.hasPrefix("#"), let colon = line.firstIndex(of: ":") else { continue }
            values[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    /// The `mtls verify` arguments for a case, the same mapping as `ChromiumPKISuiteTests.policy`:
    /// the chain file as given (leaf first, the rest candidate intermediates), `--anchors` with the
    /// last certificate when Chromium trusts it as an anchor (or a lone certificate trusted as a
    /// leaf), another root that issued nothing here when it trusts none, `--partial-chain` where
    /// the anchor is not self-issued or is the leaf itself.
    private func arguments(_ name: String, directory: URL) throws -> [String]? {
        let values = try settings(name)
        guard let chainFile = values["chain"], let trust = values["last_cert_trust"], let time = values["utc_time"], let keyPurpose = values["key_purpose"] else {
            XCTFail("\(name): a setting is missing: \(values)")
            return nil
        }
        let purpose: String
        switch keyPurpose {
        case "SERVER_AUTH", "SERVER_AUTH_STRICT", "SERVER_AUTH_STRICT_LEAF": purpose = "server"
        case "CLIENT_AUTH", "CLIENT_AUTH_STRICT", "CLIENT_AUTH_STRICT_LEAF": purpose = "client"
        case "ANY_EKU": purpose = "any"
        default: return nil
        }
        let chainPath = Fixtures.path("\(Self.corpus)/\((name as NSString).deletingLastPathComponent)/\(chainFile)")
        let chain = try CertificateLoader.certificates(atPath: chainPath)
        let last = chain[chain.count - 1]
        let anchorFile = directory.appendingPathComponent("anchor-\(name.replacingOccurrences(of: "/", with: "_")).pem")
        try last.pemString.write(to: anchorFile, atomically: true, encoding: .utf8)
        var anchors = Fixtures.path("other-root-ca.pem")
        var partialChain = false
        if trust.hasPrefix("TRUSTED_ANCHOR") {
            anchors = anchorFile.path
            partialChain = trust == "TRUSTED_ANCHOR_OR_LEAF" || (chain.count > 1 && last.subject != last.issuer)
        } else if trust.hasPrefix("TRUSTED_LEAF") && chain.count == 1 {
            anchors = anchorFile.path
            partialChain = true
        }
        let digits = Array(time == "DEFAULT" ? "211005120000Z" : time)
        let year = Int(String(digits[0..<2]))! < 50 ? "20" : "19"
        let at = "\(year)\(String(digits[0..<2]))-\(String(digits[2..<4]))-\(String(digits[4..<6]))T\(String(digits[6..<8])):\(String(digits[8..<10])):\(String(digits[10..<12]))Z"
        return [chainPath, "--anchors", anchors, "--no-hostname-check", "--at", at, "--purpose", purpose] + (partialChain ? ["--partial-chain"] : [])
    }

    func testVerifyExitsWithTheRecordedVerdict() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-chromium-pki-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var run = 0
        for row in try rows() {
            guard let arguments = try arguments(row.name, directory: directory) else {
                XCTAssertEqual(row.rfc5280, "-", "\(row.name): not run, but EXPECTED.tsv records a verdict")
                continue
            }
            run += 1
            let result = mtls(["verify"] + arguments + ["--profile", "rfc5280", "--json"])
            XCTAssertEqual(result.exitCode, row.rfc5280 == "accept" ? 0 : 1, "\(row.name) --profile rfc5280: \(result)")
            let findings = (try result.json()["findings"] as? [[String: Any]]) ?? []
            XCTAssertEqual(Set(findings.compactMap { $0["error"] as? String }), Set(row.findings), "\(row.name): the findings")
            for finding in findings {
                // What happened, to which certificate, and what to do.
                XCTAssertFalse((finding["reason"] as? String ?? "").isEmpty, "\(row.name): \(finding)")
                XCTAssertFalse((finding["hint"] as? String ?? "").isEmpty, "\(row.name): \(finding)")
                XCTAssertNotNil(finding["depth"] as? Int, "\(row.name): \(finding)")
            }
            if row.webPKI != "-" {
                let byDefault = mtls(["verify"] + arguments + ["--profile", "webpki"])
                XCTAssertEqual(byDefault.exitCode, row.webPKI == "accept" ? 0 : 1, "\(row.name) (--profile webpki): \(byDefault)")
                if row.webPKI == "reject" { XCTAssertTrue(byDefault.stdout.contains("hint: "), "\(row.name): \(byDefault.stdout)") }
            }
        }
        XCTAssertEqual(run, 188, "cases run (197 less the 9 of purposes mtls has not)")
    }
}

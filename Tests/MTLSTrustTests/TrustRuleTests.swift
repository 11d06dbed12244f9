import Foundation
import XCTest

@testable import MTLSTrust

/// Every rule of the catalogue with a fixture pair: the violating chain in `TestCerts/rules/<id>/`
/// is refused with the rule's code, its compliant twin is accepted (scripts/make-trust-rule-certs.sh).
final class TrustRuleFixtureTests: XCTestCase {
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    private func certificates(_ url: URL) throws -> [Certificate] {
        try Certificate.fromPEM(Array(Data(contentsOf: url)))
    }

    private func text(_ directory: URL, _ name: String) -> String? {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Evaluates `which` (bad or good) of the rule's pair as x509-limbo's runner would: the rule's
    /// first profile, partial chain when an anchor is not self-issued.
    private func evaluate(_ rule: TrustRuleEntry, _ which: String) throws -> TrustEvaluation {
        let directory = TestCertificates.url("rules/\(rule.id)")
        let chain = try certificates(directory.appendingPathComponent("\(which).pem"))
        let specific = directory.appendingPathComponent("\(which)-anchors.pem")
        let anchors = try certificates(FileManager.default.fileExists(atPath: specific.path) ? specific : directory.appendingPathComponent("anchors.pem"))
        var usage: KeyUsage = []
        for name in (text(directory, "key-usage") ?? "").split(separator: ",") {
            usage.insert(try XCTUnwrap(KeyUsage(name: String(name)), "unknown key usage \(name) in \(rule.id)/key-usage"))
        }
        let crlFile = directory.appendingPathComponent("\(which)-crls.pem")
        let crls = FileManager.default.fileExists(atPath: crlFile.path) ? try CertificateLoader.crls(atPath: crlFile.path) : []
        let policy = TrustPolicy(
            anchors: anchors, intermediates: Array(chain.dropFirst()), evaluationTime: Self.fixedTime, purpose: .server, hostname: text(directory, "host"),
            allowsPartialChain: anchors.contains { $0.subject != $0.issuer }, crls: crls, profile: rule.profiles.first == "webpki" ? .webPKI : .rfc5280,
            email: text(directory, "email"), requiredKeyUsage: usage)
        return try TrustEvaluator(policy: policy).evaluate(chain[0])
    }

    func testEveryRuleFixturePair() throws {
        let rules = TrustRuleCatalogue.all.flatMap(\.rules).filter(\.hasFixture)
        XCTAssertGreaterThan(rules.count, 40)
        for rule in rules {
            let bad = try evaluate(rule, "bad")
            XCTAssertFalse(bad.isTrusted, "\(rule.id): the violating chain was trusted")
            let finding = bad.findings.first { $0.name == rule.code }
            XCTAssertNotNil(finding, "\(rule.id): expected \(rule.code), got \(bad.findings.map(\.name))")
            if let finding {
                XCTAssertFalse(finding.reason.isEmpty, "\(rule.id): no reason")
                XCTAssertFalse(finding.hint.isEmpty, "\(rule.id): no hint")
            }
            let good = try evaluate(rule, "good")
            XCTAssertTrue(good.isTrusted, "\(rule.id): the compliant twin was refused: \(good.findings)")
        }
    }

    /// A fixture directory without a catalogue entry (or the reverse) is a rule nobody documents.
    func testFixtureDirectoriesAndCatalogueAgree() throws {
        let directories = try FileManager.default.contentsOfDirectory(atPath: TestCertificates.url("rules").path).filter { !$0.hasPrefix(".") }
        let withFixture = TrustRuleCatalogue.all.flatMap(\.rules).filter(\.hasFixture).map(\.id)
        XCTAssertEqual(Set(directories), Set(withFixture))
    }

    /// Under the other profile the webpki-only rules do not fire: the profile is a real switch.
    func testWebPKIOnlyRulesDoNotApplyUnderRFC5280() throws {
        for id in ["webpki.ee.eku-missing", "webpki.ee.cn", "webpki.ee.is-ca", "webpki.ca.key-usage"] {
            let rule = try XCTUnwrap(TrustRuleCatalogue.all.flatMap(\.rules).first { $0.id == id })
            var rfc = rule
            rfc.profiles = ["rfc5280"]
            XCTAssertFalse(try evaluate(rfc, "bad").findings.contains { $0.name == rule.code }, "\(id) fired under rfc5280")
        }
    }
}

/// The catalogue is the single source of docs/TRUST-RULES.md and names every mtls rule.
final class TrustRuleTableTests: XCTestCase {
    private var documentURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/TRUST-RULES.md")
    }

    /// `MTLS_WRITE_TRUST_RULES=1` (scripts/gen-trust-rules.sh) writes the file instead of comparing.
    func testCommittedDocumentIsTheCatalogue() throws {
        let generated = TrustRuleCatalogue.markdown(TrustRuleCatalogue.all)
        if ProcessInfo.processInfo.environment["MTLS_WRITE_TRUST_RULES"] == "1" {
            try generated.write(to: documentURL, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOf: documentURL, encoding: .utf8)
        XCTAssertEqual(committed, generated, "docs/TRUST-RULES.md differs from TrustRuleCatalogue; run scripts/gen-trust-rules.sh")
    }

    func testEveryMTLSRuleIsInTheCatalogueOnce() {
        let entries = TrustRuleCatalogue.all.flatMap(\.rules)
        let codes = Set(entries.map(\.code))
        for rule in TrustRule.allCases {
            XCTAssertTrue(codes.contains(rule.name), "\(rule.name) is not in the catalogue")
        }
        XCTAssertEqual(Set(entries.map(\.id)).count, entries.count, "duplicate rule ids")
        let platformCodes = Set(PlatformRules.all.map(\.code))
        for entry in entries where entry.code.hasPrefix("MTLS_") {
            XCTAssertTrue(
                TrustRule.allCases.contains { $0.name == entry.code } || platformCodes.contains(entry.code), "\(entry.id) names an unknown code \(entry.code)")
        }
        for entry in entries {
            XCTAssertFalse(entry.profiles.isEmpty, entry.id)
            XCTAssertFalse(entry.source.isEmpty, entry.id)
        }
    }
}

/// Rules whose violations openssl's CLI cannot produce, checked on their DER directly.
final class RuleSyntaxTests: XCTestCase {
    func testValidityEncoding() {
        XCTAssertTrue(ValidityEncodingPolicy.isValid(tag: 0x17, text: "300101000000Z"))
        XCTAssertTrue(ValidityEncodingPolicy.isValid(tag: 0x18, text: "20500101000000Z"))
        XCTAssertFalse(ValidityEncodingPolicy.isValid(tag: 0x18, text: "20300101000000Z"), "GeneralizedTime before 2050")
        XCTAssertFalse(ValidityEncodingPolicy.isValid(tag: 0x17, text: "3001010000Z"), "no seconds")
        XCTAssertFalse(ValidityEncodingPolicy.isValid(tag: 0x18, text: "20500101000000.5Z"), "fraction")
        XCTAssertFalse(ValidityEncodingPolicy.isValid(tag: 0x17, text: "300101000000+0100"), "not Zulu")
    }

    func testVersion() throws {
        // The version field: 2 (v3) in every TestCerts certificate, absent (v1) here.
        for identity in TestCertificates.allIdentities {
            XCTAssertEqual(CertificateFacts(try TestCertificates.certificate(identity)).version, 2, "\(identity)")
        }
        var der = try TestCertificates.certificate(TestCertificates.server).derBytes
        // Drop the [0] version element (A0 03 02 01 02) and fix the two outer lengths it was in.
        XCTAssertEqual(Array(der[0..<2] + der[4..<6] + der[8..<13]), [0x30, 0x82, 0x30, 0x82, 0xA0, 0x03, 0x02, 0x01, 0x02], "layout of the fixture")
        der.removeSubrange(8..<13)
        for lengthAt in [2, 6] {
            let length = (Int(der[lengthAt]) << 8 | Int(der[lengthAt + 1])) - 5
            der[lengthAt] = UInt8(length >> 8)
            der[lengthAt + 1] = UInt8(length & 0xFF)
        }
        let facts = CertificateFacts(der: der)
        XCTAssertTrue(facts.isReadable)
        XCTAssertEqual(facts.version, 0)
    }

    func testIssuerNameEncoding() throws {
        // The TestCerts leaf names its issuer exactly; a re-encoded copy (PrintableString → UTF8String) does not.
        let leaf = CertificateFacts(try TestCertificates.certificate(TestCertificates.server))
        let issuer = CertificateFacts(try TestCertificates.certificate(TestCertificates.intermediateCA))
        XCTAssertEqual(leaf.issuerDER, issuer.subjectDER)
        XCTAssertNil(WebPKISubjectEncodingPolicy.problem(issuer.subjectDER))
        // SEQUENCE { SET { SEQUENCE { countryName, PrintableString "USA" } } }
        let badCountry: [UInt8] = [0x30, 0x0E, 0x31, 0x0C, 0x30, 0x0A, 0x06, 0x03, 0x55, 0x04, 0x06, 0x13, 0x03, 0x55, 0x53, 0x41]
        XCTAssertNotNil(WebPKISubjectEncodingPolicy.problem(badCountry))
    }
}

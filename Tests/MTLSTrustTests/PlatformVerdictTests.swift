import Foundation
import XCTest

@testable import MTLSTrust

/// Platform verdicts (Sources/MTLSTrust/Platform/): every rule of ``PlatformRules`` against its
/// violating fixture and the compliant twin in `TestCerts/platform/` (scripts/make-platform-certs.sh),
/// evaluated at 2026-06-01T00:00:00Z.
final class PlatformVerdictTests: XCTestCase {
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    private func certificate(_ name: String) throws -> Certificate {
        let certificates = try Certificate.fromPEM(try TestCertificates.bytes(name))
        guard let first = certificates.first else { throw TestCertificates.FixtureError.notOneCertificate(name) }
        return first
    }

    /// The verdicts for `TestCerts/platform/<name>.pem` under its root.
    private func verdicts(
        _ name: String, anchorKind: PlatformAnchorKind? = nil, host: String? = nil, pinSet: PinSet? = nil, at time: Date = fixedTime
    ) throws -> [Platform: PlatformVerdict] {
        let rootName = name.hasPrefix("public-") ? "platform/public-root-ca.pem" : "platform/root-ca.pem"
        let policy = TrustPolicy(anchors: [try certificate(rootName)], evaluationTime: time, hostname: host)
        let kind = anchorKind ?? (name.hasPrefix("public-") ? .publicRoot : .privateAnchor)
        let result = try PlatformEvaluator.evaluate(try certificate("platform/\(name).pem"), policy: policy, anchorKind: kind, pinning: pinSet.map(PinDocument.init))
        return Dictionary(uniqueKeysWithValues: result.verdicts.map { ($0.platform, $0) })
    }

    private func codes(_ verdict: PlatformVerdict?) -> Set<String> { Set(verdict?.failures.map(\.rule.code) ?? []) }

    /// Fixture → the codes each platform reports (absent: none). The Android user-CA condition is
    /// added for every private anchor.
    static let expected: [(String, [Platform: Set<String>])] = [
        ("compliant", [:]),
        ("days-826", [.apple: ["MTLS_APPLE_VALIDITY_825"]]),
        ("rsa1024", [.apple: ["MTLS_APPLE_RSA_2048"]]),
        (
            "rsa768",
            [.apple: ["MTLS_APPLE_RSA_2048"], .android: ["MTLS_ANDROID_WEAK_KEY"], .java: ["MTLS_JAVA_DISABLED_KEY"], .chrome: ["MTLS_CHROME_WEAK_KEY"]]
        ),
        ("sha1", [.apple: ["MTLS_APPLE_SHA1_SIGNATURE"], .android: ["MTLS_ANDROID_WEAK_SIGNATURE"], .chrome: ["MTLS_CHROME_SHA1_SIGNATURE"]]),
        (
            "md5",
            [
                .apple: ["MTLS_APPLE_SHA1_SIGNATURE"], .android: ["MTLS_ANDROID_WEAK_SIGNATURE"], .java: ["MTLS_JAVA_DISABLED_SIGNATURE"],
                .chrome: ["MTLS_CHROME_SHA1_SIGNATURE"],
            ]
        ),
        ("sha224", [.apple: ["MTLS_APPLE_ATS_SIGNATURE_HASH"]]),
        ("cn-only", [.apple: ["MTLS_APPLE_SAN_REQUIRED"], .chrome: ["MTLS_CHROME_SAN_REQUIRED"]]),
        ("no-eku", [.apple: ["MTLS_APPLE_EKU_SERVERAUTH"]]),
        ("no-eku-2019", [:]),
        ("ec-p256", [:]),
        ("ec-p224", [.apple: ["MTLS_APPLE_ATS_KEY"]]),
        ("ec-p192", [.apple: ["MTLS_APPLE_ATS_KEY"], .java: ["MTLS_JAVA_DISABLED_KEY"]]),
        ("public-398", [:]),
        ("public-399", [.apple: ["MTLS_APPLE_VALIDITY_398"], .chrome: ["MTLS_CHROME_VALIDITY_398"]]),
    ]

    func testEveryFixtureGetsExactlyTheVerdictsOfTheRulesItBreaks() throws {
        for (name, expected) in Self.expected {
            let verdicts = try verdicts(name)
            for platform in Platform.allCases {
                var want = expected[platform] ?? []
                if platform == .android && !name.hasPrefix("public-") { want.insert("MTLS_ANDROID_USER_CA") }
                XCTAssertEqual(codes(verdicts[platform]), want, "\(name) on \(platform): \(verdicts[platform]?.failures.map(\.reason) ?? [])")
                let outcome: PlatformVerdict.Outcome =
                    want.isEmpty ? .accepted : (want == ["MTLS_ANDROID_USER_CA"] ? .conditional : .refused)
                XCTAssertEqual(verdicts[platform]?.outcome, outcome, "\(name) on \(platform)")
            }
        }
    }

    func testTheValidityMessageNamesTheDaysTheLimitAndTheFix() throws {
        let apple = try XCTUnwrap(try verdicts("days-826")[.apple]?.failures.first)
        XCTAssertEqual(apple.reason, "valid 826 days, more than 825 for a certificate issued after 2019-07-01")
        XCTAssertEqual(apple.fix, "reissue with `-days 825`")
        XCTAssertEqual(apple.depth, 0)
        XCTAssertTrue(apple.subject.contains("CN=platform.test"), apple.subject)
        let chrome = try XCTUnwrap(try verdicts("public-399")[.chrome]?.failures.first)
        XCTAssertEqual(chrome.reason, "valid 399 days, more than 398 for a publicly trusted certificate issued from 2020-09-01")
    }

    func testThe398DayRuleAppliesOnlyUnderAPublicRoot() throws {
        // The same 399-day certificate under the same root declared private: Apple and Chrome accept.
        let verdicts = try verdicts("public-399", anchorKind: .privateAnchor)
        XCTAssertEqual(verdicts[.apple]?.outcome, .accepted)
        XCTAssertEqual(verdicts[.chrome]?.outcome, .accepted)
        XCTAssertEqual(codes(verdicts[.android]), ["MTLS_ANDROID_USER_CA"])
    }

    func testJavaRefusesSHA1OnlyUnderAJDKRoot() throws {
        XCTAssertEqual(try verdicts("sha1")[.java]?.outcome, .accepted)
        let java = try verdicts("sha1", anchorKind: .publicRoot)[.java]
        XCTAssertEqual(codes(java), ["MTLS_JAVA_DISABLED_SIGNATURE"])
        XCTAssertTrue(java?.failures.first?.reason.contains("SHA1 jdkCA & usage TLSServer") ?? false, java?.failures.first?.reason ?? "")
    }

    func testAChainThatDoesNotValidateIsRefusedEverywhere() throws {
        // The compliant certificate two years after it expired (2028-04-05).
        let verdicts = try verdicts("compliant", at: Date(timeIntervalSince1970: 1_893_456_000))
        for platform in Platform.allCases {
            XCTAssertEqual(verdicts[platform]?.outcome, .refused, "\(platform)")
            XCTAssertTrue(codes(verdicts[platform]).contains("MTLS_PLATFORM_CHAIN_NOT_TRUSTED"), "\(platform)")
        }
        XCTAssertTrue(verdicts[.apple]?.failures.first?.reason.contains("expired") ?? false, verdicts[.apple]?.failures.first?.reason ?? "")
    }

    /// A chain that stops short of its anchor (no intermediate given) ends at no anchor: Android's
    /// private-anchor rule, which names the anchor the chain ends at, does not apply to it.
    func testAChainWithoutItsIntermediateEndsAtNoAnchor() throws {
        let leaf = try TestCertificates.certificate(TestCertificates.server)
        let policy = TrustPolicy(anchors: [try TestCertificates.certificate(TestCertificates.rootCA)], evaluationTime: Self.fixedTime, hostname: "localhost")
        let result = try PlatformEvaluator.evaluate(leaf, policy: policy, platforms: [.android])
        XCTAssertFalse(PlatformEvaluator.reachesAnchor(result.evaluation))
        XCTAssertEqual(result.verdicts.first?.failures.map(\.rule.code), ["MTLS_PLATFORM_CHAIN_NOT_TRUSTED"], "the missing issuer, once; no private-anchor rule")
        let complete = try PlatformEvaluator.evaluate(
            leaf, extraIntermediates: [try TestCertificates.certificate(TestCertificates.intermediateCA)], policy: policy, platforms: [.android])
        XCTAssertTrue(PlatformEvaluator.reachesAnchor(complete.evaluation))
        XCTAssertEqual(complete.verdicts.first?.failures.map(\.rule.code), ["MTLS_ANDROID_USER_CA"])
    }

    func testAHostOnlyInTheCommonNameSatisfiesJavaButNotAppleChromeOrAndroid() throws {
        let verdicts = try verdicts("cn-only", host: "platform.test")
        XCTAssertEqual(verdicts[.java]?.outcome, .accepted, "\(verdicts[.java]?.failures.map(\.reason) ?? [])")
        XCTAssertEqual(codes(verdicts[.apple]), ["MTLS_APPLE_SAN_REQUIRED"])
        XCTAssertEqual(codes(verdicts[.chrome]), ["MTLS_CHROME_SAN_REQUIRED"])
        XCTAssertTrue(codes(verdicts[.android]).contains("MTLS_PLATFORM_CHAIN_NOT_TRUSTED"))
        // A wrong host stays wrong for Java too.
        XCTAssertEqual(try self.verdicts("cn-only", host: "other.test")[.java]?.outcome, .refused)
    }

    func testAndroidEnforcesPinsUntilThePinSetExpires() throws {
        let other = try certificate("platform/ec-p256.pem")
        let pin = try Pin(parsing: other.spkiPin)
        let live = PinSet(pins: [pin], expiration: Self.fixedTime.addingTimeInterval(86_400))
        let android = try verdicts("public-398", pinSet: live)[.android]
        XCTAssertEqual(codes(android), ["MTLS_ANDROID_PIN_MISMATCH"])
        XCTAssertEqual(android?.outcome, .refused)
        let expired = PinSet(pins: [pin], expiration: Self.fixedTime.addingTimeInterval(-86_400))
        let after = try verdicts("public-398", pinSet: expired)[.android]
        XCTAssertEqual(after?.outcome, .accepted)
        XCTAssertTrue(after?.notes.first?.contains("expired") ?? false)
        let matching = PinSet(pins: [try Pin(parsing: try certificate("platform/public-398.pem").spkiPin)])
        XCTAssertEqual(try verdicts("public-398", pinSet: matching)[.android]?.outcome, .accepted)
    }

    func testEveryReportedCodeIsInTheCatalogueAndTheTableHasARowPerRule() throws {
        var seen = Set<String>()
        for (name, _) in Self.expected {
            for verdict in try verdicts(name).values { seen.formUnion(verdict.failures.map(\.rule.code)) }
        }
        let catalogue = Set(PlatformRules.all.map(\.code))
        XCTAssertTrue(seen.isSubset(of: catalogue), "\(seen.subtracting(catalogue))")
        // Every rule except the pin set and the shared chain rule has a fixture that breaks it.
        // (The two live-server ATS rules are proved by ProbeATSTests; the revocation rule by
        // testRevocationIsAppliedAsEachPlatformChecksIt.)
        XCTAssertEqual(
            catalogue.subtracting(seen),
            ["MTLS_ANDROID_PIN_MISMATCH", "MTLS_PLATFORM_CHAIN_NOT_TRUSTED", "MTLS_APPLE_ATS_TLS_VERSION", "MTLS_APPLE_ATS_FORWARD_SECRECY", "MTLS_APPLE_REVOKED"])
        XCTAssertEqual(Set(PlatformRules.all.map(\.id)).count, PlatformRules.all.count, "rule ids are unique")
        let table = TrustRuleCatalogue.markdown([TrustRuleCatalogue.platforms])
        for rule in PlatformRules.all {
            XCTAssertTrue(table.contains("`\(rule.code)`"), rule.code)
            XCTAssertTrue(rule.url.hasPrefix("https://"), rule.id)
        }
        XCTAssertEqual(table.split(separator: "\n").filter { $0.hasPrefix("| ") && $0.contains("`MTLS_") }.count, PlatformRules.all.count, "a row per rule")
    }

    func testJavaConstraintsAreReadFromTheInstalledJDK() throws {
        let properties = JavaAlgorithmConstraints.parseProperties("# c\njdk.x=A, \\\n    B keySize < 10\nother = 1\n")
        XCTAssertEqual(properties["jdk.x"], "A,  B keySize < 10")
        XCTAssertEqual(properties["other"], "1")
        let parsed = JavaAlgorithmConstraints(value: "MD5, include jdk.y, RSA keySize < 1024", origin: "test", properties: ["jdk.y": "DSA keySize < 2048"])
        XCTAssertEqual(parsed.entries.map(\.algorithm), ["MD5", "DSA", "RSA"])
        XCTAssertNotNil(parsed.disablingKey(type: "DSA", bits: 1024, anchorIsJDKRoot: false, at: Self.fixedTime))
        XCTAssertNil(parsed.disablingKey(type: "RSA", bits: 1024, anchorIsJDKRoot: false, at: Self.fixedTime))
        guard let installed = JavaAlgorithmConstraints.installed() else {
            throw XCTSkip("no JDK installed (scripts/install-deps.sh installs openjdk-17-jdk-headless)")
        }
        XCTAssertTrue(installed.origin.hasSuffix("conf/security/java.security"))
        XCTAssertNotNil(installed.disablingSignature(digest: "MD5", anchorIsJDKRoot: false, at: Self.fixedTime))
    }

    func testGivenAnchorsArePrivateAndSystemRootsArePublic() throws {
        let leaf = try certificate("platform/compliant.pem")
        let root = try certificate("platform/root-ca.pem")
        let given = TrustPolicy(anchors: [root], includesSystemRoots: true, evaluationTime: Self.fixedTime)
        let trusted = try TrustEvaluator(policy: given).evaluate(leaf)
        XCTAssertTrue(trusted.isTrusted)
        XCTAssertEqual(PlatformEvaluator.anchorKind(of: trusted, policy: given), .privateAnchor)
        // A trusted chain ending at a root that was not given is a system root.
        var system = given
        system.anchors = []
        XCTAssertEqual(PlatformEvaluator.anchorKind(of: trusted, policy: system), .publicRoot)
        // A chain that reaches no anchor: private when anchors were given.
        let other = TrustPolicy(anchors: [try certificate("platform/public-root-ca.pem")], evaluationTime: Self.fixedTime)
        let untrusted = try TrustEvaluator(policy: other).evaluate(leaf)
        XCTAssertFalse(untrusted.isTrusted)
        XCTAssertEqual(PlatformEvaluator.anchorKind(of: untrusted, policy: other), .privateAnchor)
    }

    func testSignatureDigestsAreReadFromOpenSSLsAlgorithmNames() {
        let cases: [(String, String?)] = [
            ("sha1WithRSAEncryption", "SHA1"), ("ecdsa-with-SHA1", "SHA1"), ("dsaWithSHA1", "SHA1"), ("md5WithRSAEncryption", "MD5"),
            ("sha224WithRSAEncryption", "SHA224"), ("ecdsa-with-SHA384", "SHA384"), ("sha512WithRSAEncryption", "SHA512"), ("ED25519", nil),
            ("RSA-SHA3-256", "SHA3"),
        ]
        for (name, digest) in cases { XCTAssertEqual(PlatformEvaluator.ChainCertificate.digest(of: name), digest, name) }
    }

    // MARK: Revocation, as each platform checks it

    /// A fetcher that reaches nothing (every URL offline).
    struct OfflineFetcher: RevocationFetching {
        func fetch(_ request: RevocationRequest, timeout: Double) -> RevocationResponse {
            RevocationResponse(status: nil, failure: "connection refused")
        }
    }

    private func verdicts(_ evaluation: TrustEvaluation, status: RevocationStatus, anchorKind: PlatformAnchorKind) -> [Platform: PlatformVerdict] {
        var evaluation = evaluation
        evaluation.revocation = RevocationReport(
            mode: .hard,
            certificates: [CertificateRevocation(depth: 0, subject: evaluation.chain[0].subject, status: status, decidedBy: "CRL http://ca.test/ca.crl", attempts: [])],
            seconds: 0)
        let input = PlatformInput(evaluation: evaluation, anchorKind: anchorKind, evaluationTime: Self.fixedTime)
        return Dictionary(uniqueKeysWithValues: PlatformEvaluator.evaluate(input).map { ($0.platform, $0) })
    }

    func testRevocationIsAppliedAsEachPlatformChecksIt() throws {
        let policy = TrustPolicy(anchors: [try certificate("platform/public-root-ca.pem")], evaluationTime: Self.fixedTime)
        let evaluation = try PlatformEvaluator.evaluate(try certificate("platform/public-398.pem"), policy: policy, anchorKind: .publicRoot).evaluation
        let revoked = RevocationStatus.revoked(reason: "keyCompromise", date: nil)

        // Under a public root Apple refuses a revoked certificate (its aggregated revocation data);
        // Chrome (CRLSet only), Android and Java (no check) accept it, and say why.
        let publicRevoked = verdicts(evaluation, status: revoked, anchorKind: .publicRoot)
        XCTAssertEqual(publicRevoked[.apple]?.outcome, .refused)
        XCTAssertEqual(codes(publicRevoked[.apple]), ["MTLS_APPLE_REVOKED"])
        let reason = publicRevoked[.apple]?.failures.first?.reason ?? ""
        XCTAssertTrue(reason.contains("is revoked (keyCompromise) according to CRL http://ca.test/ca.crl"), reason)
        for platform in [Platform.android, .java, .chrome] {
            XCTAssertEqual(publicRevoked[platform]?.outcome, .accepted, "\(platform)")
            XCTAssertTrue(
                publicRevoked[platform]?.notes.contains { $0.contains("yet \(platform.displayName) accepts it") } == true, "\(platform): \(publicRevoked[platform]?.notes ?? [])")
        }
        XCTAssertTrue(publicRevoked[.java]?.notes.contains { $0.contains("-Dcom.sun.net.ssl.checkRevocation=true") } == true)

        // Soft-fail: an undeterminable status passes everywhere, with a note.
        let offline = verdicts(evaluation, status: .cannotCheck("http://ca.test/ca.crl: connection refused"), anchorKind: .publicRoot)
        XCTAssertEqual(offline[.apple]?.outcome, .accepted)
        XCTAssertTrue(offline[.apple]?.notes.contains { $0.contains("connection refused") && $0.contains("soft-fail") } == true, "\(offline[.apple]?.notes ?? [])")

        // Under a private anchor no platform checks by default.
        let privateRevoked = verdicts(evaluation, status: revoked, anchorKind: .privateAnchor)
        XCTAssertTrue(privateRevoked.values.allSatisfy { $0.failures.allSatisfy { $0.rule != PlatformRules.appleRevoked } })
        XCTAssertTrue(privateRevoked[.apple]?.notes.contains { $0.contains("does not check revocation under a private anchor") } == true)

        // Every platform's behaviour is data, with a source.
        XCTAssertEqual(Set(PlatformRules.revocation.map(\.platform)), Set(Platform.allCases))
        XCTAssertTrue(PlatformRules.revocation.allSatisfy { $0.url.hasPrefix("https://") && !$0.source.isEmpty })
    }

    /// The evaluator fetches once and attaches the report; the chain's own findings carry no
    /// revocation failure (each platform applies it, not the plain verdict's mode).
    func testPlatformEvaluationFetchesRevocationOnceAndLeavesItToThePlatforms() throws {
        var policy = TrustPolicy(anchors: [try certificate("platform/root-ca.pem")], evaluationTime: Self.fixedTime)
        policy.revocation = .hard
        policy.revocationFetcher = OfflineFetcher()
        let result = try PlatformEvaluator.evaluate(try certificate("platform/compliant.pem"), policy: policy)
        let report = try XCTUnwrap(result.evaluation.revocation)
        XCTAssertEqual(report.certificates.first?.status.name, "offline")
        XCTAssertTrue(result.evaluation.findings.isEmpty, "\(result.evaluation.findings.map(\.reason))")
        XCTAssertTrue(result.verdicts.allSatisfy { $0.outcome != .refused }, "\(result.verdicts.map(\.failures))")
    }
}

import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls verify --platform`: one verdict per platform with the failing rule and the fix, the same
/// verdict in text, JSON and exit code (1 when a requested platform refuses).
final class PlatformCommandTests: XCTestCase {
    private let root = Fixtures.path("platform/root-ca.pem")
    private func leaf(_ name: String) -> String { Fixtures.path("platform/\(name).pem") }

    func testAnOverlongCertificateIsRefusedByAppleWithTheDaysAndTheFix() {
        let result = verify([leaf("days-826"), "--anchors", root, "--platform", "apple"])
        XCTAssertExit(result, 1)
        XCTAssertContains(
            result.stdout, "iOS 13+ / macOS 10.15+: refused — valid 826 days, more than 825 for a certificate issued after 2019-07-01; reissue with `-days 825`")
        XCTAssertContains(result.stdout, "MTLS_APPLE_VALIDITY_825")
        XCTAssertContains(result.stdout, "HT210176")
        XCTAssertFalse(result.stdout.contains("Chrome"), "only the platform asked for:\n\(result)")
    }

    func testACompliantCertificateIsAcceptedAndAndroidSaysWhatConfigItNeeds() {
        let result = verify([leaf("compliant"), "--anchors", root, "--platform", "all"])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stdout, "iOS 13+ / macOS 10.15+: accepted")
        XCTAssertContains(result.stdout, "Java (OpenJDK 17): accepted")
        XCTAssertContains(result.stdout, "Chrome: accepted")
        XCTAssertContains(result.stdout, "Android 7+ (API 24+): accepted only with app configuration")
        XCTAssertContains(result.stdout, "<certificates src=\"@raw/ca\"/>")
    }

    /// A leaf given without its intermediate reaches no anchor: the report says so, tells the
    /// missing issuer once per platform, and claims no anchor the chain ends at.
    func testAChainCutShortSaysItReachedNoAnchor() {
        let result = verify([Fixtures.path("server.pem"), "--anchors", Fixtures.path("root-ca.pem"), "--host", "localhost", "--platform", "all"])
        XCTAssertExit(result, 1)
        XCTAssertContains(result.stdout, "server.pem: CN=localhost (no anchor reached)")
        XCTAssertEqual(result.stdout.components(separatedBy: "was not found among the intermediates and anchors").count - 1, 4, result.stdout)
        XCTAssertFalse(result.stdout.contains("a private anchor"), result.stdout)
    }

    /// Text, JSON and exit code agree on every fixture, for every platform.
    func testTextJSONAndExitCodeCarryTheSameVerdictForEveryFixture() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.path("platform"))
            .filter { $0.hasSuffix(".pem") && !$0.contains("root-ca") }.map { String($0.dropLast(4)) }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 15)
        var refusedSomewhere = 0
        for name in names {
            let anchors = name.hasPrefix("public-") ? Fixtures.path("platform/public-root-ca.pem") : root
            let text = verify([leaf(name), "--anchors", anchors, "--platform", "all"])
            let jsonRun = verify([leaf(name), "--anchors", anchors, "--platform", "all", "--json"])
            let json = try jsonRun.json()
            let refused = try XCTUnwrap(json["refused"] as? Bool, name)
            XCTAssertExit(text, refused ? 1 : 0, name)
            XCTAssertExit(jsonRun, refused ? 1 : 0, name)
            let platforms = try XCTUnwrap(json["platforms"] as? [[String: Any]], name)
            XCTAssertEqual(platforms.map { $0["platform"] as? String }, ["apple", "android", "java", "chrome"], name)
            for platform in platforms {
                let verdict = try XCTUnwrap(platform["verdict"] as? String)
                let displayName = try XCTUnwrap(platform["name"] as? String)
                let phrase = verdict == "conditional" ? "accepted only with app configuration" : verdict
                XCTAssertContains(text.stdout, "\(displayName): \(phrase)", name)
                for failure in platform["failures"] as? [[String: Any]] ?? [] {
                    let code = try XCTUnwrap(failure["code"] as? String)
                    XCTAssertContains(text.stdout, code, name)
                    XCTAssertFalse((failure["reason"] as? String ?? "").isEmpty, name)
                    XCTAssertFalse((failure["fix"] as? String ?? "").isEmpty, name)
                }
            }
            if refused { refusedSomewhere += 1 }
        }
        // All but compliant, no-eku-2019, ec-p256, public-398 and public-399 break a rule: a root
        // given with --anchors is a private anchor, which the 398-day limits do not cover.
        XCTAssertEqual(refusedSomewhere, names.count - 5)
    }

    func testPublicRootsAreTheSystemOnesAndTheExpiredChainIsRefusedEverywhere() throws {
        let result = mtls(["verify", leaf("compliant"), "--anchors", root, "--platform", "java,chrome", "--json", "--at", "2030-01-01T00:00:00Z"])
        XCTAssertExit(result, 1)
        let json = try result.json()
        XCTAssertEqual(json["anchor"] as? String, "private")
        for platform in json["platforms"] as? [[String: Any]] ?? [] {
            XCTAssertEqual(platform["verdict"] as? String, "refused")
            let codes = (platform["failures"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            XCTAssertEqual(codes, ["MTLS_PLATFORM_CHAIN_NOT_TRUSTED"])
        }
    }

    func testBatchGivesOneResultPerFileAndAnUnknownPlatformIsAUsageError() throws {
        let batch = verify(["--batch", leaf("compliant"), leaf("sha1"), "--anchors", root, "--platform", "chrome", "--json"])
        XCTAssertExit(batch, 1)
        let json = try batch.json()
        XCTAssertEqual(json["count"] as? Int, 2)
        XCTAssertEqual(json["refused"] as? Bool, true)
        let bad = verify([leaf("compliant"), "--anchors", root, "--platform", "windows"])
        XCTAssertExit(bad, 2)
        XCTAssertContains(bad.stderr, "--platform 'windows' must be apple, android, java, chrome or all")
        XCTAssertContains(mtls(["verify", "--help"]).stdout, "--platform <LIST>")
    }

    func testTheDemoShowsTheVerdictsForItsOwnCertificateAndANonCompliantOne() {
        let result = mtls(["demo"])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stdout, "5. Would iOS, Android, Java and Chrome accept it?")
        XCTAssertContains(result.stdout, "$ mtls verify server.pem --anchors ca.pem --host localhost --platform all")
        XCTAssertContains(result.stdout, "Verdict: accepted by all 4 platforms (Android 7+ (API 24+) with app configuration)")
        XCTAssertContains(result.stdout, "iOS 13+ / macOS 10.15+: refused — CN=legacy.localhost names its server only in the subject CN")
        XCTAssertContains(result.stdout, "and: valid 3,650 days, more than 825 for a certificate issued after 2019-07-01; reissue with `-days 825`")
        XCTAssertContains(result.stdout, "Chrome: refused")
        XCTAssertContains(result.stdout, "\n    server.pem: CN=localhost ← CN=mtls serve test CA (private anchor)\n", "temporary paths are shortened")
    }
}

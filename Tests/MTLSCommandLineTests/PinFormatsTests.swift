import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls pin --format …`: every format's shape, the rules each target imposes, and `--check`
/// reading every format back (its own and hand-written ones). The real clients that consume the
/// outputs are in PinConsumersTests.
final class PinFormatsTests: XCTestCase {
    /// Every text format `--check` must read back.
    static let textFormats = [
        "spki", "cert", "json", "curl", "hpkp", "trustkit", "trustkit-objc", "trustkit-plist", "android", "android-trustkit",
        "okhttp", "okhttp-java", "ats", "swift",
    ]

    private var leafPin: String { get throws { try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem")) } }
    private var intermediatePin: String { get throws { try OpenSSL.spkiPin(certificate: Fixtures.path("intermediate-ca.pem")) } }
    private var otherLeafPin: String { get throws { try OpenSSL.spkiPin(certificate: Fixtures.path("server-rsa2048.pem")) } }
    private var backupPin: String {
        get throws { try OpenSSL.spkiPin(publicKeyPEM: try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout"])) }
    }

    /// The base64 digest of a `sha256/…` pin.
    private func base64(_ pin: String) -> String { String(pin.dropFirst("sha256/".count)) }

    /// `mtls pin server-chain.pem backup.csr --format F --host localhost ARGS` at the fixed time.
    private func pin(_ format: String, _ extra: [String] = [], sources: [String] = ["server-chain.pem", "keys/backup.csr"]) -> CLIResult {
        mtls(["pin"] + sources.map(Fixtures.path) + ["--format", format, "--at", fixedTime] + extra)
    }

    // MARK: - Every format, round trip

    func testEveryFormatIsReadBackByCheckAndAcceptsItsChainButNotAnotherKey() throws {
        let directory = try TemporaryDirectory(self)
        for format in Self.textFormats {
            let file = directory.file("pins.\(format)")
            let written = pin(format, ["--host", "localhost", "--expires", "2030-01-01", "--out", file])
            XCTAssertExit(written, 0, format)
            let same = mtls(["pin", Fixtures.path("server-fullchain.pem"), "--check", file, "--at", fixedTime])
            XCTAssertExit(same, 0, format)
            XCTAssertContains(same.stdout, "Verdict: OK", format)
            let other = mtls(["pin", Fixtures.path("server-rsa2048.pem"), "--check", file, "--at", fixedTime])
            XCTAssertExit(other, 1, format)
            XCTAssertContains(other.stdout, "DRIFT", format)
            XCTAssertContains(other.stdout, try otherLeafPin, "the presented pin is shown (\(format))")
        }
    }

    func testEachFormatCarriesThePinsInItsOwnSyntax() throws {
        let leaf = base64(try leafPin)
        let backup = base64(try backupPin)
        let expectations: [(String, [String])] = [
            ("spki", ["sha256/\(leaf)  # CN=localhost,O=mtls test,C=US [leaf] notAfter 2035-01-01"]),
            ("json", ["\"pin\": \"sha256/\(leaf)\"", "\"level\": \"backup\"", "\"hosts\": [", "\"expires\": \"2030-01-01\""]),
            ("hpkp", ["Public-Key-Pins: pin-sha256=\"\(leaf)\"; ", "pin-sha256=\"\(backup)\"; max-age="]),
            (
                "trustkit",
                ["import TrustKit", "kTSKPinnedDomains: [", "\"localhost\": [", "kTSKEnforcePinning: true", "kTSKExpirationDate: \"2030-01-01\"", "\"\(leaf)\",", "\"\(backup)\","]
            ),
            ("trustkit-objc", ["#import <TrustKit/TrustKit.h>", "@\"localhost\": @{", "kTSKEnforcePinning: @YES", "@\"\(backup)\","]),
            ("trustkit-plist", ["<key>TSKConfiguration</key>", "<key>TSKExpirationDate</key>", "<string>2030-01-01</string>", "<string>\(leaf)</string>"]),
            (
                "android",
                [
                    "<network-security-config>", "<domain includeSubdomains=\"false\">localhost</domain>", "<pin-set expiration=\"2030-01-01\">",
                    "<pin digest=\"SHA-256\">\(backup)</pin>",
                ]
            ),
            ("android-trustkit", ["<trustkit-config enforcePinning=\"true\" disableDefaultReportUri=\"true\" />"]),
            (
                "okhttp",
                [
                    "import okhttp3.CertificatePinner", "val certificatePinner: CertificatePinner = CertificatePinner.Builder()", ".add(\"localhost\", \"sha256/\(leaf)\")",
                    ".build()",
                ]
            ),
            (
                "okhttp-java",
                [
                    "public final class PinnedCertificates {", "public static final CertificatePinner CERTIFICATE_PINNER = new CertificatePinner.Builder()",
                    ".add(\"localhost\", \"sha256/\(backup)\")", ".build();",
                ]
            ),
            ("ats", ["<key>NSPinnedDomains</key>", "<key>NSPinnedCAIdentities</key>", "<key>NSPinnedLeafIdentities</key>", "<key>SPKI-SHA256-BASE64</key>"]),
            (
                "swift",
                [
                    "enum PinnedKeys {", "static let hosts: [String] = [\"localhost\"]", "static let expires: String? = \"2030-01-01\"", "level: \"backup\"",
                    "static let spkiSHA256: Set<String> = [",
                ]
            ),
        ]
        for (format, fragments) in expectations {
            let result = pin(format, ["--host", "localhost", "--expires", "2030-01-01"])
            XCTAssertExit(result, 0, format)
            for fragment in fragments { XCTAssertContains(result.stdout, fragment, format) }
        }
    }

    func testATSKeepsCAAndLeafIdentitiesApartAndPutsTheBackupWithTheLeaf() throws {
        let result = pin("ats", ["--host", "api.example.com"])
        XCTAssertExit(result, 0)
        let object = try XCTUnwrap(try PropertyListSerialization.propertyList(from: Data(result.stdout.utf8), format: nil) as? [String: Any])
        let domain = try XCTUnwrap(((object["NSAppTransportSecurity"] as? [String: Any])?["NSPinnedDomains"] as? [String: Any])?["api.example.com"] as? [String: Any])
        let list = { (key: String) in ((domain[key] as? [[String: String]]) ?? []).compactMap { $0["SPKI-SHA256-BASE64"] } }
        XCTAssertEqual(list("NSPinnedCAIdentities"), [base64(try intermediatePin)])
        XCTAssertEqual(list("NSPinnedLeafIdentities"), [base64(try leafPin), base64(try backupPin)])
        XCTAssertEqual(domain["NSIncludesSubdomains"] as? Bool, false)
        XCTAssertContains(result.stderr, "BOTH lists")

        // With no leaf pinned, a backup in the leaf list would demand a leaf that does not exist yet.
        let caOnly = pin("ats", ["--host", "api.example.com", "--level", "intermediate"])
        XCTAssertExit(caOnly, 0)
        XCTAssertNotContains(caOnly.stdout, "NSPinnedLeafIdentities")
        XCTAssertContains(caOnly.stdout, base64(try backupPin))
    }

    func testATSCheckNeedsAMatchInEachList() throws {
        let directory = try TemporaryDirectory(self)
        // Leaf list: another server's key and the backup; CA list: the intermediate.
        let file = directory.file("ats.plist")
        XCTAssertExit(
            mtls([
                "pin", Fixtures.path("server-rsa2048.pem"), Fixtures.path("intermediate-ca.pem"), Fixtures.path("keys/backup.csr"), "--format", "ats", "--host", "localhost",
                "--out", file,
            ]), 0)
        let check = mtls(["pin", Fixtures.path("server-chain.pem"), "--check", file, "--at", fixedTime])
        XCTAssertExit(check, 1)
        XCTAssertContains(check.stdout, "NSPinnedLeafIdentities has no match")
        XCTAssertContains(check.stdout, "✓ presented (intermediate")
    }

    func testDERFormatWritesOneCerPerCertificateIntoTheOutDirectory() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("bundle")
        let result = pin("der", ["--out", out])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stderr, "backup")
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        XCTAssertEqual(names, ["intermediate-mtls-test-intermediate-ca.cer", "leaf-localhost.cer"])
        XCTAssertEqual(contents(out + "/leaf-localhost.cer"), try Fixtures.bytes("server.der"))
        XCTAssertEqual(contents(out + "/intermediate-mtls-test-intermediate-ca.cer"), try Fixtures.bytes("intermediate-ca.der"))
        // The bundle is a pin set too: whole-certificate pins, as Alamofire's PinnedCertificatesTrustEvaluator.
        XCTAssertExit(mtls(["pin", Fixtures.path("server-fullchain.pem"), "--check", out]), 0)
        XCTAssertExit(mtls(["pin", Fixtures.path("server-rsa2048.pem"), "--check", out]), 1)
        // No overwrite without --force; no --out is a usage error.
        XCTAssertExit(pin("der", ["--out", out]), 3)
        XCTAssertExit(pin("der", ["--out", out, "--force"]), 0)
        XCTAssertExit(pin("der"), 2)
    }

    // MARK: - Rules per target

    func testEnforcingTrustKitRefusesASinglePinAndOtherTargetsWarn() throws {
        for format in ["trustkit", "trustkit-objc", "trustkit-plist", "android-trustkit"] {
            let single = pin(format, ["--host", "localhost"], sources: ["server.pem"])
            XCTAssertExit(single, 2, format)
            XCTAssertContains(single.stderr, "fewer than two pins", format)
            XCTAssertContains(single.stderr, "backup", format)
            XCTAssertEqual(single.stdout, "", format)
            let reportOnly = pin(format, ["--host", "localhost", "--report-only"], sources: ["server.pem"])
            XCTAssertExit(reportOnly, 0, format)
            XCTAssertContains(reportOnly.stderr, "only one pin", format)
        }
        XCTAssertContains(pin("trustkit", ["--host", "localhost", "--report-only"], sources: ["server.pem"]).stdout, "kTSKEnforcePinning: false")
        XCTAssertContains(pin("android-trustkit", ["--host", "localhost", "--report-only"], sources: ["server.pem"]).stdout, "enforcePinning=\"false\"")
        for format in ["android", "okhttp", "okhttp-java", "ats", "hpkp", "swift", "json", "curl"] {
            let single = pin(format, ["--host", "localhost"], sources: ["server.pem"])
            XCTAssertExit(single, 0, format)
            XCTAssertContains(single.stderr, "only one pin", format)
        }
        // Two pins satisfy TrustKit, and a plain list never nags.
        XCTAssertExit(pin("trustkit", ["--host", "localhost"], sources: ["server.pem", "keys/backup.csr"]), 0)
        XCTAssertNotContains(pin("spki", [], sources: ["server.pem"]).stderr, "only one pin")
    }

    func testLeafOnlyPinsWarnWhenTheLeafExpiresWithinNinetyDays() throws {
        let soon = mtls(["pin", Fixtures.path("server.pem"), Fixtures.path("server-p384.pem"), "--format", "okhttp", "--host", "localhost", "--at", "2034-11-01T00:00:00Z"])
        XCTAssertExit(soon, 0)
        XCTAssertContains(soon.stderr, "the only pins are of the leaf, which expires on 2035-01-01 (in 61 days)")
        let later = mtls(["pin", Fixtures.path("server.pem"), Fixtures.path("server-p384.pem"), "--format", "okhttp", "--host", "localhost", "--at", fixedTime])
        XCTAssertNotContains(later.stderr, "the only pins are of the leaf")
        let withBackup = mtls(["pin", Fixtures.path("server.pem"), Fixtures.path("keys/backup.csr"), "--format", "okhttp", "--host", "localhost", "--at", "2034-11-01T00:00:00Z"])
        XCTAssertNotContains(withBackup.stderr, "the only pins are of the leaf")
        let expired = mtls(["pin", Fixtures.path("server-expired.pem"), Fixtures.path("server.pem"), "--format", "android", "--host", "localhost", "--at", fixedTime])
        XCTAssertContains(expired.stderr, "expired on 2021-01-01")
    }

    func testCurlKeepsLeafPinsOnlyAndRefusesAChainOfCAs() throws {
        let result = pin("curl")
        XCTAssertExit(result, 0)
        XCTAssertEqual(result.stdout, "sha256//\(base64(try leafPin));sha256//\(base64(try backupPin))\n")
        XCTAssertContains(result.stderr, "checks the leaf only")
        let onlyCA = mtls(["pin", Fixtures.path("intermediate-ca.pem"), "--format", "curl"])
        XCTAssertExit(onlyCA, 3)
        XCTAssertContains(onlyCA.stderr, "leaf")
    }

    func testExpiresGoesWhereThePlatformCarriesItAndIsValidated() throws {
        let hpkp = pin("hpkp", ["--expires", "2026-06-30"])
        XCTAssertContains(hpkp.stdout, "max-age=\(30 * 86_400 - 1)")
        let okhttp = pin("okhttp", ["--host", "localhost", "--expires", "2030-01-01"])
        XCTAssertContains(okhttp.stdout, "ship an update with new pins before 2030-01-01")
        XCTAssertContains(okhttp.stderr, "no pin expiry")
        XCTAssertContains(pin("ats", ["--host", "localhost", "--expires", "2030-01-01"]).stderr, "no pin expiry")
        XCTAssertContains(pin("spki", ["--expires", "2030-01-01"]).stdout, "expires 2030-01-01\n")
        XCTAssertContains(pin("android", ["--host", "localhost", "--expires", "2026-01-01"]).stderr, "has passed")
        XCTAssertContains(pin("android", ["--host", "localhost"]).stderr, "no --expires")
        for bad in ["2027-02-30", "2027-1-1", "next year", "2027-01-01T00:00:00Z"] {
            let result = pin("android", ["--host", "localhost", "--expires", bad])
            XCTAssertExit(result, 2, bad)
            XCTAssertContains(result.stderr, "YYYY-MM-DD", bad)
        }
    }

    func testHPKPWantsABackupPinOutsideTheChain() throws {
        let noBackup = pin("hpkp", ["--include-subdomains", "--host", "example.com"], sources: ["server-chain.pem"])
        XCTAssertContains(noBackup.stderr, "RFC 7469 requires a backup pin")
        XCTAssertContains(noBackup.stdout, "; includeSubDomains")
        XCTAssertTrue(pin("hpkp", ["--report-only"]).stdout.hasPrefix("Public-Key-Pins-Report-Only: "))
    }

    // MARK: - Hosts and patterns

    func testHostPatternsFollowEachPlatform() throws {
        let v4 = pin("okhttp", ["--host", "api.example.com", "--include-subdomains"])
        XCTAssertContains(v4.stdout, ".add(\"**.api.example.com\", ")
        XCTAssertNotContains(v4.stdout, ".add(\"api.example.com\", ")
        let v3 = pin("okhttp-java", ["--host", "api.example.com", "--include-subdomains", "--okhttp-version", "3"])
        XCTAssertContains(v3.stdout, ".add(\"api.example.com\", ")
        XCTAssertContains(v3.stdout, ".add(\"*.api.example.com\", ")
        XCTAssertNotContains(v3.stdout, "**.")
        XCTAssertContains(v3.stderr, "names two or more labels below api.example.com are NOT pinned")
        XCTAssertContains(pin("okhttp", ["--host", "*.example.com"]).stdout, ".add(\"*.example.com\", ")

        for (format, fragment) in [
            ("trustkit", "\"example.com\": ["), ("trustkit", "kTSKIncludeSubdomains: true"),
            ("android", "<domain includeSubdomains=\"true\">example.com</domain>"), ("ats", "<key>example.com</key>"),
        ] {
            let result = pin(format, ["--host", "*.example.com"])
            XCTAssertExit(result, 0, format)
            XCTAssertContains(result.stdout, fragment, format)
            XCTAssertContains(result.stderr, "has no wildcard hosts", format)
        }
        XCTAssertContains(pin("android", ["--host", "example.com", "--include-subdomains"]).stdout, "includeSubdomains=\"true\"")
        let hosts = pin("android", ["--host", "a.example.com", "--host", "b.example.com"])
        XCTAssertContains(hosts.stdout, ">a.example.com</domain>")
        XCTAssertContains(hosts.stdout, ">b.example.com</domain>")

        for format in ["trustkit", "android", "okhttp", "ats"] {
            let missing = pin(format)
            XCTAssertExit(missing, 2, format)
            XCTAssertContains(missing.stderr, "--host", format)
        }
        for bad in ["https://example.com", "example.com:443", "exa mple.com", "a*.example.com"] {
            XCTAssertExit(pin("okhttp", ["--host", bad]), 2, bad)
        }
    }

    func testCheckPicksThePinsThatApplyToTheHostAsThePlatformDoes() throws {
        let directory = try TemporaryDirectory(self)
        let leaf = try leafPin
        let other = try otherLeafPin
        // OkHttp: every matching pattern counts; *. is exactly one label.
        let okhttp = try directory.write(
            "Pins.kt",
            text: """
                val pinner = CertificatePinner.Builder()
                    .add("*.example.com", "\(other)")
                    .add("api.example.com", "\(leaf)")
                    .build()
                """)
        let chain = Fixtures.path("server-chain.pem")
        XCTAssertExit(mtls(["pin", chain, "--check", okhttp, "--host", "api.example.com"]), 0)
        let oneLabel = mtls(["pin", chain, "--check", okhttp, "--host", "www.example.com"])
        XCTAssertExit(oneLabel, 1)
        XCTAssertContains(oneLabel.stdout, "Applies: *.example.com")
        let deeper = mtls(["pin", chain, "--check", okhttp, "--host", "a.b.example.com"])
        XCTAssertExit(deeper, 1)
        XCTAssertContains(deeper.stdout, "NOT PINNED")
        // Android: includeSubdomains covers any depth; the most specific domain wins.
        let android = try directory.write(
            "nsc.xml",
            text: """
                <?xml version="1.0" encoding="utf-8"?>
                <network-security-config>
                  <domain-config>
                    <domain includeSubdomains="true">example.com</domain>
                    <pin-set><pin digest="SHA-256">\(base64(leaf))</pin></pin-set>
                    <domain-config>
                      <domain>legacy.example.com</domain>
                      <pin-set><pin digest="SHA-256">\(base64(other))</pin></pin-set>
                    </domain-config>
                  </domain-config>
                </network-security-config>
                """)
        XCTAssertExit(mtls(["pin", chain, "--check", android, "--host", "a.b.example.com"]), 0)
        XCTAssertExit(mtls(["pin", chain, "--check", android, "--host", "legacy.example.com"]), 1)
        // A pin list keeps its host, wildcard included.
        let list = directory.file("pins.txt")
        XCTAssertExit(pin("spki", ["--host", "*.example.com", "--out", list]), 0)
        XCTAssertExit(mtls(["pin", chain, "--check", list, "--host", "www.example.com"]), 0)
        XCTAssertExit(mtls(["pin", chain, "--check", list, "--host", "example.com"]), 1)
        // Several hosts and none given: the leaf's names (localhost) choose, else a usage error.
        let twoHosts = try directory.write("two.json", text: #"{"hosts": ["a.example.com", "b.example.com"], "pins": ["\#(leaf)"]}"#)
        let ambiguous = mtls(["pin", chain, "--check", twoHosts])
        XCTAssertExit(ambiguous, 2)
        XCTAssertContains(ambiguous.stderr, "--host")
    }

    // MARK: - --check output

    func testCheckPrintsThePresentedPinsInOkHttpsStyleAndARotationCalendar() throws {
        let directory = try TemporaryDirectory(self)
        let file = directory.file("nsc.xml")
        XCTAssertExit(pin("android", ["--host", "localhost", "--expires", "2027-01-01", "--out", file]), 0)
        let result = mtls(["pin", Fixtures.path("server-fullchain.pem"), "--check", file, "--at", fixedTime])
        XCTAssertExit(result, 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let start = try XCTUnwrap(lines.firstIndex(of: "Peer certificate chain:"))
        XCTAssertTrue(lines[start + 1].hasPrefix("    \(try leafPin): CN=localhost,O=mtls test,C=US"), lines[start + 1])
        XCTAssertTrue(lines[start + 2].hasPrefix("    \(try intermediatePin): CN=mtls Test Intermediate CA"), lines[start + 2])
        XCTAssertTrue(lines[start + 3].hasPrefix("    \(try OpenSSL.spkiPin(certificate: Fixtures.path("root-ca.pem"))): CN=mtls Test Root CA"))
        XCTAssertContains(result.stdout, "Pinned certificates for localhost:")
        XCTAssertContains(result.stdout, "\(try backupPin)  - not presented")
        XCTAssertContains(result.stdout, "Rotation calendar (as of 2026-06-01):")
        XCTAssertContains(result.stdout, "2027-01-01  in 214 days")
        XCTAssertContains(result.stdout, "pin set for localhost expires")
        XCTAssertContains(result.stdout, "2035-01-01  in 3136 days     notAfter of CN=localhost,O=mtls test,C=US [leaf]")
        XCTAssertContains(result.stdout, "2045-01-01  in 6789 days     notAfter of CN=mtls Test Root CA")
        XCTAssertContains(result.stdout, "Verdict: OK: 2 pins match")

        let json = mtls(["pin", Fixtures.path("server-rsa2048.pem"), "--check", file, "--at", fixedTime, "--json"])
        XCTAssertExit(json, 1)
        let object = try json.json()
        XCTAssertEqual(object["verdict"] as? String, "drift")
        let target = try XCTUnwrap((object["targets"] as? [[String: Any]])?.first)
        XCTAssertEqual(target["expires"] as? String, "2027-01-01")
        let presented = try XCTUnwrap(target["presented"] as? [[String: Any]])
        XCTAssertEqual(presented.first?["pin"] as? String, try otherLeafPin)
        XCTAssertEqual(presented.first?["daysLeft"] as? Int, 3136)
        XCTAssertEqual(presented.first?["pinned"] as? Bool, false)
        let calendar = try XCTUnwrap(target["calendar"] as? [[String: Any]])
        XCTAssertEqual(calendar.first?["date"] as? String, "2027-01-01")
        XCTAssertEqual(calendar.first?["days"] as? Int, 214)
    }

    func testAnExpiredPinSetIsNotEnforcedSoItIsNotDrift() throws {
        let directory = try TemporaryDirectory(self)
        let file = directory.file("pins.plist")
        XCTAssertExit(pin("trustkit-plist", ["--host", "localhost", "--expires", "2026-01-01", "--out", file]), 0)
        let result = mtls(["pin", Fixtures.path("server-rsa2048.pem"), "--check", file, "--at", fixedTime])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stdout, "EXPIRED")
        XCTAssertExit(mtls(["pin", Fixtures.path("server-rsa2048.pem"), "--check", file, "--at", "2025-12-31T12:00:00Z"]), 1)
    }

    func testCheckWarnsWhenEveryPinIsInTodaysChain() throws {
        let directory = try TemporaryDirectory(self)
        let file = directory.file("pins.txt")
        XCTAssertExit(mtls(["pin", Fixtures.path("server-chain.pem"), "--out", file]), 0)
        let result = mtls(["pin", Fixtures.path("server-chain.pem"), "--check", file])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stderr, "no backup pin")
    }

    // MARK: - Configurations written by people

    func testHandWrittenConfigurationsOfEveryPlatformAreRead() throws {
        let directory = try TemporaryDirectory(self)
        let leaf = base64(try leafPin)
        let backup = base64(try backupPin)
        let files = [
            "trustkit.swift": """
            let trustKitConfig = [
                kTSKSwizzleNetworkDelegates: false,
                kTSKPinnedDomains: [
                    "localhost": [
                        kTSKExpirationDate: "2030-12-01",
                        kTSKPublicKeyHashes: [
                            "\(leaf)", // current
                            "\(backup)" /* backup */
                        ],]]] as [String : Any]
            TrustKit.initSharedInstance(withConfiguration:trustKitConfig)
            """,
            "trustkit.m": """
            NSDictionary *trustKitConfig =
            @{
              kTSKPinnedDomains : @{
                      @"localhost" : @{
                              kTSKIncludeSubdomains:@YES,
                              kTSKPublicKeyHashes : @[
                                      @"\(leaf)",
                                      @"\(backup)",
                                      ],
                              kTSKEnforcePinning:@NO,
                              }}};
            """,
            "Pinning.java": """
            CertificatePinner certificatePinner = new CertificatePinner.Builder()
                .add("localhost", "sha256/\(backup)", "sha256/\(leaf)")
                .build();
            """,
            "header.txt": "Public-Key-Pins: pin-sha256=\"\(backup)\"; pin-sha256=\"\(leaf)\"; max-age=5184000; includeSubDomains\n",
            "curl.txt": "sha256//\(backup);sha256//\(leaf)\n",
            "pins.json": #"["sha256/\#(leaf)", "sha256/\#(backup)"]"#,
            "hex.txt": "# one digest in hex\n" + (Data(base64Encoded: leaf) ?? Data()).map { String(format: "%02X", $0) }.joined(separator: ":") + "\n",
        ]
        for (name, text) in files {
            let path = try directory.write(name, text: text)
            let result = mtls(["pin", Fixtures.path("server-chain.pem"), "--check", path, "--host", "localhost"])
            XCTAssertExit(result, 0, name)
            let drift = mtls(["pin", Fixtures.path("server-rsa2048.pem"), "--check", path, "--host", "localhost"])
            XCTAssertExit(drift, 1, name)
        }
        XCTAssertContains(mtls(["pin", Fixtures.path("server-chain.pem"), "--check", directory.file("trustkit.m")]).stdout, "report only")
    }

    func testUnreadablePinFilesAreBadInputThatNamesTheFile() throws {
        let directory = try TemporaryDirectory(self)
        for (name, text) in [
            ("broken.xml", "<network-security-config><domain-config><pin-set>"),
            ("short.txt", "sha256/AAAA\n"),
            ("nopins.kt", "val x = CertificatePinner.Builder().build()\n"),
            ("bad.plist", "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key></dict></plist>"),
        ] {
            let path = try directory.write(name, text: text)
            let result = mtls(["pin", Fixtures.path("server.pem"), "--check", path])
            XCTAssertExit(result, 3, name)
            XCTAssertContains(result.stderr, path, name)
        }
    }

    // MARK: - Sources

    func testBackupKeysFromPublicKeysCSRsAndPrivateKeysGiveTheSamePin() throws {
        let directory = try TemporaryDirectory(self)
        let publicPEM = try directory.write("backup.pub", try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout"]))
        let publicDER = try directory.write("backup.pub.der", try OpenSSL.output(["pkey", "-in", Fixtures.path("keys/backup.key"), "-pubout", "-outform", "DER"]))
        let csrDER = try directory.write("backup.csr.der", try OpenSSL.output(["req", "-in", Fixtures.path("keys/backup.csr"), "-outform", "DER"]))
        let expected = try backupPin
        for path in [publicPEM, publicDER, csrDER, Fixtures.path("keys/backup.csr"), Fixtures.path("keys/backup.key")] {
            let result = mtls(["pin", path])
            XCTAssertExit(result, 0, path)
            XCTAssertTrue(result.stdout.hasPrefix(expected + "  # "), "\(path): \(result)")
            XCTAssertContains(result.stdout, "[backup]", path)
        }
        XCTAssertContains(mtls(["pin", Fixtures.path("keys/backup.key")]).stderr, "private key")
    }

    func testLevelKeepsBackupKeysAndSaysWhenAChainLacksTheLevel() throws {
        let leafOnly = pin("spki", ["--level", "leaf"])
        XCTAssertEqual(leafOnly.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }, [try leafPin, try backupPin])
        let noRoot = pin("spki", ["--level", "root"])
        XCTAssertExit(noRoot, 3)
        XCTAssertContains(noRoot.stderr, "no root certificate")
        XCTAssertContains(noRoot.stderr, "--level intermediate")
    }

    func testCertFormatPinsWholeCertificatesAndLeavesBackupKeysOut() throws {
        let result = pin("cert")
        XCTAssertExit(result, 0)
        XCTAssertEqual(result.stdout.split(separator: "\n").count, 2)
        XCTAssertTrue(result.stdout.hasPrefix("cert-sha256/"))
        XCTAssertContains(result.stderr, "no certificate yet")
    }

    func testOfflineRefusesLiveSources() throws {
        let result = mtls(["pin", "https://localhost:1", Fixtures.path("server.pem"), "--offline", "--format", "swift"])
        XCTAssertExit(result, 2)
        XCTAssertContains(result.stderr, "https://localhost:1")
    }

    // MARK: - Output files

    func testOutIsAtomicAndNeverOverwritesWithoutForce() throws {
        let directory = try TemporaryDirectory(self)
        let file = directory.file("network_security_config.xml")
        XCTAssertExit(pin("android", ["--host", "localhost", "--out", file]), 0)
        XCTAssertEqual(try permissions(file), 0o644)
        let first = contents(file)
        let refused = pin("android", ["--host", "example.com", "--out", file])
        XCTAssertExit(refused, 3)
        XCTAssertContains(refused.stderr, "--force")
        XCTAssertEqual(contents(file), first)
        XCTAssertExit(pin("android", ["--host", "example.com", "--out", file, "--force"]), 0)
        XCTAssertContains(String(decoding: contents(file) ?? [], as: UTF8.self), ">example.com</domain>")
        XCTAssertEqual(try directory.contents(), ["network_security_config.xml"], "no temporary file is left behind")
    }

    func testGeneratedSourcesAreTheSameWhereverAndWheneverTheyAreMade() throws {
        let first = pin("swift", ["--host", "localhost"])
        let second = mtls(["pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", "swift", "--host", "localhost", "--at", "2030-01-01T00:00:00Z"])
        XCTAssertExit(first, 0)
        XCTAssertEqual(first.stdout, second.stdout)
        XCTAssertNotContains(first.stdout, Fixtures.directory.path, "no absolute paths in generated code")
        XCTAssertContains(first.stdout, "//   mtls pin server-chain.pem backup.csr --format swift --host localhost")
        XCTAssertContains(pin("swift", ["--name", "APIPins"]).stdout, "enum APIPins {")
        XCTAssertExit(pin("swift", ["--name", "9lives"]), 2)
    }

    func testJSONFlagPrintsExactlyOneObjectWhateverTheOutcome() throws {
        let pins = mtls(["pin", Fixtures.path("server-chain.pem"), "--json"])
        XCTAssertExit(pins, 0)
        XCTAssertEqual((try pins.json()["pins"] as? [Any])?.count, 2)
        try XCTAssertJSONError(mtls(["pin", Fixtures.path("bad/garbage.bin"), "--json"]), code: 3)
        try XCTAssertJSONError(mtls(["pin", Fixtures.path("server.pem"), "--json", "--format", "okhttp", "--host", "localhost"]), code: 2)
        try XCTAssertJSONError(mtls(["pin", Fixtures.path("server.pem"), "--json", "--check", Fixtures.path("bad/garbage.bin")]), code: 3)
    }

    func testUnknownFormatNamesTheFormatsThereAre() throws {
        let result = pin("xml")
        XCTAssertExit(result, 2)
        XCTAssertContains(result.stderr, "okhttp-java")
        XCTAssertContains(result.stderr, "android-trustkit")
        XCTAssertExit(pin("okhttp", ["--host", "localhost", "--okhttp-version", "2"]), 2)
    }
}

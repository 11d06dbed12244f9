import Foundation
import XCTest

@testable import MTLSTrust

/// The library's pinning model: documents read from the formats `mtls pin` writes, per-host
/// requirements, expiry and report-only, evaluated against the TestCerts server chain.
final class PinDocumentTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_780_272_000)  // 2026-06-01T00:00:00Z

    private func chain() throws -> [Certificate] {
        [try TestCertificates.certificate(TestCertificates.server), try TestCertificates.certificate(TestCertificates.intermediateCA)]
    }

    private func document(_ text: String, source: String = "pins") throws -> PinDocument {
        try PinDocument(bytes: Array(text.utf8), source: source)
    }

    func testAnAndroidConfigPinsEachDomainAndLeavesOtherHostsUnpinned() throws {
        let chain = try chain()
        let leafPin = Pin.publicKey(of: chain[0])
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <network-security-config>
              <domain-config>
                <domain includeSubdomains="true">example.com</domain>
                <pin-set expiration="2027-01-01"><pin digest="SHA-256">\(leafPin.base64)</pin></pin-set>
              </domain-config>
              <domain-config>
                <domain>other.example.org</domain>
                <pin-set><pin digest="SHA-256">AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</pin></pin-set>
              </domain-config>
            </network-security-config>
            """
        let document = try document(xml, source: "network_security_config.xml")
        XCTAssertEqual(document.format, "Android network security config")
        XCTAssertEqual(document.evaluate(chain, host: "api.example.com", at: now).verdict, .ok, "a subdomain of an includeSubdomains domain")
        let other = document.evaluate(chain, host: "other.example.org", at: now)
        XCTAssertEqual(other.verdict, .drift)
        XCTAssertTrue(other.refusesConnection)
        XCTAssertTrue(other.mismatchDescription.contains("for other.example.org"), other.mismatchDescription)
        XCTAssertTrue(other.mismatchDescription.contains(leafPin.description), "the presented pins are listed: \(other.mismatchDescription)")
        let unpinned = document.evaluate(chain, host: "elsewhere.net", at: now)
        XCTAssertEqual(unpinned.verdict, .notPinned)
        XCTAssertFalse(unpinned.refusesConnection)
        XCTAssertEqual(document.evaluate(chain, host: "api.example.com", at: Date(timeIntervalSince1970: 1_798_848_000)).verdict, .ok, "2027-01-01 00:00: still the last day")
    }

    /// Android's rules for nested and overlapping configs: a nested domain-config inherits its
    /// parent's pin-set (with its expiration), and the most specific domain decides, so a config
    /// without a pin-set to inherit leaves its domain unpinned below a parent that includes subdomains.
    func testAnAndroidNestedConfigInheritsThePinSetAndAMoreSpecificConfigWithoutOneExempts() throws {
        let chain = try chain()
        let leafPin = Pin.publicKey(of: chain[0])
        let xml = """
            <network-security-config>
              <domain-config>
                Text between elements, as in OWASP's example, is ignored.
                <domain includeSubdomains="true">example.com</domain>
                <pin-set expiration="2027-01-01">
                  <!-- the leaf -->
                  <pin digest="SHA-256">
                    \(leafPin.base64)
                  </pin>
                </pin-set>
                <domain-config cleartextTrafficPermitted="false">
                  <domain>inherits.example.org</domain>
                </domain-config>
              </domain-config>
              <domain-config>
                <domain includeSubdomains="true">public.example.com</domain>
              </domain-config>
            </network-security-config>
            """
        let document = try document(xml, source: "network_security_config.xml")
        let inherited = document.evaluate(chain, host: "inherits.example.org", at: now)
        XCTAssertEqual(inherited.verdict, .ok, "the nested config's domain is pinned with the parent's pin-set")
        XCTAssertEqual(inherited.domain?.pattern, "inherits.example.org")
        XCTAssertEqual(inherited.domain?.expirationDay, PinDates.day("2027-01-01"), "the expiration comes with the inherited pin-set")
        XCTAssertEqual(document.evaluate(chain, host: "www.example.com", at: now).verdict, .ok)
        for host in ["public.example.com", "cdn.public.example.com"] {
            let exempt = document.evaluate(chain, host: host, at: now)
            XCTAssertEqual(exempt.verdict, .notPinned, "\(host): the more specific config has no pin-set")
            XCTAssertFalse(exempt.refusesConnection)
        }
    }

    /// TrustKit's TSKExcludeSubdomainFromParentPolicy: a subdomain entry without hashes exempts that
    /// host from its parent's TSKIncludeSubdomains policy.
    func testATrustKitSubdomainExcludedFromItsParentsPolicyIsNotPinned() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>TSKConfiguration</key><dict>
                <key>TSKPinnedDomains</key><dict>
                  <key>example.com</key><dict>
                    <key>TSKIncludeSubdomains</key><true/>
                    <key>TSKPublicKeyHashes</key><array>
                      <string>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</string>
                      <string>BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=</string>
                    </array>
                  </dict>
                  <key>unpinned.example.com</key><dict>
                    <key>TSKExcludeSubdomainFromParentPolicy</key><true/>
                  </dict>
                </dict>
              </dict>
            </dict></plist>
            """
        let document = try document(plist, source: "Info.plist")
        XCTAssertEqual(document.evaluate(try chain(), host: "api.example.com", at: now).verdict, .drift)
        let excluded = document.evaluate(try chain(), host: "unpinned.example.com", at: now)
        XCTAssertEqual(excluded.verdict, .notPinned)
        XCTAssertFalse(excluded.refusesConnection)
    }

    /// Code people write names its hosts and pins by constants: Java `static final String`, Kotlin
    /// `const val` with templates and concatenation, qualified names. They are resolved; a call
    /// of the pinner chain with an expression that cannot be is refused, not dropped (dropped, its
    /// host would read as not pinned); `.add` calls of other builders are left alone.
    func testOkHttpCodeWithStringConstantsIsReadAndUnknownExpressionsAreRefused() throws {
        let chain = try chain()
        let leaf = Pin.publicKey(of: chain[0]).base64
        let java = """
            public final class Net {
                private static final String HOST = "example.com";
                private static final String PIN = "sha256/\(leaf)";
                static CertificatePinner pinner() {
                    Headers headers = new Headers.Builder().add(name, value).build();
                    return new CertificatePinner.Builder()
                        .add(HOST, PIN)
                        .add("*." + HOST, Pins.BACKUP)
                        .build();
                }
            }
            final class Pins { static final String BACKUP = "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="; }
            """
        let document = try document(java, source: "Net.java")
        XCTAssertEqual(document.domains.map(\.pattern), ["example.com", "*.example.com"])
        XCTAssertEqual(document.evaluate(chain, host: "example.com", at: now).verdict, .ok)
        XCTAssertEqual(document.evaluate(chain, host: "www.example.com", at: now).verdict, .drift)
        let kotlin = """
            object Pins {
                const val HOST = "example.com"
                private const val LEAF: String = "\(leaf)"
            }
            val pinner = CertificatePinner.Builder()
                .add("**.${Pins.HOST}", "sha256/$LEAF", "sha256/" + "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=")
                .build()
            """
        let fromKotlin = try self.document(kotlin, source: "Pins.kt")
        XCTAssertEqual(fromKotlin.domains.map(\.pattern), ["**.example.com"])
        XCTAssertEqual(fromKotlin.domains.first?.pins.count, 2)
        XCTAssertEqual(fromKotlin.evaluate(chain, host: "api.example.com", at: now).verdict, .ok)
        let dynamic = "val pinner = CertificatePinner.Builder().add(\"example.com\", *pins.toTypedArray()).build()"
        XCTAssertThrowsError(try self.document(dynamic, source: "Dyn.kt")) { error in
            let message = (error as? MTLSTrustError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("*pins.toTypedArray()") && message.contains("not a string literal or a string constant"), message)
        }
        let unknownHost = "val pinner = CertificatePinner.Builder().add(BuildConfig.API_HOST, \"sha256/\(leaf)\").build()"
        XCTAssertThrowsError(try self.document(unknownHost, source: "Net.kt")) { error in
            XCTAssertTrue(((error as? MTLSTrustError)?.message ?? "").contains("BuildConfig.API_HOST"), "\(error)")
        }
    }

    /// TrustKit dictionaries in Swift with the hosts and hashes in constants; a hash named by a
    /// constant that is not in the file, or a domain without hashes that does not opt out of its
    /// parent's policy, is an error rather than a domain without pins.
    func testTrustKitCodeWithConstantsIsReadAndUnknownNamesAreRefused() throws {
        let chain = try chain()
        let leaf = Pin.publicKey(of: chain[0]).base64
        func swift(_ hashes: String, _ extra: String = "") -> String {
            """
            enum PinnedKeys {
                static let primary = "\(leaf)"
                static let backup = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
            }
            let apiHost = "example.com"
            let trustKitConfig = [
                kTSKPinnedDomains: [
                    apiHost: [kTSKIncludeSubdomains: true, kTSKPublicKeyHashes: \(hashes)],
                    \(extra)
                ]
            ] as [String: Any]
            """
        }
        let document = try self.document(swift("[PinnedKeys.primary, PinnedKeys.backup]"), source: "AppDelegate.swift")
        XCTAssertEqual(document.format, "TrustKit configuration")
        XCTAssertEqual(document.evaluate(chain, host: "api.example.com", at: now).verdict, .ok)
        XCTAssertThrowsError(try self.document(swift("[Secrets.main, Secrets.spare]"), source: "AppDelegate.swift")) { error in
            XCTAssertTrue(((error as? MTLSTrustError)?.message ?? "").contains("Secrets.main, Secrets.spare"), "\(error)")
        }
        XCTAssertThrowsError(
            try self.document(swift("[PinnedKeys.primary, PinnedKeys.backup]", #""bare.example.com": [kTSKIncludeSubdomains: false],"#), source: "AppDelegate.swift")
        ) {
            error in
            XCTAssertTrue(((error as? MTLSTrustError)?.message ?? "").contains("bare.example.com has no TSKPublicKeyHashes"), "\(error)")
        }
    }

    /// A domain written in Unicode covers the host in the form it arrives in (`xn--`, UTS 46), as
    /// OkHttp canonicalises its patterns; and the reverse.
    func testAnInternationalisedDomainCoversItsXNForm() {
        XCTAssertTrue(HostMatching.domain("Bücher.example", includesSubdomains: true, host: "api.xn--bcher-kva.example"))
        XCTAssertTrue(HostMatching.domain("xn--bcher-kva.example", includesSubdomains: false, host: "BÜCHER.example"))
        XCTAssertFalse(HostMatching.domain("bücher.example", includesSubdomains: false, host: "bucher.example"))
        XCTAssertTrue(HostMatching.okhttp(pattern: "*.bücher.example", host: "www.xn--bcher-kva.example"))
        XCTAssertTrue(HostMatching.okhttp(pattern: "**.βόλος.com", host: "a.b.xn--nxasmm1c.com"))
        XCTAssertFalse(HostMatching.okhttp(pattern: "*.bücher.example", host: "a.b.xn--bcher-kva.example"))
    }

    func testAnExpiredDomainIsNotEnforcedAfterItsLastDay() throws {
        let document = try document("expires 2026-05-31\nsha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
        let result = document.evaluate(try chain(), host: "localhost", at: now)
        XCTAssertEqual(result.verdict, .expired)
        XCTAssertFalse(result.refusesConnection)
        let dayBefore = document.evaluate(try chain(), host: "localhost", at: now.addingTimeInterval(-1))
        XCTAssertEqual(dayBefore.verdict, .drift, "23:59:59 on the expiry day is still enforced")
    }

    func testAReportOnlyTrustKitDomainRecordsTheMismatchButDoesNotRefuse() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>TSKConfiguration</key><dict>
                <key>TSKPinnedDomains</key><dict>
                  <key>localhost</key><dict>
                    <key>TSKEnforcePinning</key><false/>
                    <key>TSKPublicKeyHashes</key><array>
                      <string>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</string>
                      <string>BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=</string>
                    </array>
                  </dict>
                </dict>
              </dict>
            </dict></plist>
            """
        let result = try document(plist, source: "Info.plist").evaluate(try chain(), host: "localhost", at: now)
        XCTAssertEqual(result.verdict, .drift)
        XCTAssertEqual(result.domain?.enforced, false)
        XCTAssertFalse(result.refusesConnection)
    }

    func testIntegerFlagsInAPlistReadAsBooleansAsFoundationReadThem() throws {
        // Plists written by scripts often carry <integer>0</integer>/<integer>1</integer> for flags;
        // PropertyListSerialization gave NSNumbers that read as Bool, so they must still count.
        func plist(enforce: String, subdomains: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>TSKConfiguration</key><dict>
                <key>TSKPinnedDomains</key><dict>
                  <key>example.com</key><dict>
                    <key>TSKEnforcePinning</key>\(enforce)
                    <key>TSKIncludeSubdomains</key>\(subdomains)
                    <key>TSKPublicKeyHashes</key><array>
                      <string>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=</string>
                      <string>BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=</string>
                    </array>
                  </dict>
                </dict>
              </dict>
            </dict></plist>
            """
        }
        let integers = try document(plist(enforce: "<integer>0</integer>", subdomains: "<integer>1</integer>"), source: "Info.plist")
        let result = integers.evaluate(try chain(), host: "api.example.com", at: now)
        XCTAssertEqual(result.verdict, .drift, "<integer>1</integer> includes subdomains")
        XCTAssertEqual(result.domain?.enforced, false, "<integer>0</integer> turns enforcement off")
        let booleans = try document(plist(enforce: "<true/>", subdomains: "<false/>"), source: "Info.plist")
        XCTAssertEqual(booleans.evaluate(try chain(), host: "api.example.com", at: now).verdict, .notPinned, "<false/> keeps subdomains out")
        XCTAssertEqual(booleans.evaluate(try chain(), host: "example.com", at: now).domain?.enforced, true)
    }

    func testALeafScopedRequirementIsNotSatisfiedByTheIntermediate() throws {
        let chain = try chain()
        let curl = "sha256//\(Pin.publicKey(of: chain[1]).base64)"
        let result = try document(curl, source: "curl.txt").evaluate(chain, host: "localhost", at: now)
        XCTAssertEqual(result.verdict, .drift, "curl's --pinnedpubkey checks the leaf only")
        XCTAssertTrue(result.mismatchDescription.contains("in the leaf"), result.mismatchDescription)
        let any = try document(Pin.publicKey(of: chain[1]).description).evaluate(chain, host: "localhost", at: now)
        XCTAssertEqual(any.verdict, .ok)
        XCTAssertEqual(any.requirements.first?.matched.first?.depth, 1)
    }

    func testAPinSetIsADocumentWithOneAnyHostDomain() throws {
        let chain = try chain()
        let set = PinSet(pins: [Pin.publicKey(of: chain[1])], expiration: now.addingTimeInterval(-1))
        let result = PinDocument(set).evaluate(chain, host: "anything.example", at: now)
        XCTAssertEqual(result.verdict, .ok)
        XCTAssertEqual(
            PinDocument(PinSet(pins: [try Pin(parsing: "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")], expiration: now.addingTimeInterval(-1))).evaluate(
                chain, host: nil, at: now
            ).verdict, .expired)
    }

    func testPinSetParseReadsEveryFormatButRefusesPerHostFiles() throws {
        let okhttp = """
            CertificatePinner.Builder()
                .add("example.com", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
                .build()
            """
        XCTAssertEqual(try PinSet.parse(Array(okhttp.utf8), source: "Pins.kt").pins.count, 1)
        let two = """
            CertificatePinner.Builder()
                .add("a.example", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
                .add("b.example", "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=")
                .build()
            """
        XCTAssertThrowsError(try PinSet.parse(Array(two.utf8), source: "Pins.kt")) { error in
            XCTAssertTrue((error as? MTLSTrustError)?.message.contains("read it as a PinDocument") == true, "\(error)")
        }
    }

    func testUnreadableContentNamesTheFile() {
        XCTAssertThrowsError(try PinDocument(bytes: Array("not a pin\n".utf8), source: "pins.txt")) { error in
            let error = error as? MTLSTrustError
            XCTAssertEqual(error?.reason, .malformedInput)
            XCTAssertTrue(error?.message.hasPrefix("pins.txt: \"not\" is not a SHA-256 pin") == true, error?.message ?? "")
        }
        // The file's own text is quoted as a Swift literal, its controls escaped: a pin file is
        // input too, and its message may reach a terminal or a CI log.
        XCTAssertThrowsError(try PinDocument(bytes: Array("sha256/\u{1B}[32mtrusted\u{202E}\n".utf8), source: "pins.txt")) { error in
            let message = (error as? MTLSTrustError)?.message ?? ""
            XCTAssertTrue(message.contains(#""sha256/\u{1B}[32mtrusted\u{202E}""#), message)
            XCTAssertFalse(message.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, message)
        }
        XCTAssertThrowsError(try PinDocument(bytes: [], source: "empty.txt")) { error in
            XCTAssertEqual((error as? MTLSTrustError)?.reason, .emptyInput)
        }
    }
}

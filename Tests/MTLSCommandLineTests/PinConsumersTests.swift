import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSTestServer
import MTLSTestSupport
import MTLSTrust

/// The real clients that consume `mtls pin` output: curl `--pinnedpubkey`, OkHttp 3.13 (Debian's
/// `libokhttp-java`, run with the JDK), xmllint, plutil (from the Swift toolchain), swiftc and clang,
/// and the `PinnedApp` example built by PinSetPlugin. Live servers are `openssl s_server` on a free
/// loopback port with the TestCerts PKI. A test skips only when its consumer is not installed.
final class PinConsumersTests: XCTestCase {
    private var rootCA: String { Fixtures.path("root-ca.pem") }

    /// The pin lines of a default (`spki`) run.
    private func pins(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0.hasPrefix("sha256/") }
    }

    /// The TestCerts server (leaf + intermediate), or another key for the same name ("a key change").
    private func server(_ leaf: String = "server") throws -> OpenSSLServer {
        let server = try OpenSSLServer(["-www"], certificate: Fixtures.path("\(leaf).pem"), key: Fixtures.path("\(leaf).key"))
        addTeardownBlock { server.stop() }
        return server
    }

    // MARK: - Live sources

    func testLivePinsAreTheValidatedChainAndAnUntrustedServerNeedsAnchorsOrInsecure() throws {
        let live = try server()
        let url = "https://localhost:\(live.port)"
        let trusted = mtls(["pin", url, "--anchors", rootCA])
        XCTAssertExit(trusted, 0)
        XCTAssertEqual(pins(trusted.stdout), try ["server.pem", "intermediate-ca.pem", "root-ca.pem"].map { try OpenSSL.spkiPin(certificate: Fixtures.path($0)) })
        XCTAssertContains(trusted.stdout, "[root]")

        let untrusted = mtls(["pin", url, "--anchors", Fixtures.path("other-root-ca.pem")])
        XCTAssertExit(untrusted, 1)
        XCTAssertContains(untrusted.stderr, "--anchors")
        let insecure = mtls(["pin", url, "--anchors", Fixtures.path("other-root-ca.pem"), "--insecure"])
        XCTAssertExit(insecure, 0)
        XCTAssertEqual(pins(insecure.stdout), try ["server.pem", "intermediate-ca.pem"].map { try OpenSSL.spkiPin(certificate: Fixtures.path($0)) })
        XCTAssertContains(insecure.stderr, "not trusted")

        // The host of the URL is the host of the pins.
        let okhttp = mtls(["pin", url, Fixtures.path("keys/backup.csr"), "--anchors", rootCA, "--format", "okhttp"])
        XCTAssertExit(okhttp, 0)
        XCTAssertContains(okhttp.stdout, ".add(\"localhost\", \"\(try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem")))\")")

        let refused = mtls(["pin", "https://localhost:\(try LoopbackPort.closed())", "--anchors", rootCA, "--timeout", "5"])
        XCTAssertExit(refused, 4)
    }

    // MARK: - curl --pinnedpubkey

    func testCurlAcceptsTheServerWithOurPinsAndRefusesItAfterAKeyChange() throws {
        let curl = try PinTools.require("curl", package: "curl")
        let directory = try TemporaryDirectory(self)
        let pinFile = directory.file("pins.curl")
        let before = try server()
        let made = mtls(["pin", "https://localhost:\(before.port)", Fixtures.path("keys/backup.csr"), "--anchors", rootCA, "--format", "curl", "--out", pinFile])
        XCTAssertExit(made, 0)
        XCTAssertContains(made.stderr, "CA pins were left out")
        let pinned = try XCTUnwrap(String(data: try Data(contentsOf: URL(fileURLWithPath: pinFile)), encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)

        func fetch(_ port: Int, pinned: String?) throws -> ProcessResult {
            var arguments = ["-sS", "-o", "/dev/null", "--max-time", "10", "--cacert", rootCA]
            if let pinned { arguments += ["--pinnedpubkey", pinned] }
            return try runProcess(curl, arguments + ["https://localhost:\(port)/"])
        }
        let accepted = try fetch(before.port, pinned: pinned)
        XCTAssertEqual(accepted.status, 0, "curl refused the server it was pinned to:\n\(accepted)")
        XCTAssertExit(mtls(["pin", "https://localhost:\(before.port)", "--anchors", rootCA, "--check", pinFile]), 0)
        before.stop()

        // Same name, same CA, new key: curl must refuse it (exit 90, CURLE_SSL_PINNEDPUBKEYNOTMATCH)…
        let after = try server("server-rsa2048")
        XCTAssertEqual(try fetch(after.port, pinned: nil).status, 0, "without a pin curl trusts the new server")
        let refused = try fetch(after.port, pinned: pinned)
        XCTAssertEqual(refused.status, 90, "curl accepted a server whose key is not pinned:\n\(refused)")
        // …and --check sees the same drift.
        let drift = mtls(["pin", "https://localhost:\(after.port)", "--anchors", rootCA, "--check", pinFile])
        XCTAssertExit(drift, 1)
        XCTAssertContains(drift.stdout, "DRIFT")
        XCTAssertContains(drift.stdout, "Pin set: \(pinFile) (curl --pinnedpubkey)")
        XCTAssertContains(drift.stdout, try OpenSSL.spkiPin(certificate: Fixtures.path("server-rsa2048.pem")))
    }

    // MARK: - OkHttp

    func testOkHttpConnectsWithOurCertificatePinnerAndRefusesAWrongOne() throws {
        let okhttp = try OkHttpHarness(self)
        let live = try server()
        let url = "https://localhost:\(live.port)/"
        // Right pins: the served chain and a backup.
        try okhttp.pinner(mtls(["pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", "okhttp-java", "--host", "localhost"]))
        let connected = try okhttp.run(url)
        XCTAssertEqual(connected.status, 0, "\(connected)")
        XCTAssertContains(connected.stdoutText, "CONNECTED 200")

        // Wrong pins: another server key and the backup.
        try okhttp.pinner(mtls(["pin", Fixtures.path("server-rsa2048.pem"), Fixtures.path("keys/backup.csr"), "--format", "okhttp-java", "--host", "localhost"]))
        let refused = try okhttp.run(url)
        XCTAssertEqual(refused.status, 1, "\(refused)")
        XCTAssertContains(refused.stdoutText, "PIN-REFUSED Certificate pinning failure!")

        // OkHttp's "Peer certificate chain" and ours list the same pins in the same order.
        let theirs = refused.stdoutText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("sha256/") && $0.contains(": ") }.map {
            String($0.split(separator: ":")[0])
        }
        let pinFile = try TemporaryDirectory(self).write(
            "Pins.java", text: mtls(["pin", Fixtures.path("server-rsa2048.pem"), Fixtures.path("keys/backup.csr"), "--format", "okhttp-java", "--host", "localhost"]).stdout)
        let check = mtls(["pin", "https://localhost:\(live.port)", "--anchors", rootCA, "--check", pinFile])
        XCTAssertExit(check, 1)
        let lines = check.stdout.split(separator: "\n").map(String.init)
        let start = try XCTUnwrap(lines.firstIndex(of: "Peer certificate chain:"))
        let ours = lines[(start + 1)...].prefix { $0.hasPrefix("    sha256/") }.map { String($0.trimmingCharacters(in: .whitespaces).split(separator: ":")[0]) }
        XCTAssertEqual(ours, theirs)
        XCTAssertEqual(ours.count, 3, "leaf, intermediate and root, as OkHttp's cleaned chain")
    }

    func testOkHttp3HostPatternsMeanWhatOurWarningsSay() throws {
        let okhttp = try OkHttpHarness(self)
        let live = try server()
        let wrong = [Fixtures.path("server-rsa2048.pem"), Fixtures.path("keys/backup.csr")]
        func connects(_ host: String) throws -> Bool {
            let result = try okhttp.run("https://\(host):\(live.port)/", anyName: true)
            XCTAssertTrue(result.status == 0 || result.status == 1, "\(host): \(result)")
            return result.status == 0
        }
        // --okhttp-version 3: example.com and *.example.com — one label deep, as the warning says.
        let v3 = mtls(["pin"] + wrong + ["--format", "okhttp-java", "--host", "example.com", "--include-subdomains", "--okhttp-version", "3"])
        XCTAssertContains(v3.stderr, "NOT pinned")
        try okhttp.pinner(v3)
        XCTAssertFalse(try connects("example.com"), "example.com is pinned")
        XCTAssertFalse(try connects("www.example.com"), "www.example.com is pinned")
        XCTAssertTrue(try connects("a.b.example.com"), "OkHttp 3 does not pin two labels down, as mtls warns")
        // The OkHttp 4 form: 3.13 takes "**.example.com" without complaint and never matches it.
        try okhttp.pinner(mtls(["pin"] + wrong + ["--format", "okhttp-java", "--host", "example.com", "--include-subdomains"]))
        XCTAssertTrue(try connects("example.com"), "OkHttp 3.13 ignores **. patterns: why --okhttp-version 3 exists")
    }

    // MARK: - Android XML: xmllint

    func testXmllintAcceptsTheAndroidXMLAndOurSchemaOfIt() throws {
        let xmllint = try PinTools.require("xmllint", package: "libxml2-utils")
        let directory = try TemporaryDirectory(self)
        let schema = try directory.write("network-security-config.xsd", text: Self.networkSecurityConfigSchema)
        let variants: [(String, [String])] = [
            ("android", ["--expires", "2030-01-01"]), ("android", ["--include-subdomains", "--host", "www.example.com"]),
            ("android-trustkit", ["--report-uri", "https://reports.example.com/pins?a=1&b=2"]), ("android-trustkit", ["--report-only", "--expires", "2030-01-01"]),
        ]
        for (index, (format, extra)) in variants.enumerated() {
            let file = directory.file("nsc\(index).xml")
            XCTAssertExit(mtls(["pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", format, "--host", "localhost", "--out", file] + extra), 0)
            let wellFormed = try runProcess(xmllint, ["--noout", file])
            XCTAssertEqual(wellFormed.status, 0, "\(format) \(extra): \(wellFormed)")
            let valid = try runProcess(xmllint, ["--noout", "--schema", schema, file])
            XCTAssertEqual(valid.status, 0, "\(format) \(extra): \(valid)")
        }
        // The schema has teeth: a truncated digest and a bad date are rejected.
        let bad = try directory.write(
            "bad.xml",
            text: """
                <network-security-config><domain-config><domain>x.example</domain>
                <pin-set expiration="2030-13-01"><pin digest="SHA-256">AAAA</pin></pin-set></domain-config></network-security-config>
                """)
        XCTAssertNotEqual(try runProcess(xmllint, ["--noout", "--schema", schema, bad]).status, 0)
    }

    /// The parts of Android's network security config (and TrustKit-Android's addition) that pins use.
    static let networkSecurityConfigSchema = """
        <?xml version="1.0" encoding="UTF-8"?>
        <xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
          <xs:element name="network-security-config">
            <xs:complexType>
              <xs:sequence>
                <xs:element name="base-config" type="anyConfig" minOccurs="0"/>
                <xs:element name="domain-config" type="domainConfig" maxOccurs="unbounded"/>
                <xs:element name="debug-overrides" type="anyConfig" minOccurs="0"/>
              </xs:sequence>
            </xs:complexType>
          </xs:element>
          <xs:complexType name="anyConfig">
            <xs:sequence><xs:any processContents="skip" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
            <xs:anyAttribute processContents="skip"/>
          </xs:complexType>
          <xs:simpleType name="hostName">
            <xs:restriction base="xs:string"><xs:pattern value="[A-Za-z0-9._:\\-]+"/></xs:restriction>
          </xs:simpleType>
          <xs:simpleType name="sha256Base64">
            <xs:restriction base="xs:string"><xs:pattern value="[A-Za-z0-9+/]{43}="/></xs:restriction>
          </xs:simpleType>
          <xs:complexType name="domainConfig">
            <xs:sequence>
              <xs:element name="domain" maxOccurs="unbounded">
                <xs:complexType>
                  <xs:simpleContent>
                    <xs:extension base="hostName"><xs:attribute name="includeSubdomains" type="xs:boolean"/></xs:extension>
                  </xs:simpleContent>
                </xs:complexType>
              </xs:element>
              <xs:element name="trust-anchors" type="anyConfig" minOccurs="0"/>
              <xs:element name="pin-set" minOccurs="0">
                <xs:complexType>
                  <xs:sequence>
                    <xs:element name="pin" maxOccurs="unbounded">
                      <xs:complexType>
                        <xs:simpleContent>
                          <xs:extension base="sha256Base64"><xs:attribute name="digest" type="xs:string" fixed="SHA-256" use="required"/></xs:extension>
                        </xs:simpleContent>
                      </xs:complexType>
                    </xs:element>
                  </xs:sequence>
                  <xs:attribute name="expiration" type="xs:date"/>
                </xs:complexType>
              </xs:element>
              <xs:element name="trustkit-config" minOccurs="0">
                <xs:complexType>
                  <xs:sequence><xs:element name="report-uri" type="xs:anyURI" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
                  <xs:attribute name="enforcePinning" type="xs:boolean"/>
                  <xs:attribute name="disableDefaultReportUri" type="xs:boolean"/>
                </xs:complexType>
              </xs:element>
              <xs:element name="domain-config" type="domainConfig" minOccurs="0" maxOccurs="unbounded"/>
            </xs:sequence>
            <xs:attribute name="cleartextTrafficPermitted" type="xs:boolean"/>
          </xs:complexType>
        </xs:schema>
        """

    // MARK: - Info.plist: plutil

    func testPlutilLintsTheInfoPlistOutputsAndFoundationReadsThemBack() throws {
        let plutil = try PinTools.require("plutil", package: "the Swift toolchain (plutil ships with it)")
        let directory = try TemporaryDirectory(self)
        for format in ["trustkit-plist", "ats"] {
            let file = directory.file("\(format).plist")
            XCTAssertExit(
                mtls([
                    "pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", format, "--host", "localhost", "--host", "api.example.com",
                    "--include-subdomains", "--out", file,
                ]), 0)
            let lint = try runProcess(plutil, ["-lint", file])
            XCTAssertEqual(lint.status, 0, "\(format): \(lint)")
            XCTAssertContains(lint.stdoutText, "OK", format)
            let object = try PropertyListSerialization.propertyList(from: Data(contentsOf: URL(fileURLWithPath: file)), format: nil) as? [String: Any]
            XCTAssertNotNil(object?[format == "ats" ? "NSAppTransportSecurity" : "TSKConfiguration"], format)
        }
        let broken = try directory.write("broken.plist", text: "<plist version=\"1.0\"><dict><key>TSKConfiguration</key></dict></plist>")
        XCTAssertNotEqual(try runProcess(plutil, ["-lint", broken]).status, 0, "plutil is a real judge")
    }

    // MARK: - Code: swiftc and clang

    func testSwiftcTypechecksTheSwiftPinSetAndTheTrustKitDictionary() throws {
        let swiftc = try PinTools.require("swiftc", package: "the Swift toolchain")
        let directory = try TemporaryDirectory(self)
        // --format swift, used the way an app would.
        let source = directory.file("APIPins.swift")
        XCTAssertExit(
            mtls([
                "pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", "swift", "--name", "APIPins", "--host", "localhost", "--expires",
                "2030-01-01", "--out", source,
            ]), 0)
        let main = try directory.write(
            "main.swift",
            text: """
                let presented = "\(String(try OpenSSL.spkiPin(certificate: Fixtures.path("server.pem")).dropFirst(7)))"
                precondition(APIPins.spkiSHA256.contains(presented))
                let levels: [String] = APIPins.pins.map(\\.level)
                print(APIPins.hosts, APIPins.includesSubdomains, APIPins.expires ?? "never", levels)
                """)
        let typecheck = try runProcess(swiftc, ["-typecheck", "-swift-version", "6", source, main])
        XCTAssertEqual(typecheck.status, 0, "\(typecheck)")

        // --format trustkit against a stand-in TrustKit module with TrustKit's names and types.
        let stub = try directory.write(
            "TrustKit.swift",
            text: """
                public let kTSKSwizzleNetworkDelegates = "TSKSwizzleNetworkDelegates"
                public let kTSKPinnedDomains = "TSKPinnedDomains"
                public let kTSKEnforcePinning = "TSKEnforcePinning"
                public let kTSKIncludeSubdomains = "TSKIncludeSubdomains"
                public let kTSKDisableDefaultReportUri = "TSKDisableDefaultReportUri"
                public let kTSKExpirationDate = "TSKExpirationDate"
                public let kTSKPublicKeyHashes = "TSKPublicKeyHashes"
                public let kTSKReportUris = "TSKReportUris"
                public final class TrustKit {
                    public class func initSharedInstance(withConfiguration configuration: [String: Any]) {}
                }
                """)
        let module = try runProcess(swiftc, ["-emit-module", "-parse-as-library", "-module-name", "TrustKit", stub, "-emit-module-path", directory.file("TrustKit.swiftmodule")])
        XCTAssertEqual(module.status, 0, "\(module)")
        let trustKit = directory.file("PinningConfig.swift")
        XCTAssertExit(
            mtls([
                "pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", "trustkit", "--host", "localhost", "--host", "api.example.com",
                "--include-subdomains", "--expires", "2030-01-01", "--report-uri", "https://reports.example.com/pins", "--out", trustKit,
            ]), 0)
        let app = try directory.write("main.swift", text: "import TrustKit\nTrustKit.initSharedInstance(withConfiguration: trustKitConfig)\n")
        let checked = try runProcess(swiftc, ["-typecheck", "-swift-version", "6", "-I", directory.path, trustKit, app])
        XCTAssertEqual(checked.status, 0, "\(checked)")
    }

    /// A certificate whose subject holds a right-to-left override, the 8-bit CSI and `\u`, from a file
    /// whose name holds a newline and an override: the Swift set compiles and gives back the subject exactly,
    /// and javac accepts the OkHttp pinner (Java decodes `\u` even in comments).
    func testHostileSubjectsAndFileNamesCompileToTheirExactValues() throws {
        let swiftc = try PinTools.require("swiftc", package: "the Swift toolchain")
        let directory = try TemporaryDirectory(self)
        let certificate = directory.file("evil\nimport Foundation \u{202E}.pem")
        let made = try OpenSSL.run([
            "req", "-utf8", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", directory.file("evil.key"), "-out", certificate,
            "-days", "30", "-subj", "/CN=a.example/O=\u{9B}31m\u{202E}gnp.exe\\users/OU=\u{1B}[2J\u{2028}x",
        ])
        XCTAssertEqual(made.status, 0, "\(made)")
        let subject = try XCTUnwrap(
            (try JSONSerialization.jsonObject(with: Data(mtls(["inspect", "--json", certificate]).stdout.utf8)) as? [String: Any]).flatMap {
                (($0["items"] as? [[String: Any]])?.first?["certificate"] as? [String: Any])?["subject"] as? String
            })
        let pins = mtls(["pin", certificate, Fixtures.path("keys/backup.csr"), "--format", "swift", "--name", "EvilPins", "--host", "a.example"])
        XCTAssertExit(pins, 0)
        let shown = pins.stdout.unicodeScalars.filter { DisplayText.isUnsafe($0) && $0 != "\n" }
        XCTAssertTrue(shown.isEmpty, "the source shows escapes, not the characters: \(shown.map(\.value))")
        let source = try directory.write("EvilPins.swift", text: pins.stdout)
        let main = try directory.write("main.swift", text: "print(EvilPins.pins[0].subject.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: \" \"))\n")
        let program = directory.file("evil-pins")
        let built = try runProcess(swiftc, ["-swift-version", "6", source, main, "-o", program])
        XCTAssertEqual(built.status, 0, "\(built)\n\(pins.stdout)")
        let printed = try runProcess(program, [])
        XCTAssertEqual(printed.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines), subject.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " "))

        let okhttp = try OkHttpHarness(self)
        try okhttp.pinner(mtls(["pin", certificate, Fixtures.path("keys/backup.csr"), "--format", "okhttp-java", "--host", "a.example"]))
    }

    func testClangParsesTheObjectiveCTrustKitDictionary() throws {
        let clang = try PinTools.require("clang", package: "the Swift toolchain (clang ships with it)")
        let directory = try TemporaryDirectory(self)
        try FileManager.default.createDirectory(atPath: directory.file("TrustKit"), withIntermediateDirectories: true)
        // Foundation's shapes, and TrustKit's constants as TSKTrustKitConfig.h declares them.
        try directory.write(
            "TrustKit/TrustKit.h",
            text: """
                #define YES __objc_yes
                #define NO __objc_no
                typedef signed char BOOL;
                @interface NSObject @end
                @interface NSString : NSObject @end
                @interface NSConstantString : NSString @end
                @interface NSNumber : NSObject
                + (NSNumber *)numberWithBool:(BOOL)value;
                @end
                @interface NSArray : NSObject
                + (instancetype)arrayWithObjects:(const id [])objects count:(unsigned long)count;
                @end
                @interface NSDictionary : NSObject
                + (instancetype)dictionaryWithObjects:(const id [])objects forKeys:(const id [])keys count:(unsigned long)count;
                @end
                typedef NSString *TSKGlobalConfigurationKey;
                typedef NSString *TSKDomainConfigurationKey;
                extern const TSKGlobalConfigurationKey kTSKSwizzleNetworkDelegates;
                extern const TSKGlobalConfigurationKey kTSKPinnedDomains;
                extern const TSKDomainConfigurationKey kTSKEnforcePinning;
                extern const TSKDomainConfigurationKey kTSKIncludeSubdomains;
                extern const TSKDomainConfigurationKey kTSKDisableDefaultReportUri;
                extern const TSKDomainConfigurationKey kTSKExpirationDate;
                extern const TSKDomainConfigurationKey kTSKPublicKeyHashes;
                extern const TSKDomainConfigurationKey kTSKReportUris;
                @interface TrustKit : NSObject
                + (void)initSharedInstanceWithConfiguration:(NSDictionary *)configuration;
                @end
                """)
        let file = directory.file("Pinning.m")
        XCTAssertExit(
            mtls([
                "pin", Fixtures.path("server-chain.pem"), Fixtures.path("keys/backup.csr"), "--format", "trustkit-objc", "--host", "localhost", "--expires", "2030-01-01",
                "--report-uri", "https://reports.example.com/pins", "--out", file,
            ]), 0)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        handle.seekToEndOfFile()
        handle.write(Data("void start(void) { [TrustKit initSharedInstanceWithConfiguration:MTLSTrustKitConfiguration()]; }\n".utf8))
        try handle.close()
        let parsed = try runProcess(clang, ["-fsyntax-only", "-x", "objective-c", "-Wall", "-Werror", "-I", directory.path, file])
        XCTAssertEqual(parsed.status, 0, "\(parsed)")
    }

    // MARK: - The build plugin

    func testThePluginBuiltPinnedAppHoldsThePinsOfItsCertificateFiles() throws {
        let app = try PinTools.builtProduct("PinnedApp")
        let pinsDirectory = Fixtures.packageRoot.appendingPathComponent("Examples/PinnedApp/pins").path
        let expected = mtls(["pin", pinsDirectory + "/api-chain.pem", pinsDirectory + "/backup.csr"])
        XCTAssertExit(expected, 0)
        let listed = try runProcess(app, [])
        XCTAssertEqual(listed.status, 0, "\(listed)")
        XCTAssertEqual(pins(listed.stdoutText), pins(expected.stdout))
        XCTAssertContains(listed.stdoutText, "Pins for localhost, enforced through 2030-01-01")
        let leaf = try XCTUnwrap(pins(expected.stdout).first)
        XCTAssertEqual(try runProcess(app, [leaf]).status, 0)
        XCTAssertEqual(try runProcess(app, [try OpenSSL.spkiPin(certificate: Fixtures.path("server-rsa2048.pem"))]).status, 1)
    }
}

// MARK: - Helpers

/// Finds the consumer programs.
enum PinTools {
    /// Directories searched after PATH: the Swift toolchain's (plutil, clang) and the usual ones.
    static var extraDirectories: [String] {
        var directories = ["/opt/swift/usr/bin", "/usr/local/bin", "/usr/bin"]
        if let swiftc = search("swiftc", in: pathDirectories) {
            directories.insert((swiftc as NSString).deletingLastPathComponent, at: 0)
        }
        return directories
    }

    static var pathDirectories: [String] {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    }

    static func search(_ name: String, in directories: [String]) -> String? {
        directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The program, or a skip that says which package provides it.
    static func require(_ name: String, package: String) throws -> String {
        if let path = search(name, in: pathDirectories + extraDirectories) { return path }
        throw XCTSkip("\(name) is not installed; it is the consumer this test proves the output against (install: \(package))")
    }

    /// An executable of the Examples package (the PinSetPlugin example), built by scripts/examples.sh.
    static func builtProduct(_ name: String) throws -> String {
        let examples = Fixtures.packageRoot.appendingPathComponent("Examples/.build")
        for directory in [examples.appendingPathComponent("debug"), examples.appendingPathComponent("release")] {
            let candidate = directory.appendingPathComponent(name).path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        // scripts/test.sh builds the examples first, so there a missing product is a failure, not a skip.
        if ProcessInfo.processInfo.environment["MTLS_REQUIRE_EXAMPLES"] == "1" {
            XCTFail("\(name) was not built in Examples/.build; scripts/examples.sh builds it")
            throw XCTSkip("\(name) is missing (failed above)")
        }
        throw XCTSkip("\(name) was not built in Examples/.build; run scripts/examples.sh (or `swift build --package-path Examples`) first")
    }
}

/// Loopback ports for the tests that need one.
enum LoopbackPort {
    /// A loopback port with nothing listening.
    static func closed() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw HarnessError.process("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A tiny Java program, compiled at test time against Debian's OkHttp 3.13, that connects with the
/// `CertificatePinner` of our `--format okhttp-java` output and trusts the test root through a
/// KeyStore loaded from our `--format der` output.
final class OkHttpHarness {
    let directory: TemporaryDirectory
    let java: String
    let javac: String
    let classpath: String

    init(_ test: XCTestCase) throws {
        java = try PinTools.require("java", package: "default-jdk-headless")
        javac = try PinTools.require("javac", package: "default-jdk-headless")
        let jars = ["/usr/share/java/okhttp.jar", "/usr/share/java/okio.jar"]
        guard jars.allSatisfy({ FileManager.default.fileExists(atPath: $0) }) else {
            throw XCTSkip("OkHttp is not installed (/usr/share/java/okhttp.jar, okio.jar); install: libokhttp-java")
        }
        directory = try TemporaryDirectory(test)
        classpath = (jars + [directory.path]).joined(separator: ":")
        // The anchors, as the .cer files `--format der` writes for an app bundle.
        let anchors = directory.file("anchors")
        XCTAssertExit(mtls(["pin", Fixtures.path("root-ca.pem"), "--format", "der", "--out", anchors]), 0)
        try directory.write("PinClient.java", text: Self.client)
    }

    /// Installs `--format okhttp-java` output as `PinnedCertificates.java`.
    func pinner(_ result: CLIResult, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertExit(result, 0, file: file, line: line)
        try directory.write("PinnedCertificates.java", text: result.stdout)
        let compiled = try runProcess(javac, ["-d", directory.path, "-cp", classpath, directory.file("PinnedCertificates.java"), directory.file("PinClient.java")])
        guard compiled.status == 0 else {
            XCTFail("javac rejected the output:\n\(compiled)\n\(result.stdout)", file: file, line: line)
            throw HarnessError.process("javac failed")
        }
    }

    /// Runs one GET: exit 0 "CONNECTED code", 1 "PIN-REFUSED message", 2 any other error.
    func run(_ url: String, anyName: Bool = false) throws -> ProcessResult {
        try runProcess(java, ["-cp", classpath, "PinClient", directory.file("anchors"), url] + (anyName ? ["--any-name"] : []))
    }

    static let client = """
        import java.io.File;
        import java.io.FileInputStream;
        import java.io.InputStream;
        import java.net.InetAddress;
        import java.security.KeyStore;
        import java.security.cert.Certificate;
        import java.security.cert.CertificateFactory;
        import java.util.Collections;
        import javax.net.ssl.SSLContext;
        import javax.net.ssl.SSLPeerUnverifiedException;
        import javax.net.ssl.TrustManager;
        import javax.net.ssl.TrustManagerFactory;
        import javax.net.ssl.X509TrustManager;
        import okhttp3.OkHttpClient;
        import okhttp3.Request;
        import okhttp3.Response;

        /** args: ANCHOR_DIR URL [--any-name]: every name resolves to 127.0.0.1; --any-name skips the name check only. */
        public final class PinClient {
            public static void main(String[] args) throws Exception {
                CertificateFactory factory = CertificateFactory.getInstance("X.509");
                KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
                store.load(null, null);
                File[] files = new File(args[0]).listFiles();
                for (File file : files) {
                    try (InputStream in = new FileInputStream(file)) {
                        for (Certificate certificate : factory.generateCertificates(in)) store.setCertificateEntry(file.getName(), certificate);
                    }
                }
                TrustManagerFactory trustFactory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                trustFactory.init(store);
                X509TrustManager trust = (X509TrustManager) trustFactory.getTrustManagers()[0];
                SSLContext context = SSLContext.getInstance("TLS");
                context.init(null, new TrustManager[] {trust}, null);
                OkHttpClient.Builder builder = new OkHttpClient.Builder()
                    .sslSocketFactory(context.getSocketFactory(), trust)
                    .certificatePinner(PinnedCertificates.CERTIFICATE_PINNER)
                    .dns(host -> Collections.singletonList(InetAddress.getByName("127.0.0.1")));
                if (args.length > 2 && args[2].equals("--any-name")) builder.hostnameVerifier((host, session) -> true);
                try (Response response = builder.build().newCall(new Request.Builder().url(args[1]).build()).execute()) {
                    System.out.println("CONNECTED " + response.code());
                } catch (SSLPeerUnverifiedException e) {
                    System.out.println("PIN-REFUSED " + e.getMessage());
                    System.exit(1);
                } catch (Exception e) {
                    System.out.println("ERROR " + e);
                    System.exit(2);
                }
            }
        }
        """
}

import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust

/// `PublicSuffixList` against the list's own test cases, and the cookie jar's `Domain` rules and
/// the login's `SameSite` site with the list (TestCerts/third-party/publicsuffix: origin and
/// licence in its README). The committed copy of the list is used throughout, so that results do
/// not move with the machine's `publicsuffix` package.
final class PublicSuffixListTests: XCTestCase {
    private static let list: PublicSuffixList = {
        PublicSuffixList(contentsOfFile: HTTPFixtures.testCerts.appendingPathComponent("third-party/publicsuffix/public_suffix_list.dat").path)!
    }()

    func testTheListsOwnCases() throws {
        let text = try String(contentsOf: HTTPFixtures.testCerts.appendingPathComponent("third-party/publicsuffix/test_psl.txt"), encoding: .utf8)
        let pattern = #/^checkPublicSuffix\((null|'([^']*)'), (null|'([^']*)')\);$/#
        var checked = 0
        var nullInputs = 0
        for line in text.split(separator: "\n") where line.hasPrefix("checkPublicSuffix") {
            let match = try XCTUnwrap(line.wholeMatch(of: pattern), String(line))
            guard let input = match.2 else {
                nullInputs += 1  // the API takes a String: there is no null to pass
                continue
            }
            XCTAssertEqual(Self.list.registrableDomain(of: String(input)), match.4.map(String.init), String(line))
            checked += 1
        }
        XCTAssertEqual(checked, 77)
        XCTAssertEqual(nullInputs, 1)
        XCTAssertGreaterThan(Self.list.count, 9_000)
    }

    func testPublicSuffixesAndTheirForms() {
        let list = Self.list
        XCTAssertEqual(list.publicSuffix(of: "www.Example.CO.uk"), "co.uk")
        XCTAssertEqual(list.publicSuffix(of: "alice.github.io"), "github.io")  // the list's private section
        XCTAssertEqual(list.registrableDomain(of: "www.example.co.uk."), "example.co.uk")  // the root's dot
        XCTAssertTrue(list.isPublicSuffix("co.uk"))
        XCTAssertTrue(list.isPublicSuffix("localhost"))  // not listed: `*` makes any single label one
        XCTAssertFalse(list.isPublicSuffix("example.co.uk"))
        XCTAssertNil(list.publicSuffix(of: "192.168.0.1"))
        XCTAssertNil(list.publicSuffix(of: "a..b"))
        XCTAssertNil(list.publicSuffix(of: ""))
        let small = PublicSuffixList(rules: "// comment\n\ncom\n*.ck\n!www.ck  trailing words\n")
        XCTAssertEqual(small.count, 3)
        XCTAssertTrue(small.isAvailable)
        XCTAssertEqual(small.registrableDomain(of: "a.www.ck"), "www.ck")
        XCTAssertNil(small.registrableDomain(of: "other.ck"))
        XCTAssertNil(PublicSuffixList(contentsOfFile: "/nonexistent/public_suffix_list.dat"))
    }

    /// RFC 6265 5.3 step 5 with a public-suffix list: `Domain=co.uk` is refused, `Domain` naming
    /// the host itself makes a host-only cookie, a registrable domain is fine. Without a list only
    /// a single label is refused.
    func testCookieDomainsThatArePublicSuffixesAreRefused() throws {
        let jar = CookieJar(publicSuffixes: Self.list)
        let url = try HTTPSURL("https://www.example.co.uk/login")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        guard case .rejected(_, let reason) = jar.store("a=1; Domain=co.uk", from: url, now: now) else { return XCTFail("Domain=co.uk stored") }
        XCTAssertTrue(reason.contains("Domain=co.uk is a public suffix"), reason)
        guard case .rejected = jar.store("b=1; Domain=.uk", from: url, now: now) else { return XCTFail("Domain=uk stored") }
        guard case .stored(let cookie) = jar.store("c=1; Domain=example.co.uk", from: url, now: now) else { return XCTFail("c refused") }
        XCTAssertFalse(cookie.hostOnly)
        XCTAssertEqual(jar.cookies(for: try HTTPSURL("https://sso.example.co.uk/"), now: now).map(\.name), ["c"])
        XCTAssertEqual(jar.cookies(for: try HTTPSURL("https://www.other.co.uk/"), now: now).map(\.name), [])

        let pages = try HTTPSURL("https://alice.github.io/")
        guard case .rejected = jar.store("d=1; Domain=github.io", from: pages, now: now) else { return XCTFail("Domain=github.io stored") }
        let suffixHost = try HTTPSURL("https://co.uk/")
        guard case .stored(let hostOnly) = jar.store("e=1; Domain=co.uk", from: suffixHost, now: now) else { return XCTFail("e refused") }
        XCTAssertTrue(hostOnly.hostOnly)

        let withoutList = CookieJar(publicSuffixes: PublicSuffixList(rules: ""))
        guard case .stored = withoutList.store("a=1; Domain=co.uk", from: url, now: now) else { return XCTFail("without a list, co.uk is two labels") }
        guard case .rejected = withoutList.store("b=1; Domain=uk", from: url, now: now) else { return XCTFail("Domain=uk stored") }
    }

    /// The site of SameSite is the registrable domain: two organisations under `co.uk` are not
    /// the same site (the last-two-labels guess said they were), one under `kobe.jp`'s wildcard
    /// neither, and subdomains of one registrable domain are.
    func testSameSiteUsesTheRegistrableDomain() throws {
        func site(_ text: String, _ list: PublicSuffixList = PublicSuffixListTests.list) throws -> String {
            LoginStateMachine.site(of: try HTTPSURL(text), publicSuffixes: list)
        }
        XCTAssertNotEqual(try site("https://idp.example.co.uk/sso"), try site("https://sp.other.co.uk/acs"))
        XCTAssertEqual(try site("https://idp.example.co.uk/sso"), try site("https://sp.example.co.uk/acs"))
        XCTAssertNotEqual(try site("https://a.b.c.kobe.jp/"), try site("https://d.e.c.kobe.jp/"))
        let none = PublicSuffixList(rules: "")
        XCTAssertFalse(none.isAvailable)
        XCTAssertEqual(try site("https://idp.example.co.uk/", none), try site("https://sp.other.co.uk/", none))  // no list: the last two labels
        XCTAssertEqual(try site("https://10.0.0.1/"), "https://10.0.0.1")
    }

    /// The operating system's copy, where one is installed (Debian's `publicsuffix`, which curl's
    /// libpsl also depends on), is what jars use by default.
    func testTheSystemListIsTheDefault() throws {
        guard let path = PublicSuffixList.systemPaths.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw XCTSkip("no public suffix list installed at \(PublicSuffixList.systemPaths)")
        }
        XCTAssertTrue(PublicSuffixList.system.isAvailable, path)
        XCTAssertTrue(PublicSuffixList.system.isPublicSuffix("co.uk"))
        XCTAssertTrue(CookieJar().publicSuffixes.isPublicSuffix("co.uk"))
    }
}

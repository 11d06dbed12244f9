import XCTest

@testable import MTLSHTTP

/// `DeclarativeRefresh` against the 69 parsing cases of web-platform-tests
/// (`html/semantics/document-metadata/the-meta-element/pragma-directives/attr-meta-http-equiv-refresh/parsing.html`
/// at 0d62f1c8b15af3f836e50e45289b96bf8244dc0c, BSD-3-Clause, © web-platform-tests contributors),
/// transcribed: nil where the case expects no refresh, else the seconds and the URL, which the test
/// page resolves against itself (`refresh.sub.html` means the page reloads).
final class DeclarativeRefreshTests: XCTestCase {
    private let cases: [(input: String, expected: (Int, String)?)] = [
        ("", nil), ("1", (1, "refresh.sub.html")), ("1 ", (1, "refresh.sub.html")), ("1\t", (1, "refresh.sub.html")),
        ("1\r", (1, "refresh.sub.html")), ("1\n", (1, "refresh.sub.html")), ("1\u{0C}", (1, "refresh.sub.html")),
        ("1;", (1, "refresh.sub.html")), ("1,", (1, "refresh.sub.html")),
        ("1; url=foo", (1, "foo")), ("1, url=foo", (1, "foo")), ("1 url=foo", (1, "foo")),
        ("1;\turl=foo", (1, "foo")), ("1,\turl=foo", (1, "foo")), ("1\turl=foo", (1, "foo")),
        ("1;\rurl=foo", (1, "foo")), ("1,\rurl=foo", (1, "foo")), ("1\rurl=foo", (1, "foo")),
        ("1;\nurl=foo", (1, "foo")), ("1,\nurl=foo", (1, "foo")), ("1\nurl=foo", (1, "foo")),
        ("1;\u{0C}url=foo", (1, "foo")), ("1,\u{0C}url=foo", (1, "foo")), ("1\u{0C}url=foo", (1, "foo")),
        ("1url=foo", nil), ("1x;url=foo", nil), ("1 x;url=foo", (1, "x;url=foo")), ("1;;url=foo", (1, ";url=foo")),
        ("  1  ;  url  =  foo", (1, "foo")), ("  1  ,  url  =  foo", (1, "foo")), ("  1  ;  foo", (1, "foo")),
        ("  1  ,  foo", (1, "foo")), ("  1  url  =  foo", (1, "foo")), ("1; url=foo ", (1, "foo")),
        ("1; url=f\to\no", (1, "foo")), ("1; url=\"foo\"bar", (1, "foo")), ("1; url='foo'bar", (1, "foo")),
        ("1; url=\"foo'bar", (1, "foo'bar")), ("1; url foo", (1, "url foo")), ("1; urlfoo", (1, "urlfoo")),
        ("1; urfoo", (1, "urfoo")), ("1; ufoo", (1, "ufoo")), ("1; \"foo\"bar", (1, "foo")),
        ("; foo", nil), (", foo", nil), ("foo", nil),
        ("+1; url=foo", nil), ("-1; url=foo", nil), ("+0; url=foo", nil), ("-0; url=foo", nil), ("0; url=foo", (0, "foo")),
        ("+1; foo", nil), ("-1; foo", nil), ("+0; foo", nil), ("-0; foo", nil), ("0; foo", (0, "foo")),
        ("+1", nil), ("-1", nil), ("+0", nil), ("-0", nil), ("0", (0, "refresh.sub.html")),
        ("1.9; url=foo", (1, "foo")), ("1.9..5.; url=foo", (1, "foo")), (".9; url=foo", (0, "foo")), ("0.9; url=foo", (0, "foo")),
        ("1e0; url=foo", nil), ("1e1; url=foo", nil), ("10e-1; url=foo", nil), ("-0.1; url=foo", nil),
    ]

    func testWebPlatformTestsParsingCases() throws {
        XCTAssertEqual(cases.count, 69)
        let page = try HTTPSURL("https://wpt.example/support/refresh.sub.html")
        for item in cases {
            let parsed = DeclarativeRefresh(item.input)
            let label = item.input.debugDescription
            guard let (seconds, target) = item.expected else {
                XCTAssertNil(parsed, label)
                continue
            }
            XCTAssertEqual(parsed?.seconds, seconds, label)
            let resolved = try parsed.map { try page.resolving($0.url ?? "") }
            XCTAssertEqual(resolved?.description, try page.resolving(target).description, label)
        }
    }

    func testALongWaitDoesNotTrap() {
        XCTAssertEqual(DeclarativeRefresh("99999999999999999999999; url=/x")?.seconds, Int.max)
    }
}

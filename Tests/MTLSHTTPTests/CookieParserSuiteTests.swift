import Foundation
import XCTest

@testable import MTLSHTTP

/// The jar against the IETF http-state working group's cookie parser suite
/// (TestCerts/third-party/http-state, 218 tests, origin and licence in its README), run as its
/// test server runs it: the response of `http://home.example.org:8888/cookie-parser?NAME` carries
/// the lines of `NAME-test` as header fields; the browser follows its `Location` (by default
/// `/cookie-parser-result?NAME`), and the `Cookie` header it sends there must be the one in
/// `NAME-expected` (none when that file has no single `Cookie:` line).
final class CookieParserSuiteTests: XCTestCase {
    private static let directory = HTTPFixtures.testCerts.appendingPathComponent("third-party/http-state")

    /// The suite's dates assume its own time: `Expires=Fri, 07 Aug 2019` (tests 0002, comma0006,
    /// comma0007) is a future date, `Fri, 07 Aug 2007` a past one. April 2011, when RFC 6265 was
    /// published.
    static let suiteTime = Date(timeIntervalSince1970: 1_301_616_000)  // 2011-04-01T00:00:00Z

    /// The test server's reading of a line, `(\S+):\s*(.*)`: the name is the first run of
    /// non-space characters up to its last colon; the value follows the white space after it.
    private func headerField(_ line: String) throws -> (name: String, value: String)? {
        let pattern = try NSRegularExpression(pattern: #"(\S+):\s*(.*)"#)
        guard let match = pattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
            let name = Range(match.range(at: 1), in: line), let value = Range(match.range(at: 2), in: line)
        else { return nil }
        return (String(line[name]), String(line[value]))
    }

    /// The one `Cookie:` value of an expected file (`Cookie:\s*(.*)`), or nil.
    private func expectedCookie(_ text: String) throws -> String? {
        let pattern = try NSRegularExpression(pattern: #"Cookie:\s*(.*)"#)
        let matches = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
        guard matches.count == 1, let value = Range(matches[0].range(at: 1), in: text) else { return nil }
        return String(text[value])
    }

    private func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix("-test") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// What the jar sends after the response of test `name`, and what the suite expects.
    private func run(_ name: String) throws -> (actual: String?, expected: String?) {
        let test = try String(contentsOf: Self.directory.appendingPathComponent("\(name)-test"), encoding: .utf8)
        let expected = try expectedCookie(String(contentsOf: Self.directory.appendingPathComponent("\(name)-expected"), encoding: .utf8))
        let origin = "http://home.example.org:8888"
        let from = try HTTPSURL("\(origin)/cookie-parser?\(name)")
        var location = "/cookie-parser-result?\(name)"
        let jar = CookieJar()
        let now = Self.suiteTime
        for line in test.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let field = try headerField(String(line)) else { continue }
            switch field.name.lowercased() {
            case "set-cookie": jar.store(field.value, from: from, now: now)
            case "location": location = field.value
            default: continue
            }
        }
        let to = try HTTPSURL(location.hasPrefix("/") ? origin + location : location)
        return (jar.cookieHeader(for: to, now: now), expected)
    }

    func testTheSuite() throws {
        let all = try names()
        XCTAssertEqual(all.count, 218, "the number of tests in TestCerts/third-party/http-state")
        var failures: [String] = []
        for name in all {
            let (actual, expected) = try run(name)
            if actual != expected {
                failures.append("\(name): expected \(expected.map { "Cookie: \($0)" } ?? "no Cookie header"), sent \(actual.map { "Cookie: \($0)" } ?? "none")")
            }
        }
        XCTAssertEqual(failures, [], "\(failures.count) of \(all.count) tests differ")
    }
}

import Foundation
import XCTest

@testable import MTLSHTTP

/// The cookie date parser (RFC 6265 5.1.1) against the IETF http-state working group's date tests
/// (TestCerts/third-party/cookie-dates: the working group's own examples and Chromium's), which
/// browsers' cookie code was checked with. Each test is a header value and the date it must give,
/// or null where it must be refused.
final class CookieDateVectorsTests: XCTestCase {
    private struct Vector: Decodable {
        let test: String
        let expected: String?
    }

    /// The vectors of one file; Chromium's opens with its licence as `//` comment lines.
    private func vectors(_ name: String) throws -> [Vector] {
        let text = try String(contentsOfFile: HTTPFixtures.path("third-party/cookie-dates/\(name)"), encoding: .utf8)
        let json = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("//") }.joined(separator: "\n")
        return try JSONDecoder().decode([Vector].self, from: Data(json.utf8))
    }

    /// The expected value, `Sat, 15 Apr 2017 21:01:22 GMT`, read by Foundation's formatter (not by
    /// the code under test). The weekday is dropped: it carries nothing the date does not.
    private func expectedDate(_ text: String) throws -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "dd MMM yyyy HH:mm:ss"
        let withoutWeekday = text.drop { $0 != "," }.dropFirst(2).replacingOccurrences(of: " GMT", with: "")
        return try XCTUnwrap(formatter.date(from: withoutWeekday), "the expected value \(text) is not an IMF date")
    }

    private func check(_ file: String, count: Int) throws {
        let all = try vectors(file)
        XCTAssertEqual(all.count, count, "\(file): the number of vectors")
        var failures: [String] = []
        for vector in all {
            let parsed = CookieRules.parseDate(vector.test)
            let expected = try vector.expected.map(expectedDate)
            if parsed != expected {
                failures.append("\(vector.test.debugDescription): expected \(expected.map { "\($0)" } ?? "nil"), got \(parsed.map { "\($0)" } ?? "nil")")
            }
        }
        XCTAssertEqual(failures, [], "\(file): \(failures.count) of \(all.count) vectors differ")
    }

    func testTheWorkingGroupsExamples() throws { try check("examples.json", count: 15) }

    func testChromiumsExamples() throws { try check("bsd-examples.json", count: 55) }

    /// Edges of the RFC's grammar the vectors do not reach (ours): after `hms-time` comes a
    /// non-digit and any octets, colons too; a time field is digits only; the grammar counts
    /// octets, so a combining mark after a digit ends the number; and step 7 refuses a date that
    /// does not exist rather than rolling it into the next month.
    func testGrammarEdges() throws {
        let cases: [(String, String?)] = [
            ("Sat, 15-Apr-17 21:01:22:99 GMT", "Sat, 15 Apr 2017 21:01:22 GMT"),
            ("Sat, 15-Apr-17 21:01:22x GMT", "Sat, 15 Apr 2017 21:01:22 GMT"),
            ("Sat, 15-Apr-17 2a:01:22 GMT", nil),
            ("Sat, 15-Apr-17 21:01:223 GMT", nil),
            ("Sat, 15-Apr-17 21:01:22\u{301} GMT", "Sat, 15 Apr 2017 21:01:22 GMT"),
            ("Sat, 15\u{301}-Apr-17 21:01:22 GMT", "Sat, 15 Apr 2017 21:01:22 GMT"),
            ("Sat, 15-APRIL-2017 21:01:22 GMT", "Sat, 15 Apr 2017 21:01:22 GMT"),
            ("31 Apr 2021 10:00:00", nil),
            ("29 Feb 2021 00:00:00", nil),
            ("29 Feb 2020 00:00:00", "Sat, 29 Feb 2020 00:00:00 GMT"),
            ("1 Jan 1600 00:00:00", nil),
            ("1 Jan 1601 00:00:00", "Mon, 01 Jan 1601 00:00:00 GMT"),
            ("31 Dec 9999 23:59:59", "Fri, 31 Dec 9999 23:59:59 GMT"),
            ("1 Jan 2020 24:00:00", nil),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(CookieRules.parseDate(text), try expected.map(expectedDate), text.debugDescription)
        }
    }

    /// The same values set a cookie's expiry through the jar (one refused value leaves a session cookie).
    func testVectorsReachTheJar() throws {
        let now = Date(timeIntervalSince1970: 1_000_000_000)
        for vector in try vectors("examples.json") + vectors("bsd-examples.json") {
            let jar = CookieJar()
            jar.store("a=1; Expires=\(vector.test)", from: try HTTPSURL("https://h.example/"), now: now)
            let cookie = jar.all.first
            if let expected = try vector.expected.map(expectedDate) {
                // A date before `now` deletes the cookie: nothing is stored.
                XCTAssertEqual(cookie?.expires, expected > now ? expected : nil, vector.test)
            } else {
                XCTAssertEqual(cookie?.isSessionCookie, true, vector.test)
            }
        }
    }
}

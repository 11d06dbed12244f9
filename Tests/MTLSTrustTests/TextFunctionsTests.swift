import Foundation
import XCTest

@testable import MTLSTrust

/// The modules use FoundationEssentials, which lacks `CharacterSet`, `trimmingCharacters`,
/// `replacingOccurrences`, `NSString` paths, `String(format:)` and `ISO8601DateFormatter`. Their
/// replacements are checked here against full Foundation itself, which the tests still link.
final class TextFunctionsTests: XCTestCase {
    private let samples = [
        "", " ", "\t", "  a  ", "\ta b\t", "a", " \u{00A0}x\u{2003} ", "\n a \r\n", "\u{2028}x\u{2029}", "\u{0085}y\u{000B}", "é\u{0301} ",
        " \u{0301}a", "日本 語", "a\u{200B}", "--x--", "x\r\ny", "\r\n", "a/b/c", "/", "//", "a//", "/a", "a.pem", ".profile", "dir.d/name", "a/b.c/",
    ]

    func testCharacterClassesAgreeWithCharacterSet() {
        // Every scalar of the Basic Multilingual Plane outside the surrogates, and a few beyond it.
        let scalars = (0...0xFFFF).compactMap(Unicode.Scalar.init) + [Unicode.Scalar(0x1F600)!, Unicode.Scalar(0x10FFFD)!, Unicode.Scalar(0x1D7CE)!]
        // Foundation's CharacterSet tables stop at Unicode 15.0 and leave out some older scripts beyond
        // the BMP (Tangut); the stdlib's properties are newer, so scalars assigned after 15.0 are letters
        // to us and not to CharacterSet. Everything Unicode 15.0 or earlier must agree.
        for scalar in scalars where !Self.isNewerThanUnicode15(scalar) {
            XCTAssertEqual(ScalarClass.isWhitespace(scalar), CharacterSet.whitespaces.contains(scalar), "whitespaces U+\(String(scalar.value, radix: 16))")
            XCTAssertEqual(
                ScalarClass.isWhitespaceOrNewline(scalar), CharacterSet.whitespacesAndNewlines.contains(scalar), "whitespacesAndNewlines U+\(String(scalar.value, radix: 16))")
            XCTAssertEqual(ScalarClass.isLetter(scalar), CharacterSet.letters.contains(scalar), "letters U+\(String(scalar.value, radix: 16))")
            XCTAssertEqual(ScalarClass.isDecimalDigit(scalar), CharacterSet.decimalDigits.contains(scalar), "decimalDigits U+\(String(scalar.value, radix: 16))")
            XCTAssertEqual(ScalarClass.isAlphanumeric(scalar), CharacterSet.alphanumerics.contains(scalar), "alphanumerics U+\(String(scalar.value, radix: 16))")
        }
    }

    func testTrimmingAgreesWithFoundation() {
        for sample in samples {
            XCTAssertEqual(sample.trimmingWhitespace(), sample.trimmingCharacters(in: .whitespaces), sample.debugDescription)
            XCTAssertEqual(sample.trimmingWhitespaceAndNewlines(), sample.trimmingCharacters(in: .whitespacesAndNewlines), sample.debugDescription)
            XCTAssertEqual(sample.trimming(charactersIn: "-/ "), sample.trimmingCharacters(in: CharacterSet(charactersIn: "-/ ")), sample.debugDescription)
        }
    }

    func testReplacingAgreesWithFoundation() {
        let pairs = [("\n", "\\n"), ("\r\n", "\n"), ("a", ""), ("/", "//"), (" ", "-"), ("é", "e"), ("xx", "y")]
        // Foundation matches whole composed sequences, so it leaves a `"` or a space that carries a
        // combining mark alone; `replacingAll` is byte-literal, which is what escaping needs (a quote
        // is escaped whatever follows it). Without combining marks the two agree.
        XCTAssertEqual("a\"\u{0301}b".replacingAll("\"", with: "&quot;"), "a&quot;\u{0301}b")
        XCTAssertEqual("e\u{0301}\u{0301} ".replacingAll("e", with: "x"), "x\u{0301}\u{0301} ")
        let marks: Set<Unicode.GeneralCategory> = [.nonspacingMark, .spacingMark, .enclosingMark]
        for sample in samples + ["xxx", "aaaa", "a\r\nb\nc"] where !sample.unicodeScalars.contains(where: { marks.contains($0.properties.generalCategory) }) {
            for (target, replacement) in pairs {
                XCTAssertEqual(
                    sample.replacingAll(target, with: replacement), sample.replacingOccurrences(of: target, with: replacement),
                    "\(sample.debugDescription): \(target.debugDescription) → \(replacement.debugDescription)")
            }
        }
    }

    func testPaddingAndFormatAgreeWithFoundation() {
        // NSString pads and cuts in UTF-16 units; `padded` counts Characters, which is what lines up in a
        // terminal and never cuts a combining accent or a CRLF in half. Where the two counts agree, so
        // must the results.
        for sample in samples where sample.count == sample.utf16.count {
            for length in [0, 1, 3, 12] {
                XCTAssertEqual(sample.padded(to: length), sample.padding(toLength: length, withPad: " ", startingAt: 0), "\(sample.debugDescription) to \(length)")
            }
        }
        XCTAssertEqual("e\u{0301}\u{0301} ".padded(to: 1), "e\u{0301}\u{0301}")
        XCTAssertEqual("e\u{0301}x".padded(to: 4), "e\u{0301}x  ")
        XCTAssertEqual("x\r\ny".padded(to: 2), "x\r\n")
        XCTAssertEqual("x\r\ny".padded(to: 4), "x\r\ny ")
        XCTAssertEqual("日本".padded(to: 3), "日本 ")
        for value in [0.0, 0.05, 1.25, 99.95, 1234.5] {
            XCTAssertEqual(String(cFormat: "%.1f", value), String(format: "%.1f", value))
            XCTAssertEqual(String(cFormat: "%5.2f", value), String(format: "%5.2f", value))
        }
        for value: UInt32 in [0, 0x1F, 0xABCD] { XCTAssertEqual(String(cFormat: "\\u%04x", value), String(format: "\\u%04x", value)) }
    }

    func testPathsFollowNSStringSemantics() {
        // Linux Foundation 6.3 traps in `deletingLastPathComponent` on one-character paths and on `a//`,
        // and answers `""` for `//`, so NSString cannot be the oracle here. The table holds Apple's
        // documented NSString examples and a few more in the same rules. Columns: path, last component,
        // path without it, extension, path + "x.pem".
        let table: [(String, String, String, String, String)] = [
            ("/tmp/scratch.tiff", "scratch.tiff", "/tmp", "tiff", "/tmp/scratch.tiff/x.pem"),
            ("/tmp/scratch", "scratch", "/tmp", "", "/tmp/scratch/x.pem"),
            ("/tmp/", "tmp", "/", "", "/tmp/x.pem"),
            ("/tmp", "tmp", "/", "", "/tmp/x.pem"),
            ("/tmp/lock/", "lock", "/tmp", "", "/tmp/lock/x.pem"),
            ("scratch///", "scratch", "", "", "scratch/x.pem"),
            ("scratch.tiff", "scratch.tiff", "", "tiff", "scratch.tiff/x.pem"),
            (".scratch.tiff", ".scratch.tiff", "", "tiff", ".scratch.tiff/x.pem"),
            ("/tmp/scratch..tiff", "scratch..tiff", "/tmp", "tiff", "/tmp/scratch..tiff/x.pem"),
            (".profile", ".profile", "", "", ".profile/x.pem"),
            ("dir.d/name", "name", "dir.d", "", "dir.d/name/x.pem"),
            ("a/b.c/", "b.c", "a", "c", "a/b.c/x.pem"),
            ("a/b/c", "c", "a/b", "", "a/b/c/x.pem"),
            ("a//", "a", "", "", "a/x.pem"),
            ("a", "a", "", "", "a/x.pem"),
            (" ", " ", "", "", " /x.pem"),
            ("/", "/", "/", "", "/x.pem"),
            ("//", "/", "/", "", "/x.pem"),
            ("/a", "a", "/", "", "/a/x.pem"),
            ("日本 語.pem", "日本 語.pem", "", "pem", "日本 語.pem/x.pem"),
        ]
        for (path, last, deleting, pathExtension, appended) in table {
            XCTAssertEqual(PathText.lastComponent(path), last, "last component of \(path.debugDescription)")
            XCTAssertEqual(PathText.deletingLastComponent(path), deleting, "deleting the last component of \(path.debugDescription)")
            XCTAssertEqual(PathText.pathExtension(path), pathExtension, "extension of \(path.debugDescription)")
            XCTAssertEqual(PathText.appending(path, "x.pem"), appended, "appending to \(path.debugDescription)")
        }
        XCTAssertEqual(PathText.appending("", "x.pem"), "x.pem")
        XCTAssertEqual(PathText.lastComponent(""), "")
        XCTAssertEqual(PathText.deletingLastComponent(""), "")
    }

    func testRFC3339ParsingAgreesWithISO8601DateFormatter() {
        let internet = ISO8601DateFormatter()
        internet.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let valid = [
            "2030-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "1999-12-31T23:59:59+01:00", "2026-06-01T12:00:00-07:30",
            "2026-06-01T12:00:00+0530", "2038-01-19T03:14:08Z", "2100-03-01T00:00:00Z", "1900-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
        ]
        for text in valid {
            XCTAssertEqual(RFC3339.parse(text), internet.date(from: text), text)
        }
        for text in ["2030-01-01T00:00:00.5Z", "2030-01-01T00:00:00.250+02:00", "2030-06-30T10:20:30.123Z"] {
            let ours = RFC3339.parse(text)?.timeIntervalSince1970
            let theirs = fractional.date(from: text)?.timeIntervalSince1970
            XCTAssertNotNil(ours, text)
            XCTAssertEqual(ours ?? 0, theirs ?? -1, accuracy: 0.001, text)
        }
        XCTAssertEqual(RFC3339.parse("2030-01-01", allowingDateOnly: true), Date(timeIntervalSince1970: 1_893_456_000))
        XCTAssertEqual(RFC3339.parse("2030-01-01T00:00:00z"), Date(timeIntervalSince1970: 1_893_456_000))
        let invalid = [
            "", "2030-01-01", "2030-13-01T00:00:00Z", "2030-02-29T00:00:00Z", "2030-04-31T00:00:00Z", "2030-01-01T24:00:00Z", "2030-01-01T00:60:00Z",
            "2030-01-01T00:00:00", "2030-01-01T00:00:00Zx", "2030-01-01T00:00:00.Z", "2030-1-01T00:00:00Z", "2030-01-01 00:00:00Z", "x2030-01-01T00:00:00Z",
        ]
        for text in invalid { XCTAssertNil(RFC3339.parse(text), text) }
        XCTAssertNil(RFC3339.parse("2030-02-30", allowingDateOnly: true))
    }

    /// The day of a date in UTC (`PinDates.string`, `RFC3339.day`) is what a Gregorian calendar in
    /// UTC gives, across the range certificates use, and reads back with `PinDates.day`.
    func testDaysAgreeWithTheGregorianCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        var generator = SystemRandomNumberGenerator()
        let ends: [TimeInterval] = [0, -1, 86_399, 86_400, 951_782_399, 951_782_400, 2_147_483_647, 253_402_300_799, -631_152_000]
        let samples = ends + (0..<2_000).map { _ in TimeInterval(Int64.random(in: -631_152_000...253_402_300_799, using: &generator)) }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            let expected = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
            XCTAssertEqual(PinDates.string(date), expected, "\(seconds)")
            XCTAssertEqual(RFC3339.day(date) + RFC3339.string(date).drop { $0 != "T" }, RFC3339.string(date), "\(seconds)")
            XCTAssertEqual(PinDates.day(expected).map(PinDates.string), expected)
        }
    }

    private static func isNewerThanUnicode15(_ scalar: Unicode.Scalar) -> Bool {
        guard let age = scalar.properties.age else { return false }
        return age.major > 15 || (age.major == 15 && age.minor > 0)
    }
}

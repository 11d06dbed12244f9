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
        for scalar in scalars {
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
        for sample in samples + ["xxx", "aaaa", "a\r\nb\nc"] {
            for (target, replacement) in pairs {
                XCTAssertEqual(
                    sample.replacingAll(target, with: replacement), sample.replacingOccurrences(of: target, with: replacement),
                    "\(sample.debugDescription): \(target.debugDescription) → \(replacement.debugDescription)")
            }
        }
    }

    func testPaddingAndFormatAgreeWithFoundation() {
        for sample in samples {
            for length in [0, 1, 3, 12] {
                XCTAssertEqual(sample.padded(to: length), sample.padding(toLength: length, withPad: " ", startingAt: 0), "\(sample.debugDescription) to \(length)")
            }
        }
        for value in [0.0, 0.05, 1.25, 99.95, 1234.5] {
            XCTAssertEqual(String(cFormat: "%.1f", value), String(format: "%.1f", value))
            XCTAssertEqual(String(cFormat: "%5.2f", value), String(format: "%5.2f", value))
        }
        for value: UInt32 in [0, 0x1F, 0xABCD] { XCTAssertEqual(String(cFormat: "\\u%04x", value), String(format: "\\u%04x", value)) }
    }

    func testPathsAgreeWithNSString() {
        for sample in samples where !sample.isEmpty {
            let path = sample as NSString
            XCTAssertEqual(PathText.lastComponent(sample), path.lastPathComponent, "lastPathComponent of \(sample.debugDescription)")
            XCTAssertEqual(PathText.deletingLastComponent(sample), path.deletingLastPathComponent, "deletingLastPathComponent of \(sample.debugDescription)")
            XCTAssertEqual(PathText.pathExtension(sample), path.pathExtension, "pathExtension of \(sample.debugDescription)")
            XCTAssertEqual(PathText.appending(sample, "x.pem"), path.appendingPathComponent("x.pem"), "appending to \(sample.debugDescription)")
        }
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
}

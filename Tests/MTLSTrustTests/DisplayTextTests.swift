import XCTest

@testable import MTLSTrust

/// ``DisplayText``: the one rule for showing text a peer or a file chose.
final class DisplayTextTests: XCTestCase {
    func testEveryCharacterATerminalActsOnIsEscaped() {
        let cases: [(String, String)] = [
            ("a\u{1B}[2Jb", "a\\u{1B}[2Jb"),  // ESC: erase the screen
            ("a\u{1B}]0;title\u{07}b", "a\\u{1B}]0;title\\u{7}b"),  // OSC: set the window title, BEL
            ("a\u{9B}31mb", "a\\u{9B}31mb"),  // the 8-bit CSI
            ("a\u{85}b", "a\\u{85}b"),  // NEL, a C1 line break
            ("a\u{7F}b", "a\\u{7F}b"),  // DEL
            ("a\rb", "a\\rb"),  // CR: overwrite the line
            ("a\nb", "a\\nb"),  // a forged line
            ("a\tb", "a\\tb"),
            ("a\0b", "a\\0b"),
            ("a\u{08}b", "a\\u{8}b"),  // backspace
            ("gnp\u{202E}exe", "gnp\\u{202E}exe"),  // right-to-left override (CVE-2021-42574)
            ("a\u{2066}b\u{2069}", "a\\u{2066}b\\u{2069}"),  // bidirectional isolates
            ("a\u{200F}b", "a\\u{200F}b"),  // right-to-left mark
            ("pay\u{200B}pal", "pay\\u{200B}pal"),  // zero-width space: two names that look alike
            ("\u{FEFF}bom", "\\u{FEFF}bom"),
            ("a\u{E0041}b", "a\\u{E0041}b"),  // a tag character
            ("a\u{2028}b\u{2029}", "a\\u{2028}b\\u{2029}"),  // line and paragraph separators
            ("a" + String(Unicode.Scalar(0xFDD0)!) + "b" + String(Unicode.Scalar(0xFFFF)!), "a\\u{FDD0}b\\u{FFFF}"),  // noncharacters
        ]
        for (input, expected) in cases {
            XCTAssertEqual(DisplayText.escaped(input), expected, input.debugDescription)
            XCTAssertFalse(DisplayText.escaped(input).unicodeScalars.contains(where: DisplayText.isUnsafe), input.debugDescription)
        }
    }

    func testPrintableTextInAnyScriptIsShownAsItIs() {
        for text in ["CN=localhost,O=mtls test,C=US", "Straße Ünïcödé", "日本語のページ", "Ελληνικά", "مرحبا", "👍🏽", "C:\\Users\\a", "tab-less \"quoted\"", ""] {
            XCTAssertEqual(DisplayText.escaped(text), text)
        }
    }

    func testEveryScalarIsEitherShownOrEscapedToPrintableASCII() {
        // The whole of Unicode: an unsafe scalar never comes out as itself, and what it becomes is
        // printable ASCII; a safe one comes out unchanged.
        var scalar: UInt32 = 0
        while scalar <= 0x10FFFF {
            defer { scalar += scalar < 0x3000 ? 1 : 7 }
            guard let value = Unicode.Scalar(scalar) else { continue }
            let shown = DisplayText.escaped(String(value))
            if DisplayText.isUnsafe(value) {
                XCTAssertTrue(shown.utf8.allSatisfy { (0x20..<0x7F).contains($0) }, "U+\(String(scalar, radix: 16)): \(shown)")
            } else {
                XCTAssertEqual(shown, String(value), "U+\(String(scalar, radix: 16))")
            }
        }
    }

    func testQuotedIsASwiftLiteralThatReadsBackExactly() {
        XCTAssertEqual(DisplayText.quoted("a\"b\\c"), "\"a\\\"b\\\\c\"")
        XCTAssertEqual(DisplayText.quoted("x\u{1B}[31m\n"), "\"x\\u{1B}[31m\\n\"")
        XCTAssertEqual(DisplayText.quoted("plain"), "\"plain\"")
        XCTAssertEqual(DisplayText.quoted(""), "\"\"")
    }

    func testAConsoleMayKeepItsOwnLayout() {
        let keep: (Unicode.Scalar) -> Bool = { $0 == "\n" || $0 == "\t" }
        XCTAssertEqual(DisplayText.escaped("a\tb\nc\rd\u{1B}", keeping: keep, quoting: false), "a\tb\nc\\rd\\u{1B}")
    }
}

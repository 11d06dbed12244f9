import Foundation
import XCTest

@testable import MTLSHTTP

/// How a page's encoding is found when `Content-Type` does not say: a byte-order mark, then the
/// HTML Standard's prescan for `<meta>` (``EncodingPrescan``), judged by html5lib's encoding tests
/// (TestCerts/third-party/html5lib-encoding: origin and licence in its README).
final class HTMLEncodingPrescanTests: XCTestCase {
    private func cases(_ file: String) throws -> [(data: [UInt8], expected: String)] {
        let bytes = Array(try Data(contentsOf: HTTPFixtures.testCerts.appendingPathComponent("third-party/html5lib-encoding/\(file)")))
        // Split on the markers as bytes: the pages are in many encodings.
        var cases: [(data: [UInt8], expected: String)] = []
        let data = Array("#data\n".utf8)
        let encoding = Array("\n#encoding\n".utf8)
        func find(_ needle: [UInt8], from start: Int) -> Int? {
            guard start <= bytes.count - needle.count else { return nil }
            return (start...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle }
        }
        var position = 0
        while let start = find(data, from: position) {
            let body = start + data.count
            guard let marker = find(encoding, from: body) else { break }
            let labelStart = marker + encoding.count
            let labelEnd = bytes[labelStart...].firstIndex(of: 0x0A) ?? bytes.count
            cases.append((Array(bytes[body..<marker]), String(decoding: bytes[labelStart..<labelEnd], as: UTF8.self)))
            position = labelEnd
        }
        return cases
    }

    func testHtml5libEncodingTests() throws {
        var total = 0
        var failures: [String] = []
        for (file, count) in [("tests1.dat", 59), ("tests2.dat", 22), ("test-yahoo-jp.dat", 1)] {
            let all = try cases(file)
            XCTAssertEqual(all.count, count, file)
            for item in all {
                total += 1
                let decoded = DecodedText(body: item.data, contentType: "text/html")
                let ours = decoded.source == .guessed ? "windows-1252" : decoded.charset.name
                let expected = try XCTUnwrap(TextCharset(label: item.expected), item.expected).name
                if ours != expected {
                    failures.append("\(file): \(String(decoding: item.data.prefix(120), as: UTF8.self).debugDescription): \(ours), expected \(expected)")
                }
            }
        }
        XCTAssertEqual(total, 82)
        XCTAssertEqual(failures, [], "\(failures.count) of \(total) differ")
    }

    /// The rules the tests do not reach (the HTML Standard, 13.2.3.2).
    func testPrescanRules() {
        func found(_ page: String) -> String? { EncodingPrescan.declaredEncoding(in: Array(page.utf8))?.charset.name }
        XCTAssertEqual(found(#"<meta http-equiv="content-type" content="text/html; charset=shift_jis">"#), "Shift_JIS")
        XCTAssertNil(found(#"<meta content="text/html; charset=shift_jis">"#), "content without the pragma")
        XCTAssertEqual(found(#"<meta charset="x-user-defined">"#), "windows-1252")
        XCTAssertEqual(found(#"<meta charset="utf-16be">"#), "UTF-8")
        XCTAssertEqual(found(#"<meta charset=" sjis ">"#), "Shift_JIS", "white space around a label")
        XCTAssertNil(found(#"<meta charset="cp850x">"#))
        XCTAssertEqual(found(#"<p title='<meta charset=koi8-r>'><meta charset=euc-jp>"#), "EUC-JP", "inside an attribute value it is not a tag")
        XCTAssertEqual(found(#"<!--><meta charset=euc-jp>"#), "EUC-JP", "<!--> is a whole comment")
        XCTAssertEqual(found(#"<meta charset=iso-2022-kr>"#), "replacement")
        XCTAssertEqual(TextCharset(label: "iso-2022-kr")?.decode(Array("\u{1B}$)C<script>".utf8)), "\u{FFFD}")
    }
}

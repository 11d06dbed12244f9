import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust

/// `MediaType` against the web-platform-tests of the MIME Sniffing and Fetch Standards
/// (TestCerts/third-party/wpt-mimesniff: origin and licence in its README):
/// - `mime-types.json`: one `Content-Type` value parsed and serialized, and the encoding its
///   `charset` names (or none);
/// - the cases `generated-mime-types.py` generates: every code point up to U+00FF that is not a
///   token code point, in the type, the subtype, a parameter name and a parameter value (bare and
///   quoted), built here by the generator's rules;
/// - `content-types.json`: several `Content-Type` fields combined as Fetch's "extract a MIME
///   type" combines them, with the encoding and the type a document gets.
/// No case is skipped, and none parts from the standards.
final class MediaTypeWPTTests: XCTestCase {
    private func json(_ name: String) throws -> [Any] {
        let url = HTTPFixtures.testCerts.appendingPathComponent("third-party/wpt-mimesniff/\(name)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [Any])
    }

    /// The encoding name a charset label gives, or nil, as the tests' `encoding` field has it.
    private func encodingName(_ type: MediaType?) -> String? {
        type?.charset.flatMap { TextCharset(label: $0)?.name }
    }

    func testMIMETypesParseAndSerializeAsTheStandardSays() throws {
        var checked = 0
        var encodings = 0
        for case let entry as [String: Any] in try json("mime-types.json") {
            let input = try XCTUnwrap(entry["input"] as? String)
            let parsed = MediaType(input)
            let label = DisplayText.quoted(input)
            if let output = entry["output"] as? String {
                XCTAssertEqual(parsed?.description, output, "input \(label)")
            } else {
                XCTAssertNil(parsed, "input \(label) must not parse; parsed as \(parsed.map(String.init(describing:)) ?? "")")
            }
            if entry.keys.contains("encoding") {
                XCTAssertEqual(encodingName(parsed), entry["encoding"] as? String, "encoding of \(label)")
                encodings += 1
            }
            checked += 1
        }
        XCTAssertEqual(checked, 74)
        XCTAssertEqual(encodings, 40)
    }

    /// The cases of wpt's `generated-mime-types.py`, serialized as the standard now serializes
    /// (`;` with no space: the generator predates that change).
    func testGeneratedCodePointCases() {
        func isTokenCodePoint(_ value: UInt32) -> Bool {
            [0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E].contains(value)
                || (0x30...0x39).contains(value) || (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value)
        }
        func isQuotedStringTokenCodePoint(_ value: UInt32) -> Bool {
            value == 0x09 || (0x20...0x7E).contains(value) || (0x80...0xFF).contains(value)
        }
        var cases: [(input: String, output: String?)] = []
        for value in UInt32(0)..<0x100 where !isTokenCodePoint(value) {
            let character = String(Character(Unicode.Scalar(value)!))
            if value != 0x2F {
                cases.append((character + "/x", nil))
                cases.append(("x/" + character, nil))
            }
            if value != 0x3B && value != 0x3D {
                cases.append(("x/x;" + character + "=x;bonus=x", "x/x;bonus=x"))
            }
            if ![0x09, 0x20, 0x22, 0x3B, 0x5C].contains(value) {
                let output = isQuotedStringTokenCodePoint(value) ? "x/x;x=\"" + character + "\";bonus=x" : "x/x;bonus=x"
                cases.append(("x/x;x=" + character + ";bonus=x", output))
                cases.append(("x/x;x=\"" + character + "\";bonus=x", output))
            }
        }
        XCTAssertEqual(cases.count, 881)
        for item in cases {
            XCTAssertEqual(MediaType(item.input)?.description, item.output, "input \(DisplayText.quoted(item.input))")
        }
    }

    func testContentTypeFieldsCombinedAsFetchExtractsAMIMEType() throws {
        var checked = 0
        for case let entry as [String: Any] in try json("content-types.json") {
            let fields = try XCTUnwrap(entry["input"] as? [String])
            var headers = HTTPHeaders()
            for value in fields { headers.add("Content-Type", value) }
            let type = headers.mediaType
            let label = fields.map { DisplayText.quoted($0) }.joined(separator: ", ")
            XCTAssertEqual(type?.description, entry["mimeType"] as? String, "fields \(label)")
            XCTAssertEqual(type?.essence, entry["documentContentType"] as? String, "fields \(label)")
            XCTAssertEqual(encodingName(type), entry["encoding"] as? String, "encoding of \(label)")
            checked += 1
        }
        XCTAssertEqual(checked, 16)
    }

    /// The same rules on a response as it comes off the wire: two `Content-Type` fields, the
    /// charset of the first kept for the second of the same type, and the body decoded by it.
    func testResponseWithTwoContentTypeFieldsDecodesByTheCombinedCharset() throws {
        var parser = HTTPResponseParser(requestMethod: "GET")
        let body: [UInt8] = [0x93, 0xFA, 0x96, 0x7B]  // 日本 in Shift_JIS
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html;charset=Shift_JIS\r\nContent-Type: text/html\r\nContent-Length: 4\r\n\r\n"
        let events = try parser.feed(ArraySlice(Array(head.utf8) + body))
        XCTAssertEqual(events.last, .end)
        let headers = try XCTUnwrap(parser.head?.headers)
        XCTAssertEqual(headers.mediaType?.description, "text/html;charset=Shift_JIS")
        let decoded = DecodedText(body: body, mediaType: headers.mediaType)
        XCTAssertEqual(decoded.text, "日本")
        XCTAssertEqual(decoded.source, .contentType)
    }

    /// A label the MIME syntax leaves quoted is no label (browsers agree): the page's own
    /// `<meta>` decides instead.
    func testSingleQuotedCharsetIsNoLabelAndTheMetaDecides() {
        let page: [UInt8] = Array("<meta charset=\"euc-jp\">".utf8) + [0xC6, 0xFC, 0xCB, 0xDC]
        let decoded = DecodedText(body: page, contentType: "text/html; charset='Shift_JIS'")
        XCTAssertEqual(decoded.source, .meta)
        XCTAssertEqual(decoded.charset, .eucJP)
        XCTAssertTrue(decoded.text.hasSuffix("日本"))
        XCTAssertNil(TextCharset(label: "'Shift_JIS'"))
        XCTAssertNil(TextCharset(label: "\"Shift_JIS\""))
        XCTAssertEqual(TextCharset(label: " Shift_JIS\u{0C}"), .shiftJIS)
    }
}

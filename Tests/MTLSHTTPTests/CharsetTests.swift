import Foundation
import MTLSHTTP
import XCTest
import MTLSTestSupport

final class CharsetTests: XCTestCase {
    func testShiftJISLabelsMeanCP932() {
        for label in ["Shift_JIS", "shift_jis", "SJIS", "windows-31j", "CP932", "x-sjis", " Shift_JIS\t"] {
            XCTAssertEqual(TextCharset(label: label), .shiftJIS, label)
        }
        // Quotes belong to the syntax around a label (MediaType and the prescan take them off).
        XCTAssertNil(TextCharset(label: "\"Shift_JIS\""))
        // ①② (NEC row 13) exist only in CP932.
        XCTAssertEqual(TextCharset.shiftJIS.decode([0x87, 0x40, 0x87, 0x41]), "①②")
        // 0x8160 is the wave dash, which CP932 maps to U+FF5E.
        XCTAssertEqual(TextCharset.shiftJIS.decode([0x81, 0x60]), "\u{FF5E}")
        XCTAssertEqual(TextCharset.shiftJIS.decode([0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]), "日本語")
    }

    func testEUCJPAndISO2022JPDecode() throws {
        XCTAssertEqual(TextCharset(label: "EUC-JP")?.decode([0xC6, 0xFC, 0xCB, 0xDC]), "日本")
        let jis: [UInt8] = [0x1B, 0x24, 0x42, 0x46, 0x7C, 0x4B, 0x5C, 0x1B, 0x28, 0x42, 0x41]
        XCTAssertEqual(TextCharset(label: "iso-2022-jp")?.decode(jis), "日本A")
        XCTAssertEqual(TextCharset.iso2022JP.encode("日本A"), jis)
    }

    func testWindows1252CoversTheC1RangeAndLatin1LabelsMapToIt() {
        XCTAssertEqual(TextCharset(label: "ISO-8859-1"), .windows1252)
        XCTAssertEqual(TextCharset(label: "us-ascii"), .windows1252)
        XCTAssertEqual(TextCharset.windows1252.decode([0x80, 0x93, 0x94, 0xE9, 0x81]), "€“”é\u{81}")
        XCTAssertEqual(TextCharset.windows1252.encode("€é☃"), [0x80, 0xE9] + Array("&#9731;".utf8))
    }

    func testOtherIconvCharsetsAndUnknownLabels() {
        XCTAssertEqual(TextCharset(label: "koi8-r")?.decode([0xF0, 0xD2, 0xC9]), "При")
        XCTAssertEqual(TextCharset(label: "gb2312")?.decode([0xD6, 0xD0, 0xCE, 0xC4]), "中文")
        XCTAssertNil(TextCharset(label: "no-such-charset-xyz"))
    }

    func testInvalidBytesBecomeReplacementCharactersNotFailures() {
        XCTAssertEqual(TextCharset.shiftJIS.decode([0x41, 0x81, 0x20, 0x42]), "A\u{FFFD} B", "0x81 needs a trail byte")
        XCTAssertEqual(TextCharset.eucJP.decode([0x41, 0xC6]), "A\u{FFFD}")
        XCTAssertEqual(TextCharset.utf8.decode([0x41, 0xFF]), "A\u{FFFD}")
    }

    func testContentTypeCharsetWinsThenMetaThenAGuess() {
        let sjisBody: [UInt8] = Array("<html><head><meta charset=\"Shift_JIS\"></head><body>".utf8) + [0x93, 0xFA, 0x96, 0x7B] + Array("</body></html>".utf8)
        let byHeader = DecodedText(body: sjisBody, contentType: "text/html; charset=\"Shift_JIS\"")
        XCTAssertEqual(byHeader.source, .contentType)
        XCTAssertTrue(byHeader.text.contains("日本"))

        let byMeta = DecodedText(body: sjisBody, contentType: "text/html")
        XCTAssertEqual(byMeta.source, .meta)
        XCTAssertEqual(byMeta.charset, .shiftJIS)
        XCTAssertTrue(byMeta.text.contains("日本"))

        let httpEquiv: [UInt8] =
            Array("<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\"></head><body>".utf8) + [0xC6, 0xFC] + Array("</body></html>".utf8)
        let byHTTPEquiv = DecodedText(body: httpEquiv, contentType: nil)
        XCTAssertEqual(byHTTPEquiv.source, .meta)
        XCTAssertEqual(byHTTPEquiv.charset, .eucJP)
        XCTAssertTrue(byHTTPEquiv.text.contains("日"))

        XCTAssertEqual(DecodedText(body: Array("héllo".utf8), contentType: "text/plain").source, .guessed)
        XCTAssertEqual(DecodedText(body: [0x68, 0xE9], contentType: "text/plain").text, "hé")
        XCTAssertEqual(DecodedText(body: [0xEF, 0xBB, 0xBF, 0x41], contentType: "text/html; charset=Shift_JIS").source, .byteOrderMark)
    }

    func testAnUnknownDeclaredCharsetFallsThroughToTheNextSource() {
        let decoded = DecodedText(body: Array("<meta charset=utf-8>ü".utf8), contentType: "text/html; charset=x-unknown-thing")
        XCTAssertEqual(decoded.source, .meta)
        XCTAssertTrue(decoded.text.hasSuffix("ü"))
    }

    // MARK: Live: Apache pages declared Shift_JIS

    func testApacheShiftJISPageDecodes() throws {
        let apache = try LoginPeers.shared.apache()
        let result = try LoginFixtures.session().get("https://127.0.0.1:\(apache.port)/sjis")
        let text = result.text
        XCTAssertEqual(text.source, .contentType)
        XCTAssertEqual(text.declaredLabel, "Shift_JIS")
        XCTAssertTrue(text.text.contains("日本語のページ"), text.text)
    }

    func testApacheCP932PageSentAsShiftJISDecodesTheNECCharacters() throws {
        let apache = try LoginPeers.shared.apache()
        let result = try LoginFixtures.session().get("https://127.0.0.1:\(apache.port)/cp932")
        XCTAssertTrue(result.text.text.contains("丸数字①②のページ"), result.text.text)
        XCTAssertFalse(result.text.text.contains("\u{FFFD}"))
    }
}

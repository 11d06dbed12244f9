import Foundation
import XCTest

@testable import MTLSHTTP

/// `HTMLCharacterReferences` against html5lib's tokenizer tests of character references
/// (TestCerts/third-party/html5lib-tokenizer: origin and licence in its README): every case's
/// input decoded as text (or, for the `<h a=…>` cases, its attribute value decoded as one) must
/// give the characters the tokenizer emits.
final class HTMLCharacterReferencesTests: XCTestCase {
    private func cases(_ file: String) throws -> [(input: String, output: [Any], description: String)] {
        let url = HTTPFixtures.testCerts.appendingPathComponent("third-party/html5lib-tokenizer/\(file)")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let tests = try XCTUnwrap(json["tests"] as? [[String: Any]])
        return try tests.map { test in
            (try XCTUnwrap(test["input"] as? String), try XCTUnwrap(test["output"] as? [Any]), test["description"] as? String ?? "")
        }
    }

    /// Checks every case of one file; returns how many were text and how many attribute values.
    private func check(_ file: String) throws -> (text: Int, attribute: Int) {
        var counts = (text: 0, attribute: 0)
        let tag = #/^<h a=(?:"([^"]*)"|'([^']*)'|([^ >]*))>$/#
        for item in try cases(file) {
            if let match = item.input.wholeMatch(of: tag) {
                let raw = String(match.1 ?? match.2 ?? match.3 ?? "")
                let token = try XCTUnwrap(item.output.first as? [Any], item.description)
                let attributes = try XCTUnwrap(token.last as? [String: String], item.description)
                XCTAssertEqual(HTMLCharacterReferences.decode(raw, inAttribute: true), attributes["a"], item.description)
                counts.attribute += 1
            } else {
                let characters = item.output.compactMap { ($0 as? [Any]).flatMap { $0.first as? String == "Character" ? $0.last as? String : nil } }
                XCTAssertEqual(characters.count, item.output.count, "\(item.description): a token other than characters")
                XCTAssertEqual(HTMLCharacterReferences.decode(item.input), characters.joined(), item.description)
                counts.text += 1
            }
        }
        return counts
    }

    func testNamedReferences() throws {
        let counts = try check("namedEntities.test")
        XCTAssertEqual(counts.text, 4_210)
    }

    func testNumericReferences() throws {
        let counts = try check("numericEntities.test")
        XCTAssertEqual(counts.text, 336)
    }

    func testReferenceEdgeCasesInTextAndAttributes() throws {
        let counts = try check("entities.test")
        XCTAssertEqual(counts.text, 71)
        XCTAssertEqual(counts.attribute, 9)
    }

    /// What probe shows of a page: the title and first line decoded, whatever references the page
    /// used (before, only `&lt; &gt; &quot; &#39; &nbsp; &amp;` were).
    func testTextWithoutReferencesIsUnchangedAndMixedTextDecodes() {
        XCTAssertEqual(HTMLCharacterReferences.decode("plain & simple"), "plain & simple")
        XCTAssertEqual(HTMLCharacterReferences.decode("Anmeldung &ndash; Contoso &amp;lt;"), "Anmeldung – Contoso &lt;")
        XCTAssertEqual(HTMLCharacterReferences.decode("&#x30ED;&#x30B0;&#x30A4;&#x30F3;&#128;"), "ログイン€")
        XCTAssertEqual(HTMLCharacterReferences.decode("?a=1&copy=2", inAttribute: true), "?a=1&copy=2")
        XCTAssertEqual(HTMLCharacterReferences.decode("?a=1&copy=2"), "?a=1©=2")
    }
}

import Foundation
import XCTest

@testable import MTLSHTTP

/// `HTTPSURL` against the web-platform-tests URL cases (TestCerts/third-party/wpt-url: origin and
/// licence in its README): every case whose input is an http(s) URL, or whose base is one, is
/// parsed alone or resolved against the base, and compared on host, port and request target (path
/// and query as they go on the request line) with what the URL Standard gives; a case the standard
/// refuses must be refused.
///
/// Three rules part from the standard on purpose, and each is checked to hold as stated:
/// - a host that needs IDNA (non-ASCII, also when percent-encoded) is refused with a hint to use
///   the `xn--` form: the UTS 46 mapping tables are not part of mtls;
/// - for the same reason an `xn--` label is checked as Punycode, not against those tables, so
///   one that decodes to characters UTS 46 disallows is accepted;
/// - port 0 is refused (nothing can be reached there).
final class URLParserWPTTests: XCTestCase {
    private struct Case {
        let input: String
        let base: String?
        let failure: Bool
        let host: String
        let port: Int
        let target: String
    }

    private func cases() throws -> [Case] {
        let data = try Data(contentsOf: HTTPFixtures.testCerts.appendingPathComponent("third-party/wpt-url/urltestdata.json"))
        let all = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [Any])
        var cases: [Case] = []
        func isHTTP(_ text: String?) -> Bool { text.map { $0.lowercased().hasPrefix("http:") || $0.lowercased().hasPrefix("https:") } ?? false }
        for case let entry as [String: Any] in all {
            guard let input = entry["input"] as? String else { continue }
            let base = (entry["base"] as? String).flatMap { $0 == "about:blank" ? nil : $0 }
            if let base, !isHTTP(base) { continue }
            let failure = entry["failure"] as? Bool ?? false
            let scheme = entry["protocol"] as? String
            if failure ? (base == nil && !isHTTP(input)) : !(scheme == "http:" || scheme == "https:") { continue }
            let href = entry["href"] as? String ?? ""
            var target = entry["pathname"] as? String ?? ""
            // The query as serialised (`search` is empty for an empty query, the request line is not).
            if let question = href.firstIndex(of: "?"), question < (href.firstIndex(of: "#") ?? href.endIndex) {
                target += href[question..<(href.firstIndex(of: "#") ?? href.endIndex)]
            }
            cases.append(
                Case(
                    input: input, base: base, failure: failure,
                    host: (entry["hostname"] as? String ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]")),
                    port: Int(entry["port"] as? String ?? "") ?? (scheme == "https:" ? 443 : 80), target: target))
        }
        return cases
    }

    private func parse(_ item: Case) -> Result<HTTPSURL, HTTPSError> {
        Result { () throws(HTTPSError) -> HTTPSURL in
            guard let base = item.base else { return try HTTPSURL(item.input) }
            return try HTTPSURL(base).resolving(item.input)
        }
    }

    func testEveryHTTPCaseParsesAsTheStandardSays() throws {
        let all = try cases()
        XCTAssertEqual(all.count, 433, "http(s) cases in urltestdata.json")
        var differences: [String] = []
        var idnaRefused = 0
        var unmappedPunycode = 0
        var portZero = 0
        for item in all {
            let label = item.input.debugDescription + (item.base.map { " against \($0)" } ?? "")
            switch (parse(item), item.failure) {
            case (.success(let url), true):
                // Accepted where the standard refuses: only an xn-- label UTS 46 would refuse.
                if url.host.split(separator: ".").contains(where: { $0.hasPrefix("xn--") }) {
                    unmappedPunycode += 1
                } else {
                    differences.append("\(label): accepted as \(url), the standard refuses it")
                }
            case (.success(let url), false):
                if url.host != item.host || url.port != item.port || url.target != item.target {
                    differences.append("\(label): \(url.host) \(url.port) \(url.target), the standard \(item.host) \(item.port) \(item.target)")
                }
            case (.failure(let error), false):
                if error.description.contains("is not ASCII"), item.input.unicodeScalars.contains(where: { !$0.isASCII }) || item.input.contains("%") {
                    idnaRefused += 1
                } else if item.port == 0 && error.description.contains("port") {
                    portZero += 1
                } else {
                    differences.append("\(label): refused (\(error.description)), the standard gives \(item.host) \(item.port) \(item.target)")
                }
            case (.failure, true):
                continue
            }
        }
        XCTAssertEqual(differences, [], "\(differences.count) cases differ")
        XCTAssertEqual(idnaRefused, 8, "hosts that need IDNA, refused with the xn-- hint")
        XCTAssertEqual(unmappedPunycode, 6, "xn-- labels UTS 46 would refuse, accepted")
        XCTAssertEqual(portZero, 2, "port 0, refused")
    }

    /// The confusions the standard settles, each checked by name (they are what a naive reader gets
    /// wrong, and what decides which host gets the request and its credentials).
    func testHostConfusions() throws {
        let cases: [(String, String, Int, String)] = [
            ("https://trusted.example\\@evil.example/", "trusted.example", 443, "/@evil.example/"),
            ("https://user:pw@trusted.example@evil.example/", "evil.example", 443, "/"),
            ("https://127.1/", "127.0.0.1", 443, "/"),
            ("https://0x7f.1:8443/x", "127.0.0.1", 8443, "/x"),
            ("https://[0:0:0:0:0:0:0:1]:8443/", "::1", 8443, "/"),
            ("https://[::ffff:192.168.0.1]/", "::ffff:c0a8:1", 443, "/"),
            ("HTTPS://EXAMPLE.COM:443/A/./B/../C", "example.com", 443, "/A/C"),
            ("example.com:8443/x?y", "example.com", 8443, "/x?y"),
            ("localhost:8443", "localhost", 8443, "/"),
        ]
        for (text, host, port, target) in cases {
            let url = try HTTPSURL(text)
            XCTAssertEqual([url.host, String(url.port), url.target], [host, String(port), target], text)
        }
        for text in ["https://[www.example.com]/", "https://256.0.0.1/", "https://1.2.3.4.5/", "https://ex%00ample.com/", "https://a:b:c/", "https://user@/", "ftp://example.com/"]
        {
            XCTAssertThrowsError(try HTTPSURL(text), text)
        }
        XCTAssertEqual(try HTTPSURL("https://a.example/x/y").resolving("\\\\evil.example/z").host, "evil.example", "\\\\ is // in a special URL")
        XCTAssertThrowsError(try HTTPSURL("https://a.example/x/y").resolving("javascript:alert(1)"), "another scheme is not followed")
    }
}

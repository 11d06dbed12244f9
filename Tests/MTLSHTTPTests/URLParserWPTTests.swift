import Foundation
import XCTest

@testable import MTLSHTTP

/// `HTTPSURL` against the web-platform-tests URL cases (TestCerts/third-party/wpt-url: origin and
/// licence in its README): every case whose input is an http(s) URL, or whose base is one, is
/// parsed alone or resolved against the base, and compared on host, port and request target (path
/// and query as they go on the request line) with what the URL Standard gives; a case the standard
/// refuses must be refused.
///
/// Hosts that need IDNA (non-ASCII, also when percent-encoded, and `xn--` labels) go through
/// UTS 46 as the standard says (`IDNA`, judged on its own by `IDNAConformanceTests`). One rule
/// parts from the standard on purpose, and is checked to hold as stated: port 0 is refused
/// (nothing can be reached there).
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
        var portZero = 0
        var internationalised = 0
        for item in all {
            let label = item.input.debugDescription + (item.base.map { " against \($0)" } ?? "")
            switch (parse(item), item.failure) {
            case (.success(let url), true):
                differences.append("\(label): accepted as \(url), the standard refuses it")
            case (.success(let url), false):
                if url.host.contains("xn--") { internationalised += 1 }
                if url.host != item.host || url.port != item.port || url.target != item.target {
                    differences.append("\(label): \(url.host) \(url.port) \(url.target), the standard \(item.host) \(item.port) \(item.target)")
                }
            case (.failure(let error), false):
                if item.port == 0 && error.description.contains("port") {
                    portZero += 1
                } else {
                    differences.append("\(label): refused (\(error.description)), the standard gives \(item.host) \(item.port) \(item.target)")
                }
            case (.failure, true):
                continue
            }
        }
        XCTAssertEqual(differences, [], "\(differences.count) cases differ")
        XCTAssertEqual(portZero, 2, "port 0, refused")
        XCTAssertEqual(internationalised, 3, "hosts the standard gives with an xn-- label, given so")
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

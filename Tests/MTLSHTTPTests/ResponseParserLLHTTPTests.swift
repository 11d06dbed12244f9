import Foundation
import XCTest

@testable import MTLSHTTP

/// `HTTPResponseParser` against the response tests of llhttp, the parser of Node.js
/// (TestCerts/third-party/llhttp: origin and licence in its README). Every test is read: its input
/// is fed in one piece and byte by byte (both must give the same outcome), then `finish()` is
/// called where llhttp's test finishes; the outcome (refused or not; for each response its status,
/// reason, header fields, body and whether it ended) is compared with what llhttp's log says.
///
/// A stream holds one response after another as a kept-alive connection would: after a response
/// the bytes left start the next one when the connection could be reused (HTTP/1.1 without
/// `Connection: close`, as `HTTP1ExchangeStateMachine` decides), end the reading after a 101
/// (they belong to the new protocol), and are otherwise bytes after the end (refused).
/// An interim (1xx) response is compared on its status only: the parser keeps no interim fields.
///
/// Tests of llhttp's default mode must agree, except the deliberate rules listed in
/// `deliberateRules`, each checked to hold as stated. Tests of its lenient modes
/// (`response-lenient-*`) are counted and listed with what mtls does; either verdict is allowed.
/// Before the fixes the suite led to, 61 of the 77 default-mode tests agreed; now 66 do.
final class ResponseParserLLHTTPTests: XCTestCase {
    private static let files = [
        "connection", "content-length", "finish", "invalid", "lenient-version", "pausing", "pipelining", "sample", "transfer-encoding",
    ]

    /// Default-mode tests where mtls parts from llhttp on purpose, by "file: heading".
    private enum Rule {
        /// mtls refuses what llhttp reads.
        case refuses(String)
        /// mtls reads what llhttp refuses.
        case accepts(String)
    }

    private static let onlyHTTP1 =
        "only an HTTP/1.x status line starts a response: RTSP and ICE are other protocols and HTTP/0.9 has no status line (curl refuses all three)"
    private static let bareLF =
        "a bare LF ends a line (RFC 9112 2.2 lets a recipient accept it; curl and browsers do, and old appliances send it); a CR without LF is still refused"
    private static let onlyChunked =
        "a transfer coding other than a final chunked is refused, not read until close: mtls cannot undo it, and coded bytes delivered as the body would be silent corruption"

    private static let deliberateRules: [String: Rule] = [
        "sample: RTSP response": .refuses(onlyHTTP1),
        "sample: ICE response": .refuses(onlyHTTP1),
        "sample: HTTP version 0.9": .refuses(onlyHTTP1),
        "sample: No carriage ret": .accepts(bareLF),
        "invalid: Only LFs present and no body": .accepts(bareLF),
        "invalid: Only LFs present": .accepts(bareLF),
        "transfer-encoding: Trailing space on chunked body":
            .accepts(
                "spaces or tabs after a chunk size are skipped, as curl and Chromium do (llhttp added a lenient mode for the servers that send them); the size is unambiguous"
            ),
        "transfer-encoding: `chunked` before other transfer-encoding": .refuses(onlyChunked),
        "transfer-encoding: multiple transfer-encoding where chunked is not the last one": .refuses(onlyChunked),
        "transfer-encoding: `chunkedchunked` transfer-encoding does not enable chunked enconding": .refuses(onlyChunked),
        "connection: HTTP/1.0 with keep-alive and 204 status":
            .refuses(
                "mtls keeps only HTTP/1.1 connections alive, so bytes after an HTTP/1.0 response are data after its end (the client closes the connection instead)"
            ),
    ]

    // MARK: - Reading the markdown

    private struct Case {
        let name: String
        let type: String
        let meta: [String: Any]
        let input: [UInt8]
        let log: [String]
    }

    private func cases() throws -> [Case] {
        var cases: [Case] = []
        for file in Self.files {
            let url = HTTPFixtures.testCerts.appendingPathComponent("third-party/llhttp/\(file).md")
            let text = try String(contentsOf: url, encoding: .utf8)
            var heading = ""
            var meta: [String: Any]? = nil
            var http: String? = nil
            var block: (kind: String, lines: [String])? = nil
            for line in text.components(separatedBy: "\n") {
                if var current = block {
                    if line == "```" {
                        if current.kind == "http" {
                            http = current.lines.map { $0 + "\n" }.joined()
                        } else if current.kind == "log" {
                            let input = try XCTUnwrap(http, "\(file): \(heading): a log without an input")
                            let json = try XCTUnwrap(meta, "\(file): \(heading): no meta")
                            let type = try XCTUnwrap(json["type"] as? String)
                            cases.append(Case(name: "\(file): \(heading)", type: type, meta: json, input: try Self.input(input), log: Self.logLines(current.lines)))
                            http = nil
                            meta = nil
                        }
                        block = nil
                    } else {
                        current.lines.append(line)
                        block = current
                    }
                } else if line.hasPrefix("```") {
                    block = (String(line.dropFirst(3)), [])
                } else if line.hasPrefix("## ") || line.hasPrefix("### ") {
                    heading = String(line.drop { $0 == "#" }.dropFirst())
                } else if line.hasPrefix("<!-- meta="), line.hasSuffix("-->") {
                    let json = line.dropFirst("<!-- meta=".count).dropLast(3)
                    meta = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
                }
            }
        }
        return cases
    }

    /// The input as llhttp's `test/md-test.ts` makes it from an `http` block.
    private static func input(_ block: String) throws -> [UInt8] {
        var text = block
        if text.hasSuffix("\n") { text.removeLast() }
        text = replacing(#"\\(\r\n|\r|\n)"#, in: text) { _ in "" }
        text = replacing(#"\r\n|\r|\n"#, in: text) { _ in "\r\n" }
        text = text.replacingOccurrences(of: #"\r"#, with: "\r").replacingOccurrences(of: #"\n"#, with: "\n")
        text = text.replacingOccurrences(of: #"\t"#, with: "\t").replacingOccurrences(of: #"\f"#, with: "\u{0C}")
        text = replacing(#"\\x([0-9a-fA-F]+)"#, in: text) { String(UnicodeScalar(UInt8(Int($0, radix: 16)! & 0xFF))) }
        text = replacing(#"\\([0-7]{1,3})"#, in: text) { String(UnicodeScalar(UInt8(Int($0, radix: 8)! & 0xFF))) }
        XCTAssertFalse(text.contains("${"), "inline JavaScript in an llhttp input is not evaluated here")
        return Array(text.utf8)
    }

    /// Every match of `pattern` replaced by `replacement(first group, else the whole match)`.
    private static func replacing(_ pattern: String, in text: String, _ replacement: (String) -> String) -> String {
        let regex = try! NSRegularExpression(pattern: pattern)
        let source = text as NSString
        var result = ""
        var last = 0
        for match in regex.matches(in: text, range: NSRange(location: 0, length: source.length)) {
            result += source.substring(with: NSRange(location: last, length: match.range.location - last))
            let group = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
            result += replacement(source.substring(with: group))
            last = match.range.location + match.range.length
        }
        return result + source.substring(from: last)
    }

    private static func logLines(_ lines: [String]) -> [String] {
        lines.map { $0.replacingOccurrences(of: #"\t"#, with: "\t").replacingOccurrences(of: #"\f"#, with: "\u{0C}") }
    }

    // MARK: - Outcomes

    private struct Message: Equatable, CustomStringConvertible {
        var status = 0
        var reason = ""
        var fields: [String] = []
        var body: [UInt8] = []
        var complete = false

        var description: String {
            "\(status) \(String(reflecting: reason)) \(fields) body=\(String(reflecting: String(decoding: body, as: UTF8.self)))\(complete ? " complete" : "")"
        }
    }

    private struct Outcome: Equatable, CustomStringConvertible {
        var messages: [Message] = []
        var refused = false
        /// Whether the last body ran until the close (told by a `finish` test).
        var readUntilClose: Bool? = nil

        var description: String { refused ? "refused" : "\(messages)" + (readUntilClose == true ? " until close" : "") }

        /// Equal verdicts; for a message that is not refused, equal messages.
        func agrees(with other: Outcome) -> Bool { refused || other.refused ? refused == other.refused : self == other }
    }

    private static func field(_ name: String, _ value: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return "\(name.lowercased()): " + String(value.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }

    private static func isInterim(_ status: Int) -> Bool { (100...199).contains(status) && status != 101 }

    /// What llhttp's log says.
    private static func expected(_ log: [String]) -> Outcome {
        var outcome = Outcome()
        var messages: [(message: Message, head: Bool)] = []
        var lastSpan = ""
        func span(_ line: String) -> (kind: String, bytes: [UInt8])? {
            guard let open = line.range(of: "span["), let close = line.range(of: "]=", range: open.upperBound..<line.endIndex) else { return nil }
            let kind = String(line[open.upperBound..<close.lowerBound])
            let value = line[close.upperBound...]
            if value == "lf" { return (kind, [0x0A]) }
            if value == "cr" { return (kind, [0x0D]) }
            return (kind, Array(value.dropFirst().dropLast().utf8))
        }
        for line in log {
            if line.hasSuffix(" message begin") {
                messages.append((Message(), false))
            } else if let (kind, bytes) = span(line) {
                let text = String(decoding: bytes, as: UTF8.self)
                switch kind {
                case "status": messages[messages.count - 1].message.reason += text
                case "header_field" where lastSpan == "header_field":
                    messages[messages.count - 1].message.fields[messages[messages.count - 1].message.fields.count - 1] += text
                case "header_field": messages[messages.count - 1].message.fields.append(text + ":")
                case "header_value": messages[messages.count - 1].message.fields[messages[messages.count - 1].message.fields.count - 1] += text
                case "body": messages[messages.count - 1].message.body += bytes
                default: break
                }
                lastSpan = kind
            } else if let range = line.range(of: " headers complete status=") {
                messages[messages.count - 1].message.status = Int(line[range.upperBound...].prefix { $0.isNumber })!
                messages[messages.count - 1].head = true
            } else if line.hasSuffix(" message complete") {
                messages[messages.count - 1].message.complete = true
            } else if line.contains(" error code=") {
                // 22 is HPE_PAUSED_UPGRADE: not a refusal, the rest belongs to the new protocol.
                if !line.contains(" error code=22 ") { outcome.refused = true }
            } else if let range = line.range(of: "finish=") {
                // llhttp_finish() state: 0 nothing pending, 1 the body ends at the close, 2 unsafe.
                switch line[range.upperBound...] {
                case "1":
                    outcome.readUntilClose = true
                    messages[messages.count - 1].message.complete = true
                case "2": outcome.refused = true
                default: outcome.readUntilClose = false
                }
            }
        }
        outcome.messages = messages.filter(\.head).map { entry in
            var message = entry.message
            message.fields = message.fields.map { field in
                let colon = field.firstIndex(of: ":")!
                return Self.field(String(field[..<colon]), String(field[field.index(after: colon)...]))
            }
            if isInterim(message.status) { message = Message(status: message.status, complete: true) }
            return message
        }
        return outcome
    }

    /// What mtls makes of the input, in one piece or byte by byte.
    private static func actual(_ input: [UInt8], method: String, finish: Bool, byteByByte: Bool) -> Outcome {
        var outcome = Outcome()
        var parser = HTTPResponseParser(requestMethod: method)
        func absorb(_ events: [HTTPResponseParser.Event]) {
            for event in events {
                switch event {
                case .informational(let status): outcome.messages.append(Message(status: status, complete: true))
                case .head(let status):
                    let head = parser.head!
                    outcome.messages.append(
                        Message(status: status, reason: head.reason, fields: head.headers.fields.map { Self.field($0.name, $0.value) }))
                case .body(let bytes): outcome.messages[outcome.messages.count - 1].body += bytes
                case .end: outcome.messages[outcome.messages.count - 1].complete = true
                }
            }
        }
        /// After a complete response with bytes left: false when reading stops (an upgrade).
        func next() -> Bool {
            let head = parser.head!
            if head.status == 101 { return false }
            if head.version == "HTTP/1.1" && !head.headers.contains("Connection", where: HTTP1ExchangeStateMachine.listNamesClose) {
                parser = HTTPResponseParser(requestMethod: method)
            }  // else the same parser sees the bytes after its end
            return true
        }
        do throws(HTTPResponseParser.ParseError) {
            if byteByByte {
                for index in input.indices {
                    if parser.isComplete && !next() { break }
                    absorb(try parser.feed(input[index...index]))
                }
            } else {
                var rest = input[...]
                while true {
                    let (events, after) = try parser.feedUpToEnd(rest)
                    absorb(events)
                    rest = rest[after...]
                    if rest.isEmpty || !next() { break }
                    if !parser.isComplete { continue }  // a new parser for the next response
                    absorb(try parser.feed(rest))
                    break
                }
            }
            if finish {
                outcome.readUntilClose = parser.readsUntilClose
                absorb(try parser.finish())
            }
        } catch {
            outcome = Outcome(refused: true)  // what was read before the refusal is not compared
        }
        return outcome
    }

    // MARK: - The test

    func testEveryLLHTTPResponseTest() throws {
        let cases = try cases()
        XCTAssertEqual(cases.count, 85)
        var agreed: [String] = []
        var differing: [String] = []
        var lenient: [String] = []
        for item in cases {
            let method = item.meta["skipBody"] as? Bool == true ? "HEAD" : (item.meta["method"] as? String ?? "GET")
            let finish = item.type == "response-finish"
            let whole = Self.actual(item.input, method: method, finish: finish, byteByByte: false)
            let bytes = Self.actual(item.input, method: method, finish: finish, byteByByte: true)
            XCTAssertEqual(whole, bytes, "\(item.name): one piece and byte by byte differ")
            let expected = Self.expected(item.log)
            if item.type.hasPrefix("response-lenient-") {
                let verdict = whole.refused ? "refused" : whole.agrees(with: expected) ? "read as llhttp reads it" : "read otherwise: \(whole)"
                lenient.append("\(item.name) [\(item.type)]: \(verdict)")
                continue
            }
            XCTAssertTrue(item.type == "response" || item.type == "response-finish", "\(item.name): type \(item.type)")
            if whole.agrees(with: expected) {
                agreed.append(item.name)
                XCTAssertNil(Self.deliberateRules[item.name], "\(item.name) agrees with llhttp: no longer a deliberate rule")
            } else {
                differing.append(item.name)
                switch Self.deliberateRules[item.name] {
                case .refuses?: XCTAssertTrue(whole.refused && !expected.refused, "\(item.name): the rule says mtls refuses what llhttp reads")
                case .accepts?: XCTAssertTrue(!whole.refused && expected.refused, "\(item.name): the rule says mtls reads what llhttp refuses")
                case nil: XCTFail("\(item.name): llhttp \(expected), mtls \(whole)")
                }
            }
        }
        XCTAssertEqual(agreed.count, 66, "agreeing default-mode tests")
        XCTAssertEqual(Set(differing), Set(Self.deliberateRules.keys), "deliberate rules")
        XCTAssertEqual(
            lenient.sorted(),
            [
                "connection: HTTP/1.1 with keep-alive disabled and 204 status (lenient) [response-lenient-keep-alive]: refused",
                "connection: HTTP/1.1 with keep-alive disabled, content-length (lenient) [response-lenient-data-after-close]: refused",
                "invalid: Bare CR after response line (lenient) [response-lenient-optional-lf-after-cr]: refused",
                "invalid: Only LFs present (lenient) [response-lenient-all]: read as llhttp reads it",
                "invalid: Only LFs present and no body (lenient) [response-lenient-all]: read as llhttp reads it",
                "lenient-version: Invalid HTTP version (lenient) [response-lenient-version]: refused",
                "sample: No carriage ret (lenient) [response-lenient-optional-cr-before-lf]: read as llhttp reads it",
                "transfer-encoding: Invalid OBS fold after chunked value [response-lenient-headers]: refused",
            ])
    }
}

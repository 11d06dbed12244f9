import Foundation
@testable import MTLSHTTP

enum HTTPFuzz {
    /// Feeds `bytes` to a response parser in pieces, checks its invariants, then finishes it.
    static func parseResponse(_ bytes: [UInt8], method: String, pieceSize: Int, bodyMustMatchChunks: Bool = false) {
        var parser = HTTPResponseParser(requestMethod: method)
        var body = 0
        var ended = false
        var remaining = bytes[...]
        do {
            while !remaining.isEmpty {
                let piece = remaining.prefix(pieceSize)
                remaining = remaining.dropFirst(pieceSize)
                for event in try parser.feed(piece) {
                    check(!ended, "an event after .end")
                    switch event {
                    case .body(let chunk):
                        body += chunk.count
                        check(!chunk.isEmpty || !bodyMustMatchChunks, "an empty body event")
                    case .end: ended = true
                    case .head: check(parser.head != nil, ".head without a head")
                    case .informational(let status): check((100...199).contains(status), "informational \(status)")
                    }
                }
            }
            for event in try parser.finish() where event == .end { ended = true }
        } catch {
            _ = error.description
            return
        }
        check(body <= bytes.count, "more body (\(body)) than input (\(bytes.count))")
        check(ended == parser.isComplete, "ended \(ended) but isComplete \(parser.isComplete)")
        if let head = parser.head {
            _ = head.headers.description
            _ = head.headers["Content-Type"]
            // The per-line notes against a search of the finished head by name.
            let searched = head.headers["Content-Encoding"]
            check(parser.contentCoding == searched, "Content-Encoding noted \(String(describing: parser.contentCoding)), found \(String(describing: searched))")
            for field in head.headers {
                check(!field.name.isEmpty && field.name.utf8.allSatisfy(HTTPResponseParser.isTokenByte), "a header name that is not a token")
                check(!field.value.utf8.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }), "CR, LF or NUL in a header value")
                check(field.value.first != " " && field.value.last != " " && field.value.first != "\t" && field.value.last != "\t", "an untrimmed value")
            }
        }
    }
}

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
        }
    }
}

/// A received request head.
public struct HTTPRequestHead: Sendable {
    public var method: String
    public var target: String
    public var version: String
    public var headers: HTTPHeaders
    /// The path without the query.
    public var path: String { String(target.prefix { $0 != "?" }) }
}

/// The server side's request parser: request line and headers, then a Content-Length or chunked
/// body. A state machine like ``HTTPResponseParser``; no I/O.
public struct HTTPRequestParser: Sendable {
    public enum ParseError: Error, Sendable, Equatable {
        case badRequestLine, lineTooLong, headersTooLarge, tooManyHeaders, badHeader, badContentLength, conflictingContentLength, badChunk, unsupportedTransferEncoding,
            bodyTooLarge
    }

    public enum Event: Sendable, Equatable {
        case head
        case body([UInt8])
        case end
    }

    private enum State: Sendable { case requestLine, headers, body(Int), chunkSize, chunkData(Int), chunkEnd, trailers, done }

    private var state: State = .requestLine
    private var line: [UInt8] = []
    private var headerBytes = 0
    private var method = ""
    private var target = ""
    private var version = ""
    private var headers = HTTPHeaders()
    public private(set) var head: HTTPRequestHead?
    public let maximumBody: Int
    private var bodySeen = 0
    private var blankLines = 0
    /// The most empty lines accepted before the request line.
    public static let maximumBlankLines = 8

    public init(maximumBody: Int = 16 << 20) { self.maximumBody = maximumBody }

    public var isComplete: Bool { if case .done = state { true } else { false } }
    /// True while the body has not started (so a 100 Continue may still be sent).
    public var awaitingBody: Bool {
        switch state {
        case .body, .chunkSize: bodySeen == 0
        default: false
        }
    }

    public mutating func feed(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> (events: [Event], consumed: Int) {
        var events: [Event] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            switch state {
            case .requestLine, .headers, .chunkSize, .chunkEnd, .trailers:
                guard let newline = bytes[index...].firstIndex(of: 0x0A) else {
                    line += bytes[index...]
                    if line.count > 16384 { throw .lineTooLong }
                    return (events, bytes.endIndex - bytes.startIndex)
                }
                line += bytes[index..<newline]
                index = newline + 1
                if line.count > 16384 { throw .lineTooLong }
                if line.last == 0x0D { line.removeLast() }
                let current = line
                line.removeAll(keepingCapacity: true)
                try handle(current, events: &events)
                if case .done = state { return (events, index - bytes.startIndex) }
            case .body(let remaining):
                let take = min(remaining, bytes.endIndex - index)
                events.append(.body(Array(bytes[index..<(index + take)])))
                bodySeen += take
                index += take
                if remaining == take {
                    state = .done
                    events.append(.end)
                    return (events, index - bytes.startIndex)
                }
                state = .body(remaining - take)
            case .chunkData(let remaining):
                let take = min(remaining, bytes.endIndex - index)
                bodySeen += take
                if bodySeen > maximumBody { throw .bodyTooLarge }
                events.append(.body(Array(bytes[index..<(index + take)])))
                index += take
                state = remaining == take ? .chunkEnd : .chunkData(remaining - take)
            case .done:
                return (events, index - bytes.startIndex)
            }
        }
        return (events, index - bytes.startIndex)
    }

    private mutating func handle(_ current: [UInt8], events: inout [Event]) throws(ParseError) {
        switch state {
        case .requestLine:
            // RFC 9112 §2.2: at least one empty line before the request line is ignored; a few
            // are, more are an attack on the server's time (each one a fresh read).
            if current.isEmpty {
                blankLines += 1
                if blankLines > HTTPRequestParser.maximumBlankLines { throw .badRequestLine }
                return
            }
            let text = String(decoding: current, as: UTF8.self)
            let parts = text.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, parts[0].utf8.allSatisfy(HTTPResponseParser.isTokenByte), parts[2].hasPrefix("HTTP/1."), !parts[1].isEmpty else {
                throw .badRequestLine
            }
            method = String(parts[0])
            target = String(parts[1])
            version = String(parts[2])
            state = .headers
        case .headers:
            headerBytes += current.count
            if headerBytes > 64 * 1024 { throw .headersTooLarge }
            if current.isEmpty {
                head = HTTPRequestHead(method: method, target: target, version: version, headers: headers)
                events.append(.head)
                let te = headers["Transfer-Encoding"]?.lowercased()
                let lengths = Set(headers.values("Content-Length").map { $0.trimmingWhitespace() })
                if let te {
                    guard te.trimmingWhitespace() == "chunked" else { throw .unsupportedTransferEncoding }
                    if !lengths.isEmpty { throw .conflictingContentLength }
                    state = .chunkSize
                } else if lengths.count > 1 {
                    throw .conflictingContentLength
                } else if let text = lengths.first {
                    guard text.utf8.count <= 15, let length = HTTPResponseParser.decimal(text) else { throw .badContentLength }
                    if length > maximumBody { throw .bodyTooLarge }
                    if length == 0 {
                        state = .done
                        events.append(.end)
                    } else {
                        state = .body(length)
                    }
                } else {
                    state = .done
                    events.append(.end)
                }
                return
            }
            guard headers.fields.count < 200, let colon = current.firstIndex(of: 0x3A), colon > 0, current[..<colon].allSatisfy(HTTPResponseParser.isTokenByte) else {
                throw headers.fields.count >= 200 ? .tooManyHeaders : .badHeader
            }
            headers.add(String(decoding: current[..<colon], as: UTF8.self), HTTPResponseParser.decodeValue(current[(colon + 1)...]))
        case .chunkSize:
            let text = String(decoding: current, as: UTF8.self).prefix { $0 != ";" }.trimmingWhitespace()
            // Hex digits only: Int(_:radix:) would also take a sign, and a negative size would trap.
            guard !text.isEmpty, text.count <= 15, text.utf8.allSatisfy(HTTPResponseParser.isHexDigitByte), let size = Int(text, radix: 16) else { throw .badChunk }
            state = size == 0 ? .trailers : .chunkData(size)
        case .chunkEnd:
            guard current.isEmpty else { throw .badChunk }
            state = .chunkSize
        case .trailers:
            if current.isEmpty {
                state = .done
                events.append(.end)
            }
        default:
            break
        }
    }
}

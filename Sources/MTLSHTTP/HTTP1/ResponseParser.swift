#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MTLSTrust

/// The HTTP/1.1 response parser: a state machine fed with bytes, producing events. No I/O.
///
/// States and legal transitions:
/// - `statusLine` → `headers` when a status line is complete;
/// - `headers` → `statusLine` after a 1xx head; → `body`/`chunkSize`/`untilClose`/`done` after the
///   blank line, chosen by the request method, the status and the framing headers;
/// - `body(n)` → `done` after n bytes; `chunkSize` → `chunkData` → `chunkEnd` → `chunkSize`, and
///   `chunkSize` (0) → `trailers` → `done`; `untilClose` → `done` on end of stream;
/// - any state → `failed` on malformed input (the error says which rule).
public struct HTTPResponseParser: Sendable {
    /// Size limits.
    public struct Limits: Sendable {
        public var maximumLineLength = 64 * 1024
        public var maximumHeaderBytes = 256 * 1024
        public var maximumHeaderCount = 1000
        /// The most interim (1xx) responses before the final one; a flood of them is refused.
        public var maximumInformationalResponses = 100
        public init() {}
    }

    /// What the parser found.
    public enum Event: Sendable, Equatable {
        case informational(status: Int)
        case head(status: Int)
        case body([UInt8])
        case end
    }

    /// Why parsing failed.
    public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        case badStatusLine(String)
        case lineTooLong(Int)
        case headersTooLarge(Int)
        case tooManyHeaders(Int)
        case tooManyInformationalResponses(Int)
        case badHeader(String)
        case conflictingContentLength
        case transferEncodingWithContentLength
        case badContentLength(String)
        case badChunkSize(String)
        case chunkSizeOverflow
        case unsupportedTransferEncoding(String)
        case truncated(expected: String)
        case dataAfterEnd

        public var description: String {
            switch self {
            case .badStatusLine(let line): "the status line is not HTTP/1.x: \(DisplayText.quoted(String(line.prefix(80))))"
            case .lineTooLong(let limit): "a header line is longer than \(limit) bytes"
            case .headersTooLarge(let limit): "the headers are larger than \(limit) bytes"
            case .tooManyHeaders(let limit): "there are more than \(limit) header fields"
            case .tooManyInformationalResponses(let limit): "the server sent more than \(limit) informational (1xx) responses before the final one"
            case .badHeader(let line): "a header field is malformed: \(DisplayText.quoted(String(line.prefix(80))))"
            case .conflictingContentLength: "the response has two different Content-Length values (a request-smuggling sign)"
            case .transferEncodingWithContentLength:
                "the response has both Transfer-Encoding and Content-Length, which frame its body differently (a response-smuggling sign)"
            case .badContentLength(let value): "the Content-Length \(DisplayText.quoted(String(value.prefix(40)))) is not a number"
            case .badChunkSize(let line): "a chunk size line is malformed: \(DisplayText.quoted(String(line.prefix(40))))"
            case .chunkSizeOverflow: "a chunk size is too large"
            case .unsupportedTransferEncoding(let value): "the transfer coding \(DisplayText.quoted(value)) is not supported"
            case .truncated(let expected): "the connection ended before the response was complete (\(expected))"
            case .dataAfterEnd: "the server sent data after the response"
            }
        }
    }

    private enum State: Sendable {
        case statusLine, headers, body(remaining: Int), chunkSize, chunkData(remaining: Int), chunkEnd, trailers, untilClose, done, failed
    }

    public let limits: Limits
    private let method: String
    private var state: State = .statusLine
    private var lineBuffer: [UInt8] = []
    private var headerBytes = 0
    /// The head, once parsed.
    public private(set) var head: HTTPResponseHead?
    private var pendingStatus = 0
    private var pendingVersion = ""
    private var pendingReason = ""
    private var pendingFields = HTTPHeaders.Received(reservingBytes: 0, fields: 0)
    private var framing = FramingFields()
    /// Which framing field the last field line of the head was, if any (a fold may not continue one).
    private var lastFieldFraming: FramingFields.Field?
    private var informationalCount = 0

    /// The fields that frame the body and say how it is coded, noted as each header line is read.
    /// Names are tokens (ASCII), so they are told apart by their bytes once per line, rather than
    /// by searching every field by name after the head is complete.
    struct FramingFields {
        /// The first Content-Length value (split at commas, trimmed), and whether another value
        /// differs from it: all a response's framing needs, with no array made per response.
        var length: String?
        var conflictingLengths = false
        /// Transfer-Encoding codings, split at commas, trimmed, lowercased, in order.
        var transferEncodings: [String] = []
        /// The first Content-Encoding value.
        var contentCoding: String?

        enum Field { case contentLength, transferEncoding, contentEncoding }

        /// The framing field a header name is, if any.
        static func field(named name: UnsafeBufferPointer<UInt8>) -> Field? {
            switch name.count {
            case 14 where HTTPResponseParser.isName(name, "content-length"): .contentLength
            case 17 where HTTPResponseParser.isName(name, "transfer-encoding"): .transferEncoding
            case 16 where HTTPResponseParser.isName(name, "content-encoding"): .contentEncoding
            default: nil
            }
        }

        mutating func note(_ field: Field, value: String) {
            switch field {
            case .contentLength:
                if !value.isEmpty && value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                    noteLength(value)  // one plain number: nothing to split
                    return
                }
                for part in value.split(separator: ",") { noteLength(HTTPResponseParser.trimmingWhitespace(part)) }
            case .transferEncoding:
                transferEncodings += value.split(separator: ",").map { HTTPResponseParser.trimmingWhitespace($0).lowercased() }
            case .contentEncoding:
                if contentCoding == nil { contentCoding = value }
            }
        }

        private mutating func noteLength(_ text: String) {
            guard let first = length else {
                length = text
                return
            }
            if first != text { conflictingLengths = true }
        }
    }

    /// True when the token `name` is `lowercased` in any ASCII case.
    private static func isName(_ name: UnsafeBufferPointer<UInt8>, _ lowercased: StaticString) -> Bool {
        guard name.count == lowercased.utf8CodeUnitCount else { return false }
        return lowercased.withUTF8Buffer { expected in
            for index in 0..<expected.count {
                let actual = name[index]
                if (actual >= 0x41 && actual <= 0x5A ? actual | 0x20 : actual) != expected[index] { return false }
            }
            return true
        }
    }

    /// A header line (without its CRLF) read in one pass over its bytes: the name, a token before
    /// the first colon (`..<nameEnd`); the value after it, with no CR or NUL, trimmed of spaces and
    /// tabs (RFC 9110 5.5: `valueStart..<valueEnd`); and which framing field the name is, if any.
    /// Nil when the line is malformed.
    static func splitHeaderLine(_ line: UnsafeBufferPointer<UInt8>) -> (nameEnd: Int, valueStart: Int, valueEnd: Int, framing: FramingFields.Field?)? {
        guard let base = line.baseAddress else { return nil }
        let count = line.count
        var colon = 0
        while colon < count {
            let byte = base[colon]
            if byte == 0x3A { break }
            guard isTokenByte(byte) else { return nil }
            colon += 1
        }
        guard colon > 0, colon < count else { return nil }
        var first = colon + 1
        var end = count
        while first < end && (base[first] == 0x20 || base[first] == 0x09) { first += 1 }
        while end > first && (base[end - 1] == 0x20 || base[end - 1] == 0x09) { end -= 1 }
        // The trimmed ends are spaces and tabs, so the checks need only the bytes between.
        if first < end && (memchr(base + first, 0x0D, end - first) != nil || memchr(base + first, 0, end - first) != nil) { return nil }
        return (colon, first, end, FramingFields.field(named: UnsafeBufferPointer(start: base, count: colon)))
    }

    /// True when `line` starts with `HTTP/1.` (compared in place: a static array costs a lazy
    /// initialisation check and a generic comparison on every response).
    private static func startsWithVersionPrefix(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        let prefix: StaticString = "HTTP/1."
        guard line.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { prefix in
            for index in 0..<prefix.count where line[index] != prefix[index] { return false }
            return true
        }
    }

    /// The index of the first LF in `bytes` from `start`, found by `memchr`.
    private static func firstNewline(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count, let found = memchr(base + start, 0x0A, bytes.count - start) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    /// - Parameter requestMethod: The method of the request this answers (HEAD has no body).
    public init(requestMethod: String, limits: Limits = Limits()) {
        self.init(canonicalMethod: HTTPRequest.canonicalMethod(requestMethod), limits: limits)
    }

    /// For a method already in its canonical form (``HTTPRequest/canonicalMethod(_:)``), as the
    /// exchange's state machine holds it.
    init(canonicalMethod: String, limits: Limits = Limits()) {
        self.method = canonicalMethod
        self.limits = limits
    }

    /// True once the whole response has been read.
    public var isComplete: Bool { if case .done = state { true } else { false } }

    /// True when the body runs until the connection closes (so the connection cannot be reused).
    public var readsUntilClose: Bool { if case .untilClose = state { true } else { false } }

    /// The final head's first `Content-Encoding` value, as `head?.headers["Content-Encoding"]`.
    var contentCoding: String? { head == nil ? nil : framing.contentCoding }

    /// Feeds bytes; returns the events they complete.
    public mutating func feed(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> [Event] {
        try read(bytes, stoppingAtEnd: false).events
    }

    /// Feeds bytes up to the end of this response: returns the events they complete and the index
    /// of the first byte after the response (`bytes.endIndex` when every byte was read), where the
    /// next response on the connection starts.
    mutating func feedUpToEnd(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> (events: [Event], next: Int) {
        try read(bytes, stoppingAtEnd: true)
    }

    /// Reads `bytes` in place (one buffer for the whole read: no slice of the array per line).
    @inline(__always)
    private mutating func read(_ bytes: ArraySlice<UInt8>, stoppingAtEnd: Bool) throws(ParseError) -> (events: [Event], next: Int) {
        let (events, next) = try bytes.withUnsafeBufferPointer { buffer throws(ParseError) in try read(buffer, stoppingAtEnd: stoppingAtEnd) }
        return (events, bytes.startIndex + next)
    }

    private mutating func read(_ bytes: UnsafeBufferPointer<UInt8>, stoppingAtEnd: Bool) throws(ParseError) -> (events: [Event], next: Int) {
        var events: [Event] = []
        events.reserveCapacity(4)  // a small response is a head, a body and its end: one allocation
        var index = 0
        let endIndex = bytes.count
        while index < endIndex {
            switch state {
            case .statusLine, .headers, .chunkSize, .chunkEnd, .trailers:
                guard let newline = HTTPResponseParser.firstNewline(in: bytes, from: index) else {
                    let rest = UnsafeBufferPointer(rebasing: bytes[index...])
                    if lineBuffer.isEmpty { try checkFieldLineStart(rest) }
                    lineBuffer.append(contentsOf: rest)
                    try checkLineLength()
                    return (events, endIndex)
                }
                if lineBuffer.isEmpty {
                    // The whole line is in this read (the usual case): parsed where it lies.
                    var end = newline
                    let start = index
                    index = newline + 1
                    if end - start > limits.maximumLineLength {
                        state = .failed
                        throw ParseError.lineTooLong(limits.maximumLineLength)
                    }
                    if end > start && bytes[end - 1] == 0x0D { end -= 1 }
                    try handleLine(UnsafeBufferPointer(rebasing: bytes[start..<end]), events: &events)
                } else {
                    lineBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<newline]))
                    index = newline + 1
                    try checkLineLength()
                    if lineBuffer.last == 0x0D { lineBuffer.removeLast() }
                    let line = lineBuffer
                    lineBuffer = []
                    try line.withUnsafeBufferPointer { line throws(ParseError) in try handleLine(line, events: &events) }
                }
            case .body(let remaining):
                let take = min(remaining, endIndex - index)
                events.append(.body(Array(UnsafeBufferPointer(rebasing: bytes[index..<(index + take)]))))
                index += take
                if remaining - take == 0 {
                    state = .done
                    events.append(.end)
                } else {
                    state = .body(remaining: remaining - take)
                }
            case .chunkData(let remaining):
                let take = min(remaining, endIndex - index)
                events.append(.body(Array(UnsafeBufferPointer(rebasing: bytes[index..<(index + take)]))))
                index += take
                state = remaining - take == 0 ? .chunkEnd : .chunkData(remaining: remaining - take)
            case .untilClose:
                events.append(.body(Array(UnsafeBufferPointer(rebasing: bytes[index...]))))
                index = endIndex
            case .done:
                if stoppingAtEnd { return (events, index) }
                // Whitespace between responses is tolerated; anything else is not ours to read.
                if bytes[index...].allSatisfy({ $0 == 0x0D || $0 == 0x0A }) { return (events, endIndex) }
                throw ParseError.dataAfterEnd
            case .failed:
                throw ParseError.dataAfterEnd
            }
        }
        return (events, endIndex)
    }

    /// The stream ended: completes a read-until-close body, or reports truncation.
    public mutating func finish() throws(ParseError) -> [Event] {
        switch state {
        case .untilClose:
            state = .done
            return [.end]
        case .done: return []
        case .statusLine where lineBuffer.isEmpty && head == nil && pendingStatus == 0:
            throw ParseError.truncated(expected: "no response at all")
        case .body(let remaining): throw ParseError.truncated(expected: "\(remaining) more body bytes announced by Content-Length")
        case .chunkSize, .chunkData, .chunkEnd, .trailers: throw ParseError.truncated(expected: "the chunked body has no final 0-size chunk")
        default: throw ParseError.truncated(expected: "the headers are incomplete")
        }
    }

    /// A field line that starts with a space or tab is refused when its first byte comes, not only
    /// once its LF has, where it cannot be a fold ``foldsIntoPreviousField`` accepts: the whole
    /// line is refused anyway, and a server may never send the rest.
    private mutating func checkFieldLineStart(_ start: UnsafeBufferPointer<UInt8>) throws(ParseError) {
        guard let first = start.first, first == 0x20 || first == 0x09 else { return }
        switch state {
        case .headers where !foldsIntoPreviousField, .trailers:
            state = .failed
            throw ParseError.badHeader(String(decoding: start, as: UTF8.self))
        default: return
        }
    }

    /// True when a line starting with a space or tab here is obsolete line folding (RFC 9112 5.2)
    /// that a user agent must read as one space in the previous field's value: there is a previous
    /// field, and it does not frame or code the body (a folded Content-Length or Transfer-Encoding
    /// could be read two ways, so it is refused as llhttp refuses it).
    private var foldsIntoPreviousField: Bool { pendingFields.count > 0 && lastFieldFraming == nil }

    private mutating func checkLineLength() throws(ParseError) {
        if lineBuffer.count > limits.maximumLineLength {
            state = .failed
            throw ParseError.lineTooLong(limits.maximumLineLength)
        }
    }

    private mutating func handleLine(_ line: UnsafeBufferPointer<UInt8>, events: inout [Event]) throws(ParseError) {
        switch state {
        case .statusLine:
            if line.isEmpty && pendingStatus == 0 && head == nil { return }  // tolerate a leading CRLF
            // `HTTP/1.x SP 3DIGIT [SP reason]`, read as bytes. The reason may hold no CR (a CR
            // without LF: a reader that takes it for a line end sees the rest as a header field)
            // and no NUL, as field values (RFC 9110 5.5).
            let start = line.startIndex
            let digits = line.dropFirst(9).prefix(3)
            guard line.count >= 12, HTTPResponseParser.startsWithVersionPrefix(line), line[start + 7] < 0x80, line[start + 8] == 0x20,
                digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.first != 0x30, line.count == 12 || line[start + 12] == 0x20,
                !line.dropFirst(13).contains(where: { $0 == 0x0D || $0 == 0 })
            else {
                state = .failed
                throw ParseError.badStatusLine(String(decoding: line, as: UTF8.self))
            }
            pendingVersion = String(decoding: UnsafeBufferPointer(rebasing: line[start..<start + 8]), as: UTF8.self)
            pendingStatus = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            pendingReason = line.count > 13 ? String(decoding: UnsafeBufferPointer(rebasing: line[(start + 13)...]), as: UTF8.self) : ""
            pendingFields = HTTPHeaders.Received(reservingBytes: 512, fields: 16)
            framing = FramingFields()
            lastFieldFraming = nil
            headerBytes = line.count
            state = .headers
        case .headers:
            headerBytes += line.count + 2
            if headerBytes > limits.maximumHeaderBytes {
                state = .failed
                throw ParseError.headersTooLarge(limits.maximumHeaderBytes)
            }
            if line.isEmpty {
                try completeHead(events: &events)
                return
            }
            if pendingFields.count >= limits.maximumHeaderCount {
                state = .failed
                throw ParseError.tooManyHeaders(limits.maximumHeaderCount)
            }
            if let first = line.first, first == 0x20 || first == 0x09 {
                // Obsolete line folding: the line continues the previous field's value.
                let unfolded = foldsIntoPreviousField && pendingFields.appendToLastValue(continuation: line)
                guard unfolded else {
                    state = .failed
                    throw ParseError.badHeader(String(decoding: line, as: UTF8.self))
                }
                return
            }
            guard let field = HTTPResponseParser.splitHeaderLine(line) else {
                state = .failed
                throw ParseError.badHeader(String(decoding: line, as: UTF8.self))
            }
            pendingFields.append(line: line, nameEnd: field.nameEnd, valueStart: field.valueStart, valueEnd: field.valueEnd)
            lastFieldFraming = field.framing
            // Only the fields that frame the body become strings here; the rest when read.
            if let framingField = field.framing {
                framing.note(framingField, value: HTTPResponseParser.decodeValue(UnsafeBufferPointer(rebasing: line[field.valueStart..<field.valueEnd])))
            }
        case .chunkSize:
            let size = HTTPResponseParser.chunkSize(line)
            guard size >= 0 else {
                state = .failed
                if size == -2 { throw ParseError.chunkSizeOverflow }
                throw ParseError.badChunkSize(String(decoding: line, as: UTF8.self))
            }
            state = size == 0 ? .trailers : .chunkData(remaining: size)
        case .chunkEnd:
            guard line.isEmpty else {
                state = .failed
                throw ParseError.badChunkSize(String(decoding: line, as: UTF8.self))
            }
            state = .chunkSize
        case .trailers:
            if line.isEmpty {
                state = .done
                events.append(.end)
            } else {
                headerBytes += line.count
                if headerBytes > limits.maximumHeaderBytes {
                    state = .failed
                    throw ParseError.headersTooLarge(limits.maximumHeaderBytes)
                }
                // Trailer fields are not kept, but they are field lines like the head's: a token name, no
                // CR or NUL in the value, no folding.
                guard HTTPResponseParser.splitHeaderLine(line) != nil else {
                    state = .failed
                    throw ParseError.badHeader(String(decoding: line, as: UTF8.self))
                }
            }
        default:
            break
        }
    }

    private mutating func completeHead(events: inout [Event]) throws(ParseError) {
        let status = pendingStatus
        if (100...199).contains(status) && status != 101 {
            informationalCount += 1
            if informationalCount > limits.maximumInformationalResponses {
                state = .failed
                throw ParseError.tooManyInformationalResponses(limits.maximumInformationalResponses)
            }
            events.append(.informational(status: status))
            pendingStatus = 0
            state = .statusLine
            return
        }
        head = HTTPResponseHead(version: pendingVersion, status: status, reason: pendingReason, headers: HTTPHeaders(received: pendingFields))
        events.append(.head(status: status))
        if method == "HEAD" || status == 204 || status == 304 || status == 101 || method == "CONNECT" && (200...299).contains(status) {
            state = .done
            events.append(.end)
            return
        }
        let transferEncodings = framing.transferEncodings
        if !transferEncodings.isEmpty {
            // RFC 9112 6.3: Transfer-Encoding overrides Content-Length, but "ought to be handled as an
            // error"; llhttp (Node.js) refuses it too. Only where they frame a body.
            if framing.length != nil {
                state = .failed
                throw ParseError.transferEncodingWithContentLength
            }
            guard transferEncodings.last == "chunked" else {
                if transferEncodings.allSatisfy({ $0 == "identity" }) {
                    state = .untilClose
                    return
                }
                state = .failed
                throw ParseError.unsupportedTransferEncoding(transferEncodings.joined(separator: ", "))
            }
            state = .chunkSize
            return
        }
        if framing.conflictingLengths {
            state = .failed
            throw ParseError.conflictingContentLength
        }
        if let text = framing.length {
            guard let length = HTTPResponseParser.decimal(text) else {
                state = .failed
                throw ParseError.badContentLength(text)
            }
            if length == 0 {
                state = .done
                events.append(.end)
            } else {
                state = .body(remaining: length)
            }
            return
        }
        state = .untilClose
    }

}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// HTTP header fields in received order, looked up case-insensitively.
///
/// Fields received in a response are kept as the bytes of the head, with where each name and value
/// lies: a lookup compares bytes and makes a `String` only of the values it returns, and ``fields``
/// (or iterating) makes the pairs when asked, each time. Most callers read a few fields of a
/// response, if any, so making all of them would tax every kept-alive request for nothing. Fields made in code, and received fields once changed, are kept as the pairs.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    private enum Storage: Sendable {
        case pairs([(name: String, value: String)])
        case received(Received)
    }

    private var storage: Storage

    /// The fields, in order.
    public var fields: [(name: String, value: String)] {
        get {
            switch storage {
            case .pairs(let pairs): pairs
            case .received(let received): received.pairs()
            }
        }
        set { storage = .pairs(newValue) }
        _modify {
            var pairs = fields
            storage = .pairs([])  // the array held only here while it is changed: no copy on write
            defer { storage = .pairs(pairs) }
            yield &pairs
        }
    }

    public init(_ fields: [(String, String)] = []) { storage = .pairs(fields.map { (name: $0.0, value: $0.1) }) }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }
    init(received: Received) { storage = .received(received) }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        switch storage {
        case .pairs(let pairs): return pairs.first { HTTPHeaders.sameName($0.name, name) }?.value
        case .received(let received): return received.firstIndex(named: name, from: 0).map(received.value(at:))
        }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        switch storage {
        case .pairs(let pairs): return pairs.compactMap { HTTPHeaders.sameName($0.name, name) ? $0.value : nil }
        case .received(let received):
            var values: [String] = []
            var next = received.firstIndex(named: name, from: 0)
            while let index = next {
                values.append(received.value(at: index))
                next = received.firstIndex(named: name, from: index + 1)
            }
            return values
        }
    }

    /// True when a field `name` has a value for which `predicate` holds (no array of values made).
    func contains(_ name: String, where predicate: (String) -> Bool) -> Bool {
        switch storage {
        case .pairs(let pairs): return pairs.contains { HTTPHeaders.sameName($0.name, name) && predicate($0.value) }
        case .received(let received):
            var next = received.firstIndex(named: name, from: 0)
            while let index = next {
                if predicate(received.value(at: index)) { return true }
                next = received.firstIndex(named: name, from: index + 1)
            }
            return false
        }
    }

    /// True when a field called `name` (an ASCII token, in lowercase) lists `token` in its
    /// comma-separated value (any ASCII case, white space around it ignored), as
    /// `Connection: close` is read. A received field is read as bytes: every response of a
    /// kept-alive connection is asked this.
    func contains(_ name: StaticString, listing token: StaticString) -> Bool {
        switch storage {
        case .pairs: return contains("\(name)") { HTTPHeaders.list($0, holds: token) }
        case .received(let received):
            var next = received.firstIndex(lowercased: name, from: 0)
            while let index = next {
                let holds = received.withValueBytes(at: index) { HTTPHeaders.list($0, holds: token) } ?? HTTPHeaders.list(received.value(at: index), holds: token)
                if holds { return true }
                next = received.firstIndex(lowercased: name, from: index + 1)
            }
            return false
        }
    }

    /// ``contains(_:listing:)`` for one value.
    static func list(_ value: String, holds token: StaticString) -> Bool {
        let scanned = value.utf8.withContiguousStorageIfAvailable { list($0, holds: token) }
        if let scanned, let answer = scanned { return answer }
        return value.split(separator: ",").contains { HTTPHeaders.sameName(HTTPResponseParser.trimmingWhitespace($0), "\(token)") }
    }

    /// ``list(_:holds:)`` on a value's bytes; nil when they are not all ASCII (then the value is
    /// compared as text, where Unicode case folding may apply).
    static func list(_ bytes: UnsafeBufferPointer<UInt8>, holds token: StaticString) -> Bool? {
        token.withUTF8Buffer { wanted -> Bool? in
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count && bytes[end] != 0x2C {
                    if bytes[end] >= 0x80 { return nil }
                    end += 1
                }
                var first = start
                var last = end
                while first < last && (bytes[first] == 0x20 || bytes[first] == 0x09) { first += 1 }
                while last > first && (bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09) { last -= 1 }
                if last - first == wanted.count && (0..<wanted.count).allSatisfy({ asciiLower(bytes[first + $0]) == asciiLower(wanted[$0]) }) { return true }
                start = end + 1
            }
            return false
        }
    }

    /// Appends a field.
    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field of `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field of `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { HTTPHeaders.sameName($0.name, name) }
    }

    /// Fields as a response's head brought them: the bytes of the field lines, and where each
    /// field's name and (trimmed) value lie in them. Names are tokens, checked by the parser, so
    /// ASCII; values are decoded when read, as ``HTTPResponseParser`` decodes them (ASCII, else
    /// UTF-8, else ISO 8859-1).
    struct Received: Sendable {
        private(set) var bytes: [UInt8] = []
        private var bounds: [Bounds] = []

        /// Where a field's name and value lie in ``bytes``.
        private struct Bounds {
            var name: Range<Int>
            var value: Range<Int>
        }

        init(reservingBytes: Int, fields: Int) {
            // reserveCapacity(0) still allocates an empty buffer: the parser's placeholder
            // (before any status line) would cost two allocations per response.
            if reservingBytes > 0 { bytes.reserveCapacity(reservingBytes) }
            if fields > 0 { bounds.reserveCapacity(fields) }
        }

        var count: Int { bounds.count }

        /// Appends a field line whose name ends at `nameEnd` and whose trimmed value is `valueStart..<valueEnd`.
        mutating func append(line: UnsafeBufferPointer<UInt8>, nameEnd: Int, valueStart: Int, valueEnd: Int) {
            let base = bytes.count
            bytes.append(contentsOf: line)
            bounds.append(Bounds(name: base..<base + nameEnd, value: base + valueStart..<base + valueEnd))
        }

        /// Continues the last field's value with a folded line (one that started with a space or
        /// tab): its white space and the line end before it become one space. False when the line
        /// holds a CR or NUL, as a value may not.
        mutating func appendToLastValue(continuation line: UnsafeBufferPointer<UInt8>) -> Bool {
            guard let last = bounds.indices.last else { return false }
            var first = 0
            var end = line.count
            while first < end && (line[first] == 0x20 || line[first] == 0x09) { first += 1 }
            while end > first && (line[end - 1] == 0x20 || line[end - 1] == 0x09) { end -= 1 }
            guard !line[first..<end].contains(where: { $0 == 0 || $0 == 0x0D }) else { return false }
            guard first < end else { return true }  // a line of white space adds nothing
            bytes.removeLast(bytes.count - bounds[last].value.upperBound)
            if !bounds[last].value.isEmpty { bytes.append(0x20) }
            let start = bytes.count
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: line[first..<end]))
            let valueStart = bounds[last].value.isEmpty ? start : bounds[last].value.lowerBound
            bounds[last].value = valueStart..<bytes.count
            return true
        }

        func name(at index: Int) -> String { String(decoding: bytes[bounds[index].name], as: UTF8.self) }

        func value(at index: Int) -> String { HTTPResponseParser.decodeValue(bytes[bounds[index].value]) }

        /// `body` on the bytes of the value at `index`, without making a string of them.
        func withValueBytes<R>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            bytes.withUnsafeBufferPointer { all in body(UnsafeBufferPointer(rebasing: all[bounds[index].value])) }
        }

        /// The first field from `first` on called `name`, a lowercase ASCII token, in any ASCII
        /// case: ``firstIndex(named:from:)`` for a name known when compiling, compared in place.
        /// (A received name is a token, so no Unicode case folding can make it equal.)
        func firstIndex(lowercased name: StaticString, from first: Int) -> Int? {
            name.withUTF8Buffer { firstIndex(asciiName: $0, from: first) }
        }

        /// The first field from `first` on whose name is the ASCII bytes `wanted` in any ASCII case.
        private func firstIndex(asciiName wanted: UnsafeBufferPointer<UInt8>, from first: Int) -> Int? {
            bytes.withUnsafeBufferPointer { all in
                var index = first
                fields: while index < count {
                    defer { index += 1 }
                    let range = bounds[index].name
                    guard range.count == wanted.count else { continue }
                    for offset in 0..<wanted.count {
                        let (have, want) = (all[range.lowerBound + offset], wanted[offset])
                        if have != want && HTTPHeaders.asciiLower(have) != HTTPHeaders.asciiLower(want) { continue fields }
                    }
                    return index
                }
                return nil
            }
        }

        /// The first field from `first` on called `query` (in any case, as
        /// ``HTTPHeaders/sameName(_:_:)`` decides), comparing bytes when `query` is ASCII.
        func firstIndex(named query: String, from first: Int) -> Int? {
            var query = query
            let found: Int?? = query.withUTF8 { wanted in
                for byte in wanted where byte >= 0x80 { return nil }
                return firstIndex(asciiName: wanted, from: first)
            }
            if let found { return found }
            // A non-ASCII query can still lowercase to an ASCII name (K, the Kelvin sign, is "k").
            return (first..<count).first { HTTPHeaders.sameName(name(at: $0), query) }
        }

        func pairs() -> [(name: String, value: String)] { (0..<count).map { (name: name(at: $0), value: value(at: $0)) } }
    }

    /// Field names compared case-insensitively: ASCII bytes in one pass without allocating (names
    /// are tokens), and Unicode lowercasing from the first non-ASCII byte on.
    ///
    /// An ASCII difference before any non-ASCII byte is final: ASCII characters lowercase to ASCII
    /// one for one, so the lowercased texts differ at the same place. So is one name ending where
    /// the other goes on: the rest lowercases to something, never to nothing.
    static func sameName(_ a: String, _ b: String) -> Bool {
        // Every header lookup of every request comes here: compare the UTF-8 bytes in place while
        // they are ASCII; a non-ASCII byte leaves the decision to the Unicode comparison below.
        let decided = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in asciiComparison(x, y) } ?? .unicode
        }
        switch decided ?? .unicode {
        case .same: return true
        case .different: return false
        case .unicode: break
        }
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return true
            case (let x?, let y?) where x < 0x80 && y < 0x80:
                if asciiLower(x) != asciiLower(y) { return false }
            case (nil, let y?) where y < 0x80:
                return false
            case (let x?, nil) where x < 0x80:
                return false
            default:
                return a.lowercased() == b.lowercased()
            }
        }
    }

    private enum NameComparison { case same, different, unicode }

    private static func asciiComparison(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> NameComparison {
        let shorter = Swift.min(x.count, y.count)
        var index = 0
        while index < shorter {
            let (p, q) = (x[index], y[index])
            if p >= 0x80 || q >= 0x80 { return .unicode }
            if p != q && asciiLower(p) != asciiLower(q) { return .different }
            index += 1
        }
        if x.count == y.count { return .same }
        return (x.count > shorter ? x[shorter] : y[shorter]) < 0x80 ? .different : .unicode
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

/// A request to send.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: HTTPSURL
    public var headers: HTTPHeaders
    public var body: [UInt8]?
    /// Send `Expect: 100-continue` and wait for the server before sending the body (IIS and Apache
    /// refuse a large body that arrives before a renegotiation).
    public var expectsContinue: Bool
    /// Header names that must not follow a redirect to another origin.
    public var firstOriginOnlyHeaders: Set<String>

    public init(method: String = "GET", url: HTTPSURL, headers: HTTPHeaders = [:], body: [UInt8]? = nil, expectsContinue: Bool = false, firstOriginOnlyHeaders: Set<String> = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.expectsContinue = expectsContinue
        self.firstOriginOnlyHeaders = firstOriginOnlyHeaders
    }
}

extension HTTPRequest {
    /// A method as sent: uppercased. Methods are nearly always written in capitals already, and
    /// then the text is kept as it is instead of being built again.
    static func canonicalMethod(_ method: String) -> String {
        var text = method
        let uppercase = text.withUTF8 { bytes in !bytes.contains { ($0 >= 0x61 && $0 <= 0x7A) || $0 >= 0x80 } }
        return uppercase ? method : method.uppercased()
    }
}

/// The status line and headers of a response.
public struct HTTPResponseHead: Sendable {
    public var version: String
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders
}

/// An `https://host[:port]/path?query` URL, parsed strictly.
public struct HTTPSURL: Sendable, Hashable, CustomStringConvertible {
    public var scheme: String { didSet { hostHeader = Self.hostHeader(scheme, host, port) } }
    public var host: String { didSet { hostHeader = Self.hostHeader(scheme, host, port) } }
    public var port: Int { didSet { hostHeader = Self.hostHeader(scheme, host, port) } }
    /// Path and query, starting with `/`.
    public var target: String
    /// The `Host` header value: `host`, bracketed when it is an IPv6 address, and `:port` unless
    /// it is the scheme's default. Kept with the parts it is made of, as every request sends it.
    public private(set) var hostHeader: String

    /// Parses a URL as a browser does (the WHATWG URL Standard, for http and https: ``URLParser``);
    /// `https://` is assumed when no scheme is given (`example.com:8443/x`). Credentials in the
    /// URL are never sent, and the fragment stays here.
    ///
    /// - Throws: `HTTPSError` `.url` naming the part that is wrong (scheme, host, port).
    public init(_ text: String) throws(HTTPSError) {
        do throws(URLParser.Failure) {
            self.init(try URLParser.parse(text))
        } catch {
            throw HTTPSError(.url, host: text, error.message)
        }
    }

    init(_ parts: URLParser.Parts) {
        self.scheme = parts.scheme
        self.host = parts.host
        self.port = parts.port
        self.target = parts.target
        self.hostHeader = Self.hostHeader(parts.scheme, parts.host, parts.port)
    }

    var parts: URLParser.Parts { URLParser.Parts(scheme: scheme, host: host, port: port, target: target) }

    /// Takes a Foundation `URL` (`https://` or `http://`), with the same checks as the text form.
    ///
    /// - Throws: `HTTPSError` `.url` naming the part that is wrong (scheme, host, port, path).
    public init(_ url: URL) throws(HTTPSError) {
        try self.init(url.absoluteString)
    }

    /// `scheme://host:port`, the origin for same-origin checks.
    public var origin: String { "\(scheme)://\(hostForURL):\(port)" }
    var hostForURL: String { Self.bracketed(host) }
    private static func bracketed(_ host: String) -> String { host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host }
    private static func hostHeader(_ scheme: String, _ host: String, _ port: Int) -> String {
        port == (scheme == "https" ? 443 : 80) ? bracketed(host) : "\(bracketed(host)):\(port)"
    }
    /// The path without the query.
    public var path: String { String(target.prefix { $0 != "?" }) }
    public var description: String { "\(scheme)://\(hostHeader)\(target)" }

    /// Resolves a reference (a `Location` value, a form's `action`, a `<base href>`) against this
    /// URL, as a browser does.
    public func resolving(_ location: String) throws(HTTPSError) -> HTTPSURL {
        do throws(URLParser.Failure) {
            return HTTPSURL(try URLParser.parse(location, base: parts))
        } catch {
            throw HTTPSError(.url, host: location, error.message)
        }
    }

    /// A request target goes on the request line as it is: no space, tab, line break or other
    /// control character, and no Unicode space either (U+00A0, U+200B, U+3000…), which a URL's
    /// text loses to trimming when it is read back, so that the URL would not be the one sent.
    static func checkTarget(_ target: String, url: String) throws(HTTPSError) {
        guard isSendableTarget(target) else { throw HTTPSError(.url, host: url, "the path contains spaces or control characters; percent-encode them") }
    }

    /// The rule of ``checkTarget(_:url:)``; an ASCII target (nearly every one, and every request
    /// head checks its target) is decided on its bytes.
    static func isSendableTarget(_ target: String) -> Bool {
        var target = target
        let ascii: Bool? = target.withUTF8 { bytes in
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte <= 0x20 || byte == 0x7F { return false }
            }
            return true
        }
        if let ascii { return ascii }
        return target.unicodeScalars.allSatisfy { scalar in
            if scalar.isASCII { return scalar.value > 0x20 && scalar.value != 0x7F }
            return !(0x80...0x9F).contains(scalar.value) && !ScalarClass.isWhitespaceOrNewline(scalar)
        }
    }
}

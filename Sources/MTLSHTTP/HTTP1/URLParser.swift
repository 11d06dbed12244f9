import MTLSTrust

/// The WHATWG URL Standard's basic URL parser (https://url.spec.whatwg.org/), for the two special
/// schemes mtls speaks, http and https: a URL typed on the command line, a `Location` header, a
/// form's `action` and a page's `<base href>` are read the way a browser reads them. Where a
/// browser and a naive reader part, the browser wins: `\` is a slash, `https://a\@b/` goes to `a`,
/// `127.1` is `127.0.0.1`, `/a/../b` is `/b`, a space or a non-ASCII letter in a path is
/// percent-encoded, and tabs and line breaks are dropped (so none can reach the request line).
///
/// Hosts go through UTS 46 as browsers send them (`IDNA`, the URL Standard's "domain to ASCII"):
/// `https://Bücher.example/` asks DNS and the certificate for `xn--bcher-kva.example`, and an
/// `xn--` label that does not decode to a valid name is refused. Not done, and refused with a clear
/// error instead: port 0.
/// `URLParserWPTTests` runs the web-platform-tests URL cases against it.
enum URLParser {
    /// A parsed http(s) URL: the host as it goes to DNS and to certificate checks (lowercase, an
    /// IPv4 address dotted, an IPv6 address compressed and without brackets), and the request
    /// target (path and query, percent-encoded, starting with `/`). The fragment is dropped.
    struct Parts: Equatable {
        var scheme: String
        var host: String
        var port: Int
        var target: String

        static func defaultPort(_ scheme: String) -> Int { scheme == "https" ? 443 : 80 }
    }

    /// Why a text is not an http(s) URL, in words for the user.
    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Parses `input`, against `base` when it is relative (a `Location` value, a form action).
    /// Without a base, text with no scheme is read as `https://` followed by it
    /// (`example.com:8443/x`), as `curl` reads it.
    static func parse(_ input: String, base: Parts? = nil) throws(Failure) -> Parts {
        var scalars = Array(input.unicodeScalars)
        // Leading and trailing C0 controls and spaces go; tabs and line breaks anywhere.
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }

        var reader = Reader(scalars)
        guard let scheme = reader.scheme() else {
            if let base { return try relative(&reader, base: base) }
            var prefixed = Reader(Array("https://".unicodeScalars) + scalars)
            _ = prefixed.scheme()
            return try authority(&prefixed, scheme: "https")
        }
        guard scheme == "http" || scheme == "https" else {
            if base == nil && !reader.startsWith("//") {
                // `localhost:8443`, `example.com:443/x`: a host and port with no scheme.
                var prefixed = Reader(Array("https://".unicodeScalars) + scalars)
                _ = prefixed.scheme()
                return try authority(&prefixed, scheme: "https")
            }
            throw Failure("the scheme \(DisplayText.quoted(scheme + ":")) is not supported; use https://")
        }
        if let base, base.scheme == scheme, !reader.startsWith("//") {
            // `http:foo` against an http base is relative (special relative or authority state).
            return try relative(&reader, base: base)
        }
        return try authority(&reader, scheme: scheme)
    }

    // MARK: States

    /// Special authority ignore slashes state, then authority, host and port.
    private static func authority(_ reader: inout Reader, scheme: String) throws(Failure) -> Parts {
        reader.skip { $0 == "/" || $0 == "\\" }
        let authority = reader.take { !($0 == "/" || $0 == "\\" || $0 == "?" || $0 == "#") }
        // Credentials are never sent: only what follows the last `@` is the host.
        var hostAndPort = authority[...]
        if let at = authority.lastIndex(of: "@") {
            hostAndPort = authority[(at + 1)...]
            guard !hostAndPort.isEmpty else { throw Failure("the URL has credentials but no host") }
        }
        var hostText = hostAndPort
        var port = Parts.defaultPort(scheme)
        // The port follows the last colon outside brackets.
        var inBrackets = false
        var colon: Int? = nil
        for index in hostAndPort.indices {
            switch hostAndPort[index] {
            case "[": inBrackets = true
            case "]": inBrackets = false
            case ":" where !inBrackets: colon = colon ?? index
            default: break
            }
        }
        if let colon {
            hostText = hostAndPort[..<colon]
            let digits = hostAndPort[(colon + 1)...]
            if !digits.isEmpty {
                guard digits.allSatisfy({ ("0"..."9").contains($0) }) else {
                    throw Failure("the port \(DisplayText.quoted(String(String.UnicodeScalarView(digits)))) is not a number from 1 to 65535")
                }
                let value = digits.drop { $0 == "0" }.prefix(6).reduce(0) { $0 * 10 + Int($1.value - 0x30) }
                guard digits.drop(while: { $0 == "0" }).count <= 5, (1...65535).contains(value) else {
                    throw Failure("the port \(DisplayText.quoted(String(String.UnicodeScalarView(digits)))) is not a number from 1 to 65535")
                }
                port = value
            }
        }
        guard !hostText.isEmpty else { throw Failure("the URL has no host") }
        let host = try parseHost(Array(hostText))
        var path: [String] = []
        var query: String? = nil
        try pathAndQuery(&reader, path: &path, query: &query, startingAtPathStart: true)
        return Parts(scheme: scheme, host: host, port: port, target: serialize(path: path, query: query))
    }

    /// Relative state: what a reference without a scheme (or with the base's, and no `//`) means.
    private static func relative(_ reader: inout Reader, base: Parts) throws(Failure) -> Parts {
        let basePathAndQuery = base.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var path = basePathAndQuery[0].dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let baseQuery = basePathAndQuery.count > 1 ? String(basePathAndQuery[1]) : nil
        var query: String? = nil
        switch reader.peek {
        case "/", "\\":
            reader.advance()
            if reader.peek == "/" || reader.peek == "\\" {
                return try authority(&reader, scheme: base.scheme)  // scheme-relative: `//host/x`
            }
            path = []
            try pathAndQuery(&reader, path: &path, query: &query, startingAtPathStart: false)
        case "?":
            try pathAndQuery(&reader, path: &path, query: &query, startingAtPathStart: false)
        case "#", nil:
            query = baseQuery
        default:
            if !path.isEmpty { path.removeLast() }
            try pathAndQuery(&reader, path: &path, query: &query, startingAtPathStart: false)
        }
        return Parts(scheme: base.scheme, host: base.host, port: base.port, target: serialize(path: path, query: query))
    }

    /// Path start, path, query and fragment states.
    private static func pathAndQuery(_ reader: inout Reader, path: inout [String], query: inout String?, startingAtPathStart: Bool) throws(Failure) {
        if startingAtPathStart, reader.peek == "/" || reader.peek == "\\" { reader.advance() }
        if reader.peek != "?" && reader.peek != "#" {
            var buffer = ""
            while true {
                let scalar = reader.peek
                if scalar == nil || scalar == "/" || scalar == "\\" || scalar == "?" || scalar == "#" {
                    let more = scalar == "/" || scalar == "\\"
                    if isDoubleDot(buffer) {
                        if !path.isEmpty { path.removeLast() }
                        if !more { path.append("") }
                    } else if isSingleDot(buffer) {
                        if !more { path.append("") }
                    } else {
                        path.append(buffer)
                    }
                    buffer = ""
                    guard more else { break }
                    reader.advance()
                    continue
                }
                reader.advance()
                percentEncode(scalar!, into: &buffer, isEncoded: inPathSet)
            }
        } else if path.isEmpty {
            path = [""]
        }
        if reader.peek == "?" {
            reader.advance()
            var buffer = ""
            while let scalar = reader.peek, scalar != "#" {
                reader.advance()
                percentEncode(scalar, into: &buffer, isEncoded: inSpecialQuerySet)
            }
            query = buffer
        }
        // The fragment stays with the client.
    }

    private static func serialize(path: [String], query: String?) -> String {
        var target = path.isEmpty ? "/" : path.map { "/" + $0 }.joined()
        if let query { target += "?" + query }
        return target
    }

    private static func isSingleDot(_ segment: String) -> Bool { segment == "." || segment.lowercased() == "%2e" }

    private static func isDoubleDot(_ segment: String) -> Bool {
        switch segment.lowercased() {
        case "..", ".%2e", "%2e.", "%2e%2e": true
        default: false
        }
    }

    // MARK: Percent-encoding

    /// The C0 control percent-encode set, and every code point above `~`.
    private static func inC0ControlSet(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value > 0x7E }

    /// The query percent-encode set with `'` (special-query): space `"` `#` `<` `>` `'`.
    private static func inSpecialQuerySet(_ scalar: Unicode.Scalar) -> Bool { inC0ControlSet(scalar) || " \"#<>'".unicodeScalars.contains(scalar) }

    /// The path percent-encode set: the query set with `?` `` ` `` `{` `}`.
    private static func inPathSet(_ scalar: Unicode.Scalar) -> Bool { inC0ControlSet(scalar) || " \"#<>?`{}".unicodeScalars.contains(scalar) }

    private static func percentEncode(_ scalar: Unicode.Scalar, into buffer: inout String, isEncoded: (Unicode.Scalar) -> Bool) {
        guard isEncoded(scalar) else {
            buffer.unicodeScalars.append(scalar)
            return
        }
        let hex: [Character] = Array("0123456789ABCDEF")
        for byte in String(scalar).utf8 {
            buffer.append("%")
            buffer.append(hex[Int(byte >> 4)])
            buffer.append(hex[Int(byte & 0x0F)])
        }
    }

    // MARK: Hosts

    /// The host parser for special URLs: an IPv6 address in brackets, or a domain, percent-decoded,
    /// which is an IPv4 address when its last label is a number.
    static func parseHost(_ input: [Unicode.Scalar]) throws(Failure) -> String {
        let text = String(String.UnicodeScalarView(input))
        if input.first == "[" {
            guard input.last == "]" else { throw Failure("the IPv6 address \(DisplayText.quoted(text)) has no closing bracket") }
            guard let address = parseIPv6(Array(input.dropFirst().dropLast())) else { throw Failure("\(DisplayText.quoted(text)) is not an IPv6 address") }
            return serializeIPv6(address)
        }
        // Percent-decoded, then read as UTF-8 (a byte that is not UTF-8 becomes U+FFFD, not ASCII).
        let decoded = FormURLEncoding.percentDecode(text, plusAsSpace: false)
        // Domain to ASCII: UTS 46 with the URL Standard's flags (`Bücher.example` →
        // `xn--bcher-kva.example`; an ASCII name is only lower-cased).
        let domain: String
        do {
            domain = try IDNA.toASCII(decoded, options: .url)
        } catch {
            throw Failure("the host \(DisplayText.quoted(text)) is not a valid domain name: \(error.description)")
        }
        guard !domain.isEmpty else { throw Failure("the URL has no host") }
        if let forbidden = domain.unicodeScalars.first(where: isForbiddenDomainCodePoint) {
            throw Failure(
                "the host \(DisplayText.quoted(text)) contains \(forbidden.value < 0x20 || forbidden.value == 0x7F ? "a control character" : DisplayText.quoted(String(forbidden))), which a host name cannot have"
            )
        }
        if endsInANumber(domain) {
            guard let address = parseIPv4(domain) else { throw Failure("the host \(DisplayText.quoted(text)) ends in a number but is not an IPv4 address") }
            return (0..<4).map { String(address >> (24 - 8 * UInt32($0)) & 0xFF) }.joined(separator: ".")
        }
        return domain
    }

    private static func isForbiddenDomainCodePoint(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x20 || scalar.value == 0x7F || "#/:<>?@[\\]^|%".unicodeScalars.contains(scalar)
    }

    /// The last label (before a final empty one) is all digits, or parses as an IPv4 number.
    private static func endsInANumber(_ domain: String) -> Bool {
        var labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        if labels.last == "" {
            guard labels.count > 1 else { return false }
            labels.removeLast()
        }
        guard let last = labels.last, !last.isEmpty else { return false }
        if last.allSatisfy({ ("0"..."9").contains($0) }) { return true }
        return ipv4Number(last) != nil
    }

    /// An IPv4 number: decimal, `0x` hexadecimal or `0` octal; nil when not a number. Values above
    /// 2^32 come back as 2^32 (too large for any part).
    private static func ipv4Number(_ text: Substring) -> UInt64? {
        guard !text.isEmpty else { return nil }
        var digits = text
        var radix: UInt64 = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            digits = digits.dropFirst(2)
            radix = 16
        } else if digits.count > 1, digits.hasPrefix("0") {
            digits = digits.dropFirst()
            radix = 8
        }
        var value: UInt64 = 0
        for character in digits {
            guard let digit = character.hexDigitValue, character.isASCII, UInt64(digit) < radix else { return nil }
            value = min(value * radix + UInt64(digit), 1 << 32)
        }
        return value
    }

    private static func parseIPv4(_ domain: String) -> UInt32? {
        var parts = domain.split(separator: ".", omittingEmptySubsequences: false)
        if parts.last == "", parts.count > 1 { parts.removeLast() }
        guard parts.count <= 4 else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard let number = ipv4Number(part) else { return nil }
            numbers.append(number)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }), let last = numbers.last, last < UInt64(1) << (8 * UInt64(5 - numbers.count)) else { return nil }
        var address = last
        for (index, number) in numbers.dropLast().enumerated() { address += number << (8 * UInt64(3 - index)) }
        return UInt32(address)
    }

    /// The IPv6 parser of the URL Standard: eight 16-bit pieces, `::` once, an IPv4 tail.
    private static func parseIPv6(_ input: [Unicode.Scalar]) -> [UInt16]? {
        var address = [UInt16](repeating: 0, count: 8)
        var pieceIndex = 0
        var compress: Int? = nil
        var pointer = 0
        func at(_ index: Int) -> Unicode.Scalar? { index < input.count ? input[index] : nil }
        if at(pointer) == ":" {
            guard at(pointer + 1) == ":" else { return nil }
            pointer += 2
            pieceIndex += 1
            compress = pieceIndex
        }
        while let scalar = at(pointer) {
            guard pieceIndex < 8 else { return nil }
            if scalar == ":" {
                guard compress == nil else { return nil }
                pointer += 1
                pieceIndex += 1
                compress = pieceIndex
                continue
            }
            var value: UInt32 = 0
            var length = 0
            while length < 4, let next = at(pointer), next.isASCII, let digit = Character(next).hexDigitValue {
                value = value * 16 + UInt32(digit)
                pointer += 1
                length += 1
            }
            if at(pointer) == "." {
                guard length > 0, pieceIndex <= 6 else { return nil }
                pointer -= length
                var numbersSeen = 0
                while let next = at(pointer) {
                    var ipv4Piece: UInt32? = nil
                    if numbersSeen > 0 {
                        guard next == ".", numbersSeen < 4 else { return nil }
                        pointer += 1
                    }
                    guard let first = at(pointer), ("0"..."9").contains(first) else { return nil }
                    while let digit = at(pointer), ("0"..."9").contains(digit) {
                        let number = digit.value - 0x30
                        if let piece = ipv4Piece {
                            guard piece != 0 else { return nil }
                            ipv4Piece = piece * 10 + number
                        } else {
                            ipv4Piece = number
                        }
                        guard ipv4Piece! <= 255 else { return nil }
                        pointer += 1
                    }
                    address[pieceIndex] = address[pieceIndex] * 0x100 + UInt16(ipv4Piece!)
                    numbersSeen += 1
                    if numbersSeen == 2 || numbersSeen == 4 { pieceIndex += 1 }
                }
                guard numbersSeen == 4 else { return nil }
                break
            } else if at(pointer) == ":" {
                pointer += 1
                guard at(pointer) != nil else { return nil }
            } else if at(pointer) != nil {
                return nil
            }
            address[pieceIndex] = UInt16(value)
            pieceIndex += 1
        }
        if let compress {
            var swaps = pieceIndex - compress
            pieceIndex = 7
            while pieceIndex != 0 && swaps > 0 {
                address.swapAt(pieceIndex, compress + swaps - 1)
                pieceIndex -= 1
                swaps -= 1
            }
        } else if pieceIndex != 8 {
            return nil
        }
        return address
    }

    /// Lowercase hexadecimal pieces; the first longest run of two or more zero pieces is `::`.
    private static func serializeIPv6(_ address: [UInt16]) -> String {
        var bestStart = -1
        var bestLength = 1
        var index = 0
        while index < 8 {
            var end = index
            while end < 8 && address[end] == 0 { end += 1 }
            if end - index > bestLength {
                bestStart = index
                bestLength = end - index
            }
            index = max(end, index + 1)
        }
        var output = ""
        var ignore0 = false
        for piece in 0..<8 {
            if ignore0 && address[piece] == 0 { continue }
            ignore0 = false
            if piece == bestStart {
                output += piece == 0 ? "::" : ":"
                ignore0 = true
                continue
            }
            output += String(address[piece], radix: 16)
            if piece != 7 { output += ":" }
        }
        return output
    }

    // MARK: Reading

    private struct Reader {
        let scalars: [Unicode.Scalar]
        var position = 0
        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        var peek: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }
        mutating func advance() { position += 1 }
        func startsWith(_ text: String) -> Bool {
            let wanted = Array(text.unicodeScalars)
            return position + wanted.count <= scalars.count && Array(scalars[position..<position + wanted.count]) == wanted
        }
        mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
            while let scalar = peek, predicate(scalar) { position += 1 }
        }
        mutating func take(while predicate: (Unicode.Scalar) -> Bool) -> [Unicode.Scalar] {
            let start = position
            skip(while: predicate)
            return Array(scalars[start..<position])
        }

        /// A scheme and its colon (`[A-Za-z][A-Za-z0-9+.-]*:`), lowercased; nil (and nothing
        /// read) when the text does not start with one.
        mutating func scheme() -> String? {
            guard let first = peek, first.isASCII, first.properties.isAlphabetic else { return nil }
            var end = position + 1
            while end < scalars.count, scalars[end].isASCII,
                scalars[end].properties.isAlphabetic || ("0"..."9").contains(scalars[end]) || "+-.".unicodeScalars.contains(scalars[end])
            {
                end += 1
            }
            guard end < scalars.count, scalars[end] == ":" else { return nil }
            let scheme = String(String.UnicodeScalarView(scalars[position..<end])).lowercased()
            position = end + 1
            return scheme
        }
    }
}

import MTLSTrust

/// One challenge of a `WWW-Authenticate` (or `Proxy-Authenticate`) field (RFC 9110 §11.6.1):
/// a scheme with either a token68 or a list of parameters.
public struct AuthChallenge: Sendable, Equatable, CustomStringConvertible {
    /// The scheme as the server spelled it (`Basic`, `Digest`, `NTLM`, `Negotiate` …).
    public var scheme: String
    /// The token68 (`NTLM TlRMTVNT…`), when the challenge carries one.
    public var token68: String?
    /// The parameters, in order, names as sent; quoted strings unescaped.
    public var parameters: [Parameter]

    /// One `name=value` parameter.
    public struct Parameter: Sendable, Equatable {
        /// The name as sent.
        public var name: String
        /// The value, with quotes removed and `\x` escapes resolved.
        public var value: String

        /// Creates a parameter.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a challenge.
    public init(scheme: String, token68: String? = nil, parameters: [Parameter] = []) {
        self.scheme = scheme
        self.token68 = token68
        self.parameters = parameters
    }

    /// The scheme, lower-cased, for comparisons.
    public var normalizedScheme: String { scheme.lowercased() }

    /// The value of a parameter, its name compared case-insensitively.
    public subscript(name: String) -> String? {
        let lower = name.lowercased()
        return parameters.first { $0.name.lowercased() == lower }?.value
    }

    /// The `realm`, when there is one.
    public var realm: String? { self["realm"] }

    /// `Basic realm="x"`-style text for messages.
    public var description: String {
        if let token68 { return "\(scheme) \(token68.prefix(16))…" }
        if let realm { return "\(scheme) realm=\(DisplayText.quoted(realm))" }
        return scheme
    }

    /// Parses every challenge in the given header values (one value may hold several, and a
    /// response may carry several `WWW-Authenticate` fields). Malformed parts are skipped, never fatal.
    ///
    /// - Parameter headerValues: The values of each `WWW-Authenticate` field, in order.
    /// - Returns: The challenges in the order the server listed them.
    public static func parse(_ headerValues: [String]) -> [AuthChallenge] {
        headerValues.flatMap { parse(value: $0) }
    }

    /// Parses the challenges of one header value by RFC 9110's grammar:
    /// `challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`, in a comma-separated list.
    ///
    /// The commas are what make this hard: they separate both challenges and the parameters of one
    /// challenge. An element `name = value` after a comma is a parameter of the current
    /// challenge; anything else starts the next challenge. Empty list elements (`Basic , realm="x"`,
    /// `,,`) are allowed wherever a list is. Beyond the grammar, as curl reads them: a value not in
    /// quotes runs to white space or a comma (`nonce=MTIz==`, which is no token, is `MTIz==`), a
    /// missing closing quote ends the value at the end of the field, the first of a repeated
    /// parameter is the one looked up, and parameters separated by white space alone
    /// (`nonce="a" opaque="b"`) are both read. An element that is not a challenge (`realm="x"`
    /// after `Basic,`) is skipped up to the next comma.
    public static func parse(value: String) -> [AuthChallenge] {
        var scanner = ChallengeScanner(Array(value.utf8))
        var challenges: [AuthChallenge] = []
        while true {
            scanner.skip { $0 == 0x20 || $0 == 0x09 || $0 == 0x2C }
            guard !scanner.atEnd else { break }
            guard let scheme = scanner.token(), scanner.atEnd || [0x20, 0x09, 0x2C].contains(scanner.peek) else {
                scanner.skipToComma()  // not a challenge: skip to the next element
                continue
            }
            var challenge = AuthChallenge(scheme: scheme)
            guard scanner.skipWhitespace() else {  // `Basic,` or the end: a scheme alone
                challenges.append(challenge)
                continue
            }
            let mark = scanner.position
            if let run = scanner.token68(), scanner.atElementEnd() {
                challenge.token68 = run
                challenges.append(challenge)
                continue
            }
            scanner.position = mark
            // #auth-param: each element a parameter while it reads `token OWS "="`.
            while true {
                scanner.skip { $0 == 0x20 || $0 == 0x09 || $0 == 0x2C }
                let elementStart = scanner.position
                guard let name = scanner.token() else {
                    scanner.position = elementStart
                    break
                }
                scanner.skipWhitespace()
                guard scanner.consume(0x3D) else {  // not `name =`: the next challenge starts here
                    scanner.position = elementStart
                    break
                }
                scanner.skipWhitespace()
                let parameterValue = scanner.peek == 0x22 ? scanner.quotedString() : scanner.bareValue()
                if let parameterValue { challenge.parameters.append(Parameter(name: name, value: parameterValue)) }
                scanner.skipWhitespace()
                if !(scanner.atEnd || scanner.peek == 0x2C || scanner.startsParameter()) {
                    scanner.skipToComma()  // `name=` with no value, or text after a quoted value
                }
            }
            challenges.append(challenge)
        }
        return challenges
    }
}

/// A byte scanner over one header value.
private struct ChallengeScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[position] }

    mutating func skip(while predicate: (UInt8) -> Bool) {
        while let byte = peek, predicate(byte) { position += 1 }
    }

    /// Skips spaces and tabs; true when there were any.
    @discardableResult
    mutating func skipWhitespace() -> Bool {
        let start = position
        skip { $0 == 0x20 || $0 == 0x09 }
        return position > start
    }

    /// True at `token OWS "="` (a parameter), without moving.
    mutating func startsParameter() -> Bool {
        let mark = position
        defer { position = mark }
        guard token() != nil else { return false }
        skipWhitespace()
        return peek == 0x3D
    }

    mutating func skipToComma() {
        var inQuotes = false
        while let byte = peek {
            if byte == 0x22 { inQuotes.toggle() }
            if byte == 0x5C && inQuotes { position += 1 }
            if byte == 0x2C && !inQuotes { return }
            position += 1
        }
    }

    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        position += 1
        return true
    }

    /// True at the end, or at OWS followed by a comma or the end.
    mutating func atElementEnd() -> Bool {
        let mark = position
        skipWhitespace()
        let result = atEnd || peek == 0x2C
        position = mark
        return result
    }

    mutating func token() -> String? {
        let start = position
        skip(while: HTTPResponseParser.isTokenByte)
        guard position > start else { return nil }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// A parameter value not in quotes: everything up to white space or a comma (nil when empty).
    mutating func bareValue() -> String? {
        let start = position
        skip { $0 != 0x20 && $0 != 0x09 && $0 != 0x2C }
        guard position > start else { return nil }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    mutating func token68() -> String? {
        let start = position
        skip { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E || byte == 0x2B || byte == 0x2F
        }
        guard position > start else { return nil }
        skip { $0 == 0x3D }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    mutating func quotedString() -> String {
        position += 1  // opening quote
        var out: [UInt8] = []
        while let byte = peek {
            position += 1
            if byte == 0x22 { break }
            if byte == 0x5C, let next = peek {
                out.append(next)
                position += 1
                continue
            }
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }
}

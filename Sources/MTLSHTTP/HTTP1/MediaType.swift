import MTLSTrust

/// A media type such as `text/html;charset=Shift_JIS`: type, subtype and parameters, read as the
/// WHATWG MIME Sniffing Standard's "parse a MIME type" reads it, so that a page's charset and kind
/// are what a browser takes them to be.
///
/// What that means for values servers send:
/// - a parameter name is the text up to `=`: `charset =gbk` names `charset ` and is dropped;
/// - `'gbk'` is a token with quotes in it, not a quoted string, and names no encoding;
/// - of a repeated parameter the first counts (`charset=gbk;charset=windows-1255` is GBK);
/// - a quoted value ends at its closing quote, and what follows it up to `;` is ignored;
/// - a parameter whose name is not a token, or whose value holds a control character or a
///   character beyond U+00FF, is dropped and the others kept;
/// - a type or subtype that is empty or not a token makes the whole value unparsable.
///
/// ``HTTPHeaders/mediaType`` combines several `Content-Type` fields as the Fetch Standard does.
public struct MediaType: Sendable, Equatable, CustomStringConvertible {
    /// The type, lower-cased (`text`).
    public var type: String
    /// The subtype, lower-cased (`html`).
    public var subtype: String
    /// The parameters in the order sent, names lower-cased, quoted values unquoted.
    public var parameters: Parameters

    /// Parameters in order; names are unique and lower-case.
    public struct Parameters: Sendable, Equatable, Sequence {
        private var pairs: [(name: String, value: String)] = []

        /// No parameters.
        public init() {}

        /// The value of `name` (compared case-insensitively), or nil.
        public subscript(name: String) -> String? {
            get {
                let name = name.asciiLowercased()
                return pairs.first { $0.name == name }?.value
            }
            set {
                let name = name.asciiLowercased()
                if let index = pairs.firstIndex(where: { $0.name == name }) {
                    if let newValue { pairs[index].value = newValue } else { pairs.remove(at: index) }
                } else if let newValue {
                    pairs.append((name, newValue))
                }
            }
        }

        /// The number of parameters.
        public var count: Int { pairs.count }

        public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { pairs.makeIterator() }

        public static func == (lhs: Parameters, rhs: Parameters) -> Bool {
            lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
        }
    }

    /// Creates a media type from its parts; type and subtype are lower-cased.
    public init(type: String, subtype: String, parameters: Parameters = Parameters()) {
        self.type = type.asciiLowercased()
        self.subtype = subtype.asciiLowercased()
        self.parameters = parameters
    }

    /// Parses one media type (one `Content-Type` value); nil when it has no valid `type/subtype`.
    public init?(_ text: String) {
        var reader = Reader(Array(text.unicodeScalars))
        guard let parsed = reader.mediaType() else { return nil }
        self = parsed
    }

    /// `text/html`: type and subtype.
    public var essence: String { type + "/" + subtype }

    /// The `charset` parameter as sent (a label: look it up with `TextCharset(label:)`).
    public var charset: String? { parameters["charset"] }

    /// True for `text/html` and `application/xhtml+xml`.
    public var isHTML: Bool { (type == "text" && subtype == "html") || (type == "application" && subtype == "xhtml+xml") }

    /// The standard's serialization: `type/subtype;name=value`, a value quoted (with `"` and `\`
    /// escaped) unless it is a non-empty token.
    public var description: String {
        var text = essence
        for (name, value) in parameters {
            text += ";" + name + "="
            if !value.isEmpty && value.unicodeScalars.allSatisfy(MediaType.isToken) {
                text += value
            } else {
                text += "\""
                for scalar in value.unicodeScalars {
                    if scalar == "\"" || scalar == "\\" { text += "\\" }
                    text.unicodeScalars.append(scalar)
                }
                text += "\""
            }
        }
        return text
    }

    // MARK: - Code point classes of the Fetch and MIME Sniffing Standards

    /// An HTTP token code point: `!#$%&'*+-.^_`|~`, digits and ASCII letters.
    static func isToken(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x80 && HTTPResponseParser.isTokenByte(UInt8(scalar.value))
    }

    /// An HTTP quoted-string token code point: tab, U+0020–U+007E, U+0080–U+00FF.
    static func isQuotedStringToken(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value == 0x09 || (0x20...0x7E).contains(value) || (0x80...0xFF).contains(value)
    }

    /// HTTP whitespace: LF, CR, tab, space.
    static func isHTTPWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    /// The standards' position-based readers over code points.
    struct Reader {
        let scalars: [Unicode.Scalar]
        var position: Int
        var end: Int

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
            position = 0
            end = scalars.count
        }

        var atEnd: Bool { position >= end }
        var current: Unicode.Scalar { scalars[position] }

        mutating func collect(while predicate: (Unicode.Scalar) -> Bool) -> String {
            var text = String.UnicodeScalarView()
            while !atEnd && predicate(current) {
                text.append(current)
                position += 1
            }
            return String(text)
        }

        /// "Collect an HTTP quoted string": at a `"`; the unescaped value, or with `extract` false
        /// the text as it stood, quotes and backslashes included. An unterminated string runs to the end.
        mutating func quotedString(extract: Bool) -> String {
            let start = position
            var value = String.UnicodeScalarView()
            position += 1
            while true {
                while !atEnd && current != "\"" && current != "\\" {
                    value.append(current)
                    position += 1
                }
                if atEnd { break }
                let quoteOrBackslash = current
                position += 1
                if quoteOrBackslash == "\\" {
                    if atEnd {
                        value.append("\\")
                        break
                    }
                    value.append(current)
                    position += 1
                } else {
                    break
                }
            }
            if extract { return String(value) }
            return String(String.UnicodeScalarView(scalars[start..<position]))
        }

        /// "Parse a MIME type" over the whole input.
        mutating func mediaType() -> MediaType? {
            while !atEnd && MediaType.isHTTPWhitespace(current) { position += 1 }
            while end > position && MediaType.isHTTPWhitespace(scalars[end - 1]) { end -= 1 }
            let type = collect { $0 != "/" }
            guard !type.isEmpty, type.unicodeScalars.allSatisfy(MediaType.isToken), !atEnd else { return nil }
            position += 1  // "/"
            var subtype = collect { $0 != ";" }
            while let last = subtype.unicodeScalars.last, MediaType.isHTTPWhitespace(last) { subtype.unicodeScalars.removeLast() }
            guard !subtype.isEmpty, subtype.unicodeScalars.allSatisfy(MediaType.isToken) else { return nil }
            var result = MediaType(type: type, subtype: subtype)
            while !atEnd {
                position += 1  // ";"
                while !atEnd && MediaType.isHTTPWhitespace(current) { position += 1 }
                let name = collect { $0 != ";" && $0 != "=" }.asciiLowercased()
                if !atEnd {
                    if current == ";" { continue }
                    position += 1  // "="
                }
                if atEnd { break }
                var value: String
                if current == "\"" {
                    value = quotedString(extract: true)
                    _ = collect { $0 != ";" }
                } else {
                    value = collect { $0 != ";" }
                    while let last = value.unicodeScalars.last, MediaType.isHTTPWhitespace(last) { value.unicodeScalars.removeLast() }
                    if value.isEmpty { continue }
                }
                if !name.isEmpty, name.unicodeScalars.allSatisfy(MediaType.isToken),
                    value.unicodeScalars.allSatisfy(MediaType.isQuotedStringToken), result.parameters[name] == nil
                {
                    result.parameters[name] = value
                }
            }
            return result
        }

        /// "Split" of the Fetch Standard's "get, decode, and split": the values of a combined
        /// field, split at commas outside quoted strings, tabs and spaces trimmed.
        mutating func splitValues() -> [String] {
            var values: [String] = []
            var value = ""
            while true {
                value += collect { $0 != "\"" && $0 != "," }
                if !atEnd && current == "\"" {
                    value += quotedString(extract: false)
                    if !atEnd { continue }
                }
                let trimmed = value.unicodeScalars.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
                values.append(String(String.UnicodeScalarView(trimmed)))
                value = ""
                if atEnd { return values }
                position += 1  // ","
            }
        }
    }
}

extension HTTPHeaders {
    /// The media type of the `Content-Type` fields, as the Fetch Standard's "extract a MIME type"
    /// finds it: all fields are read as one comma-separated list, unparsable entries and `*/*`
    /// are passed over, the last valid one wins, and it keeps the `charset` of an earlier entry of
    /// the same type that named one. Nil when there is no field or no valid entry.
    public var mediaType: MediaType? { MediaType.extract(fromContentTypeValues: values("Content-Type")) }
}

extension MediaType {
    /// "Extract a MIME type" over the values of the `Content-Type` fields, in order.
    static func extract(fromContentTypeValues fields: [String]) -> MediaType? {
        guard !fields.isEmpty else { return nil }
        var reader = Reader(Array(fields.joined(separator: ", ").unicodeScalars))
        var charset: String?
        var essence: String?
        var found: MediaType?
        for value in reader.splitValues() {
            guard var candidate = MediaType(value), candidate.essence != "*/*" else { continue }
            if candidate.essence != essence {
                charset = candidate.charset
                essence = candidate.essence
            } else if candidate.charset == nil, let charset {
                candidate.parameters["charset"] = charset
            }
            found = candidate
        }
        return found
    }
}

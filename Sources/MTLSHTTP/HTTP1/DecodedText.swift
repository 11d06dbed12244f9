/// A body decoded to text, with the charset used and where it came from.
public struct DecodedText: Sendable, CustomStringConvertible {
    /// Where the charset was found.
    public enum Source: String, Sendable {
        /// A byte-order mark at the start of the body.
        case byteOrderMark = "byte-order mark"
        /// The `charset` parameter of `Content-Type`.
        case contentType = "Content-Type"
        /// The page's `<meta charset>` or `<meta http-equiv="Content-Type">`.
        case meta = "meta"
        /// Nothing declared: UTF-8 when the bytes are valid UTF-8, else windows-1252.
        case guessed = "guessed"
    }

    /// The text.
    public var text: String
    /// The charset the bytes were decoded with.
    public var charset: TextCharset
    /// Where that charset came from.
    public var source: Source
    /// The label as declared (`Shift_JIS`), when one was.
    public var declaredLabel: String?

    /// The text.
    public var description: String { text }

    /// Decodes a body: a byte-order mark first, then the `Content-Type` charset, then (for HTML)
    /// the page's `<meta>` declaration, then a guess. An unknown label falls through to the next source.
    ///
    /// - Parameters:
    ///   - body: The body bytes (already decompressed).
    ///   - contentType: One `Content-Type` value (``HTTPResponse/decodedText`` reads all of a
    ///     response's fields, as ``HTTPHeaders/mediaType`` does).
    public init(body: [UInt8], contentType: String?) {
        self.init(body: body, mediaType: contentType.flatMap(MediaType.init))
    }

    /// Decodes a body by its media type: a byte-order mark first, then the `charset` parameter,
    /// then (for HTML, or when no media type is known) the page's `<meta>` declaration, then a
    /// guess. An unknown label falls through to the next source, as in a browser.
    ///
    /// - Parameters:
    ///   - body: The body bytes (already decompressed).
    ///   - mediaType: The response's media type (``HTTPHeaders/mediaType``), nil when it has none.
    public init(body: [UInt8], mediaType: MediaType?) {
        let media = mediaType
        var bytes = body[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) {
            self.init(text: TextCharset.utf8.decode(Array(bytes.dropFirst(3))), charset: .utf8, source: .byteOrderMark, declaredLabel: nil)
            return
        }
        if body.starts(with: [0xFF, 0xFE]) || body.starts(with: [0xFE, 0xFF]) {
            let charset: TextCharset = body[0] == 0xFF ? .utf16LE : .utf16BE
            bytes = bytes.dropFirst(2)
            self.init(text: charset.decode(Array(bytes)), charset: charset, source: .byteOrderMark, declaredLabel: nil)
            return
        }
        if let label = media?.charset, let charset = TextCharset(label: label) {
            self.init(text: charset.decode(body), charset: charset, source: .contentType, declaredLabel: label)
            return
        }
        let looksLikeHTML = media?.isHTML ?? true
        if looksLikeHTML, let (label, charset) = EncodingPrescan.declaredEncoding(in: body) {
            self.init(text: charset.decode(body), charset: charset, source: .meta, declaredLabel: label)
            return
        }
        if let text = String(validating: body, as: UTF8.self) {
            self.init(text: text, charset: .utf8, source: .guessed, declaredLabel: nil)
        } else {
            self.init(text: TextCharset.windows1252.decode(body), charset: .windows1252, source: .guessed, declaredLabel: nil)
        }
    }

    init(text: String, charset: TextCharset, source: Source, declaredLabel: String?) {
        self.text = text
        self.charset = charset
        self.source = source
        self.declaredLabel = declaredLabel
    }
}

extension HTTPResponse {
    /// The body decoded by its `Content-Type` charset, or its `<meta charset>`, or a guess.
    public var decodedText: DecodedText { DecodedText(body: body, mediaType: headers.mediaType) }
}

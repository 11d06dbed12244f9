import MTLSTrust

/// A page's declarative refresh: `<meta http-equiv="refresh" content="0; url=…">` or a `Refresh`
/// header, read as the HTML Standard's "shared declarative refresh steps" read them. Single
/// sign-on pages use it where a redirect would do ("You are being signed in…"), and a browser
/// follows it.
struct DeclarativeRefresh: Equatable {
    /// Whole seconds to wait (`1.9` is 1).
    var seconds: Int
    /// The URL as written, not yet resolved; nil to reload the page itself.
    var url: String?
    /// The page's `<base href>`, which a `<meta>` refresh's URL is resolved against (a `Refresh`
    /// header's is resolved against the response's URL).
    var baseHref: String? = nil

    /// Parses the `content` of a refresh declaration; nil when it is none (`-1`, `foo`, `1x`).
    init?(_ content: String) {
        let scalars = Array(content.unicodeScalars)
        var position = 0
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { ScalarClass.isASCIIWhitespace(scalar) }
        func skipSpaces() { while position < scalars.count && isSpace(scalars[position]) { position += 1 } }
        func at(_ options: String) -> Bool { position < scalars.count && options.unicodeScalars.contains(scalars[position]) }

        guard !scalars.isEmpty else { return nil }
        skipSpaces()
        let digitsStart = position
        while at("0123456789") { position += 1 }
        var seconds = 0
        if position == digitsStart {
            guard at(".") else { return nil }
        } else {
            // Past Int's range the wait is forever in practice: clamp, never trap.
            seconds = Int(String(String.UnicodeScalarView(scalars[digitsStart..<position]))) ?? Int.max
        }
        while at("0123456789.") { position += 1 }
        self.seconds = seconds
        if position < scalars.count {
            guard at(";,") || isSpace(scalars[position]) else { return nil }
            skipSpaces()
            if at(";,") { position += 1 }
            skipSpaces()
        }
        guard position < scalars.count else {
            url = nil
            return
        }
        let remainder = position
        var quoteSkipping = false
        if at("Uu") {
            position += 1
            if at("Rr") {
                position += 1
                if at("Ll") {
                    position += 1
                    skipSpaces()
                    if at("=") {
                        position += 1
                        skipSpaces()
                        quoteSkipping = true
                    }
                }
            }
        } else {
            quoteSkipping = true
        }
        guard quoteSkipping else {
            url = String(String.UnicodeScalarView(scalars[remainder...]))
            return
        }
        var quote: Unicode.Scalar? = nil
        if at("\"'") {
            quote = scalars[position]
            position += 1
        }
        var end = scalars.count
        if let quote, let closing = scalars[position...].firstIndex(of: quote) { end = closing }
        url = String(String.UnicodeScalarView(scalars[position..<end]))
    }

    /// The refresh a response declares: its `Refresh` header, else the first
    /// `<meta http-equiv="refresh">` of its page (HTML only, and only when libxml2 is there).
    static func declared(by response: HTTPResponse) -> DeclarativeRefresh? {
        // The header first, as the HTML Standard processes it before the document's `<meta>`.
        if let header = response.headers["Refresh"] { return DeclarativeRefresh(header) }
        guard response.headers.mediaType?.isHTML ?? true, HTMLDocument.parserFailure == nil, mentionsRefresh(response.body) else { return nil }
        let document = HTMLDocument(text: DecodedText(body: response.body, mediaType: response.headers.mediaType).text)
        for meta in document.elements(named: "meta") {
            guard let equiv = meta.attribute("http-equiv"), equiv.lowercased() == "refresh", let content = meta.attribute("content") else { continue }
            var refresh = DeclarativeRefresh(content)
            refresh?.baseHref = document.elements(named: "base").first?.attribute("href")
            return refresh
        }
        return nil
    }

    /// A byte scan for `refresh` in any case, so that pages without one are never parsed for it.
    private static func mentionsRefresh(_ body: [UInt8]) -> Bool {
        let word = Array("refresh".utf8)
        guard body.count >= word.count else { return false }
        for start in 0...(body.count - word.count) where body[start] | 0x20 == word[0] {
            if (1..<word.count).allSatisfy({ body[start + $0] | 0x20 == word[$0] }) { return true }
        }
        return false
    }
}

/// The HTML Standard's "prescan a byte stream to determine its encoding" (13.2.3.2): how a
/// browser finds `<meta charset>` or `<meta http-equiv="Content-Type" content="…charset=…">` in
/// bytes whose encoding it does not know yet. A byte scanner, not a parser: comments are
/// skipped, other tags' attributes are stepped over (so a `>` inside a quoted value does not end
/// them), a malformed declaration or an unknown label is passed over for the next one, and
/// `<meta>` inside `<script>` still counts, all as in a browser.
///
/// Browsers scan the first 1,024 bytes and honour a later `<meta>` when the parser meets it; this
/// scans the first 64 KiB for both. Checked against html5lib's encoding tests
/// (`HTMLEncodingPrescanTests`).
enum EncodingPrescan {
    static let limit = 64 * 1024

    /// The encoding the bytes declare, with the label as written; nil when none is declared.
    /// UTF-16 declared in ASCII-compatible bytes means UTF-8, and x-user-defined windows-1252.
    static func declaredEncoding(in bytes: [UInt8]) -> (label: String, charset: TextCharset)? {
        var scanner = Scanner(Array(bytes.prefix(limit)))
        return scanner.run()
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        private func at(_ index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }
        private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D || byte == 0x20 }
        private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        private static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

        private func startsWith(_ text: StaticString, caseInsensitive: Bool = false) -> Bool {
            text.withUTF8Buffer { wanted in
                guard position + wanted.count <= bytes.count else { return false }
                for offset in 0..<wanted.count {
                    let byte = bytes[position + offset]
                    if (caseInsensitive ? Self.lower(byte) : byte) != wanted[offset] { return false }
                }
                return true
            }
        }

        mutating func run() -> (label: String, charset: TextCharset)? {
            while position < bytes.count {
                if startsWith("<!--") {
                    // To the first `>` preceded by `--`, after the `<` (so `<!-->` ends at once).
                    var index = position + 2
                    while index < bytes.count && !(bytes[index] == 0x3E && bytes[index - 1] == 0x2D && bytes[index - 2] == 0x2D) { index += 1 }
                    position = index
                } else if startsWith("<meta", caseInsensitive: true), let next = at(position + 5), Self.isSpace(next) || next == 0x2F {
                    position += 6
                    if let found = meta() { return found }
                } else if at(position) == 0x3C, let next = at(position + 1),
                    Self.isLetter(next) || (next == 0x2F && at(position + 2).map(Self.isLetter) == true)
                {
                    while let byte = at(position), !(Self.isSpace(byte) || byte == 0x3E) { position += 1 }
                    while attribute() != nil {}
                } else if startsWith("<!") || startsWith("</") || startsWith("<?") {
                    while let byte = at(position), byte != 0x3E { position += 1 }
                }
                position += 1
            }
            return nil
        }

        /// The attributes of one `<meta`, and whether they declare an encoding.
        private mutating func meta() -> (label: String, charset: TextCharset)? {
            var names: Set<[UInt8]> = []
            var gotPragma = false
            var needPragma: Bool? = nil
            var found: (label: String, charset: TextCharset)? = nil
            while let (name, value) = attribute() {
                guard names.insert(name).inserted else { continue }
                switch String(decoding: name, as: UTF8.self) {
                case "http-equiv":
                    if value == Array("content-type".utf8) { gotPragma = true }
                case "content":
                    if found == nil, let label = Self.charsetInContent(value) {
                        found = TextCharset(label: label).map { (label, $0) }
                        if found != nil { needPragma = true }
                    }
                case "charset":
                    let label = String(decoding: value, as: UTF8.self)
                    found = TextCharset(label: label).map { (label, $0) }
                    needPragma = false
                default:
                    continue
                }
            }
            guard let needPragma, !needPragma || gotPragma, var found else { return nil }
            if found.charset == .utf16LE || found.charset == .utf16BE { found.charset = .utf8 }
            if found.charset.name == "x-user-defined" { found.charset = .windows1252 }
            return found
        }

        /// "Get an attribute": a name and value, lowercased, or nil at `>` or the end.
        private mutating func attribute() -> (name: [UInt8], value: [UInt8])? {
            while let byte = at(position), Self.isSpace(byte) || byte == 0x2F { position += 1 }
            guard let first = at(position), first != 0x3E else { return nil }
            var name: [UInt8] = []
            var value: [UInt8] = []
            nameLoop: while true {
                guard let byte = at(position) else { return nil }
                switch byte {
                case 0x3D where !name.isEmpty:
                    position += 1
                    break nameLoop
                case 0x09, 0x0A, 0x0C, 0x0D, 0x20:
                    while let space = at(position), Self.isSpace(space) { position += 1 }
                    guard at(position) == 0x3D else { return (name, []) }
                    position += 1
                    break nameLoop
                case 0x2F, 0x3E:
                    return (name, [])
                default:
                    name.append(Self.lower(byte))
                    position += 1
                }
            }
            while let byte = at(position), Self.isSpace(byte) { position += 1 }
            guard let opening = at(position) else { return nil }
            if opening == 0x22 || opening == 0x27 {
                position += 1
                while let byte = at(position) {
                    position += 1
                    if byte == opening { return (name, value) }
                    value.append(Self.lower(byte))
                }
                return nil
            }
            if opening == 0x3E { return (name, []) }
            while let byte = at(position) {
                if Self.isSpace(byte) || byte == 0x3E { return (name, value) }
                value.append(Self.lower(byte))
                position += 1
            }
            return nil
        }

        /// "Extracting a character encoding from a meta element": the label after `charset=` in a
        /// `content` value, quoted or up to white space or `;`.
        static func charsetInContent(_ content: [UInt8]) -> String? {
            var position = 0
            let word = Array("charset".utf8)
            while true {
                guard let start = (position..<max(position, content.count - word.count + 1)).first(where: { Array(content[$0..<$0 + word.count]).map(lower) == word })
                else { return nil }
                position = start + word.count
                while position < content.count && isSpace(content[position]) { position += 1 }
                guard position < content.count, content[position] == 0x3D else { continue }
                position += 1
                while position < content.count && isSpace(content[position]) { position += 1 }
                guard position < content.count else { return nil }
                let first = content[position]
                if first == 0x22 || first == 0x27 {
                    guard let close = content[(position + 1)...].firstIndex(of: first) else { return nil }
                    return String(decoding: content[(position + 1)..<close], as: UTF8.self)
                }
                let end = content[position...].firstIndex { isSpace($0) || $0 == 0x3B } ?? content.count
                return String(decoding: content[position..<end], as: UTF8.self)
            }
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MTLSTrust

/// The byte-level syntax of HTTP/1.1 (RFC 9110, RFC 9112) the parsers share: chunk sizes, tokens,
/// numbers and field values.
extension HTTPResponseParser {
    /// The size a chunk-size line gives (RFC 9112 7.1.1), read as bytes: hex digits, then the chunk
    /// extensions, each `BWS ";" BWS name [BWS "=" BWS value]` where the name is a token and the value
    /// a token or a quoted string. Spaces and tabs after the size are skipped (curl and Chromium
    /// do; some servers pad sizes); white space before it, a name missing after `;`, a quote left
    /// open or any other byte is malformed: parsers that read such a line differently could frame
    /// the body differently. -1 when malformed, -2 when the size has more than 15 significant digits.
    static func chunkSize(_ line: UnsafeBufferPointer<UInt8>) -> Int {
        var index = line.startIndex
        let end = line.endIndex
        var size = 0
        var digits = 0
        while index < end {
            let byte = line[index]
            let value: Int
            switch byte {
            case 0x30...0x39: value = Int(byte &- 0x30)
            case 0x41...0x46: value = Int(byte &- 0x37)
            case 0x61...0x66: value = Int(byte &- 0x57)
            default: value = -1
            }
            if value < 0 { break }
            if size != 0 || value != 0 { digits += 1 }
            if digits > 15 { return -2 }
            size = size << 4 | value
            index += 1
        }
        guard index > line.startIndex else { return -1 }
        skipWhitespace(line, &index)
        while index < end {
            guard line[index] == 0x3B else { return -1 }  // ;
            index += 1
            skipWhitespace(line, &index)
            guard skipToken(line, &index) else { return -1 }
            skipWhitespace(line, &index)
            if index < end && line[index] == 0x3D {  // =
                index += 1
                skipWhitespace(line, &index)
                if index < end && line[index] == 0x22 {  // a quoted string
                    index += 1
                    while true {
                        guard index < end else { return -1 }
                        let byte = line[index]
                        if byte == 0x22 { break }
                        if byte == 0x5C {  // a quoted pair: \ and HTAB, SP, VCHAR or obs-text
                            index += 1
                            guard index < end, line[index] == 0x09 || (line[index] >= 0x20 && line[index] != 0x7F) else { return -1 }
                        } else if byte != 0x09 && (byte < 0x20 || byte == 0x7F) {
                            return -1
                        }
                        index += 1
                    }
                    index += 1
                } else if !skipToken(line, &index) {
                    return -1
                }
                skipWhitespace(line, &index)
            }
        }
        return size
    }

    private static func skipWhitespace(_ line: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        while index < line.endIndex && (line[index] == 0x20 || line[index] == 0x09) { index += 1 }
    }

    /// Skips a token; false when there is none.
    private static func skipToken(_ line: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        let start = index
        while index < line.endIndex && isTokenByte(line[index]) { index += 1 }
        return index > start
    }

    /// A Content-Length: 1 to 18 ASCII digits (no sign, no white space), else nil.
    static func decimal(_ text: String) -> Int? {
        var text = text
        return text.withUTF8 { digits -> Int? in
            guard !digits.isEmpty, digits.count <= 18 else { return nil }
            var value = 0
            for digit in digits {
                guard digit >= 0x30 && digit <= 0x39 else { return nil }
                value = value * 10 + Int(digit - 0x30)
            }
            return value
        }
    }

    /// RFC 9110 5.6.2 `tchar`: `!#$%&'*+-.^_`|~`, digits and letters, as a 128-bit set (every
    /// byte of every header name is checked).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        // Bits 0–63: ! # $ % & ' * + - . 0–9; bits 64–127: A–Z ^ _ ` a–z | ~.
        let low: UInt64 = 0x03FF_6CFA_0000_0000
        let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        // Masking shifts (&>>): the amount is under 64 by construction, so no over-shift check.
        return byte < 64 ? (low &>> UInt64(byte)) & 1 == 1 : byte < 128 && (high &>> UInt64(byte &- 64)) & 1 == 1
    }

    /// `0-9`, `a-f`, `A-F` (Character.isHexDigit also takes full-width forms).
    static func isHexDigitByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    /// The text without leading and trailing spaces and tabs (optional whitespace, RFC 9110 5.6.3).
    static func trimmingWhitespace(_ text: Substring) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(text[first...last])
    }

    /// A field value as text: trimmed of spaces and tabs; ASCII or UTF-8 as it is, other bytes as
    /// ISO 8859-1.
    static func decodeValue(_ bytes: ArraySlice<UInt8>) -> String { bytes.withUnsafeBufferPointer { decodeValue($0) } }

    static func decodeValue(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        let slice = UnsafeBufferPointer(rebasing: bytes[first...last])
        // ASCII, nearly every value: it decodes the same either way, without the generic
        // validating initialiser's work.
        if slice.allSatisfy({ $0 < 0x80 }) { return String(decoding: slice, as: UTF8.self) }
        if let text = String(validating: slice, as: UTF8.self) { return text }
        // Not UTF-8: ISO 8859-1, where every byte is the code point of the same number.
        var text = ""
        text.unicodeScalars.append(contentsOf: slice.map { Unicode.Scalar($0) })
        return text
    }
}

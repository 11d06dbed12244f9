/// Text that came from a peer or a file — a certificate's names, a PKCS#12 friendly name, an HTTP
/// header, a page's title — made safe to show to a person.
///
/// A terminal acts on what it is sent: ESC and the 8-bit CSI (U+009B) start sequences that move the
/// cursor, rewrite or hide lines, set the window title or make links; CR returns to the start of a
/// line and BS steps back over it; a newline lets the text forge a line of output of its own. The
/// bidirectional overrides and isolates (U+202E, U+2066 …) reorder what is shown, and the other
/// format characters (U+200B, U+FEFF, the tags) are invisible, so two different names look alike
/// (CVE-2021-42574). Every such character is shown as a Swift escape (`\u{1B}`, `\n`), so what is
/// shown is what was sent, on one line, in order.
///
/// ``escaped(_:)`` is for reading: it leaves `\` as it is, so it is not a reversible encoding (the
/// JSON output carries the exact value). ``quoted(_:)`` also escapes `"` and `\`, for a value shown
/// between quotes.
public enum DisplayText {
    /// True for a character that a terminal acts on, or that reorders, hides or breaks the line:
    /// C0 and C1 controls and DEL, format characters (general category Cf: bidirectional controls,
    /// zero-width characters, the byte order mark, tags), the line and paragraph separators, and
    /// the noncharacters U+FDD0–U+FDEF and U+xFFFE/U+xFFFF.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        if value < 0xA0 { return false }
        if (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE { return true }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// `text` with every unsafe character (``isUnsafe(_:)``) written as an escape: `\t`, `\n`, `\r`,
    /// `\0`, else `\u{HEX}`.
    public static func escaped(_ text: String) -> String {
        escaped(text, keeping: { _ in false }, quoting: false)
    }

    /// `text` between double quotes, with `"` and `\` escaped as well as every unsafe character:
    /// the form of a Swift string literal, so that the value can be read back exactly.
    public static func quoted(_ text: String) -> String {
        "\"" + escaped(text, keeping: { _ in false }, quoting: true) + "\""
    }

    /// `text` with the unsafe characters escaped except those `keep` accepts (a console keeps the
    /// newlines and tabs that lay out its own output).
    package static func escaped(_ text: String, keeping keep: (Unicode.Scalar) -> Bool, quoting: Bool) -> String {
        if !needsEscaping(text, quoting: quoting, keeping: keep) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if quoting && (scalar == "\"" || scalar == "\\") {
                out.unicodeScalars.append("\\")
                out.unicodeScalars.append(scalar)
            } else if isUnsafe(scalar) && !keep(scalar) {
                out += escape(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The escape for one scalar, as Swift writes it in a string literal.
    package static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\0": return "\\0"
        case "\t": return "\\t"
        case "\n": return "\\n"
        case "\r": return "\\r"
        default: return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }

    /// False when every byte is printable ASCII (the common case, checked without decoding) or no
    /// scalar needs a change.
    private static func needsEscaping(_ text: String, quoting: Bool, keeping keep: (Unicode.Scalar) -> Bool) -> Bool {
        var ascii = true
        for byte in text.utf8 {
            if byte >= 0x80 {
                ascii = false
                break
            }
            if quoting && (byte == 0x22 || byte == 0x5C) { return true }
            if (byte < 0x20 || byte == 0x7F) && !keep(Unicode.Scalar(byte)) { return true }
        }
        if ascii { return false }
        return text.unicodeScalars.contains { (isUnsafe($0) && !keep($0)) || (quoting && ($0 == "\"" || $0 == "\\")) }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// An XML property list with ordered keys, written the way Xcode writes Info.plist (tabs, the
/// Apple DTD), so the output diffs cleanly and `plutil -lint` accepts it.
indirect enum PropertyListText: Sendable {
    case string(String)
    case bool(Bool)
    case integer(Int)
    case array([PropertyListText])
    case dictionary([(String, PropertyListText)])

    /// A complete document whose root is `self`.
    func document() -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        write(into: &out, depth: 0)
        out += "</plist>\n"
        return out
    }

    private func write(into out: inout String, depth: Int) {
        let indent = String(repeating: "\t", count: depth)
        switch self {
        case .string(let text): out += "\(indent)<string>\(XMLText.escape(text))</string>\n"
        case .bool(let value): out += "\(indent)<\(value ? "true" : "false")/>\n"
        case .integer(let value): out += "\(indent)<integer>\(value)</integer>\n"
        case .array(let values):
            if values.isEmpty {
                out += "\(indent)<array/>\n"
                return
            }
            out += "\(indent)<array>\n"
            for value in values { value.write(into: &out, depth: depth + 1) }
            out += "\(indent)</array>\n"
        case .dictionary(let pairs):
            if pairs.isEmpty {
                out += "\(indent)<dict/>\n"
                return
            }
            out += "\(indent)<dict>\n"
            for (key, value) in pairs {
                out += "\(indent)\t<key>\(XMLText.escape(key))</key>\n"
                value.write(into: &out, depth: depth + 1)
            }
            out += "\(indent)</dict>\n"
        }
    }
}

/// XML text escaping and comments.
enum XMLText {
    /// Escapes `&`, `<`, `>`, `"` and `'`, and writes the characters ``DisplayText/isUnsafe(_:)``
    /// names as character references; XML 1.0 has no form at all for the C0 controls other than
    /// tab, newline and CR, so those are written as their Swift escape (`\u{1B}`) in the text.
    static func escape(_ text: String) -> String { TextEscaping.escape(text, .xml) }

    /// A comment body that cannot end the comment early.
    static func comment(_ text: String) -> String {
        var body = PinWriter.commentSafe(text)
        while body.contains("--") { body = body.replacingAll("--", with: "- -") }
        if body.hasSuffix("-") { body += " " }
        return "<!-- \(body) -->"
    }
}

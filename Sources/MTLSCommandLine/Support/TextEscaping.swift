import MTLSTrust

/// The one escaper for every syntax the tool writes text into: JSON strings, string literals of
/// generated source code, and XML (property lists, Android configs, HTML reports).
///
/// Each syntax escapes its own delimiters, then writes every character ``DisplayText/isUnsafe(_:)``
/// names (controls, bidirectional and other format characters) in the syntax's escape form, so the
/// output shows the value and reads back as exactly it.
enum TextEscaping {
    enum Syntax {
        /// A JSON string's content: `\"`, `\\`, `\n`, `\r`, `\t`, else `\u00XX` (UTF-16 units).
        case json
        /// A Java or Kotlin string literal's content: as JSON, with upper-case `\uXXXX`.
        case javaKotlin
        /// An Objective-C (C) string literal's content: the UTF-8 bytes of unsafe characters in
        /// octal (C admits no universal character name below U+00A0).
        case objectiveC
        /// XML character data or an attribute value: the five predefined entities, character
        /// references for unsafe characters; C0 controls, which XML 1.0 cannot carry at all, as
        /// their Swift escape (`\u{1B}`) in the text.
        case xml
    }

    static func escape(_ text: String, _ syntax: Syntax) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if let special = special(scalar, syntax) {
                out += special
            } else if DisplayText.isUnsafe(scalar) {
                out += unsafe(scalar, syntax)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func special(_ scalar: Unicode.Scalar, _ syntax: Syntax) -> String? {
        switch syntax {
        case .json, .javaKotlin, .objectiveC:
            switch scalar {
            case "\\": "\\\\"
            case "\"": "\\\""
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            default: nil
            }
        case .xml:
            switch scalar {
            case "&": "&amp;"
            case "<": "&lt;"
            case ">": "&gt;"
            case "\"": "&quot;"
            case "'": "&apos;"
            case "\t", "\n", "\r": "&#x\(String(scalar.value, radix: 16, uppercase: true));"
            case _ where scalar.value < 0x20: DisplayText.escape(scalar)
            default: nil
            }
        }
    }

    private static func unsafe(_ scalar: Unicode.Scalar, _ syntax: Syntax) -> String {
        switch syntax {
        case .json: String(scalar).utf16.map { String(cFormat: "\\u%04x", UInt32($0)) }.joined()
        case .javaKotlin: String(scalar).utf16.map { "\\u" + String(cFormat: "%04X", UInt32($0)) }.joined()
        case .objectiveC: String(scalar).utf8.map { "\\" + String(cFormat: "%03o", UInt32($0)) }.joined()
        case .xml: "&#x\(String(scalar.value, radix: 16, uppercase: true));"
        }
    }
}

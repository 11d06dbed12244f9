/// HTML character references (`&amp;`, `&eacute`, `&#x30ED;`, `&#128;`) decoded as the HTML
/// Standard's tokenizer decodes them (§13.2.5.72–80), so that a page's title, its text and its form
/// values read as in a browser.
///
/// - Named references: the longest of the standard's 2,231 names that the text starts with,
///   with or without `;` for the legacy names that allow it (`&copy`, `&notit;` is `¬it;`).
///   In an attribute value, a legacy name without `;` followed by `=` or a letter or digit is left
///   as it stands (`?a=1&copy=2` keeps its `&copy=`).
/// - Numeric references: decimal or hexadecimal, `;` optional; 0, surrogates and values above
///   U+10FFFF become U+FFFD, and 0x80–0x9F are read as windows-1252 (`&#128;` is €).
/// - Anything else after `&` is text.
public enum HTMLCharacterReferences {
    /// Decodes every character reference in `text`.
    ///
    /// - Parameters:
    ///   - text: Text of an HTML document or of one attribute value.
    ///   - inAttribute: True for an attribute value (the rule for legacy names above).
    public static func decode(_ text: String, inAttribute: Bool = false) -> String {
        guard text.utf8.contains(0x26) else { return text }
        let scalars = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if scalars[index] == "&", let (decoded, end) = reference(in: scalars, at: index, limit: scalars.count, inAttribute: inAttribute) {
                output.append(contentsOf: decoded)
                index = end
            } else {
                output.append(scalars[index])
                index += 1
            }
        }
        return String(output)
    }

    /// The reference at `start` (an `&`) in `scalars[..<limit]`: what it decodes to and where it
    /// ends; nil when the `&` starts no reference and is text.
    static func reference(in scalars: [Unicode.Scalar], at start: Int, limit: Int, inAttribute: Bool) -> ([Unicode.Scalar], Int)? {
        var index = start + 1
        guard index < limit else { return nil }
        if scalars[index] == "#" { return numeric(in: scalars, at: index + 1, limit: limit) }
        // Named: the longest name of the table the text starts with.
        var candidate = ""
        while index < limit, candidate.utf8.count < longestName, isASCIIAlphanumeric(scalars[index]) {
            candidate.unicodeScalars.append(scalars[index])
            index += 1
        }
        guard !candidate.isEmpty else { return nil }
        if index < limit, scalars[index] == ";" { candidate.unicodeScalars.append(";") }
        let table = named
        var name = Substring(candidate)
        while !name.isEmpty {
            if let decoded = table[name] {
                let end = start + 1 + name.unicodeScalars.count
                if inAttribute, name.last != ";", end < limit, scalars[end] == "=" || isASCIIAlphanumeric(scalars[end]) {
                    return nil
                }
                return (decoded, end)
            }
            name = name.dropLast()
        }
        return nil
    }

    /// `&#…` from the first character after `#`.
    private static func numeric(in scalars: [Unicode.Scalar], at first: Int, limit: Int) -> ([Unicode.Scalar], Int)? {
        var index = first
        var radix: UInt32 = 10
        if index < limit, scalars[index] == "x" || scalars[index] == "X" {
            radix = 16
            index += 1
        }
        let digitsStart = index
        var value: UInt32 = 0
        while index < limit, let digit = digitValue(scalars[index], radix: radix) {
            value = min(value &* radix &+ digit, 0x11_0000)  // past U+10FFFF it is U+FFFD whatever follows
            index += 1
        }
        guard index > digitsStart else { return nil }
        if index < limit, scalars[index] == ";" { index += 1 }
        return ([scalar(forNumber: value)], index)
    }

    /// The code point a numeric reference stands for (§13.2.5.80).
    static func scalar(forNumber value: UInt32) -> Unicode.Scalar {
        if value == 0 || value > 0x10FFFF || (0xD800...0xDFFF).contains(value) { return "\u{FFFD}" }
        if (0x80...0x9F).contains(value), let mapped = windows1252C1[Int(value - 0x80)] { return mapped }
        return Unicode.Scalar(value)!
    }

    /// What windows-1252 puts at 0x80–0x9F (nil where it leaves the C1 control).
    private static let windows1252C1: [Unicode.Scalar?] = [
        "\u{20AC}", nil, "\u{201A}", "\u{0192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}",
        "\u{02C6}", "\u{2030}", "\u{0160}", "\u{2039}", "\u{0152}", nil, "\u{017D}", nil,
        nil, "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}",
        "\u{02DC}", "\u{2122}", "\u{0161}", "\u{203A}", "\u{0153}", nil, "\u{017E}", "\u{0178}",
    ]

    private static func digitValue(_ scalar: Unicode.Scalar, radix: UInt32) -> UInt32? {
        let value = scalar.value
        switch value {
        case 0x30...0x39: return value - 0x30
        case 0x41...0x46 where radix == 16: return value - 0x37
        case 0x61...0x66 where radix == 16: return value - 0x57
        default: return nil
        }
    }

    private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        default: false
        }
    }

    /// The longest name (`CounterClockwiseContourIntegral;`).
    private static let longestName = 32

    /// ``namedTable`` read once, when a page first holds a named reference.
    private static let named: [Substring: [Unicode.Scalar]] = {
        var table: [Substring: [Unicode.Scalar]] = [:]
        table.reserveCapacity(2_231)
        for line in namedTable.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let name = fields.first else { continue }
            table[name] = fields.dropFirst().compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
        }
        return table
    }()
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The few string functions the package used from full Foundation, on the standard library alone:
// FoundationEssentials has none of them, and full Foundation brings FoundationInternationalization
// and ICU (about 40 MB, their relocations and their start-up) into every process. Shared by the
// package's modules through `package` access.

/// Membership tests with the members of Foundation's `CharacterSet` of the same name, from the
/// standard library's Unicode tables.
package enum ScalarClass {
    /// General category Zs, U+0009 and U+200B ZERO WIDTH SPACE (`CharacterSet.whitespaces`; the
    /// zero-width space comes with text pasted from web pages and is trimmed like a space).
    package static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII first: the property lookup is a table walk, and nearly every scalar tested is ASCII.
        if scalar.isASCII { return scalar == " " || scalar == "\t" }
        return scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
    }

    /// The WHATWG standards' "ASCII whitespace": tab, LF, FF, CR and space (HTML, URL, Encoding).
    package static func isASCIIWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "\u{0C}"
    }

    /// `isWhitespace`, categories Zl and Zp, U+000A–U+000D and U+0085 (`CharacterSet.whitespacesAndNewlines`).
    package static func isWhitespaceOrNewline(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar == " " || (0x09...0x0D).contains(scalar.value) }
        if scalar == "\u{0085}" || scalar == "\u{200B}" { return true }
        switch scalar.properties.generalCategory {
        case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// Categories L* and M* (`CharacterSet.letters`).
    package static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default: return false
        }
    }

    /// Category Nd (`CharacterSet.decimalDigits`).
    package static func isDecimalDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .decimalNumber
    }

    /// Categories L*, M* and N* (`CharacterSet.alphanumerics`).
    package static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        if isLetter(scalar) { return true }
        switch scalar.properties.generalCategory {
        case .decimalNumber, .letterNumber, .otherNumber: return true
        default: return false
        }
    }
}

extension StringProtocol {
    /// The text without the leading and trailing scalars for which `trimmed` is true, scalar by
    /// scalar as `trimmingCharacters(in:)` does (a combining mark is not kept with a trimmed base).
    package func trimming(_ trimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = Substring(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !trimmed($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !trimmed($0) }) ?? first
        // Through Substring's own initialiser: exact to the scalar (a String subscript would round
        // to Character boundaries), and no generic append, whose first use costs the runtime a
        // scan of every conformance record.
        return String(Substring(scalars[first...last]))
    }

    /// Without leading and trailing spaces and tabs (`trimmingCharacters(in: .whitespaces)`).
    package func trimmingWhitespace() -> String { trimming(ScalarClass.isWhitespace) }

    /// Without leading and trailing white space and line breaks (`.whitespacesAndNewlines`).
    package func trimmingWhitespaceAndNewlines() -> String { trimming(ScalarClass.isWhitespaceOrNewline) }

    /// Without leading and trailing scalars of `set` (`CharacterSet(charactersIn:)`).
    package func trimming(charactersIn set: String) -> String {
        let members = Set(set.unicodeScalars)
        return trimming { members.contains($0) }
    }

    /// Every occurrence of `target` replaced, compared byte for byte in UTF-8 — literally, as
    /// Foundation's `replacingOccurrences(of:with:)` finds `"\n"` inside `"\r\n"` (the standard
    /// library's `replacing(_:with:)` compares whole characters and would not).
    package func replacingAll(_ target: String, with replacement: String) -> String {
        let source = Array(utf8)
        let needle = Array(target.utf8)
        guard !needle.isEmpty, source.count >= needle.count else { return String(self) }
        var out: [UInt8] = []
        out.reserveCapacity(source.count)
        var index = 0
        var replaced = false
        while index < source.count {
            if source[index] == needle[0], index + needle.count <= source.count,
                source[index..<index + needle.count].elementsEqual(needle)
            {
                out.append(contentsOf: replacement.utf8)
                index += needle.count
                replaced = true
            } else {
                out.append(source[index])
                index += 1
            }
        }
        return replaced ? String(decoding: out, as: UTF8.self) : String(self)
    }

    /// Padded with spaces, or cut, to `length` characters (`padding(toLength:withPad:" ",startingAt:0)`).
    package func padded(to length: Int) -> String {
        let count = self.count
        if count >= length { return String(prefix(length)) }
        return String(self) + String(repeating: " ", count: length - count)
    }

    fileprivate static func asciiLower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
}

extension String {
    /// ASCII letters lower-cased and every other character kept: protocol names (HTTP tokens,
    /// media types, DNS labels) compare so, where `lowercased()` would follow Unicode (`K`, the
    /// Kelvin sign, becomes `k`).
    package func asciiLowercased() -> String {
        guard utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return self }
        return String(decoding: utf8.map(Self.asciiLower), as: UTF8.self)
    }

    /// The range of the first occurrence of `target`, ASCII letters compared without case
    /// (`range(of:options: .caseInsensitive)` for the ASCII keywords it is used with).
    package func rangeIgnoringASCIICase(of target: String) -> Range<Index>? {
        let wanted = target.utf8.map(Self.asciiLower)
        guard !wanted.isEmpty else { return nil }
        let bytes = utf8
        var start = bytes.startIndex
        while start != bytes.endIndex {
            var probe = start
            var matched = 0
            while matched < wanted.count, probe != bytes.endIndex, Self.asciiLower(bytes[probe]) == wanted[matched] {
                probe = bytes.index(after: probe)
                matched += 1
            }
            if matched == wanted.count { return start..<probe }
            start = bytes.index(after: start)
        }
        return nil
    }
}

extension String {
    /// printf formatting by the C library (`vsnprintf`), for the numeric conversions the package
    /// uses (`%.1f`, `%04x`, `%5.2f`); what `String(cFormat:)` produces for them, without Foundation.
    package init(cFormat format: String, _ arguments: any CVarArg...) {
        let needed = withVaList(arguments) { vsnprintf(nil, 0, format, $0) }
        guard needed > 0 else {
            self = ""
            return
        }
        var buffer = [CChar](repeating: 0, count: Int(needed) + 1)
        _ = withVaList(arguments) { list in buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, list) } }
        self = String(decoding: buffer.prefix(Int(needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// `/`-separated path text, with the results of `NSString`'s path methods of the same names.
package enum PathText {
    /// `a/b/` → `b`, `/` → `/`, `name` → `name`.
    package static func lastComponent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed == "/" || trimmed.isEmpty { return trimmed }
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// `a/b` → `a`, `/a` → `/`, `a` → ``.
    package static func deletingLastComponent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed == "/" { return "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        if slash == trimmed.startIndex { return "/" }
        return withoutTrailingSlashes(String(trimmed[..<slash]))
    }

    /// `a` + `b` → `a/b`, `a/` + `b` → `a/b`, `` + `b` → `b`.
    package static func appending(_ path: String, _ component: String) -> String {
        if path.isEmpty { return component }
        if component.isEmpty { return path }
        return withoutTrailingSlashes(path).appendingSlashUnlessRoot + component
    }

    /// `name.pem` → `pem`; `` for `name`, `.profile` or `dir.d/name`.
    package static func pathExtension(_ path: String) -> String {
        let last = lastComponent(path)
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return "" }
        return String(last[last.index(after: dot)...])
    }

    private static func withoutTrailingSlashes(_ path: String) -> String {
        var text = Substring(path)
        while text.count > 1, text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }
}

extension String {
    fileprivate var appendingSlashUnlessRoot: String { self == "/" ? self : self + "/" }
}

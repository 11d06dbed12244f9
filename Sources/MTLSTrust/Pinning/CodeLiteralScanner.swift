#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the literals of Swift, Objective-C, Kotlin and Java source well enough to take pins back
/// out of a TrustKit configuration dictionary or an OkHttp `CertificatePinner.Builder` chain, whether
/// we wrote it or a person did (comments, `@"…"`, `@{…}`, `as [String: Any]` casts, trailing commas).
enum CodeLiteralScanner {
    enum Token: Equatable {
        case string(String)
        case identifier(String)
        case punctuation(String)
    }

    indirect enum Value {
        case string(String)
        case bool(Bool)
        case identifier(String)
        case array([Value])
        case dictionary([(Value, Value)])
        case other

        /// The text of a string or identifier key; identifiers lose a leading `k` (`kTSKPinnedDomains` → `TSKPinnedDomains`).
        var keyName: String? {
            switch self {
            case .string(let text): return text
            case .identifier(let name): return name.hasPrefix("kTSK") ? String(name.dropFirst()) : name
            default: return nil
            }
        }

        /// The value under `key` of a dictionary.
        subscript(key: String) -> Value? {
            guard case .dictionary(let pairs) = self else { return nil }
            return pairs.first { $0.0.keyName == key }?.1
        }

        var strings: [String] {
            switch self {
            case .string(let text): return [text]
            case .array(let values): return values.flatMap(\.strings)
            default: return []
            }
        }

        var boolValue: Bool? {
            if case .bool(let value) = self { return value }
            return nil
        }
    }

    /// Splits source into string literals, identifiers and punctuation; comments are dropped.
    static func tokens(_ text: String) -> [Token] {
        let s = Array(text.unicodeScalars)
        var i = 0
        var out: [Token] = []
        func at(_ k: Int) -> Unicode.Scalar? { k < s.count ? s[k] : nil }
        while i < s.count {
            let c = s[i]
            if c == "/", at(i + 1) == "/" {
                while i < s.count, s[i] != "\n" { i += 1 }
            } else if c == "/", at(i + 1) == "*" {
                i += 2
                while i < s.count, !(s[i] == "*" && at(i + 1) == "/") { i += 1 }
                i += 2
            } else if c == "\"" || (c == "@" && at(i + 1) == "\"") {
                if c == "@" { i += 1 }
                i += 1
                var value = ""
                while i < s.count, s[i] != "\"" {
                    if s[i] == "\\", let next = at(i + 1) {
                        switch next {
                        case "n": value += "\n"
                        case "t": value += "\t"
                        default: value.unicodeScalars.append(next)
                        }
                        i += 2
                        continue
                    }
                    value.unicodeScalars.append(s[i])
                    i += 1
                }
                i += 1
                out.append(.string(value))
            } else if c == "@", let next = at(i + 1), next == "[" || next == "{" {
                out.append(.punctuation("@" + String(next)))
                i += 2
            } else if c == "@", let next = at(i + 1), ScalarClass.isLetter(next) {
                i += 1  // @YES, @NO, @interface …: the identifier follows
            } else if ScalarClass.isLetter(c) || c == "_" || ScalarClass.isDecimalDigit(c) {
                var name = ""
                while i < s.count, ScalarClass.isAlphanumeric(s[i]) || s[i] == "_" {
                    name.unicodeScalars.append(s[i])
                    i += 1
                }
                out.append(.identifier(name))
            } else if ScalarClass.isWhitespaceOrNewline(c) {
                i += 1
            } else {
                out.append(.punctuation(String(c)))
                i += 1
            }
        }
        return out
    }

    /// Parses the literal value starting at `index`, leaving `index` after it.
    static func value(_ tokens: [Token], _ index: inout Int) -> Value {
        guard index < tokens.count else { return .other }
        let token = tokens[index]
        switch token {
        case .string(let text):
            index += 1
            return .string(text)
        case .identifier(let name):
            index += 1
            switch name {
            case "true", "YES": return .bool(true)
            case "false", "NO": return .bool(false)
            default: return .identifier(name)
            }
        case .punctuation(let p) where p == "[" || p == "@[" || p == "@{":
            let closer = p == "@{" ? "}" : "]"
            index += 1
            var elements: [Value] = []
            var pairs: [(Value, Value)] = []
            while index < tokens.count, tokens[index] != .punctuation(String(closer)) {
                if tokens[index] == .punctuation(",") {
                    index += 1
                    continue
                }
                if tokens[index] == .punctuation(":") {  // `[:]`
                    index += 1
                    continue
                }
                let start = index
                let key = value(tokens, &index)
                skipCast(tokens, &index)
                if index < tokens.count, tokens[index] == .punctuation(":") {
                    index += 1
                    let element = value(tokens, &index)
                    skipCast(tokens, &index)
                    pairs.append((key, element))
                } else {
                    elements.append(key)
                }
                if index == start { index += 1 }
            }
            index += 1
            return pairs.isEmpty ? .array(elements) : .dictionary(pairs)
        default:
            index += 1
            return .other
        }
    }

    /// Skips `as [String: Any]`, `as! T`, `as? T`.
    static func skipCast(_ tokens: [Token], _ index: inout Int) {
        guard index < tokens.count, tokens[index] == .identifier("as") else { return }
        index += 1
        if index < tokens.count, tokens[index] == .punctuation("!") || tokens[index] == .punctuation("?") { index += 1 }
        if index < tokens.count, tokens[index] == .punctuation("[") {
            var depth = 0
            repeat {
                if tokens[index] == .punctuation("[") { depth += 1 }
                if tokens[index] == .punctuation("]") { depth -= 1 }
                index += 1
            } while depth > 0 && index < tokens.count
        } else if index < tokens.count {
            index += 1
        }
    }

    /// The value after `key:` wherever `key` (an identifier or a string) first appears.
    static func value(after key: String, in tokens: [Token]) -> Value? {
        for index in tokens.indices.dropLast() {
            let matches: Bool
            switch tokens[index] {
            case .identifier(let name): matches = name == key || name == "k" + key
            case .string(let text): matches = text == key
            default: matches = false
            }
            if matches, tokens[index + 1] == .punctuation(":") {
                var position = index + 2
                return value(tokens, &position)
            }
        }
        return nil
    }

    /// Every `.add(…)` call: its string arguments (pattern first, then pins).
    static func addCalls(in tokens: [Token]) -> [[String]] {
        var calls: [[String]] = []
        var index = 0
        while index + 2 < tokens.count {
            if tokens[index] == .punctuation("."), tokens[index + 1] == .identifier("add"), tokens[index + 2] == .punctuation("(") {
                var depth = 0
                var strings: [String] = []
                var position = index + 2
                repeat {
                    switch tokens[position] {
                    case .punctuation("("): depth += 1
                    case .punctuation(")"): depth -= 1
                    case .string(let text): strings.append(text)
                    default: break
                    }
                    position += 1
                } while depth > 0 && position < tokens.count
                calls.append(strings)
                index = position
            } else {
                index += 1
            }
        }
        return calls
    }
}

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
        case .identifier(var name):
            index += 1
            // A qualified name (`Secrets.primary`) is one value.
            while index + 1 < tokens.count, tokens[index] == .punctuation("."), case .identifier(let part) = tokens[index + 1] {
                name += "." + part
                index += 2
            }
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

    /// One argument of a call: a string (a literal, a constant of the file, or a concatenation of
    /// them), or the source text of an expression this scanner cannot evaluate.
    enum Argument: Equatable {
        case string(String)
        case unresolved(String)

        /// The argument as it could be written, for messages.
        var sourceText: String {
            switch self {
            case .string(let text): "\"\(text)\""
            case .unresolved(let text): text
            }
        }
    }

    /// One `.add(…)` call.
    struct AddCall {
        var arguments: [Argument]
        /// True when the call continues a `CertificatePinner.Builder()` chain.
        var inPinnerChain: Bool
    }

    /// Every `.add(…)` call with its arguments (pattern first, then pins), in source order.
    static func addCalls(in tokens: [Token]) -> [AddCall] {
        var chained = Set<Int>()
        for index in tokens.indices where tokens[index] == .identifier("CertificatePinner") {
            guard tokens.count > index + 5, tokens[index + 1] == .punctuation("."), tokens[index + 2] == .identifier("Builder"),
                tokens[index + 3] == .punctuation("("), tokens[index + 4] == .punctuation(")")
            else { continue }
            var position = index + 5
            while position + 2 < tokens.count, tokens[position] == .punctuation("."), tokens[position + 1] == .identifier("add"),
                tokens[position + 2] == .punctuation("(")
            {
                chained.insert(position)
                position = closingParenthesis(tokens, from: position + 2) + 1
            }
        }
        var calls: [AddCall] = []
        var index = 0
        while index + 2 < tokens.count {
            guard tokens[index] == .punctuation("."), tokens[index + 1] == .identifier("add"), tokens[index + 2] == .punctuation("(") else {
                index += 1
                continue
            }
            let close = closingParenthesis(tokens, from: index + 2)
            calls.append(AddCall(arguments: arguments(Array(tokens[(index + 3)..<min(close, tokens.count)])), inPinnerChain: chained.contains(index)))
            index = close + 1
        }
        return calls
    }

    /// The index of the `)` that closes the `(` at `open` (or the end).
    private static func closingParenthesis(_ tokens: [Token], from open: Int) -> Int {
        var depth = 0
        var position = open
        while position < tokens.count {
            if tokens[position] == .punctuation("(") { depth += 1 }
            if tokens[position] == .punctuation(")") {
                depth -= 1
                if depth == 0 { return position }
            }
            position += 1
        }
        return tokens.count
    }

    /// Splits the tokens between a call's parentheses at its top-level commas.
    private static func arguments(_ tokens: [Token]) -> [Argument] {
        var result: [Argument] = []
        var current: [Token] = []
        var depth = 0
        func flush() {
            guard !current.isEmpty else { return }
            if current.count == 1, case .string(let text) = current[0] {
                result.append(.string(text))
            } else {
                result.append(.unresolved(current.map(\.sourceText).joined()))
            }
            current = []
        }
        for token in tokens {
            switch token {
            case .punctuation("("), .punctuation("["), .punctuation("{"): depth += 1
            case .punctuation(")"), .punctuation("]"), .punctuation("}"): depth -= 1
            case .punctuation(",") where depth == 0:
                flush()
                continue
            default: break
            }
            current.append(token)
        }
        flush()
        return result
    }

    /// String constants of the file, substituted where they are used: `static final String PIN =
    /// "sha256/…";` (Java), `const val PIN = "…"` and `val PIN: String = "…"` (Kotlin), `let pin =
    /// "…"` (Swift), `NSString *const kPin = @"…";` and `#define PIN @"…"` (Objective-C), referred to
    /// by name or qualified (`Pins.PRIMARY`); then `"a" + "b"` is joined, and Kotlin's `"$PIN"` and
    /// `"${PIN}"` are filled in. A name given two different values is left alone.
    static func substitutingConstants(_ tokens: [Token]) -> [Token] {
        var values: [String: String] = [:]
        var ambiguous = Set<String>()
        func record(_ name: String, _ value: String) {
            if let known = values[name], known != value { ambiguous.insert(name) }
            values[name] = value
        }
        func endsExpression(_ index: Int) -> Bool {
            guard index < tokens.count else { return true }
            switch tokens[index] {
            case .punctuation("+"), .punctuation("."), .punctuation("("), .punctuation("["), .punctuation("?"): return false
            default: return true
            }
        }
        for index in tokens.indices {
            guard case .identifier(let name) = tokens[index] else { continue }
            // #define NAME "…"
            if index > 0, tokens[index - 1] == .identifier("define"), index + 1 < tokens.count, case .string(let value) = tokens[index + 1], endsExpression(index + 2) {
                record(name, value)
                continue
            }
            // NAME = "…" or NAME: Type = "…"
            var position = index + 1
            if position < tokens.count, tokens[position] == .punctuation(":") {
                position += 1
                guard position < tokens.count, case .identifier = tokens[position] else { continue }
                position += 1
                if position < tokens.count, tokens[position] == .punctuation("?") { position += 1 }
            }
            guard position + 1 < tokens.count, tokens[position] == .punctuation("="), tokens[position + 1] != .punctuation("="),
                case .string(let value) = tokens[position + 1], endsExpression(position + 2)
            else { continue }
            record(name, value)
        }
        for name in ambiguous { values.removeValue(forKey: name) }
        // Kotlin templates: `${NAME}`, `${Pins.NAME}` and `$NAME`; others stay as written.
        func template(_ text: String) -> String {
            guard text.contains("$") else { return text }
            let scalars = Array(text.unicodeScalars)
            var out = String.UnicodeScalarView()
            var i = 0
            func isNameScalar(_ c: Unicode.Scalar) -> Bool { ScalarClass.isAlphanumeric(c) || c == "_" }
            while i < scalars.count {
                if scalars[i] == "$", i + 1 < scalars.count, scalars[i + 1] == "{", let close = scalars[(i + 2)...].firstIndex(of: "}") {
                    let inner = String(String.UnicodeScalarView(scalars[(i + 2)..<close]))
                    let last = inner.split(separator: ".").last.map(String.init) ?? inner
                    if inner.unicodeScalars.allSatisfy({ isNameScalar($0) || $0 == "." }), let value = values[last] {
                        out.append(contentsOf: value.unicodeScalars)
                        i = close + 1
                        continue
                    }
                } else if scalars[i] == "$", i + 1 < scalars.count, ScalarClass.isLetter(scalars[i + 1]) || scalars[i + 1] == "_" {
                    var end = i + 1
                    while end < scalars.count, isNameScalar(scalars[end]) { end += 1 }
                    if let value = values[String(String.UnicodeScalarView(scalars[(i + 1)..<end]))] {
                        out.append(contentsOf: value.unicodeScalars)
                        i = end
                        continue
                    }
                }
                out.append(scalars[i])
                i += 1
            }
            return String(out)
        }
        var out: [Token] = []
        for (index, token) in tokens.enumerated() {
            switch token {
            case .identifier(let name) where values[name] != nil:
                func at(_ offset: Int) -> Token? { index + offset < tokens.count ? tokens[index + offset] : nil }
                // Not its own declaration (`NAME =`, `NAME: Type =`, `NAME: Type? =`) nor a call.
                var isIdentifier2 = false
                if case .identifier = at(2) { isIdentifier2 = true }
                let declared =
                    at(1) == .punctuation("=") || (at(1) == .punctuation(":") && isIdentifier2 && (at(3) == .punctuation("=") || at(3) == .punctuation("?")))
                if declared || at(1) == .punctuation("(") {
                    out.append(token)
                    continue
                }
                // A qualified name (`Pins.PRIMARY`, `BuildConfig.PIN`): the qualifier goes.
                while out.count >= 2, out[out.count - 1] == .punctuation("."), case .identifier = out[out.count - 2] { out.removeLast(2) }
                out.append(.string(values[name]!))
            case .string(let text):
                out.append(.string(template(text)))
            default:
                out.append(token)
            }
            // "a" + "b" → "ab"
            if out.count >= 3, case .string(let right) = out[out.count - 1], out[out.count - 2] == .punctuation("+"), case .string(let left) = out[out.count - 3] {
                out.removeLast(3)
                out.append(.string(left + right))
            }
        }
        return out
    }
}

extension CodeLiteralScanner.Token {
    /// The token as it could be written, for messages.
    var sourceText: String {
        switch self {
        case .string(let text): "\"\(text)\""
        case .identifier(let name): name
        case .punctuation(let p): p
        }
    }
}

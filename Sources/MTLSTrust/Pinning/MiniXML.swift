#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Just enough XML to read an Android network security config back: elements, attributes, text,
/// comments, processing instructions, CDATA and the five predefined entities. Not a validating parser:
/// `xmllint` is the judge of well-formedness in the tests.
struct MiniXMLElement: Sendable {
    var name: String
    var attributes: [String: String]
    var children: [MiniXMLElement]
    var text: String

    /// Every descendant (depth first) named `name`.
    func descendants(named name: String) -> [MiniXMLElement] {
        children.flatMap { ($0.name == name ? [$0] : []) + $0.descendants(named: name) }
    }

    /// Direct children named `name`.
    func children(named name: String) -> [MiniXMLElement] { children.filter { $0.name == name } }
}

enum MiniXML {
    struct ParseError: Error {
        var message: String
    }

    /// Parses a document and returns its root element.
    static func parse(_ text: String) throws(ParseError) -> MiniXMLElement {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        var stack: [MiniXMLElement] = [MiniXMLElement(name: "#document", attributes: [:], children: [], text: "")]

        func startsWith(_ prefix: String) -> Bool {
            let p = Array(prefix.unicodeScalars)
            guard index + p.count <= scalars.count else { return false }
            for k in 0..<p.count where scalars[index + k] != p[k] { return false }
            return true
        }
        func skip(past terminator: String) throws(ParseError) {
            while index < scalars.count {
                if startsWith(terminator) {
                    index += terminator.unicodeScalars.count
                    return
                }
                index += 1
            }
            throw ParseError(message: "unterminated markup (missing '\(terminator)')")
        }
        func isNameScalar(_ s: Unicode.Scalar) -> Bool {
            ScalarClass.isAlphanumeric(s) || s == "-" || s == "_" || s == ":" || s == "."
        }
        func readName() -> String {
            var name = ""
            while index < scalars.count, isNameScalar(scalars[index]) {
                name.unicodeScalars.append(scalars[index])
                index += 1
            }
            return name
        }
        func skipSpace() {
            while index < scalars.count, ScalarClass.isWhitespaceOrNewline(scalars[index]) { index += 1 }
        }

        while index < scalars.count {
            if startsWith("<!--") {
                try skip(past: "-->")
            } else if startsWith("<?") {
                try skip(past: "?>")
            } else if startsWith("<![CDATA[") {
                index += 9
                let start = index
                try skip(past: "]]>")
                var text = ""
                text.unicodeScalars.append(contentsOf: scalars[start..<(index - 3)])
                stack[stack.count - 1].text += text
            } else if startsWith("<!") {
                try skip(past: ">")
            } else if startsWith("</") {
                index += 2
                let name = readName()
                skipSpace()
                guard index < scalars.count, scalars[index] == ">" else { throw ParseError(message: "malformed end tag </\(name)") }
                index += 1
                guard stack.count > 1, stack[stack.count - 1].name == name else {
                    throw ParseError(message: "end tag </\(name)> does not close <\(stack.last?.name ?? "")>")
                }
                let element = stack.removeLast()
                stack[stack.count - 1].children.append(element)
            } else if scalars[index] == "<" {
                index += 1
                let name = readName()
                guard !name.isEmpty else { throw ParseError(message: "a '<' that starts no element") }
                var attributes: [String: String] = [:]
                var selfClosing = false
                while true {
                    skipSpace()
                    guard index < scalars.count else { throw ParseError(message: "unterminated start tag <\(name)") }
                    if scalars[index] == ">" {
                        index += 1
                        break
                    }
                    if startsWith("/>") {
                        index += 2
                        selfClosing = true
                        break
                    }
                    let attribute = readName()
                    guard !attribute.isEmpty else { throw ParseError(message: "malformed attribute in <\(name)") }
                    skipSpace()
                    guard index < scalars.count, scalars[index] == "=" else { throw ParseError(message: "attribute \(attribute) of <\(name)> has no value") }
                    index += 1
                    skipSpace()
                    guard index < scalars.count, scalars[index] == "\"" || scalars[index] == "'" else {
                        throw ParseError(message: "attribute \(attribute) of <\(name)> is not quoted")
                    }
                    let quote = scalars[index]
                    index += 1
                    var value = ""
                    while index < scalars.count, scalars[index] != quote {
                        value.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                    guard index < scalars.count else { throw ParseError(message: "unterminated attribute \(attribute)") }
                    index += 1
                    attributes[attribute] = decodeEntities(value)
                }
                let element = MiniXMLElement(name: name, attributes: attributes, children: [], text: "")
                if selfClosing {
                    stack[stack.count - 1].children.append(element)
                } else {
                    stack.append(element)
                }
            } else {
                var text = ""
                while index < scalars.count, scalars[index] != "<" {
                    text.unicodeScalars.append(scalars[index])
                    index += 1
                }
                stack[stack.count - 1].text += decodeEntities(text)
            }
        }
        guard stack.count == 1 else { throw ParseError(message: "<\(stack.last?.name ?? "")> is never closed") }
        guard let root = stack[0].children.first else { throw ParseError(message: "no root element") }
        return root
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        return text.replacingAll("&lt;", with: "<").replacingAll("&gt;", with: ">")
            .replacingAll("&quot;", with: "\"").replacingAll("&apos;", with: "'")
            .replacingAll("&amp;", with: "&")
    }
}

import MTLSTrust

/// Rewrites the character references of an HTML document so that libxml2's HTML parser reads
/// them as a browser does.
///
/// libxml2 knows the 253 names of HTML 4 and its own reading of numbers: `&NotNestedGreaterGreater;`,
/// `&AMP;` or a legacy `&Aacute` at the end of a value stay as written, and `&#128;` is U+0080
/// instead of €; 2,073 of html5lib's 4,617 reference cases came out of a form value differently.
/// Each reference is written here as the numeric references of the characters
/// ``HTMLCharacterReferences`` decodes it to, and each `&` that starts no reference as `&amp;`,
/// where the HTML Standard's tokenizer reads references: in text, in RCDATA (`title`, `textarea`)
/// and in attribute values (with the attribute rule for legacy names). In RCDATA a `<` is written
/// `&lt;` too: libxml2 would read `<b>` in a `textarea` as an element, a browser as text. Comments,
/// doctypes, end tags and raw-text elements (`script`, `style` …) are copied as they are.
///
/// What libxml2 cannot hold stays lost: a reference to a C0 control other than white space, or to
/// U+FFFE or U+FFFF, is not an XML character, and libxml2 drops it from the value.
enum HTMLReferenceRewriter {
    static func rewrite(_ html: String) -> String {
        guard html.utf8.contains(0x26) else { return html }
        var reader = Reader(Array(html.unicodeScalars))
        reader.run()
        return String(reader.output)
    }

    private struct Reader {
        let scalars: [Unicode.Scalar]
        var position = 0
        var output = String.UnicodeScalarView()

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
            output.reserveCapacity(scalars.count + scalars.count / 8)
        }

        static let rawText: Set<String> = ["script", "style", "xmp", "iframe", "noembed", "noframes", "plaintext"]
        static let rcdata: Set<String> = ["title", "textarea"]

        mutating func run() {
            while position < scalars.count {
                let scalar = scalars[position]
                if scalar == "&" {
                    reference(limit: scalars.count, inAttribute: false)
                } else if scalar == "<" {
                    markup()
                } else {
                    output.append(scalar)
                    position += 1
                }
            }
        }

        func starts(with text: String, at index: Int, ignoringCase: Bool = false) -> Bool {
            var at = index
            for wanted in text.unicodeScalars {
                guard at < scalars.count else { return false }
                let actual = scalars[at]
                let folded = ignoringCase && ("A"..."Z").contains(actual) ? Unicode.Scalar(actual.value + 0x20)! : actual
                guard folded == wanted else { return false }
                at += 1
            }
            return true
        }

        /// Copies up to (and including) `terminator`, or to the end.
        mutating func copy(through terminator: String, ignoringCase: Bool = false) {
            while position < scalars.count && !starts(with: terminator, at: position, ignoringCase: ignoringCase) {
                output.append(scalars[position])
                position += 1
            }
            let end = min(scalars.count, position + terminator.unicodeScalars.count)
            output.append(contentsOf: scalars[position..<end])
            position = end
        }

        /// At an `&` of text that reads references up to `limit`: the reference as numeric ones,
        /// or `&amp;` when it starts none.
        mutating func reference(limit: Int, inAttribute: Bool) {
            if let (decoded, end) = HTMLCharacterReferences.reference(in: scalars, at: position, limit: limit, inAttribute: inAttribute) {
                for scalar in decoded { output.append(contentsOf: "&#x\(String(scalar.value, radix: 16, uppercase: true));".unicodeScalars) }
                position = end
            } else {
                output.append(contentsOf: "&amp;".unicodeScalars)
                position += 1
            }
        }

        /// Copies `scalars[position..<end]`, rewriting its references, and with `escapingMarkup`
        /// writing `<` as `&lt;` (RCDATA, where libxml2 would otherwise read tags).
        mutating func text(upTo end: Int, inAttribute: Bool, escapingMarkup: Bool = false) {
            while position < end {
                if scalars[position] == "&" {
                    reference(limit: end, inAttribute: inAttribute)
                } else if escapingMarkup && scalars[position] == "<" {
                    output.append(contentsOf: "&lt;".unicodeScalars)
                    position += 1
                } else {
                    output.append(scalars[position])
                    position += 1
                }
            }
        }

        /// At `<`: a comment, a doctype or processing instruction, an end tag, a start tag, or text.
        mutating func markup() {
            let next = position + 1 < scalars.count ? scalars[position + 1] : " "
            if starts(with: "<!--", at: position) {
                copy(through: "-->")
            } else if next == "!" || next == "?" {
                copy(through: ">")
            } else if next == "/" {
                copy(through: ">")
            } else if ("a"..."z").contains(next) || ("A"..."Z").contains(next) {
                startTag()
            } else {
                output.append("<")
                position += 1
            }
        }

        mutating func startTag() {
            output.append("<")
            position += 1
            var name = String.UnicodeScalarView()
            while position < scalars.count, !isSpace(scalars[position]), scalars[position] != "/", scalars[position] != ">" {
                let scalar = scalars[position]
                name.append(("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 0x20)! : scalar)
                output.append(scalar)
                position += 1
            }
            // Attributes: names copied, values rewritten.
            while position < scalars.count && scalars[position] != ">" {
                let scalar = scalars[position]
                output.append(scalar)
                position += 1
                guard scalar == "=" else { continue }
                while position < scalars.count && isSpace(scalars[position]) {
                    output.append(scalars[position])
                    position += 1
                }
                guard position < scalars.count else { break }
                let quote = scalars[position]
                if quote == "\"" || quote == "'" {
                    output.append(quote)
                    position += 1
                    text(upTo: scalars[position...].firstIndex(of: quote) ?? scalars.count, inAttribute: true)
                    if position < scalars.count {
                        output.append(quote)
                        position += 1
                    }
                } else {
                    text(upTo: scalars[position...].firstIndex { isSpace($0) || $0 == ">" } ?? scalars.count, inAttribute: true)
                }
            }
            if position < scalars.count {
                output.append(">")
                position += 1
            }
            let element = String(name)
            if Reader.rawText.contains(element) {
                copy(until: "</" + element)
            } else if Reader.rcdata.contains(element) {
                text(upTo: endTag(element), inAttribute: false, escapingMarkup: true)
            }
        }

        /// Where `</name` next starts (in any case), or the end.
        func endTag(_ name: String) -> Int {
            var index = position
            while index < scalars.count && !starts(with: "</" + name, at: index, ignoringCase: true) { index += 1 }
            return index
        }

        /// Copies up to the end tag `</name` (not included).
        mutating func copy(until endTagStart: String) {
            let end = endTag(String(endTagStart.dropFirst(2)))
            output.append(contentsOf: scalars[position..<end])
            position = end
        }

        func isSpace(_ scalar: Unicode.Scalar) -> Bool { ScalarClass.isASCIIWhitespace(scalar) }
    }
}

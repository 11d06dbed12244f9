internal import CLibXML2
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A parsed HTML document: libxml2's HTML parser (`htmlReadMemory`, error-recovering, no network)
/// builds the tree, which is copied into Swift values and freed at once, so no C pointer outlives
/// the initializer. Character references in text and attributes (`action="https&#x3a;&#x2f;&#x2f;…"`)
/// arrive decoded, as a browser decodes them when the document is given as text. libxml2 is loaded on first use (`CLibXML2`); without it every document is empty and
/// ``parserFailure`` says why.
struct HTMLDocument: Sendable {
    /// An element or a run of text.
    indirect enum Node: Sendable {
        case element(Element)
        case text(String)
    }

    /// An element with its attributes (names lower-cased) and children.
    struct Element: Sendable {
        var name: String
        var attributes: [(name: String, value: String)]
        var children: [Node]

        func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
        func has(_ name: String) -> Bool { attributes.contains { $0.name == name } }

        /// The concatenated text of every descendant.
        var text: String {
            children.map { node -> String in
                switch node {
                case .text(let text): text
                case .element(let element): element.text
                }
            }.joined()
        }

        /// Every descendant element, in document order.
        func descendants(named name: String? = nil) -> [Element] {
            var found: [Element] = []
            for case .element(let child) in children {
                if name == nil || child.name == name { found.append(child) }
                found += child.descendants(named: name)
            }
            return found
        }
    }

    /// The root (`html`, or a synthetic root holding top-level nodes).
    let root: Element

    /// Why HTML cannot be parsed (libxml2 could not be loaded), or nil when it can.
    static var parserFailure: String? { mtls_xml_load().map { String(cString: $0) } }

    /// Parses HTML bytes.
    ///
    /// - Parameters:
    ///   - bytes: The document.
    ///   - encoding: The libxml2 encoding name to read the bytes as; the document's own
    ///     `<meta charset>` is then ignored. Nil lets libxml2 decide (UTF-8 by default).
    ///   - url: The document's URL, for libxml2's diagnostics only.
    init(bytes: [UInt8], encoding: String? = "UTF-8", url: String? = nil) {
        var options = Int32(MTLS_HTML_PARSE_RECOVER | MTLS_HTML_PARSE_NOERROR | MTLS_HTML_PARSE_NOWARNING | MTLS_HTML_PARSE_NONET | MTLS_HTML_PARSE_NOBLANKS)
        if encoding != nil { options |= Int32(MTLS_HTML_PARSE_IGNORE_ENC) }
        let input = bytes.isEmpty ? Array("<html></html>".utf8) : bytes
        let document: UnsafeMutablePointer<mtls_xmlDoc>? = input.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
                mtls_htmlReadMemory(pointer, Int32(clamping: buffer.count), url, encoding, options)
            }
        }
        guard let document else {
            root = Element(name: "#document", attributes: [], children: [])
            return
        }
        defer { mtls_xmlFreeDoc(document) }
        var top: [Node] = []
        var child = document.pointee.children
        while let node = child {
            if let converted = HTMLDocument.convert(node, depth: 0) { top.append(converted) }
            child = node.pointee.next
        }
        root = Element(name: "#document", attributes: [], children: top)
    }

    /// Parses text (always as UTF-8, whatever its `<meta charset>` says).
    /// Parses HTML text, its character references first rewritten so that libxml2 reads them as
    /// the HTML Standard does (``HTMLReferenceRewriter``).
    init(text: String, url: String? = nil) {
        self.init(bytes: Array(HTMLReferenceRewriter.rewrite(text).utf8), encoding: "UTF-8", url: url)
    }

    private static func string(_ pointer: UnsafePointer<mtls_xmlChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    private static func convert(_ node: UnsafeMutablePointer<mtls_xmlNode>, depth: Int) -> Node? {
        guard depth < 512 else { return nil }  // pathological nesting: stop copying
        switch node.pointee.type {
        case Int32(MTLS_XML_ELEMENT_NODE):
            var attributes: [(name: String, value: String)] = []
            var attribute = node.pointee.properties
            while let current = attribute {
                var value = ""
                var text = current.pointee.children
                while let piece = text {
                    value += string(piece.pointee.content)
                    text = piece.pointee.next
                }
                attributes.append((string(current.pointee.name).lowercased(), value))
                attribute = current.pointee.next
            }
            var children: [Node] = []
            var child = node.pointee.children
            while let current = child {
                if let converted = convert(current, depth: depth + 1) { children.append(converted) }
                child = current.pointee.next
            }
            return .element(Element(name: string(node.pointee.name).lowercased(), attributes: attributes, children: children))
        case Int32(MTLS_XML_TEXT_NODE), Int32(MTLS_XML_CDATA_SECTION_NODE):
            return .text(string(node.pointee.content))
        default:
            return nil
        }
    }

    /// Every element named `name`, in document order.
    func elements(named name: String) -> [Element] { root.descendants(named: name) }
}

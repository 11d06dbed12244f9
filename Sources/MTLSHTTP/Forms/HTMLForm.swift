#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A form found in an HTML page, with the entries a browser would submit (hidden and text inputs,
/// checked boxes, selected options, textareas; never disabled controls or buttons).
public struct HTMLForm: Sendable {
    /// The SAML or WS-Federation HTTP-POST binding a form carries.
    public enum PostBinding: String, Sendable {
        /// A SAML response from an IdP to an SP (`SAMLResponse`).
        case samlResponse = "SAMLResponse"
        /// A SAML request from an SP to an IdP (`SAMLRequest`).
        case samlRequest = "SAMLRequest"
        /// A WS-Federation sign-in response (`wresult`, with `wa` and `wctx`).
        case wsFederation = "wresult"
    }

    /// The `action`, resolved against the page URL (the page itself when absent).
    public var action: HTTPSURL
    /// `GET` or `POST`.
    public var method: String
    /// `application/x-www-form-urlencoded`, `multipart/form-data` or `text/plain`.
    public var enctype: String
    /// The form's `id` or `name`.
    public var identifier: String?
    /// The entries in document order.
    public var fields: [(name: String, value: String)]
    /// The charset to encode the submission in (`accept-charset`, else the page's).
    public var charset: TextCharset

    /// The value of the first field named `name`.
    public subscript(name: String) -> String? { fields.first { $0.name == name }?.value }

    /// The POST binding this form carries, when it is a SAML or WS-Federation auto-submit form:
    /// method POST and a `SAMLResponse`, `SAMLRequest` or `wresult` field.
    public var postBinding: PostBinding? {
        guard method == "POST" else { return nil }
        let names = Set(fields.map(\.name))
        if names.contains("SAMLResponse") { return .samlResponse }
        if names.contains("SAMLRequest") { return .samlRequest }
        if names.contains("wresult") { return .wsFederation }
        return nil
    }

    /// The request a browser would send to submit this form.
    ///
    /// - Parameter origin: The page's origin, sent as `Origin` for POST (as browsers do).
    /// - Throws: ``HTTPSError`` (`.request`) when the encoded query makes an invalid URL.
    public func submission(origin: String? = nil) throws(HTTPSError) -> HTTPRequest {
        let encoded = fields.map { (name: charset.encode($0.name), value: charset.encode($0.value)) }
        if method == "GET" {
            var url = action
            let query = FormURLEncoding.encode(bytes: encoded)
            url.target = url.path + (query.isEmpty ? "" : "?" + query)
            return HTTPRequest(method: "GET", url: url)
        }
        var headers = HTTPHeaders()
        let body: [UInt8]
        switch enctype {
        case "multipart/form-data":
            var multipart = MultipartFormData()
            for (name, value) in encoded { multipart.parts.append(.init(name: String(decoding: name, as: UTF8.self), data: value)) }
            body = multipart.encode()
            headers.add("Content-Type", multipart.contentType)
        case "text/plain":
            body = encoded.flatMap { $0.name + Array("=".utf8) + $0.value + Array("\r\n".utf8) }
            headers.add("Content-Type", "text/plain" + (charset == .utf8 ? "" : "; charset=\(charset.name)"))
        default:
            body = Array(FormURLEncoding.encode(bytes: encoded).utf8)
            headers.add("Content-Type", FormURLEncoding.contentType)
        }
        if let origin { headers.add("Origin", origin) }
        return HTTPRequest(method: "POST", url: action, headers: headers, body: body)
    }

    /// Finds every form in a page.
    ///
    /// - Parameters:
    ///   - html: The page, decoded to text.
    ///   - baseURL: The page's URL (a `<base href>` in the page overrides it).
    ///   - charset: The page's charset, used for submissions without `accept-charset`.
    public static func forms(in html: String, baseURL: HTTPSURL, charset: TextCharset = .utf8) -> [HTMLForm] {
        forms(in: HTMLDocument(text: html), baseURL: baseURL, charset: charset)
    }

    /// Finds every form in a response body, decoding it by its declared charset first.
    public static func forms(in response: HTTPResponse) -> [HTMLForm] {
        let decoded = response.decodedText
        return forms(in: decoded.text, baseURL: response.url, charset: decoded.charset)
    }

    static func forms(in document: HTMLDocument, baseURL: HTTPSURL, charset: TextCharset) -> [HTMLForm] {
        var base = baseURL
        if let href = document.elements(named: "base").first?.attribute("href"), let resolved = try? baseURL.resolving(href.trimmingWhitespaceAndNewlines()) {
            base = resolved
        }
        return document.elements(named: "form").compactMap { element in
            let actionText = element.attribute("action")?.trimmingWhitespaceAndNewlines() ?? ""
            let action: HTTPSURL
            if actionText.isEmpty {
                action = baseURL
            } else if let colon = actionText.firstIndex(of: ":"), !actionText[..<colon].contains("/"),
                !["http", "https"].contains(actionText[..<colon].lowercased())
            {
                return nil  // javascript:, data:, mailto: … are never submitted
            } else if let resolved = try? base.resolving(actionText) {
                action = resolved
            } else {
                return nil  // an action that is not an http(s) URL (javascript:, data:) is never submitted
            }
            let method = element.attribute("method")?.trimmingWhitespace().uppercased() == "POST" ? "POST" : "GET"
            let enctypeValue = element.attribute("enctype")?.trimmingWhitespace().lowercased() ?? ""
            let enctype = ["multipart/form-data", "text/plain"].contains(enctypeValue) ? enctypeValue : FormURLEncoding.contentType
            let acceptCharset = element.attribute("accept-charset")?
                .split(whereSeparator: { $0 == " " || $0 == "," })
                .lazy.compactMap { TextCharset(label: String($0)) }.first
            return HTMLForm(
                action: action, method: method, enctype: enctype, identifier: element.attribute("id") ?? element.attribute("name"), fields: entries(of: element),
                charset: acceptCharset ?? charset)
        }
    }

    /// The HTML standard's "constructing the entry list", without a submitter.
    static func entries(of form: HTMLDocument.Element) -> [(name: String, value: String)] {
        var entries: [(name: String, value: String)] = []
        for element in form.descendants() {
            guard ["input", "select", "textarea"].contains(element.name), !element.has("disabled") else { continue }
            guard let name = element.attribute("name"), !name.isEmpty else { continue }
            switch element.name {
            case "input":
                let type = element.attribute("type")?.trimmingWhitespace().lowercased() ?? "text"
                switch type {
                case "submit", "button", "reset", "image", "file":
                    continue
                case "checkbox", "radio":
                    guard element.has("checked") else { continue }
                    entries.append((name, element.attribute("value") ?? "on"))
                default:
                    var value = element.attribute("value") ?? ""
                    if type != "hidden" && type != "password" { value = value.replacingAll("\r", with: "").replacingAll("\n", with: "") }
                    entries.append((name, value))
                }
            case "select":
                let options = element.descendants(named: "option").filter { !$0.has("disabled") }
                var selected = options.filter { $0.has("selected") }
                if selected.isEmpty && !element.has("multiple"), let first = options.first { selected = [first] }
                if !element.has("multiple") { selected = Array(selected.prefix(1)) }
                for option in selected {
                    let value = option.attribute("value") ?? option.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                    entries.append((name, value))
                }
            case "textarea":
                var text = element.text
                if text.hasPrefix("\n") { text.removeFirst() }
                text = text.replacingAll("\r\n", with: "\n").replacingAll("\r", with: "\n").replacingAll("\n", with: "\r\n")
                entries.append((name, text))
            default:
                continue
            }
        }
        return entries
    }
}

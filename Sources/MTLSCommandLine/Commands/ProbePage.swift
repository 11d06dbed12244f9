#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// What a person needs of the final page: its title and first line of text, decoded from the
/// charset the response declares (Content-Type, BOM, <meta>) or, failing that, a guess.
struct ProbePage {
    var title: String?
    var firstLine: String?
    var charset: String
    var charsetSource: String
    /// The whole body as UTF-8 (for --output-text).
    var text: String

    init(body: [UInt8], mediaType: MediaType?) {
        let decoded = DecodedText(body: body, mediaType: mediaType)
        text = decoded.text
        charset = decoded.charset.name
        charsetSource = decoded.source.rawValue
        let isHTML = mediaType.map(\.isHTML) ?? text.lowercased().contains("<html")
        var visible = text
        if isHTML {
            // Scalar by scalar, as the ICU expressions these were written for match.
            if let match = text.firstMatch(of: #/<title[^>]*>([^<]*)</title/#.ignoresCase().matchingSemantics(.unicodeScalar)) {
                title = ProbePage.clean(ProbePage.unescape(String(match.1)))
            }
            // The visible text: without head, scripts, styles and tags.
            for element in ProbePage.hiddenElements { visible = visible.replacing(element, with: "\n") }
            visible = visible.replacing(#/<(br|p|div|h[1-6]|li|tr|title)[^>]*>/#.ignoresCase().matchingSemantics(.unicodeScalar), with: "\n")
            visible = ProbePage.unescape(visible.replacing(#/<[^>]*>/#.matchingSemantics(.unicodeScalar), with: ""))
        }
        firstLine = visible.split(whereSeparator: \.isNewline).map { ProbePage.clean(String($0)) }.first { !$0.isEmpty }
        if title?.isEmpty == true { title = nil }
    }

    /// `<head>`, `<title>`, `<script>` and `<style>` with their content, removed in that order.
    private static var hiddenElements: [Regex<AnyRegexOutput>] {
        ["head", "title", "script", "style"].map { element in
            // The patterns are constant and valid: `try!` cannot fail.
            try! Regex("<\(element)[^>]*>[\\s\\S]*?</\(element)>").ignoresCase().matchingSemantics(.unicodeScalar)
        }
    }

    /// Collapsed whitespace, at most 160 characters.
    static func clean(_ text: String) -> String {
        let collapsed = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return collapsed.count > 160 ? String(collapsed.prefix(159)) + "…" : collapsed
    }

    /// Character references as a browser decodes them; a no-break space shown as a space.
    static func unescape(_ text: String) -> String {
        HTMLCharacterReferences.decode(text).replacingAll("\u{00A0}", with: " ")
    }
}

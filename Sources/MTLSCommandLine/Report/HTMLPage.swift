#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import COpenSSL

/// A self-contained HTML page: inline CSS and script only, locked down by a Content-Security-Policy
/// that allows exactly those two blocks (by their SHA-256) and nothing else — no fetch, image, font,
/// frame or form target — so a page opened from a mail attachment or a CI artefact cannot reach the
/// network, and markup that slipped past escaping still could not run.
enum HTMLPage {
    /// Text or an attribute value from anywhere (a server, a certificate, a file): the one escaper
    /// of the project, shared with the XML property lists.
    static func text(_ value: String) -> String { XMLText.escape(value) }

    /// The whole document.
    static func document(title: String, style: String, script: String, body: String) -> String {
        let policy =
            "default-src 'none'; style-src '\(hash(style))'; script-src '\(hash(script))'; img-src data:; base-uri 'none'; form-action 'none'"
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="\(policy)">
            <meta name="referrer" content="no-referrer">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(text(title))</title>
            <style>\(style)</style>
            </head>
            <body>
            \(body)
            <script>\(script)</script>
            </body>
            </html>

            """
    }

    /// `sha256-BASE64` of a block's exact text, as a CSP source expression names it.
    static func hash(_ block: String) -> String {
        let bytes = Array(block.utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { raw in digest.withUnsafeMutableBufferPointer { EVP_Digest(raw.baseAddress, raw.count, $0.baseAddress, &length, EVP_sha256(), nil) } }
        return "sha256-" + Data(digest).base64EncodedString()
    }

    /// The style every report shares.
    static let baseStyle = """
        :root{--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa;--accent:#0969da}
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#1f2328}
        h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
        code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
        table{border-collapse:collapse;width:100%;margin:6px 0}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
        th{background:var(--bg);font-weight:600;position:sticky;top:0;white-space:nowrap}
        .ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}.muted{color:var(--muted)}
        .banner{padding:10px 14px;border-radius:6px;margin:12px 0;font-weight:600}
        .banner.ok{background:#dafbe1}.banner.bad{background:#ffebe9}
        .facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}.facts dt{color:var(--muted)}.facts dd{margin:0}
        ol.causes li{margin-bottom:8px}.fix{color:var(--muted)}
        svg text{font-family:system-ui,sans-serif}
        """
}

// HTML form extraction (libxml2's HTML parser) and form submission, from a page with a charset.
import Foundation
import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let contentTypes = [
            "text/html", "text/html; charset=utf-8", "text/html; charset=shift_jis", "text/html; charset=euc-jp", "text/html; charset=iso-8859-1",
            "application/xhtml+xml",
        ]
        let contentType = contentTypes[input.choice(contentTypes.count)]
        _ = MediaType(contentType).isHTML
        let decoded = DecodedText(body: input.rest(), contentType: contentType)
        let base = try! HTTPSURL("https://sp.example.com/login/start?x=1")
        for form in HTMLForm.forms(in: decoded.text, baseURL: base, charset: decoded.charset).prefix(8) {
            _ = form.postBinding
            _ = form.fields.count
            if let request = try? form.submission(origin: base.origin) {
                _ = request.body?.count
                _ = request.url.description
            }
        }
    }
}

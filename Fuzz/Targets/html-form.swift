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
        // One choice in eight reads the Content-Type from the input: up to 64 bytes as ISO 8859-1,
        // as a field value reaches the parser.
        let choice = input.choice(contentTypes.count + 1)
        let contentType =
            choice < contentTypes.count
            ? contentTypes[choice] : String(String.UnicodeScalarView(input.take(input.choice(64)).map { Unicode.Scalar($0) }))
        // The MIME Sniffing Standard's serialization parses back to the same media type.
        if let type = MediaType(contentType) {
            precondition(MediaType(type.description) == type, "MediaType round trip: \(contentType.debugDescription) → \(type)")
        }
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

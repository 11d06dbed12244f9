internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust
import Synchronization
import Dispatch
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TestServer {
    // MARK: Digest

    func makeNonce() -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        _ = RAND_bytes(&bytes, Int32(bytes.count))
        let nonce = bytes.hex
        state.withLock { state in
            if state.nonces.count > 10000 { state.nonces.removeAll() }
            state.nonces.insert(nonce)
        }
        return nonce
    }

    enum DigestOutcome { case ok, stale, wrong }

    func verifyDigest(_ header: String, method: String) -> DigestOutcome {
        // Credentials have the grammar of a challenge (RFC 9110 §11.4): the client's parser reads them.
        guard let fields = AuthChallenge.parse(value: header).first, fields.normalizedScheme == "digest",
            let username = fields["username"], let nonce = fields["nonce"], let uri = fields["uri"], let response = fields["response"]
        else { return .wrong }
        let known = state.withLock { $0.nonces.contains(nonce) }
        guard known else { return .stale }
        let ha1 = md5Hex("\(username):\(configuration.realm):\(configuration.password)")
        let ha2 = md5Hex("\(method):\(uri)")
        let expected: String
        if let qop = fields["qop"], let nc = fields["nc"], let cnonce = fields["cnonce"] {
            expected = md5Hex("\(ha1):\(nonce):\(nc):\(cnonce):\(qop):\(ha2)")
        } else {
            expected = md5Hex("\(ha1):\(nonce):\(ha2)")
        }
        return username == configuration.username && expected == response.lowercased() ? .ok : .wrong
    }

    func md5Hex(_ text: String) -> String { AuthHash.md5(Array(text.utf8)).hex }

    // MARK: Pages

    static func escape(_ text: String) -> String {
        text.replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;").replacingAll(">", with: "&gt;").replacingAll("\"", with: "&quot;")
    }

    /// An error page in the manner of IIS's detailed errors ("HTTP Error 403.7 - Forbidden").
    static func errorPage(status: Int, substatus: Int?, title: String, text: String, code: String? = nil) -> String {
        let label = substatus.map { "\(status).\($0)" } ?? "\(status)"
        var page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>IIS-like Detailed Error - \(label) - \(title)</title></head><body>"
        page += "<h1>HTTP Error \(label) - \(title)</h1><p>\(escape(text))</p>"
        if let code { page += "<p>Error Code \(code)</p>" }
        page += "</body></html>\n"
        return page
    }
}

/// Shift_JIS encoding through iconv (CP932, as Windows servers send under that name).
enum ShiftJIS {
    static func encode(_ text: String) -> [UInt8] {
        guard let converter = iconv_open("CP932", "UTF-8"), converter != iconv_t(bitPattern: -1) else { return Array(text.utf8) }
        defer { iconv_close(converter) }
        var input = Array(text.utf8).map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: input.count * 2 + 16)
        var inLeft = input.count
        var outLeft = output.count
        let written: Int = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = inBuffer.baseAddress
                var outPointer: UnsafeMutablePointer<CChar>? = outBuffer.baseAddress
                _ = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                return outBuffer.count - outLeft
            }
        }
        return output.prefix(written).map { UInt8(bitPattern: $0) }
    }
}

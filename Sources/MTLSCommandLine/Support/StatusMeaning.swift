#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP

/// What an HTTP status means, with the IIS substatus codes people meet in client-certificate logins.
enum StatusMeaning {
    /// The IIS substatus of a response: from an `X-IIS-Substatus`-style header or the body of
    /// IIS's detailed error page, in any of its languages: the code stands between a space (or a
    /// tag) and " - " in the heading and the title ("HTTP Error 403.7 - Forbidden", "HTTP-Fehler
    /// 403.7 - Forbidden", "HTTP エラー 403.7 - Forbidden", "IIS 10.0 Detailed Error - 403.7 -
    /// Forbidden"). The page is read as bytes: its charset (Shift_JIS on Japanese servers) leaves
    /// ASCII digits alone.
    static func substatus(_ response: HTTPResponse) -> Int? {
        for name in ["X-IIS-Substatus", "X-Substatus", "X-MTLS-Substatus"] {
            if let value = response.headers[name], let number = Int(value.split(separator: ".").last ?? "") { return number }
        }
        return substatus(status: response.status, page: response.body.prefix(65536))
    }

    static func substatus(status: Int, page: some Collection<UInt8>) -> Int? {
        let bytes = Array(page)
        let code = Array("\(status).".utf8)
        guard bytes.count > code.count else { return nil }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var start = 0
        while start + code.count < bytes.count {
            defer { start += 1 }
            guard bytes[start] == code[0], bytes[start..<start + code.count].elementsEqual(code) else { continue }
            // Not the tail of a longer number or a version ("10.403.7"): a space, a no-break space or a tag before.
            if start > 0, ![0x20, 0x3E, 0xA0].contains(bytes[start - 1]) { continue }
            var end = start + code.count
            while end < bytes.count, end - (start + code.count) < 3, isDigit(bytes[end]) { end += 1 }
            let digits = bytes[(start + code.count)..<end]
            guard !digits.isEmpty, end < bytes.count, !isDigit(bytes[end]), bytes[end...].starts(with: Array(" - ".utf8)) else { continue }
            return Int(String(decoding: digits, as: UTF8.self))
        }
        return nil
    }

    /// True when the body carries http.sys's 0x80070032 (TLS 1.3 cannot renegotiate for a per-path certificate).
    static func isHTTPSysTLS13Renegotiation(_ response: HTTPResponse) -> Bool {
        response.status == 500 && String(decoding: response.body.prefix(65536), as: UTF8.self).lowercased().contains("0x80070032")
    }

    static func explain(status: Int, substatus: Int?, response: HTTPResponse?) -> String {
        if let response, isHTTPSysTLS13Renegotiation(response) {
            return "http.sys error 0x80070032 (ERROR_NOT_SUPPORTED): the path asks for a client certificate after the request, which TLS 1.3 cannot do on IIS"
        }
        switch (status, substatus) {
        case (403, 4?): return "IIS 403.4: SSL is required for this path (use https://)"
        case (403, 7?): return "IIS 403.7: a client certificate is required and none was presented"
        case (403, 13?): return "IIS 403.13: the client certificate has been revoked"
        case (403, 16?): return "IIS 403.16: the client certificate is untrusted or invalid (its CA is not trusted by the server, or the chain is incomplete)"
        case (403, 17?): return "IIS 403.17: the client certificate has expired or is not yet valid"
        case (401, 1?): return "IIS 401.1: logon failed (wrong user name or password)"
        case (401, 2?): return "IIS 401.2: logon failed because of the server's configuration (no authentication scheme we offered is allowed)"
        case (401, 3?): return "IIS 401.3: the file system ACL denies access to this user"
        case (403, let sub?): return "IIS 403.\(sub): access forbidden"
        default: break
        }
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 301: return "Moved Permanently (redirect)"
        case 302: return "Found (redirect)"
        case 303: return "See Other (redirect, as GET)"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect (same method)"
        case 308: return "Permanent Redirect (same method)"
        case 400:
            return "Bad Request"
                + (response.map {
                    String(decoding: $0.body.prefix(4096), as: UTF8.self).contains("SSL certificate") ? " (nginx: the required client certificate was not sent or is invalid)" : ""
                } ?? "")
        case 401: return "Unauthorized: the server wants credentials"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 413: return "Payload Too Large (servers that renegotiate for a client certificate refuse large bodies sent before it; send Expect: 100-continue)"
        case 421: return "Misdirected Request (SNI and Host do not match the server's configuration)"
        case 495: return "nginx 495: the client certificate could not be verified"
        case 496: return "nginx 496: a client certificate is required and none was sent"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        default: return HTTPStatusText.reason(status)
        }
    }
}

enum HTTPStatusText {
    static func reason(_ status: Int) -> String {
        switch status / 100 {
        case 1: "informational"
        case 2: "success"
        case 3: "redirect"
        case 4: "client error"
        case 5: "server error"
        default: "unknown status"
        }
    }
}

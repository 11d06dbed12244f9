#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// One stored cookie (RFC 6265 §5.3), as a browser keeps it.
public struct Cookie: Sendable, Equatable, CustomStringConvertible {
    /// The `SameSite` attribute (RFC 6265bis).
    public enum SameSite: String, Sendable {
        /// No attribute: sent with every request, as curl and older browsers do.
        case unspecified
        /// `SameSite=None`: sent with every request (only valid with `Secure`).
        case none = "None"
        /// `SameSite=Lax`: sent same-site, and cross-site only on top-level GET/HEAD navigations.
        case lax = "Lax"
        /// `SameSite=Strict`: sent only same-site.
        case strict = "Strict"
    }

    /// The name.
    public var name: String
    /// The value, as the server sent it (quotes included).
    public var value: String
    /// The domain, lower-cased, without a leading dot.
    public var domain: String
    /// The path the cookie applies to (and below).
    public var path: String
    /// True when the cookie goes only to exactly ``domain`` (no `Domain` attribute was sent).
    public var hostOnly: Bool
    /// `Secure`: only sent over https.
    public var secure: Bool
    /// `HttpOnly`: not for scripts (kept, and written as `#HttpOnly_` in the Netscape file).
    public var httpOnly: Bool
    /// The `SameSite` attribute.
    public var sameSite: SameSite
    /// When it expires; nil for a session cookie.
    public var expires: Date?
    /// When it was first stored (keeps its place when replaced).
    public var creation: Date

    /// Creates a cookie.
    public init(
        name: String, value: String, domain: String, path: String = "/", hostOnly: Bool = true, secure: Bool = false, httpOnly: Bool = false, sameSite: SameSite = .unspecified,
        expires: Date? = nil, creation: Date = Date()
    ) {
        self.name = name
        self.value = value
        self.domain = domain.lowercased()
        self.path = path
        self.hostOnly = hostOnly
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.expires = expires
        self.creation = creation
    }

    /// True for a cookie without an expiry (dropped when the session ends).
    public var isSessionCookie: Bool { expires == nil }

    /// `name=value; domain; path` with the flags, the value elided.
    public var description: String {
        var text = "\(name)=…; Domain=\(hostOnly ? "" : ".")\(domain); Path=\(path)"
        if secure { text += "; Secure" }
        if httpOnly { text += "; HttpOnly" }
        if sameSite != .unspecified { text += "; SameSite=\(sameSite.rawValue)" }
        if let expires { text += "; Expires=\(RFC3339.string(expires))" }
        return text
    }

    /// True when the cookie applies to `url` (domain, path and Secure; not expiry or SameSite).
    public func matches(_ url: HTTPSURL) -> Bool {
        let host = url.host
        let domainOK = hostOnly ? host == domain : CookieRules.domainMatch(host: host, domain: domain)
        return domainOK && CookieRules.pathMatch(requestPath: url.path, cookiePath: path) && (!secure || url.scheme == "https")
    }
}

/// The algorithms of RFC 6265 §5.1 (dates, domains, paths).
enum CookieRules {
    /// §5.1.3: identical, or a suffix after a dot of a host name that is not an IP address.
    static func domainMatch(host: String, domain: String) -> Bool {
        if host == domain { return true }
        guard !isIPAddress(host), host.hasSuffix(domain), host.count > domain.count else { return false }
        return host.dropLast(domain.count).hasSuffix(".")
    }

    /// An IPv4 or IPv6 literal (a URL's host is in canonical form; an IPv6 one in brackets).
    static func isIPAddress(_ host: String) -> Bool { IPAddress.parse(host) != nil }

    /// §5.1.4: the directory of the request path.
    static func defaultPath(_ requestPath: String) -> String {
        guard requestPath.hasPrefix("/"), let slash = requestPath.lastIndex(of: "/"), slash != requestPath.startIndex else { return "/" }
        return String(requestPath[..<slash])
    }

    /// §5.1.4: identical, or a prefix ending at a `/`.
    static func pathMatch(requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }

    /// §5.1.1: the forgiving cookie date parser (`Wed, 09 Jun 2021 10:18:14 GMT`, `Wednesday,
    /// 09-Jun-21 10:18:14 GMT`, `Wed Jun  9 10:18:14 2021` …). Nil when no valid date is found.
    /// The grammar is over octets, so the tokens are read as bytes: a digit followed by a
    /// combining mark is still a digit followed by a non-digit.
    static func parseDate(_ text: String) -> Date? {
        // delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E
        let isDelimiter = { (byte: UInt8) in
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
        }
        let isDigit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
        /// `min*max DIGIT ( non-digit *OCTET )` from `start`: the number and where its digits end.
        func digits(_ token: ArraySlice<UInt8>, from start: Int, min: Int, max: Int) -> (value: Int, end: Int)? {
            var end = start
            var value = 0
            while end < token.endIndex, isDigit(token[end]) {
                guard end - start < max else { return nil }
                value = value * 10 + Int(token[end] - 0x30)
                end += 1
            }
            return end - start >= min ? (value, end) : nil
        }
        /// `hms-time ( non-digit *OCTET )`, where `hms-time = time-field ":" time-field ":" time-field`.
        func hmsTime(_ token: ArraySlice<UInt8>) -> (Int, Int, Int)? {
            guard let hour = digits(token, from: token.startIndex, min: 1, max: 2), hour.end < token.endIndex, token[hour.end] == 0x3A,
                let minute = digits(token, from: hour.end + 1, min: 1, max: 2), minute.end < token.endIndex, token[minute.end] == 0x3A,
                let second = digits(token, from: minute.end + 1, min: 1, max: 2)
            else { return nil }
            return (hour.value, minute.value, second.value)
        }
        let months: [StaticString] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        /// `month = ( "jan" / … / "dec" ) *OCTET`, in any ASCII case.
        func monthNumber(_ token: ArraySlice<UInt8>) -> Int? {
            guard token.count >= 3 else { return nil }
            let prefix = token.prefix(3).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            return months.firstIndex { name in name.withUTF8Buffer { Array($0) == prefix } }.map { $0 + 1 }
        }
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in Array(text.utf8).split(whereSeparator: isDelimiter) {
            if time == nil, let found = hmsTime(token) {
                time = found
            } else if day == nil, let found = digits(token, from: token.startIndex, min: 1, max: 2) {
                day = found.value
            } else if month == nil, let found = monthNumber(token) {
                month = found
            } else if year == nil, let found = digits(token, from: token.startIndex, min: 2, max: 4) {
                year = found.value
            }
        }
        guard var year, let day, let month, let time else { return nil }
        if year >= 70 && year <= 99 { year += 1900 } else if year >= 0 && year <= 69 { year += 2000 }
        guard (1...31).contains(day), year >= 1601, time.0 <= 23, time.1 <= 59, time.2 <= 59 else { return nil }
        // Step 7: a date that does not exist (31 April) is refused, not carried into the next month.
        return RFC3339.utcDate(year: year, month: month, day: day, hour: time.0, minute: time.1, second: time.2)
    }
}

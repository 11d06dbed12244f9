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

    static func isIPAddress(_ host: String) -> Bool {
        if host.utf8.contains(UInt8(ascii: ":")) { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber) && (Int(part) ?? 999) <= 255 }
    }

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
    static func parseDate(_ text: String) -> Date? {
        let delimiters: Set<UInt8> = Set([0x09] + Array(0x20...0x2F) + Array(0x3B...0x40) + Array(0x5B...0x60) + Array(0x7B...0x7E))
        let tokens = Array(text.utf8).split(whereSeparator: { delimiters.contains($0) }).map { String(decoding: $0, as: UTF8.self) }
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        func leadingDigits(_ token: String, min: Int, max: Int) -> Int? {
            let digits = token.prefix { $0.isASCII && $0.isNumber }
            guard digits.count >= min, digits.count <= max else { return nil }
            if let next = token.dropFirst(digits.count).first, next.isASCII && next.isNumber { return nil }
            return Int(digits)
        }
        for token in tokens {
            if time == nil {
                let parts = token.split(separator: ":", omittingEmptySubsequences: false)
                if parts.count == 3, let h = leadingDigits(String(parts[0]), min: 1, max: 2), parts[0].count <= 2, parts[1].count <= 2,
                    let m = leadingDigits(String(parts[1]), min: 1, max: 2), let s = leadingDigits(String(parts[2]), min: 1, max: 2)
                {
                    time = (h, m, s)
                    continue
                }
            }
            if day == nil, let value = leadingDigits(token, min: 1, max: 2) {
                day = value
                continue
            }
            if month == nil, token.count >= 3, let index = months.firstIndex(of: token.prefix(3).lowercased()) {
                month = index + 1
                continue
            }
            if year == nil, let value = leadingDigits(token, min: 2, max: 4) {
                year = value
                continue
            }
        }
        guard var year, let day, let month, let time else { return nil }
        if year >= 70 && year <= 99 { year += 1900 } else if year >= 0 && year <= 69 { year += 2000 }
        guard (1...31).contains(day), year >= 1601, time.0 <= 23, time.1 <= 59, time.2 <= 59 else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        components.hour = time.0
        components.minute = time.1
        components.second = time.2
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.gmt
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust
import Synchronization

/// An RFC 6265 cookie store: parses `Set-Cookie`, enforces Domain (host-only cookies, IP hosts,
/// no single-label domains such as `Domain=com`), Path, Secure, HttpOnly, Max-Age/Expires,
/// SameSite and the `__Secure-`/`__Host-` prefixes, and saves and loads curl's Netscape format.
///
/// A `Domain` attribute that is a public suffix (`com`, `co.uk`, `github.io`: `PublicSuffixList`)
/// is refused, as browsers and curl refuse it, unless it names the host itself, which makes a
/// host-only cookie (RFC 6265 5.3 step 5). Without a list (none installed: see
/// `PublicSuffixList.isAvailable`), only a single-label `Domain` is refused that way.
public final class CookieJar: Sendable {
    private let store = Locked<[Cookie]>([])

    /// The list `Domain` attributes are checked against.
    public let publicSuffixes: PublicSuffixList

    /// The most cookies kept per domain and in all; the least recently created go first.
    public let maximumPerDomain: Int
    /// See ``maximumPerDomain``.
    public let maximumTotal: Int

    /// What happened to one `Set-Cookie` field.
    public enum Decision: Sendable, CustomStringConvertible {
        /// Stored (new or replacing one with the same name, domain and path).
        case stored(Cookie)
        /// It expired an existing cookie (Max-Age ≤ 0 or a past Expires).
        case deleted(name: String)
        /// Ignored, with the rule that refused it.
        case rejected(name: String, reason: String)

        /// `stored name=…`, `deleted name`, `rejected name: reason`.
        public var description: String {
            switch self {
            case .stored(let cookie): "stored \(cookie)"
            case .deleted(let name): "deleted \(name)"
            case .rejected(let name, let reason): "rejected \(name.isEmpty ? "a cookie" : name): \(reason)"
            }
        }
    }

    /// Whether a request is same-site with the page that caused it, for `SameSite`.
    public enum SiteContext: Sendable {
        /// Same-site (or typed by the user): every cookie goes.
        case sameSite
        /// A cross-site top-level navigation with this method (a redirect, a form post): `Lax`
        /// cookies go with GET and HEAD, `Strict` ones never.
        case crossSiteNavigation(method: String)
    }

    /// Creates an empty jar.
    ///
    /// - Parameters:
    ///   - maximumPerDomain: The most cookies kept for one domain.
    ///   - maximumTotal: The most cookies kept in all.
    ///   - publicSuffixes: The Public Suffix List for `Domain` attributes; by default the operating
    ///     system's (`PublicSuffixList.system`, read when a `Domain` attribute first needs it).
    public init(maximumPerDomain: Int = 180, maximumTotal: Int = 3000, publicSuffixes: PublicSuffixList = .system) {
        self.maximumPerDomain = maximumPerDomain
        self.maximumTotal = maximumTotal
        self.publicSuffixes = publicSuffixes
    }

    /// Every cookie, expired ones included until the next access.
    public var all: [Cookie] { store.withLock { $0 } }

    /// Removes every cookie.
    public func removeAll() {
        store.withLock { $0.removeAll() }
    }

    /// Removes session cookies (as at the end of a browser session).
    public func removeSessionCookies() {
        store.withLock { $0.removeAll { $0.isSessionCookie } }
    }

    /// Adds or replaces a cookie as given (no checks): for loading and tests.
    public func insert(_ cookie: Cookie) {
        store.withLock { cookies in
            if let index = cookies.firstIndex(where: { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }) {
                cookies[index] = cookie
            } else {
                cookies.append(cookie)
            }
        }
    }

    /// Stores the `Set-Cookie` fields of a response.
    @discardableResult
    public func store(from response: HTTPResponse, now: Date = Date()) -> [Decision] {
        response.headers.values("Set-Cookie").map { store($0, from: response.url, now: now) }
    }

    /// Parses one `Set-Cookie` value received from `url` and stores it (RFC 6265 §5.2, §5.3).
    @discardableResult
    public func store(_ setCookie: String, from url: HTTPSURL, now: Date = Date()) -> Decision {
        let pieces = setCookie.split(separator: ";", omittingEmptySubsequences: false)
        let pair = pieces.first.map(String.init) ?? ""
        guard let equals = pair.firstIndex(of: "=") else { return .rejected(name: "", reason: "there is no '=' in the name-value pair") }
        let name = pair[..<equals].trimmingWhitespace()
        let value = pair[pair.index(after: equals)...].trimmingWhitespace()
        guard !name.isEmpty else { return .rejected(name: "", reason: "the name is empty") }
        guard !(name + value).unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
            return .rejected(name: name, reason: "it contains control characters")
        }

        var expires: Date? = nil
        var maxAge: Date? = nil
        var domainAttribute: String? = nil
        var path: String? = nil
        var secure = false
        var httpOnly = false
        var sameSite = Cookie.SameSite.unspecified
        for piece in pieces.dropFirst() {
            let attribute = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let attributeName = attribute[0].trimmingWhitespace().lowercased()
            let attributeValue = attribute.count > 1 ? attribute[1].trimmingWhitespace() : ""
            switch attributeName {
            case "expires":
                if let date = CookieRules.parseDate(attributeValue) { expires = date }
            case "max-age":
                let digits = attributeValue.hasPrefix("-") ? attributeValue.dropFirst() : attributeValue[...]
                guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { continue }
                let seconds = attributeValue.hasPrefix("-") ? -1 : (Int(digits) ?? Int.max)
                maxAge = seconds <= 0 ? Date.distantPast : now.addingTimeInterval(TimeInterval(min(seconds, 400 * 86400)))
            case "domain":
                var domain = attributeValue
                if domain.hasPrefix(".") { domain.removeFirst() }
                if !domain.isEmpty { domainAttribute = domain }
            case "path":
                path = attributeValue.hasPrefix("/") ? attributeValue : nil
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            case "samesite":
                switch attributeValue.lowercased() {
                case "strict": sameSite = .strict
                case "lax": sameSite = .lax
                case "none": sameSite = .none
                default: sameSite = .unspecified
                }
            default:
                continue
            }
        }

        let host = url.host
        var hostOnly = true
        var domain = host
        if var domainAttribute {
            // Compared with the host as the URL parser gives it: ASCII, with xn-- labels (UTS 46).
            do { domainAttribute = try IDNA.toASCII(domainAttribute, options: .url) } catch {
                return .rejected(name: name, reason: "Domain=\(domainAttribute) is not a valid domain name (\(error.description))")
            }
            if !CookieRules.isIPAddress(domainAttribute) && publicSuffixes.isPublicSuffix(domainAttribute) {
                // Domain=com, Domain=co.uk, Domain=localhost: shared by unrelated hosts, so only
                // acceptable as the host itself (a host-only cookie).
                guard domainAttribute == host else {
                    let what = domainAttribute.contains(".") ? "a public suffix (a domain shared by unrelated sites)" : "a single-label domain (a top-level domain)"
                    return .rejected(name: name, reason: "Domain=\(domainAttribute) is \(what), refused")
                }
            } else {
                guard CookieRules.domainMatch(host: host, domain: domainAttribute) else {
                    return .rejected(name: name, reason: "Domain=\(domainAttribute) does not cover the host \(host)")
                }
                // An IP address matches only itself, so such a cookie is host-only (as curl keeps it).
                hostOnly = CookieRules.isIPAddress(domainAttribute)
                domain = domainAttribute
            }
        }
        if secure && url.scheme != "https" {
            return .rejected(name: name, reason: "a Secure cookie cannot be set over http")
        }
        if name.hasPrefix("__Secure-") && !secure {
            return .rejected(name: name, reason: "a __Secure- cookie must have the Secure attribute")
        }
        if name.hasPrefix("__Host-") && (!secure || !hostOnly || path != "/") {
            return .rejected(name: name, reason: "a __Host- cookie must be Secure, have Path=/ and no Domain")
        }
        if sameSite == .none && !secure {
            sameSite = .unspecified  // SameSite=None without Secure: treated as if absent
        }
        let cookie = Cookie(
            name: name, value: value, domain: domain, path: path ?? CookieRules.defaultPath(url.path), hostOnly: hostOnly,
            secure: secure, httpOnly: httpOnly, sameSite: sameSite, expires: maxAge ?? expires, creation: now)

        return store.withLock { cookies in
            let existing = cookies.firstIndex { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
            if let expiry = cookie.expires, expiry <= now {
                if let existing { cookies.remove(at: existing) }
                return .deleted(name: name)
            }
            if let existing {
                var replaced = cookie
                replaced.creation = cookies[existing].creation
                cookies[existing] = replaced
            } else {
                cookies.append(cookie)
                evict(&cookies, now: now, domain: cookie.domain)
            }
            return .stored(cookie)
        }
    }

    private func evict(_ cookies: inout [Cookie], now: Date, domain: String) {
        cookies.removeAll { ($0.expires ?? .distantFuture) <= now }
        let sameDomain = cookies.indices.filter { cookies[$0].domain == domain }
        if sameDomain.count > maximumPerDomain {
            let oldest = sameDomain.sorted { cookies[$0].creation < cookies[$1].creation }.prefix(sameDomain.count - maximumPerDomain)
            for index in oldest.sorted(by: >) { cookies.remove(at: index) }
        }
        if cookies.count > maximumTotal {
            cookies.sort { $0.creation < $1.creation }
            cookies.removeFirst(cookies.count - maximumTotal)
        }
    }

    /// The cookies to send to `url` (RFC 6265 §5.4): domain, path, Secure, expiry and SameSite
    /// checked; longest path first, then oldest.
    public func cookies(for url: HTTPSURL, context: SiteContext = .sameSite, now: Date = Date()) -> [Cookie] {
        let matching = store.withLock { cookies in
            cookies.removeAll { ($0.expires ?? .distantFuture) <= now }
            return cookies.filter { cookie in
                guard cookie.matches(url) else { return false }
                switch (cookie.sameSite, context) {
                case (.strict, .crossSiteNavigation): return false
                case (.lax, .crossSiteNavigation(let method)): return ["GET", "HEAD"].contains(method.uppercased())
                default: return true
                }
            }
        }
        return matching.sorted { $0.path.count != $1.path.count ? $0.path.count > $1.path.count : $0.creation < $1.creation }
    }

    /// The `Cookie` header value for `url`, or nil when no cookie applies.
    public func cookieHeader(for url: HTTPSURL, context: SiteContext = .sameSite, now: Date = Date()) -> String? {
        let matching = cookies(for: url, context: context, now: now)
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    // MARK: Netscape format

    /// The jar in curl's Netscape cookie-file format: one cookie per line, tab-separated
    /// `domain  include-subdomains  path  secure  expiry  name  value`, HttpOnly cookies prefixed
    /// with `#HttpOnly_`, session cookies with expiry 0. SameSite is not part of the format.
    public func netscapeFormat(now: Date = Date()) -> String {
        var lines = [
            "# Netscape HTTP Cookie File",
            "# https://curl.se/docs/http-cookies.html",
            "# This file was generated by mtls. Edit at your own risk.",
            "",
        ]
        for cookie in all where (cookie.expires ?? .distantFuture) > now {
            let domain = (cookie.httpOnly ? "#HttpOnly_" : "") + (cookie.hostOnly ? "" : ".") + cookie.domain
            let expiry = cookie.expires.map { String(Int64($0.timeIntervalSince1970)) } ?? "0"
            lines.append([domain, cookie.hostOnly ? "FALSE" : "TRUE", cookie.path, cookie.secure ? "TRUE" : "FALSE", expiry, cookie.name, cookie.value].joined(separator: "\t"))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Adds the cookies of a Netscape-format file's text (comments, blank and malformed lines
    /// skipped, expired cookies dropped).
    ///
    /// - Returns: How many cookies were loaded.
    @discardableResult
    public func load(netscapeFormat text: String, now: Date = Date()) -> Int {
        var count = 0
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            var line = String(rawLine)
            var httpOnly = false
            if line.hasPrefix("#HttpOnly_") {
                httpOnly = true
                line.removeFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") || line.trimmingWhitespace().isEmpty {
                continue
            }
            var fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if fields.count == 6 { fields.append("") }  // curl writes an empty value as a missing field
            guard fields.count == 7, !fields[0].isEmpty, !fields[5].isEmpty, let seconds = Int64(fields[4]) else { continue }
            var domain = fields[0].lowercased()
            let includeSubdomains = fields[1].uppercased() == "TRUE"
            if domain.hasPrefix(".") { domain.removeFirst() }
            let expires: Date? = seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
            if let expires, expires <= now { continue }
            insert(
                Cookie(
                    name: fields[5], value: fields[6], domain: domain, path: fields[2].isEmpty ? "/" : fields[2], hostOnly: !includeSubdomains,
                    secure: fields[3].uppercased() == "TRUE", httpOnly: httpOnly, expires: expires, creation: now))
            count += 1
        }
        return count
    }

    /// Writes the jar to a file in the Netscape format, through the one output writer: a temporary
    /// file created 0600 (cookies are credentials) in its `open` call, renamed over the jar. Only a
    /// regular file is replaced: a symbolic link, FIFO or device at `path` is refused.
    ///
    /// - Throws: ``HTTPSError`` (`.io`) naming the file.
    public func save(toPath path: String, now: Date = Date()) throws(HTTPSError) {
        do throws(MTLSTrustError) {
            try OutputWriter.write(Array(netscapeFormat(now: now).utf8), to: path, mode: 0o600, force: true)
        } catch {
            throw HTTPSError(
                .io, host: path, "the cookie jar could not be written: \(error.message)",
                hint: "check that the directory exists and is writable, and that the jar is a regular file")
        }
    }

    /// Loads a Netscape-format cookie file (as written by curl `-c` or ``save(toPath:now:)``).
    ///
    /// - Throws: ``HTTPSError`` (`.io`) when the file cannot be read.
    @discardableResult
    public func load(fromPath path: String, now: Date = Date()) throws(HTTPSError) -> Int {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HTTPSError(.io, host: path, "the cookie jar \(path) could not be read", hint: "check the path and its permissions")
        }
        return load(netscapeFormat: String(decoding: data, as: UTF8.self), now: now)
    }
}

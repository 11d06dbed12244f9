#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Synchronization

/// The Public Suffix List (https://publicsuffix.org): the domains under which unrelated parties
/// register names (`com`, `co.uk`, `kobe.jp`'s `*.kobe.jp`, `github.io`). Browsers and curl (via
/// libpsl) use it so that `Domain=co.uk` cannot set a cookie for every British site, and to tell
/// which hosts are the same *site* for `SameSite`: `idp.example.co.uk` and `sp.other.co.uk` are not.
///
/// The list's format and algorithm (https://github.com/publicsuffix/list/wiki/Format): a rule of
/// labels, a wildcard rule `*.ck` (any one label there), an exception `!www.ck`; the prevailing
/// rule is an exception if one matches, else the matching rule with most labels, else `*` (any
/// top-level domain not listed is a public suffix). `xn--` labels are compared as the Unicode they
/// encode, as the list writes internationalised rules.
///
/// Both the ICANN and the PRIVATE sections count, as browsers, curl and the CA/Browser Forum
/// (for wildcard certificates) count them. ``system`` is the operating system's copy (Debian's
/// and Fedora's `publicsuffix` package, which curl's libpsl also reads; `MTLS_PUBLIC_SUFFIX_LIST`
/// names another file), read once, when first needed.
public struct PublicSuffixList: Sendable {
    private struct Rules: Sendable {
        var rules: Set<String> = []
        var wildcards: Set<String> = []  // the part after `*.`
        var exceptions: Set<String> = []  // without the `!`
        var count: Int { rules.count + wildcards.count + exceptions.count }
    }

    /// The rules, read when first needed: ``system`` costs nothing until a cookie or a site asks.
    private final class Source: Sendable {
        private let load: @Sendable () -> Rules?
        private let cache = Locked<Rules??>(nil)  // nil: not read yet; .some(nil): no list

        init(_ load: @escaping @Sendable () -> Rules?) { self.load = load }

        var rules: Rules? {
            cache.withLock { cache in
                if let cache { return cache }
                let rules = load()
                cache = .some(rules)
                return rules
            }
        }
    }

    private let source: Source

    /// The number of rules (0 for a list that could not be read).
    public var count: Int { source.rules?.count ?? 0 }

    /// True when the list has rules. With none, only the implicit rule `*` applies: every single
    /// label is a public suffix, and a registrable domain is the last two labels.
    public var isAvailable: Bool { count > 0 }

    /// Reads the list's text: one rule per line up to the first white space; `//` comments and
    /// blank lines are skipped.
    public init(rules text: String) {
        let rules = PublicSuffixList.parse(text)
        source = Source { rules }
    }

    /// Reads the list from a file; nil when it cannot be read or holds no rule.
    public init?(contentsOfFile path: String) {
        guard let rules = PublicSuffixList.read(path) else { return nil }
        source = Source { rules }
    }

    private init(lazilyFrom paths: @escaping @Sendable () -> [String]) {
        source = Source { paths().lazy.compactMap(PublicSuffixList.read).first }
    }

    /// Where the list is looked for, in order: `MTLS_PUBLIC_SUFFIX_LIST`, then where operating
    /// systems and Homebrew install it.
    public static var systemPaths: [String] {
        var paths = [
            "/usr/share/publicsuffix/public_suffix_list.dat", "/usr/share/publicsuffix/effective_tld_names.dat",
            "/usr/local/share/publicsuffix/public_suffix_list.dat", "/opt/homebrew/share/publicsuffix/public_suffix_list.dat",
        ]
        if let override = ProcessInfo.processInfo.environment["MTLS_PUBLIC_SUFFIX_LIST"], !override.isEmpty { paths.insert(override, at: 0) }
        return paths
    }

    /// The operating system's copy of the list, read from ``systemPaths`` when first asked. Where
    /// none is installed it is not ``isAvailable``: `CookieJar` then refuses only single-label
    /// `Domain` attributes, and a login's `SameSite` site is the last two labels of a host.
    public static let system = PublicSuffixList(lazilyFrom: { systemPaths })

    private static func read(_ path: String) -> Rules? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let rules = parse(String(decoding: data, as: UTF8.self))
        return rules.count > 0 ? rules : nil
    }

    private static func parse(_ text: String) -> Rules {
        var parsed = Rules()
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            guard let rule = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first, !rule.hasPrefix("//") else { continue }
            let lowered = String(rule).asciiLowercased()
            if lowered.hasPrefix("!") {
                parsed.exceptions.insert(String(lowered.dropFirst()))
            } else if lowered.hasPrefix("*.") {
                parsed.wildcards.insert(String(lowered.dropFirst(2)))
            } else {
                parsed.rules.insert(lowered)
            }
        }
        return parsed
    }

    /// The public suffix of a host name (`co.uk` for `www.example.co.uk`), lower-cased, in the
    /// form given (`xn--` labels stay so). Nil for an empty name, one with an empty label (a
    /// leading or doubled dot), or an IP address.
    public func publicSuffix(of domain: String) -> String? {
        guard let labels = PublicSuffixList.labels(of: domain) else { return nil }
        return labels.original.suffix(suffixLength(labels.matched)).joined(separator: ".")
    }

    /// The registrable domain of a host name (`example.co.uk` for `www.example.co.uk`): the public
    /// suffix and one label more. Nil when the name is itself a public suffix, or as for
    /// ``publicSuffix(of:)``.
    public func registrableDomain(of domain: String) -> String? {
        guard let labels = PublicSuffixList.labels(of: domain) else { return nil }
        let length = suffixLength(labels.matched)
        guard labels.original.count > length else { return nil }
        return labels.original.suffix(length + 1).joined(separator: ".")
    }

    /// True when the name is a public suffix (`com`, `co.uk`, or any single label not listed).
    public func isPublicSuffix(_ domain: String) -> Bool {
        guard let labels = PublicSuffixList.labels(of: domain) else { return false }
        return suffixLength(labels.matched) >= labels.matched.count
    }

    /// How many labels, from the right, the prevailing rule covers.
    private func suffixLength(_ labels: [String]) -> Int {
        guard let table = source.rules else { return 1 }
        let (rules, wildcards, exceptions) = (table.rules, table.wildcards, table.exceptions)
        let count = labels.count
        for start in 0..<count where exceptions.contains(labels[start...].joined(separator: ".")) {
            return count - start - 1
        }
        for start in 0..<count {
            if rules.contains(labels[start...].joined(separator: ".")) { return count - start }
            if start + 1 < count, wildcards.contains(labels[(start + 1)...].joined(separator: ".")) { return count - start }
        }
        return 1
    }

    /// The labels as given (lower-cased) and as matched (`xn--` labels decoded); nil for names
    /// that are not host names.
    private static func labels(of domain: String) -> (original: [String], matched: [String])? {
        var name = domain.asciiLowercased()
        if name.hasSuffix(".") && name.count > 1 { name.removeLast() }  // the root's dot
        let original = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !name.isEmpty, !original.contains(where: \.isEmpty), IPAddress.parse(name) == nil else { return nil }
        let matched = original.map { label in
            label.hasPrefix("xn--") ? Punycode.decode(label.dropFirst(4)) ?? label : label
        }
        return (original, matched)
    }

}

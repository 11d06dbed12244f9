#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The Public Suffix List (publicsuffix.org), read from the copy the system ships.
///
/// Debian and Ubuntu install it as `/usr/share/publicsuffix/public_suffix_list.dat` (package
/// `publicsuffix`, which `libpsl5` and so curl pull in); `MTLS_PUBLIC_SUFFIX_LIST` names another
/// file. Both the ICANN and the PRIVATE sections count, as the CA/Browser Forum requires. When no
/// list is found only the implicit rule remains (every single label, such as `com`, is a suffix).
struct PublicSuffixList: Sendable {
    /// Where the list is looked for, in order.
    static var searchPaths: [String] {
        var paths = [
            "/usr/share/publicsuffix/public_suffix_list.dat", "/usr/share/publicsuffix/effective_tld_names.dat",
            "/usr/local/share/publicsuffix/public_suffix_list.dat", "/opt/homebrew/share/publicsuffix/public_suffix_list.dat",
        ]
        if let override = ProcessInfo.processInfo.environment["MTLS_PUBLIC_SUFFIX_LIST"], !override.isEmpty { paths.insert(override, at: 0) }
        return paths
    }

    /// The system's list, loaded on first use.
    static let shared: PublicSuffixList = {
        for path in searchPaths {
            if let data = FileManager.default.contents(atPath: path), let list = PublicSuffixList(text: String(decoding: data, as: UTF8.self), source: path) {
                return list
            }
        }
        return PublicSuffixList(rules: [], wildcards: [], exceptions: [], source: nil)
    }()

    private let rules: Set<String>
    private let wildcards: Set<String>
    private let exceptions: Set<String>
    /// The file the rules came from, or nil when none was found.
    let source: String?

    private init(rules: Set<String>, wildcards: Set<String>, exceptions: Set<String>, source: String?) {
        self.rules = rules
        self.wildcards = wildcards
        self.exceptions = exceptions
        self.source = source
    }

    /// Parses the list's text format: one rule a line, `//` comments, `*.` wildcards, `!` exceptions.
    init?(text: String, source: String? = nil) {
        var rules = Set<String>()
        var wildcards = Set<String>()
        var exceptions = Set<String>()
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
            if line.isEmpty || line.hasPrefix("//") { continue }
            let rule = DNSNameSyntax.lowercased(line)
            if rule.hasPrefix("!") {
                exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                wildcards.insert(String(rule.dropFirst(2)))
            } else {
                rules.insert(rule)
            }
        }
        if rules.isEmpty { return nil }
        self.init(rules: rules, wildcards: wildcards, exceptions: exceptions, source: source ?? "(text)")
    }

    /// True when `name` (ASCII, A-labels for IDNs) is itself a public suffix: `com`, `co.uk`,
    /// `s3.amazonaws.com`; false for registrable names such as `example.co.uk`.
    func isPublicSuffix(_ name: String) -> Bool {
        var domain = DNSNameSyntax.lowercased(name)
        if domain.hasSuffix(".") { domain.removeLast() }
        if domain.isEmpty { return true }
        if exceptions.contains(domain) { return false }
        if rules.contains(domain) { return true }
        guard let dot = domain.firstIndex(of: ".") else { return true }  // the implicit "*" rule
        return wildcards.contains(String(domain[domain.index(after: dot)...]))
    }
}

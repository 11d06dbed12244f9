#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

import MTLSTrust

/// A host a pin set applies to, and what it means on each platform.
///
/// | platform | exact `example.com` | `--include-subdomains` | `*.example.com` |
/// |---|---|---|---|
/// | TrustKit, Android, ATS, HPKP | that name | the name and every name below it | not supported: becomes `example.com` + subdomains |
/// | OkHttp 4+ | that name | `**.example.com` (the name and any depth below) | exactly one label below |
/// | OkHttp 3.x | that name | `example.com` + `*.example.com` (one label only) | exactly one label below (`**.` is silently ignored) |
struct PinHost: Sendable, Equatable {
    /// The lower-case name without wildcard prefix.
    var name: String
    /// Covers the name and every name below it.
    var includesSubdomains: Bool
    /// `*.name`: exactly one label below the name, not the name itself (OkHttp's single wildcard).
    var oneLabelWildcard: Bool = false

    /// Parses `--host`: a DNS name, an IP literal, `*.name` or `**.name`.
    static func parse(_ text: String, includeSubdomains: Bool) -> PinHost? {
        var name = text.trimmingWhitespace().lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        var one = false
        var any = includeSubdomains
        if name.hasPrefix("**.") {
            name = String(name.dropFirst(3))
            any = true
        } else if name.hasPrefix("*.") {
            name = String(name.dropFirst(2))
            one = !includeSubdomains
        }
        // Letters, digits, '-', '_' and '.' (DNS names), or an IP literal; nothing a code or XML output would need to escape.
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ ScalarClass.isAlphanumeric($0) || "-_.:".unicodeScalars.contains($0) }) else { return nil }
        if name.contains(":"), !name.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) { return nil }
        return PinHost(name: name, includesSubdomains: any, oneLabelWildcard: one)
    }

    /// How the user wrote it back, for messages.
    var display: String {
        if oneLabelWildcard { return "*.\(name)" }
        return includesSubdomains ? "\(name) and its subdomains" : name
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The syntax of DNS names in certificates: RFC 1034 "preferred name syntax" (letters, digits and
/// hyphens; labels of 1 to 63 octets; 253 octets in all), as RFC 5280 4.2.1.6 requires of dNSName.
enum DNSNameSyntax {
    /// True for a host name such as `www.example.com` (no wildcard, no leading or trailing dot).
    static func isValidHostname(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        var labelLength = 0
        var previous: UInt8 = 0x2E
        for byte in bytes {
            switch byte {
            case 0x2E:  // "."
                if labelLength == 0 || previous == 0x2D { return false }
                labelLength = 0
            case 0x2D:  // "-"
                if labelLength == 0 { return false }
                labelLength += 1
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A:
                labelLength += 1
            default:
                return false
            }
            if labelLength > 63 { return false }
            previous = byte
        }
        return labelLength > 0 && previous != 0x2D
    }

    /// True for a host name, or a wildcard `*.` followed by a host name (the only wildcard form the
    /// CA/Browser Forum and RFC 6125 6.4.3 accept).
    static func isValidPattern(_ name: String) -> Bool {
        if name.hasPrefix("*.") { return isValidHostname(String(name.dropFirst(2))) }
        return isValidHostname(name)
    }

    /// The base of a wildcard (`example.com` for `*.example.com`), or nil.
    static func wildcardBase(_ name: String) -> String? {
        name.hasPrefix("*.") ? String(name.dropFirst(2)) : nil
    }

    /// ASCII lower case (DNS comparisons ignore ASCII case only).
    static func lowercased(_ name: String) -> String { name.asciiLowercased() }

    /// RFC 6125 6.4 matching of a lower-case reference name against a lower-case presented name:
    /// equal, or `*.base` with exactly one non-empty label in place of the `*`.
    static func matches(pattern: String, host: String) -> Bool {
        if pattern == host { return true }
        guard let base = wildcardBase(pattern), host.hasSuffix("." + base) else { return false }
        let label = host.dropLast(base.count + 1)
        return !label.isEmpty && !label.contains(".")
    }
}

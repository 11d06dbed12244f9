#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// App Transport Security `NSPinnedDomains` (iOS 14+, macOS 11+), to merge into Info.plist.
///
/// ATS keeps two lists per domain: `NSPinnedCAIdentities` (some CA or sub-CA of the chain must match)
/// and `NSPinnedLeafIdentities` (the leaf must match). When both are present, BOTH must match. There
/// is no expiry and no wildcard: `NSIncludesSubdomains` covers the domain and every name below it.
///
/// Backup keys go to the leaf list when there are leaf pins (a leaf key not yet in use), else to the
/// CA list: a backup alone in the leaf list would add a leaf requirement the server cannot meet.
enum ATSFormat {
    /// The CA and leaf lists as ATS will read them.
    static func lists(_ entries: [PinEntry]) -> (ca: [PinEntry], leaf: [PinEntry]) {
        let unique = PinWriter.unique(entries)
        let hasLeaf = unique.contains { $0.role == .leaf }
        let ca = unique.filter { $0.role.isCA || (!hasLeaf && $0.role == .backup) }
        let leaf = unique.filter { $0.role == .leaf || (hasLeaf && $0.role == .backup) }
        return (ca, leaf)
    }

    static func plist(_ entries: [PinEntry], options: PinOutputOptions) -> String {
        let (ca, leaf) = lists(entries)
        func identities(_ list: [PinEntry]) -> PropertyListText {
            .array(list.map { .dictionary([("SPKI-SHA256-BASE64", .string($0.base64))]) })
        }
        var domains: [(String, PropertyListText)] = []
        for host in options.hosts {
            var domain: [(String, PropertyListText)] = [("NSIncludesSubdomains", .bool(host.includesSubdomains))]
            if !ca.isEmpty { domain.append(("NSPinnedCAIdentities", identities(ca))) }
            if !leaf.isEmpty { domain.append(("NSPinnedLeafIdentities", identities(leaf))) }
            domains.append((host.name, .dictionary(domain)))
        }
        let ats: PropertyListText = .dictionary([("NSPinnedDomains", .dictionary(domains))])
        return PropertyListText.dictionary([("NSAppTransportSecurity", ats)]).document()
    }
}

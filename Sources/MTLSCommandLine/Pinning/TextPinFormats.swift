#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// The plain formats: pin lists, JSON, curl and HPKP.
enum TextPinFormats {
    /// `sha256/BASE64  # subject [level, notAfter …]`, one a line; `# host:` and `expires` lines
    /// first when given (read back by `--check` and by `PinSet.parse`).
    static func lines(_ entries: [PinEntry], options: PinOutputOptions) -> String {
        var out = ""
        for host in options.hosts { out += "# host: \(host.display)\n" }
        if let expires = options.expiresText { out += "expires \(expires)\n" }
        for entry in entries { out += "\(entry.pin)  # \(PinWriter.describe(entry))\n" }
        return out
    }

    /// One JSON object: `hosts`, `includeSubdomains`, `expires`, and `pins` with subject, level,
    /// notAfter and source. No timestamps, so a rebuild gives the same bytes.
    static func json(_ entries: [PinEntry], options: PinOutputOptions) -> String {
        let pins: [JSON] = entries.map { entry in
            .object([
                ("pin", .string(entry.pin.description)),
                ("sha256", .string(entry.base64)),
                ("subject", .string(entry.label)),
                ("level", .string(entry.role.rawValue)),
                ("notAfter", JSON.optional(entry.notAfter.map(Timestamp.rfc3339))),
                ("source", .string(PathText.lastComponent(entry.source))),
            ])
        }
        let object = JSON.object([
            ("hosts", .array(options.hosts.map { .string($0.oneLabelWildcard ? "*.\($0.name)" : $0.name) })),
            ("includeSubdomains", .bool(options.hosts.contains { $0.includesSubdomains })),
            ("expires", JSON.optional(options.expiresText)),
            ("pins", .array(pins)),
        ])
        return object.serialized(pretty: true) + "\n"
    }

    /// `sha256//A;sha256//B`: curl compares the leaf's key only, so CA pins are left out
    /// (``PinRules`` warns about them).
    static func curl(_ entries: [PinEntry]) -> String {
        let pins = entries.filter { $0.role == .leaf || $0.role == .backup }.map { "sha256//\($0.base64)" }
        return pins.joined(separator: ";") + "\n"
    }

    /// The HPKP header: `Public-Key-Pins: pin-sha256="A"; pin-sha256="B"; max-age=N[; includeSubDomains]`.
    /// max-age runs to the end of `--expires` (60 days without it).
    static func hpkp(_ entries: [PinEntry], options: PinOutputOptions) -> String {
        var parts = PinWriter.uniqueBase64(entries).map { "pin-sha256=\"\($0)\"" }
        var maxAge = 60 * 86_400
        if let expires = options.expires {
            maxAge = max(0, Int(PinDates.endOfDay(expires).timeIntervalSince(options.now).rounded(.down)))
        }
        parts.append("max-age=\(maxAge)")
        if options.hosts.contains(where: \.includesSubdomains) { parts.append("includeSubDomains") }
        for uri in options.reportURIs.prefix(1) { parts.append("report-uri=\"\(uri)\"") }
        let name = options.enforce ? "Public-Key-Pins" : "Public-Key-Pins-Report-Only"
        return "\(name): " + parts.joined(separator: "; ") + "\n"
    }
}

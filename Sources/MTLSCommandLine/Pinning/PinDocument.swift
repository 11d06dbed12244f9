import Foundation
import MTLSTrust

/// A pin set as some platform will enforce it, read back from a file of any `--format`.
struct PinDocument: Sendable {
    /// What the file was read as ("OkHttp CertificatePinner", "Android network security config" …).
    var format: String
    /// The pinned domains; a format without hosts has one domain that applies to any host.
    var domains: [PinDomain]
}

/// Pins that must be satisfied together: every requirement needs one matching pin.
struct PinRequirement: Sendable {
    /// Which certificates of the chain a pin may match.
    enum Scope: String, Sendable {
        /// Any certificate of the validated chain (TrustKit, OkHttp, Android, HPKP, Alamofire).
        case chain
        /// The leaf only (curl, ATS `NSPinnedLeafIdentities`).
        case leaf
        /// A CA certificate (ATS `NSPinnedCAIdentities`).
        case ca

        var meaning: String {
            switch self {
            case .chain: "any certificate of the chain"
            case .leaf: "the leaf"
            case .ca: "a CA certificate of the chain"
            }
        }
    }

    var scope: Scope
    var pins: [Pin]
    /// A name for messages ("NSPinnedLeafIdentities").
    var name: String?
}

/// One pinned domain (or host pattern).
struct PinDomain: Sendable {
    /// How names are matched.
    enum Matching: Sendable {
        /// Applies to whatever host is checked (pin lists, curl, HPKP, JSON without hosts).
        case anyHost
        /// The name, and names below it when `includesSubdomains` (TrustKit, Android, ATS).
        case domain
        /// An OkHttp pattern: `name`, `*.name` or `**.name`.
        case okhttp
    }

    /// The pattern as written (`example.com`, `**.example.com`), or "" for any host.
    var pattern: String
    var includesSubdomains: Bool = false
    var matching: Matching
    var requirements: [PinRequirement]
    /// The last day the set is enforced (`YYYY-MM-DD`), as written.
    var expirationDay: Date?
    /// False for report-only TrustKit configurations.
    var enforced: Bool = true

    /// All pins of the domain.
    var pins: [Pin] { requirements.flatMap(\.pins) }

    /// Whether the domain's pins apply to `host`.
    func applies(to host: String) -> Bool {
        switch matching {
        case .anyHost: true
        case .okhttp: HostMatching.okhttp(pattern: pattern, host: host)
        case .domain: HostMatching.domain(pattern, includesSubdomains: includesSubdomains, host: host)
        }
    }

    /// "example.com (and subdomains)".
    var display: String {
        if matching == .anyHost { return "any host" }
        return includesSubdomains && matching == .domain ? "\(pattern) and its subdomains" : pattern
    }

    /// True after the end of the expiry day.
    func isExpired(at time: Date) -> Bool { expirationDay.map { time > PinDates.endOfDay($0) } ?? false }
}

extension PinDomain.Matching: Equatable {}

extension PinDocument {
    /// The domains that apply to `host`, as the platform picks them: OkHttp takes every matching
    /// pattern (any pin of any of them is enough); the others take the most specific domain.
    func domains(for host: String) -> [PinDomain] {
        let matching = domains.filter { $0.applies(to: host) }
        guard let first = matching.first else { return [] }
        if first.matching == .okhttp {
            var merged = first
            merged.pattern = matching.map(\.pattern).joined(separator: ", ")
            merged.requirements = [PinRequirement(scope: .chain, pins: uniquePins(matching.flatMap(\.pins)))]
            return [merged]
        }
        if first.matching == .anyHost { return matching }
        let exact = matching.filter { $0.pattern.lowercased() == host.lowercased() }
        if !exact.isEmpty { return Array(exact.prefix(1)) }
        return Array(matching.sorted { $0.pattern.count > $1.pattern.count }.prefix(1))
    }

    private func uniquePins(_ pins: [Pin]) -> [Pin] {
        var seen = Set<Pin>()
        return pins.filter { seen.insert($0).inserted }
    }
}

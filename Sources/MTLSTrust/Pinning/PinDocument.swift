#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A pin set as some platform enforces it: per-host requirements, host patterns, an expiry and
/// report-only mode — read from any format `mtls pin` writes (``init(bytes:source:)``), or made in code.
///
/// `TLSClientConfiguration.pinning` takes one; ``evaluate(_:host:at:)`` answers for a chain.
public struct PinDocument: Sendable {
    /// What the file was read as ("OkHttp CertificatePinner", "Android network security config" …).
    public var format: String
    /// The pinned domains; a format without hosts has one domain that applies to any host. A
    /// domain without pins exempts its host from a broader domain's pins (Android, TrustKit).
    public var domains: [PinDomain]

    /// Creates a document from its domains.
    public init(format: String, domains: [PinDomain]) {
        self.format = format
        self.domains = domains
    }

    /// One domain that applies to any host, with the set's pins as one requirement and its expiry.
    public init(_ set: PinSet) {
        let scope: PinRequirement.Scope = set.scope == .leafOnly ? .leaf : .chain
        self.init(
            format: "pin set",
            domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [PinRequirement(scope: scope, pins: set.pins)], expiration: set.expiration)])
    }
}

/// Pins that must be satisfied together: every requirement needs one matching pin.
public struct PinRequirement: Sendable {
    /// Which certificates of the chain a pin may match.
    public enum Scope: String, Sendable {
        /// Any certificate of the validated chain (TrustKit, OkHttp, Android, HPKP, Alamofire).
        case chain
        /// The leaf only (curl, ATS `NSPinnedLeafIdentities`).
        case leaf
        /// A CA certificate (ATS `NSPinnedCAIdentities`).
        case ca

        /// "any certificate of the chain", for messages.
        public var meaning: String {
            switch self {
            case .chain: "any certificate of the chain"
            case .leaf: "the leaf"
            case .ca: "a CA certificate of the chain"
            }
        }
    }

    public var scope: Scope
    public var pins: [Pin]
    /// A name for messages ("NSPinnedLeafIdentities").
    public var name: String?

    /// Creates a requirement.
    public init(scope: Scope, pins: [Pin], name: String? = nil) {
        self.scope = scope
        self.pins = pins
        self.name = name
    }

    /// Whether the certificate at `depth` of a chain may satisfy this requirement.
    func admits(_ certificate: Certificate, depth: Int) -> Bool {
        switch scope {
        case .chain: true
        case .leaf: depth == 0
        case .ca: depth > 0 || (certificate.basicConstraints?.isCA ?? false)
        }
    }
}

/// One pinned domain (or host pattern).
public struct PinDomain: Sendable {
    /// How names are matched.
    public enum Matching: Sendable, Equatable {
        /// Applies to whatever host is checked (pin lists, curl, HPKP, JSON without hosts).
        case anyHost
        /// The name, and names below it when `includesSubdomains` (TrustKit, Android, ATS).
        case domain
        /// An OkHttp pattern: `name`, `*.name` or `**.name`.
        case okhttp
    }

    /// The pattern as written (`example.com`, `**.example.com`), or "" for any host.
    public var pattern: String
    public var includesSubdomains: Bool
    public var matching: Matching
    public var requirements: [PinRequirement]
    /// The last day the set is enforced (`YYYY-MM-DD` at 00:00 UTC), as written; see ``isExpired(at:)``.
    public var expirationDay: Date?
    /// False for report-only configurations (TrustKit `enforcePinning: false`): a mismatch is
    /// reported, the connection goes on.
    public var enforced: Bool

    /// Creates a domain; `expirationDay` is the last day it is enforced.
    public init(
        pattern: String, includesSubdomains: Bool = false, matching: Matching, requirements: [PinRequirement], expirationDay: Date? = nil,
        enforced: Bool = true
    ) {
        self.pattern = pattern
        self.includesSubdomains = includesSubdomains
        self.matching = matching
        self.requirements = requirements
        self.expirationDay = expirationDay
        self.enforced = enforced
    }

    /// A domain whose expiry is an instant (``PinSet/expiration``) rather than a day.
    init(pattern: String, matching: Matching, requirements: [PinRequirement], expiration: Date?) {
        self.init(pattern: pattern, matching: matching, requirements: requirements)
        self.exactExpiration = expiration
    }

    /// Set only by ``init(pattern:matching:requirements:expiration:)``: the end of enforcement to the second.
    var exactExpiration: Date?

    /// All pins of the domain.
    public var pins: [Pin] { requirements.flatMap(\.pins) }

    /// Whether the domain's pins apply to `host`.
    public func applies(to host: String) -> Bool {
        switch matching {
        case .anyHost: true
        case .okhttp: HostMatching.okhttp(pattern: pattern, host: host)
        case .domain: HostMatching.domain(pattern, includesSubdomains: includesSubdomains, host: host)
        }
    }

    /// "example.com (and subdomains)".
    public var display: String {
        if matching == .anyHost { return "any host" }
        return includesSubdomains && matching == .domain ? "\(pattern) and its subdomains" : pattern
    }

    /// The last instant the domain is enforced: the end of the expiry day (TrustKit and Android stop
    /// enforcing after the day named), or a ``PinSet``'s own instant. Nil: never expires.
    public var enforcedUntil: Date? { exactExpiration ?? expirationDay.map(PinDates.endOfDay) }

    /// True after ``enforcedUntil``.
    public func isExpired(at time: Date) -> Bool { enforcedUntil.map { time > $0 } ?? false }
}

extension PinDocument {
    /// The domains that apply to `host`, as the platform picks them: OkHttp takes every matching
    /// pattern (any pin of any of them is enough); the others take the most specific domain.
    public func domains(for host: String) -> [PinDomain] {
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

    /// Checks a chain (leaf first) against the domain that applies to `host`, as an enforcing client
    /// would: every requirement of the domain needs a matching pin in its scope.
    ///
    /// - Parameters:
    ///   - chain: The validated chain, leaf first.
    ///   - host: The host connected to; `nil` takes the only domain, or all any-host domains.
    ///   - time: When to evaluate the expiry.
    public func evaluate(_ chain: [Certificate], host: String?, at time: Date = Date()) -> PinEvaluation {
        let candidates: [PinDomain]
        if let host {
            candidates = domains(for: host)
        } else if domains.count == 1 || domains.allSatisfy({ $0.matching == .anyHost }) {
            candidates = domains
        } else {
            candidates = []
        }
        let presented = chain.map { Pin.publicKey(of: $0) }
        // A most specific domain without pins is an exclusion (an Android domain-config without a
        // pin-set to inherit, TrustKit's TSKExcludeSubdomainFromParentPolicy): the host is not pinned.
        guard let domain = candidates.first, !domain.pins.isEmpty else {
            return PinEvaluation(domain: nil, requirements: [], verdict: .notPinned, presented: presented, presentedCertificates: chain.map { .certificate($0) })
        }
        var results: [PinEvaluation.RequirementResult] = []
        for requirement in domain.requirements {
            var matched: [PinEvaluation.Match] = []
            for (depth, certificate) in chain.enumerated() where requirement.admits(certificate, depth: depth) {
                for pin in requirement.pins where pin.matches(certificate) { matched.append(PinEvaluation.Match(pin: pin, depth: depth)) }
            }
            results.append(PinEvaluation.RequirementResult(requirement: requirement, matched: matched))
        }
        let satisfied = !results.isEmpty && results.allSatisfy { !$0.matched.isEmpty }
        let verdict: PinEvaluation.Verdict = satisfied ? .ok : (domain.isExpired(at: time) ? .expired : .drift)
        return PinEvaluation(domain: domain, requirements: results, verdict: verdict, presented: presented, presentedCertificates: chain.map { .certificate($0) })
    }

    private func uniquePins(_ pins: [Pin]) -> [Pin] {
        var seen = Set<Pin>()
        return pins.filter { seen.insert($0).inserted }
    }
}

/// What ``PinDocument/evaluate(_:host:at:)`` found for one chain.
public struct PinEvaluation: Sendable {
    /// The outcome.
    public enum Verdict: String, Sendable {
        /// Every requirement has a matching pin.
        case ok
        /// A requirement has no match: an enforcing client refuses the connection.
        case drift
        /// No match, but the set has expired and is no longer enforced.
        case expired
        /// No pin set in the document applies to the host.
        case notPinned = "not-pinned"
    }

    /// A pin that matched, and the chain position of the certificate it matched.
    public struct Match: Sendable {
        public var pin: Pin
        public var depth: Int
    }

    /// One requirement and the pins that matched it.
    public struct RequirementResult: Sendable {
        public var requirement: PinRequirement
        public var matched: [Match]
    }

    /// The domain that applied, if any.
    public var domain: PinDomain?
    public var requirements: [RequirementResult]
    public var verdict: Verdict
    /// The SPKI pins of the chain, leaf first.
    public var presented: [Pin]
    /// The whole-certificate pins of the chain, leaf first.
    public var presentedCertificates: [Pin]

    /// True when a client enforcing the document refuses the connection: a mismatch on an
    /// enforced, unexpired domain (report-only domains never refuse).
    public var refusesConnection: Bool { verdict == .drift && (domain?.enforced ?? true) }

    /// The evaluation in the one-set form of ``PinSet/Match`` (every pin of the domain, any match).
    public var summary: PinSet.Match {
        PinSet.Match(
            matched: requirements.flatMap { $0.matched.map { (pin: $0.pin, depth: $0.depth) } }, presented: presented, expired: verdict == .expired,
            presentedCertificatePins: presentedCertificates, expected: domain?.pins ?? [])
    }

    /// "no pin matched for api.example.com: expected …; presented …", or "" when it matched.
    public var mismatchDescription: String {
        guard verdict == .drift, let domain else { return "" }
        let failing = requirements.filter { $0.matched.isEmpty }
        let expected = failing.flatMap(\.requirement.pins)
        let wantsCertificates = expected.contains { $0.kind == .certificate }
        let wantsKeys = expected.contains { $0.kind != .certificate }
        let shown = (wantsKeys || !wantsCertificates ? presented : []) + (wantsCertificates ? presentedCertificates : [])
        let scope = failing.map(\.requirement.scope).contains(where: { $0 != .chain }) ? " in \(failing.map(\.requirement.scope.meaning).joined(separator: ", "))" : ""
        let host = domain.matching == .anyHost ? "" : " for \(domain.display)"
        return
            "no pin matched\(host)\(scope): expected one of \(expected.map(\.description).joined(separator: ", ")); presented \(shown.map(\.description).joined(separator: ", "))"
    }
}

/// Host-pattern matching as each platform does it, for `--check` to choose the pins that apply.
public enum HostMatching {
    /// OkHttp 4+: `**.x` matches x and any depth below; `*.x` exactly one label below; else exact.
    public static func okhttp(pattern: String, host: String) -> Bool {
        let pattern = comparable(pattern)
        let host = comparable(host)
        if pattern.hasPrefix("**.") {
            let suffix = String(pattern.dropFirst(3))
            return host == suffix || host.hasSuffix("." + suffix)
        }
        if pattern.hasPrefix("*.") {
            let suffix = String(pattern.dropFirst(2))
            guard host.hasSuffix("." + suffix) else { return false }
            let prefix = host.dropLast(suffix.count + 1)
            return !prefix.isEmpty && !prefix.contains(".")
        }
        return host == pattern
    }

    /// TrustKit, Android, ATS: the domain itself, and with include-subdomains any name below it.
    public static func domain(_ domain: String, includesSubdomains: Bool, host: String) -> Bool {
        let domain = comparable(domain)
        let host = comparable(host)
        return host == domain || (includesSubdomains && host.hasSuffix("." + domain))
    }

    /// A name as hosts are compared: lower-cased, and a Unicode one in its `xn--` form (as OkHttp
    /// canonicalises its patterns and as the URL parser gives hosts), so `bücher.example` in a pin
    /// document covers the host `xn--bcher-kva.example`.
    static func comparable(_ name: String) -> String { IDNA.comparableForm(of: name).lowercased() }
}

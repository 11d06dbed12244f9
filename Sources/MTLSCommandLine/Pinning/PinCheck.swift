#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// `mtls pin … --check PINFILE`: does a chain still satisfy a pin set, and when does what run out?
enum PinCheck {
    /// One chain to check: the chain of an `https://` source, or of the files given.
    struct Target {
        var source: String
        var chain: [Certificate]
        var host: String?
        var chainDescription: String
    }

    /// The outcome for one target (the library's, so `--check` and `--pins` agree).
    typealias Verdict = PinEvaluation.Verdict
    typealias RequirementResult = PinEvaluation.RequirementResult

    struct Result {
        var target: Target
        var domain: PinDomain?
        /// The most specific domain for the host when it carries no pins: it exempts the host.
        var exemptedBy: PinDomain?
        var requirements: [RequirementResult]
        var verdict: Verdict
        var calendar: [(date: Date, days: Int, what: String)]
        var warnings: [String]
    }

    /// Evaluates `document` for each target.
    static func run(document: PinDocument, pinFile: String, targets: [Target], host overrideHost: String?, now: Date, console: Console, json: Bool) throws(CommandFailure) -> Int32
    {
        var results: [Result] = []
        for target in targets {
            results.append(try evaluate(document: document, target: target, host: overrideHost ?? target.host, now: now))
        }
        if json {
            console.out(jsonReport(results, document: document, pinFile: pinFile, now: now).versioned(1).serialized())
        } else {
            for (index, result) in results.enumerated() {
                if index > 0 { console.out() }
                printReport(result, document: document, pinFile: pinFile, now: now, console: console)
            }
        }
        for result in results { for warning in result.warnings { console.err("warning: \(warning)") } }
        return results.allSatisfy { $0.verdict == .ok || $0.verdict == .expired } ? ExitCode.success : ExitCode.no
    }

    /// The role of each chain position, for labels.
    static func roles(_ chain: [Certificate]) -> [PinRole] {
        chain.enumerated().map { PinSources.role(of: $0.element, index: $0.offset) }
    }

    static func evaluate(document: PinDocument, target: Target, host: String?, now: Date) throws(CommandFailure) -> Result {
        // The report names the host the pins were looked up for: --host, the URL's, or the leaf's name that chose them.
        var target = target
        target.host = host
        let chain = target.chain
        let roles = roles(chain)
        var domains: [PinDomain]
        if let host {
            domains = document.domains(for: host)
        } else if document.domains.count == 1 || document.domains.allSatisfy({ $0.matching == .anyHost }) {
            domains = document.domains
        } else {
            // No host given: let the leaf's DNS names choose.
            domains = []
            for name in chain.first?.dnsNames ?? [] {
                domains = document.domains(for: name)
                if !domains.isEmpty {
                    target.host = name
                    break
                }
            }
            if domains.isEmpty {
                throw CommandFailure.usage(
                    "the pin file pins several hosts (\(document.domains.filter { !$0.pins.isEmpty }.map(\.display).joined(separator: "; "))) and none matches the certificate's names: say which with --host NAME",
                    command: "pin")
            }
        }
        var calendar: [(Date, Int, String)] = []
        var warnings: [String] = []
        for (index, certificate) in chain.enumerated() {
            calendar.append((certificate.notAfter, PinDates.days(from: now, to: certificate.notAfter), "notAfter of \(certificate.subject) [\(roles[index].rawValue)]"))
        }
        guard let domain = domains.first, !domain.pins.isEmpty else {
            calendar.sort { $0.0 < $1.0 }
            return Result(target: target, domain: nil, exemptedBy: domains.first, requirements: [], verdict: .notPinned, calendar: calendar, warnings: warnings)
        }
        if let day = domain.expirationDay {
            let end = PinDates.endOfDay(day)
            let days = PinDates.days(from: now, to: end)
            calendar.append((end, days, "pin set for \(domain.display) expires (no longer enforced after this day)"))
            if days >= 0, days <= 30 {
                warnings.append(
                    "the pin set for \(domain.display) expires on \(PinDates.string(day)) (\(PinDates.relative(days))): ship new pins before then, or clients stop pinning")
            }
        }
        if domain.pins.contains(where: { $0.kind == .publicKeySHA1 }) {
            warnings.append(
                "the pins for \(domain.display) include sha1/ pins: OkHttp checks them, but add the sha256/ pins of the same keys (`mtls pin` prints them) and drop the SHA-1 ones"
            )
        }
        let evaluation = PinDocument(format: document.format, domains: [domain]).evaluate(chain, host: nil, at: now)
        let results = evaluation.requirements
        let satisfied = evaluation.verdict == .ok
        let verdict = evaluation.verdict
        // Pins that protect nothing beyond today's chain.
        let spare = domain.pins.filter { pin in !chain.contains { pin.matches($0) } }
        if satisfied, spare.isEmpty {
            warnings.append("every pin for \(domain.display) is in the current chain: there is no backup pin for the day a key changes")
        }
        let matchedDepths = Set(results.flatMap { $0.matched.map(\.depth) })
        if satisfied, matchedDepths == [0], let leaf = chain.first {
            let days = PinDates.days(from: now, to: leaf.notAfter)
            if days <= PinRules.leafExpiryWarningDays, spare.isEmpty {
                warnings.append(
                    "only the leaf matches, and it expires on \(PinDates.string(leaf.notAfter)) (\(PinDates.relative(days))): if its renewal brings a new key, clients refuse the server"
                )
            }
        }
        calendar.sort { $0.0 < $1.0 }
        return Result(target: target, domain: domain, exemptedBy: nil, requirements: results, verdict: verdict, calendar: calendar, warnings: warnings)
    }

    static func printReport(_ result: Result, document: PinDocument, pinFile: String, now: Date, console: Console) {
        let chain = result.target.chain
        let roles = roles(chain)
        let allPins = result.domain?.pins ?? []
        let hasCertificatePins = allPins.contains { $0.kind == .certificate }
        let host = result.target.host ?? result.domain?.pattern ?? ""
        console.out("Pin set: \(pinFile) (\(document.format))")
        console.out("Checked: \(result.target.source) (\(result.target.chainDescription))")
        if let domain = result.domain {
            var line = "Applies: \(domain.display)"
            if !domain.enforced { line += " (report only: not enforced)" }
            if domain.requirements.count > 1 {
                line += "; every list must match: " + domain.requirements.map { $0.name ?? $0.scope.meaning }.joined(separator: " AND ")
            } else if let requirement = domain.requirements.first, requirement.scope != .chain {
                line += "; pins must match \(requirement.scope.meaning)"
            }
            console.out(line)
        }
        console.out()
        // OkHttp's own failure report: "Peer certificate chain:" then "sha256/…: subject".
        console.out("Peer certificate chain:")
        for (depth, certificate) in chain.enumerated() {
            let spki = Pin.publicKey(of: certificate)
            let pinned = allPins.contains { $0.matches(certificate) }
            var line = "    \(spki): \(certificate.subject)  [\(roles[depth].rawValue)]"
            if pinned { line += "  " + console.paint("✓ pinned", .green) }
            console.out(line)
            if hasCertificatePins { console.out("      \(Pin.certificate(certificate))") }
        }
        console.out("Pinned certificates for \(host.isEmpty ? "any host" : host):")
        if result.domain == nil {
            if let exemption = result.exemptedBy {
                console.out("    (none: \(pinFile) lists \(exemption.display) without pins, which exempts it from broader pin sets)")
            } else {
                console.out("    (none: no pin set in \(pinFile) applies to \(host.isEmpty ? "this chain" : host))")
            }
        }
        for requirement in result.requirements {
            if result.requirements.count > 1 || requirement.requirement.scope != .chain {
                console.out("  \(requirement.requirement.name ?? requirement.requirement.scope.rawValue) (\(requirement.requirement.scope.meaning)):")
            }
            for pin in requirement.requirement.pins {
                if let match = requirement.matched.first(where: { $0.pin == pin }) {
                    console.out("    \(pin)  " + console.paint("✓ presented", .green) + " (\(roles[match.depth].rawValue) \(chain[match.depth].subject))")
                } else if chain.contains(where: { pin.matches($0) }) {
                    console.out("    \(pin)  - in the chain, but not where this list looks")
                } else {
                    console.out("    \(pin)  - not presented")
                }
            }
        }
        console.out()
        console.out("Rotation calendar (as of \(PinDates.string(now))):")
        for item in result.calendar {
            console.out("    \(PinDates.string(item.date))  \(PinDates.relative(item.days).padded(to: 15))  \(item.what)")
        }
        console.out()
        let matchedCount = Set(result.requirements.flatMap { $0.matched.map(\.pin) }).count
        switch result.verdict {
        case .ok:
            console.out("Verdict: " + console.paint("OK", .green) + ": \(matchedCount) pin\(matchedCount == 1 ? " matches" : "s match")")
        case .expired:
            console.out(
                "Verdict: " + console.paint("EXPIRED", .yellow)
                    + ": no pin matches, but the set expired on \(result.domain?.expirationDay.map(PinDates.string) ?? "?") and is no longer enforced")
        case .notPinned:
            let pinned = document.domains.filter { !$0.pins.isEmpty }.map(\.display).joined(separator: "; ")
            if let exemption = result.exemptedBy {
                console.out("Verdict: " + console.paint("NOT PINNED", .red) + ": \(pinFile) pins \(pinned), and exempts \(exemption.display), which applies to \(host)")
            } else {
                console.out("Verdict: " + console.paint("NOT PINNED", .red) + ": \(pinFile) pins \(pinned), nothing for \(host.isEmpty ? "this chain" : host) (is --host right?)")
            }
        case .drift:
            let failing = result.requirements.filter { $0.matched.isEmpty }
            let what =
                failing.count == 1 && result.requirements.count == 1
                ? "none of the \(result.requirements[0].requirement.pins.count) pins matches"
                : failing.map { "\($0.requirement.name ?? $0.requirement.scope.rawValue) has no match" }.joined(separator: "; ")
            console.out("Verdict: " + console.paint("DRIFT", .red) + ": \(what); clients that enforce this set refuse the connection")
        }
    }

    static func jsonReport(_ results: [Result], document: PinDocument, pinFile: String, now: Date) -> JSON {
        let overall =
            results.allSatisfy { $0.verdict == .ok || $0.verdict == .expired }
            ? (results.contains { $0.verdict == .expired } ? "expired" : "ok") : (results.first { $0.verdict != .ok && $0.verdict != .expired }?.verdict.rawValue ?? "drift")
        let targets: [JSON] = results.map { result in
            let roles = roles(result.target.chain)
            let pins = result.domain?.pins ?? []
            let presented: [JSON] = result.target.chain.enumerated().map { depth, certificate in
                .object([
                    ("pin", .string(Pin.publicKey(of: certificate).description)),
                    ("certificatePin", .string(Pin.certificate(certificate).description)),
                    ("subject", .string(certificate.subject)),
                    ("level", .string(roles[depth].rawValue)),
                    ("notAfter", .string(Timestamp.rfc3339(certificate.notAfter))),
                    ("daysLeft", .int(PinDates.days(from: now, to: certificate.notAfter))),
                    ("pinned", .bool(pins.contains { $0.matches(certificate) })),
                ])
            }
            let requirements: [JSON] = result.requirements.map { requirement in
                .object([
                    ("scope", .string(requirement.requirement.scope.rawValue)),
                    ("name", JSON.optional(requirement.requirement.name)),
                    (
                        "pins",
                        .array(
                            requirement.requirement.pins.map { pin in
                                .object([("pin", .string(pin.description)), ("presented", .bool(requirement.matched.contains { $0.pin == pin }))])
                            })
                    ),
                    ("satisfied", .bool(!requirement.matched.isEmpty)),
                ])
            }
            return .object([
                ("source", .string(result.target.source)),
                ("host", JSON.optional(result.target.host)),
                ("chain", .string(result.target.chainDescription)),
                ("domain", JSON.optional(result.domain.map(\.display))),
                ("enforced", .bool(result.domain?.enforced ?? false)),
                ("expires", JSON.optional(result.domain?.expirationDay.map(PinDates.string))),
                ("verdict", .string(result.verdict.rawValue)),
                ("presented", .array(presented)),
                ("requirements", .array(requirements)),
                ("calendar", .array(result.calendar.map { .object([("date", .string(PinDates.string($0.date))), ("days", .int($0.days)), ("what", .string($0.what))]) })),
                ("warnings", JSON.strings(result.warnings)),
            ])
        }
        return .object([
            ("pinFile", .string(pinFile)),
            ("format", .string(document.format)),
            ("time", .string(Timestamp.rfc3339(now))),
            ("verdict", .string(overall)),
            ("targets", .array(targets)),
        ])
    }
}

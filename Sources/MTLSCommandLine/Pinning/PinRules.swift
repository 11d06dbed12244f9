#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// The rules each target imposes on a pin set, checked before anything is written.
///
/// - Fewer than two pins: an error for TrustKit and TrustKit-Android when enforcing (both refuse to
///   start, "This might brick your App"), a warning for every other deployable format.
/// - Only leaf pins, and that leaf expires within 90 days: a warning (the app breaks at renewal
///   unless the new key is pinned already).
/// - curl compares the leaf only: CA pins are dropped with a warning.
/// - Expiry: TrustKit, Android and HPKP carry it; OkHttp, ATS and curl cannot (warning).
/// - Hosts: TrustKit, Android and ATS have no wildcards (`*.x` becomes `x` + subdomains, with a
///   warning that this covers more); OkHttp 3.x has no `**.`.
enum PinRules {
    /// The result: what to write, under which hosts, and what to tell the user.
    struct Outcome {
        var entries: [PinEntry]
        var options: PinOutputOptions
        var warnings: [String] = []
        var notes: [String] = []
    }

    /// How close a leaf's expiry must be for a leaf-only pin set to be flagged.
    static let leafExpiryWarningDays = 90

    static func apply(_ input: [PinEntry], format: PinFormat, options: PinOutputOptions, now: Date) throws(CommandFailure) -> Outcome {
        var outcome = Outcome(entries: input, options: options)
        var entries = input
        let command = "pin"

        // What the format can hold.
        if format.pinsCertificates {
            let keys = entries.filter { $0.certificate == nil }
            if !keys.isEmpty {
                outcome.warnings.append(
                    "\(keys.map(\.label).joined(separator: ", ")) \(keys.count == 1 ? "has" : "have") no certificate yet, so \(format == .der ? "no .cer file can be written" : "no whole-certificate pin can be made"); pin keys (SPKI) instead to cover a backup key"
                )
                entries.removeAll { $0.certificate == nil }
            }
            if format == .cert {
                entries = entries.map { entry in
                    var copy = entry
                    if let certificate = entry.certificate { copy.pin = .certificate(certificate) }
                    return copy
                }
            }
        }
        if format == .curl {
            let ca = entries.filter { $0.role.isCA }
            if !ca.isEmpty {
                outcome.warnings.append("curl --pinnedpubkey checks the leaf only; CA pins were left out: \(ca.map(\.label).joined(separator: "; "))")
                entries.removeAll { $0.role.isCA }
            }
            if entries.isEmpty {
                throw CommandFailure(
                    ExitCode.badInput, "nothing left to pin for curl: it compares the server's own (leaf) key, and the sources hold only CA certificates",
                    hint: "give the server's certificate (or https://host), or a backup key")
            }
        }
        if entries.isEmpty {
            throw CommandFailure(ExitCode.badInput, "nothing to pin: the sources hold no certificate at the chosen --level and no backup key")
        }

        // Hosts.
        var hosts = outcome.options.hosts
        if format.needsHost, hosts.isEmpty {
            throw CommandFailure.usage("--format \(format.rawValue) pins named hosts: give --host NAME (or an https:// source)", command: command)
        }
        let isOkHttp = format == .okhttp || format == .okhttpJava
        if format.needsHost || format == .hpkp {
            for (index, host) in hosts.enumerated() where host.oneLabelWildcard && !isOkHttp {
                hosts[index].oneLabelWildcard = false
                hosts[index].includesSubdomains = true
                outcome.warnings.append(
                    "\(format.platform) has no wildcard hosts: '*.\(host.name)' is written as \(host.name) with subdomains included, which also covers \(host.name) itself and names more than one label below it"
                )
            }
            if isOkHttp, outcome.options.okhttpVersion < 4 {
                for host in hosts where host.includesSubdomains {
                    outcome.warnings.append(
                        "OkHttp 3.x has no '**.' pattern (it accepts '**.\(host.name)' and never matches it): \(host.name) and *.\(host.name) are pinned, so names two or more labels below \(host.name) are NOT pinned"
                    )
                }
            }
        }
        outcome.options.hosts = hosts

        // Expiry.
        if let expires = outcome.options.expires {
            if !format.carriesExpiry, format != .spki, format != .cert {
                let what = isOkHttp ? "it is noted in a comment only" : "it is left out"
                outcome.warnings.append("\(format.platform) has no pin expiry; --expires \(PinDates.string(expires)) cannot be enforced there, \(what)")
            }
            if PinDates.endOfDay(expires) < now {
                outcome.warnings.append("--expires \(PinDates.string(expires)) has passed: clients stop enforcing these pins after that day")
            }
        } else if format == .android || format.isTrustKit {
            outcome.notes.append("no --expires: these pins never expire, so an app that is not updated refuses the server once all its pinned keys have changed")
        }

        // Counting pins as the client will.
        let counted = Set(entries.map(\.pin))
        if counted.count < 2 {
            let only = entries.first.map { "\($0.pin) (\($0.label))" } ?? "none"
            if format.isTrustKit, outcome.options.enforce {
                throw CommandFailure(
                    ExitCode.usage,
                    "\(format.platform) refuses to start with fewer than two pins when it enforces pinning (\"This might brick your App\"); only one pin here: \(only)",
                    hint: "add a backup pin: a public key or CSR of a key not yet in use (mtls pin CHAIN backup.csr …), or pass --report-only")
            }
            if format != .spki && format != .cert {
                outcome.warnings.append(
                    "only one pin, \(only): with no backup pin, clients that enforce this set refuse the server from the day its key changes until they are updated; add a backup key (a public key or CSR)"
                )
            }
        }

        // A leaf-only pin set whose leaf is about to be renewed.
        let leaves = entries.filter { $0.role == .leaf }
        if !leaves.isEmpty, leaves.count == entries.count, let soonest = leaves.compactMap(\.notAfter).min() {
            let days = PinDates.days(from: now, to: soonest)
            if days <= leafExpiryWarningDays {
                let when = days < 0 ? "expired on \(PinDates.string(soonest))" : "expires on \(PinDates.string(soonest)) (\(PinDates.relative(days)))"
                outcome.warnings.append(
                    "the only pins are of the leaf, which \(when): its renewal may come with a new key that no client has pinned; pin a backup key or the issuing CA as well")
            }
        }

        // Per-format notes.
        if format == .hpkp, !entries.contains(where: { $0.role == .backup }) {
            outcome.warnings.append(
                "RFC 7469 requires a backup pin that matches no certificate of the served chain; browsers ignore a Public-Key-Pins header without one: add a backup key")
        }
        if format == .ats {
            let (ca, leaf) = ATSFormat.lists(entries)
            if !ca.isEmpty, !leaf.isEmpty {
                outcome.notes.append(
                    "ATS requires a match in BOTH lists: one of \(leaf.count) leaf key\(leaf.count == 1 ? "" : "s") AND one of \(ca.count) CA key\(ca.count == 1 ? "" : "s")")
            }
        }
        outcome.entries = entries
        return outcome
    }
}

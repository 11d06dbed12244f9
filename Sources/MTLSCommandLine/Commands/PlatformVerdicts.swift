#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// `mtls verify --platform apple|android|java|chrome|all`: would these clients accept the chain?
///
/// One verdict per platform with every rule that fails and its fix (``PlatformEvaluator``), in
/// text or JSON. Exit code: 1 when any requested platform refuses; 0 when each accepts, including
/// an Android verdict that needs the app's network security config (`conditional`), which the
/// text and JSON spell out. The chain is validated with the RFC 5280 profile: the platforms' own
/// key and algorithm rules take the place of the Web PKI profile.
enum PlatformVerdicts {
    static let option = OptionSpec(
        .platform, valueName: "LIST", repeatable: true,
        help: "Judge as apple, android, java, chrome or all would (comma-separated); exit 1 if one refuses.",
        kind: .choice(["apple", "android", "java", "chrome", "all"]))

    static let fetchOption = OptionSpec(
        .fetchAIA,
        help: "With --platform: fetch a missing intermediate from the certificate's authorityInfoAccess (http://), as iOS, macOS and Chrome do.")

    /// The platforms asked for, or nil without `--platform`.
    static func requested(_ arguments: ParsedArguments) throws(CommandFailure) -> [Platform]? {
        let values = arguments.values(.platform)
        if values.isEmpty { return nil }
        var platforms: [Platform] = []
        for item in values.flatMap({ $0.split(separator: ",").map { $0.trimmingWhitespace().lowercased() } }) {
            let add: [Platform]
            if item == "all" {
                add = Platform.allCases
            } else if let platform = Platform(rawValue: item) {
                add = [platform]
            } else {
                throw CommandFailure.usage("--platform '\(item)' must be apple, android, java, chrome or all", command: "verify")
            }
            for platform in add where !platforms.contains(platform) { platforms.append(platform) }
        }
        return platforms
    }

    /// Evaluates each job and prints the verdicts; returns the exit code.
    static func run(
        _ platforms: [Platform], jobs: [(source: String, leaf: Certificate, extra: [Certificate])], policy: TrustPolicy, pinning: PinDocument?,
        fetchesIssuers: Bool = false, json: Bool, console: Console
    ) throws(CommandFailure) -> Int32 {
        let constraints = JavaAlgorithmConstraints.installed() ?? .openJDK17Default
        var results: [JSON] = []
        var anyRefused = false
        for (index, job) in jobs.enumerated() {
            let result: (evaluation: TrustEvaluation, verdicts: [PlatformVerdict])
            do throws(MTLSTrustError) {
                result = try PlatformEvaluator.evaluate(
                    job.leaf, extraIntermediates: job.extra, policy: policy, pinning: pinning, javaConstraints: constraints, platforms: platforms,
                    fetchIssuer: fetchesIssuers ? { IssuerFetch.fetch($0) } : nil)
            } catch {
                throw CommandFailure(error)
            }
            let refused = result.verdicts.contains { $0.outcome == .refused }
            anyRefused = anyRefused || refused
            let anchor = PlatformEvaluator.anchorKind(of: result.evaluation, policy: policy)
            if json {
                results.append(self.json(job.source, result.evaluation, result.verdicts, anchor: anchor, policy: policy, constraints: constraints))
            } else {
                if index > 0 { console.out() }
                printText(job.source, result.evaluation, result.verdicts, anchor: anchor, policy: policy, console: console)
            }
        }
        if json {
            // docs/schemas/verify-platform.schema.json
            if jobs.count == 1, let only = results.first {
                console.out(only.versioned(1).serialized())
            } else {
                console.out(
                    JSON.object([("refused", .bool(anyRefused)), ("count", .int(results.count)), ("results", .array(results))]).versioned(1).serialized())
            }
        }
        return anyRefused ? ExitCode.no : ExitCode.success
    }

    static func outcomeText(_ outcome: PlatformVerdict.Outcome) -> String {
        switch outcome {
        case .accepted: "accepted"
        case .conditional: "accepted only with app configuration"
        case .refused: "refused"
        }
    }

    /// The verdicts as text: one line per platform, the first failure inline as "refused — why; fix".
    static func printText(
        _ source: String, _ evaluation: TrustEvaluation, _ verdicts: [PlatformVerdict], anchor: PlatformAnchorKind, policy: TrustPolicy, console: Console
    ) {
        let leaf = evaluation.chain.first
        let root = evaluation.chain.count > 1 ? evaluation.chain.last : nil
        let anchorText =
            !PlatformEvaluator.reachesAnchor(evaluation) ? "no anchor reached" : (anchor == .publicRoot ? "public root" : "private anchor")
        var head = "\(source): \(leaf?.displayName ?? "no certificate")"
        if let root { head += " ← \(root.displayName)" }
        head += " (\(anchorText))"
        console.out(console.paint(head, .bold))
        // With --revocation: the URL-by-URL evidence once; each verdict below applies it as its platform does.
        if let report = evaluation.revocation {
            RevocationOutput.print(
                report, chain: evaluation.chain, console: console, verbose: false, heading: "Revocation (fetched once; each platform applies it as it does by default):")
        }
        for verdict in verdicts {
            let style: Console.Style = verdict.outcome == .accepted ? .green : (verdict.outcome == .refused ? .red : .yellow)
            var line = "  \(verdict.platform.displayName): \(console.paint(outcomeText(verdict.outcome), style))"
            if let first = verdict.failures.first { line += " — \(first.reason); \(first.fix.commandLine)" }
            console.out(line)
            for (number, failure) in verdict.failures.enumerated() {
                if number > 0 { console.out("    and: \(failure.reason); \(failure.fix.commandLine)") }
                console.out("    " + console.paint("\(failure.rule.code) (depth \(failure.depth)) · \(failure.rule.source)", .dim))
            }
            for note in verdict.notes { console.out("    note: \(note)") }
        }
        let refusing = verdicts.filter { $0.outcome == .refused }.map(\.platform.displayName)
        let at = Timestamp.rfc3339(policy.evaluationTime ?? Date())
        let configuring = verdicts.filter { $0.outcome == .conditional }.map(\.platform.displayName)
        let condition = configuring.isEmpty ? "" : " (\(configuring.joined(separator: ", ")) with app configuration)"
        if refusing.isEmpty {
            console.out("Verdict: \(console.paint("accepted", .green)) by \(verdicts.count == 1 ? "the platform" : "all \(verdicts.count) platforms")\(condition) at \(at)")
        } else {
            console.out("Verdict: \(console.paint("refused", .red)) by \(refusing.count) of \(verdicts.count) (\(refusing.joined(separator: ", "))) at \(at)")
        }
    }

    static func json(
        _ source: String, _ evaluation: TrustEvaluation, _ verdicts: [PlatformVerdict], anchor: PlatformAnchorKind, policy: TrustPolicy,
        constraints: JavaAlgorithmConstraints
    ) -> JSON {
        let platforms: [JSON] = verdicts.map { verdict in
            .object([
                ("platform", .string(verdict.platform.rawValue)),
                ("name", .string(verdict.platform.displayName)),
                ("verdict", .string(verdict.outcome.rawValue)),
                (
                    "failures",
                    .array(
                        verdict.failures.map { failure in
                            .object([
                                ("code", .string(failure.rule.code)), ("rule", .string(failure.rule.id)), ("depth", .int(failure.depth)),
                                ("subject", .string(failure.subject)), ("reason", .string(failure.reason)), ("fix", .string(failure.fix.commandLine)),
                                ("configurable", .bool(failure.isConfigurable)), ("source", .string(failure.rule.source)), ("url", .string(failure.rule.url)),
                            ])
                        })
                ),
                ("notes", .strings(verdict.notes)),
                (
                    "fetchedIssuers",
                    .array(
                        verdict.fetchedIssuers.map { item in
                            .object([
                                ("url", .string(item.url)), ("certificates", .strings(item.certificates.map(\.subject))),
                                ("failure", JSON.optional(item.failure)),
                            ])
                        })
                ),
            ])
        }
        return .object(
            [
                ("source", .string(source)),
                ("refused", .bool(verdicts.contains { $0.outcome == .refused })),
                ("time", .string(Timestamp.rfc3339(policy.evaluationTime ?? Date()))),
                ("host", JSON.optional(policy.hostname)),
                ("anchor", .string(anchor.rawValue)),
                ("chain", .strings(evaluation.chain.map(\.subject))),
                ("javaDisabledAlgorithms", .string(constraints.origin)),
                ("platforms", .array(platforms)),
            ] + (evaluation.revocation.map { [("revocation", RevocationOutput.json($0))] } ?? []))
    }
}

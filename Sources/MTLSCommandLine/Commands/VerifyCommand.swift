#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// `mtls verify CERT [CERT...]`: is this certificate trusted by these anchors, for this host, at this time?
enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify",
        abstract: "Evaluate a certificate chain against an anchor set, with the reasons.",
        discussion: """
            Evaluates the first certificate (the leaf) with the rest as candidate intermediates. With \
            --anchors, ONLY those anchors are trusted (add --system-roots to trust the system's too); \
            without --anchors, the system roots are used. Inputs may be PEM, DER or PKCS#12. The verdict \
            is judged as the clients judge (--profile clients, the default: RFC 5280 and the rules curl, \
            OpenSSL, Java, Chrome and the platforms enforce); Baseline Requirements findings that no client \
            enforces are listed as warnings, and fail only with --profile webpki. The output names the \
            profile that judged. --revocation [hard|soft] (alone: hard) fetches CRLs, delta CRLs and OCSP and lists every URL.
            """,
        arguments: [ArgumentSpec(name: "CERT", help: "The leaf certificate, then candidate intermediates.", variadic: true)],
        options: [
            OptionSpec(.anchors, valueName: "FILE", repeatable: true, help: "Trust only the certificates in FILE, or in a directory such as /etc/ssl/certs (repeatable)."),
            OptionSpec(.systemRoots, help: "Also trust the system's roots when --anchors is given."),
            OptionSpec(.intermediates, valueName: "FILE", repeatable: true, help: "Untrusted intermediates for path building (repeatable)."),
            OptionSpec(.host, valueName: "NAME", help: "DNS name or IP literal the leaf must carry in its subjectAltName."),
            OptionSpec(.noHostnameCheck, help: "Skip the name check (validatesDomainName = NO)."),
        ] + ProfileOptions.specs + [
            OptionSpec(.at, valueName: "TIME", help: "Evaluation time: RFC 3339 (2030-01-01T00:00:00Z) or Unix seconds."),
            OptionSpec(
                .purpose, valueName: "PURPOSE", help: "What the leaf must be good for: server, client or any.",
                kind: .choice(TrustPolicy.Purpose.allCases.map(\.rawValue)), defaultValue: "server"),
            OptionSpec(.partialChain, help: "Accept a chain that ends at any anchor, not only a self-signed root."),
            OptionSpec(.crl, valueName: "FILE", repeatable: true, help: "Check revocation against the CRLs in FILE (repeatable)."),
            RevocationOutput.option,
            OptionSpec(.maxDepth, valueName: "N", help: "The longest chain accepted (OpenSSL's verify depth)."),
            OptionSpec(.pin, valueName: "SPEC", repeatable: true, help: "Also require a chain certificate to match this pin (sha256/BASE64)."),
            OptionSpec(.pins, valueName: "FILE", help: "Also require a match with a pin from FILE."),
            OptionSpec(.password, valueName: "SPEC", help: "Password of PKCS#12 inputs (pass:, env:, file:, fd:, stdin)."),
            OptionSpec(.batch, help: "Treat every CERT file as a separate leaf; one result each."),
            PlatformVerdicts.option,
            PlatformVerdicts.fetchOption,
            OptionSpec(.json, help: "Print one JSON object."),
            OptionSpec(.verbose, short: "-v", help: "Show every certificate in full and the paths tried."),
        ],
        examples: [
            "mtls verify server.pem --anchors ca.pem --host api.example.com",
            "mtls verify leaf.der intermediate.pem --anchors root.pem --at 2030-01-01T00:00:00Z",
            "mtls verify self-signed.cer --anchors self-signed.cer --host 192.168.1.10",
            "mtls verify --batch certs/*.pem --anchors root.pem --intermediates int.pem --json",
            "mtls verify server.pem --anchors ca.pem --host api.example.com --platform all",
            "mtls verify alice.pem --anchors ca.pem --purpose client --email alice@example.com --key-usage digitalSignature",
            "mtls verify leaf.pem --anchors ca.pem --profile rfc5280",
            "mtls verify client.pem --anchors root.pem --purpose client --revocation hard -v",
        ])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        let purposeText = arguments.value(.purpose) ?? "server"
        guard let purpose = TrustPolicy.Purpose(rawValue: purposeText) else {
            throw CommandFailure.usage("--purpose '\(purposeText)' must be server, client or any", command: "verify")
        }
        if arguments.value(.host) != nil && arguments.flag(.noHostnameCheck) {
            throw CommandFailure.usage("--host and --no-hostname-check contradict each other", command: "verify")
        }
        let time = try Inputs.time(arguments.value(.at))
        let depth = try Inputs.integer(arguments.value(.maxDepth), option: "--max-depth", command: "verify", range: 0...10_000)
        let password = try SecretSpec.resolve(arguments.value(.password), option: "--password", prompt: nil, console: console)

        var anchors: [Certificate] = []
        for path in arguments.values(.anchors) {
            anchors += try VerifyCommand.certificates(path, password: password, console: console)
        }
        var intermediates: [Certificate] = []
        for path in arguments.values(.intermediates) {
            intermediates += try VerifyCommand.certificates(path, password: password, console: console)
        }
        var crls: [CertificateRevocationList] = []
        for path in arguments.values(.crl) { crls += try Inputs.crls(path, console: console) }
        let pinning = try Inputs.pinDocument(pins: arguments.values(.pin), pinsFile: arguments.value(.pins), console: console)

        let useSystem = anchors.isEmpty || arguments.flag(.systemRoots)
        let host = arguments.flag(.noHostnameCheck) ? nil : arguments.value(.host)
        if let host, !host.unicodeScalars.allSatisfy(\.isASCII) {
            // An internationalised name is checked in its xn-- form; one UTS 46 refuses is a typo.
            do { _ = try IDNA.toASCII(host, options: .url) } catch {
                throw CommandFailure.usage("--host \(DisplayText.quoted(host)) is not a valid host name: \(error.description)", command: "verify")
            }
        }
        var policy = TrustPolicy(
            anchors: anchors, includesSystemRoots: useSystem, intermediates: intermediates, evaluationTime: time ?? Date(),
            purpose: purpose, hostname: host, allowsPartialChain: arguments.flag(.partialChain), crls: crls, maximumDepth: depth)
        try ProfileOptions.apply(arguments, to: &policy, command: "verify")
        try RevocationOutput.apply(arguments, to: &policy, command: "verify")
        let evaluator: TrustEvaluator
        do throws(MTLSTrustError) {
            // MTLS_TRUST_DIFFERENTIAL=FILE (scripts/trust-differential.sh): both trust paths on every
            // leaf, their verdicts appended to FILE. A test switch of the program, not of the library.
            let differential = ProcessInfo.processInfo.environment["MTLS_TRUST_DIFFERENTIAL"].flatMap { $0.isEmpty ? nil : $0 }
            evaluator = try TrustEvaluator(policy: policy, differentialLog: differential)
        } catch {
            throw CommandFailure(error)
        }

        // The leaves: one per file with --batch, else the first certificate of all inputs.
        var jobs: [(source: String, leaf: Certificate, extra: [Certificate])] = []
        if arguments.flag(.batch) {
            for path in arguments.positionals {
                let certificates = try VerifyCommand.certificates(path, password: password, console: console)
                if let leaf = certificates.first { jobs.append((path, leaf, Array(certificates.dropFirst()))) }
            }
        } else {
            var all: [Certificate] = []
            for path in arguments.positionals { all += try VerifyCommand.certificates(path, password: password, console: console) }
            guard let leaf = all.first else { throw CommandFailure(ExitCode.badInput, "no certificate was given") }
            jobs.append((arguments.positionals.first ?? "-", leaf, Array(all.dropFirst())))
        }

        if let platforms = try PlatformVerdicts.requested(arguments) {
            return try PlatformVerdicts.run(
                platforms, jobs: jobs, policy: policy, pinning: pinning, fetchesIssuers: arguments.flag(.fetchAIA), json: arguments.flag(.json), console: console)
        }
        if arguments.flag(.fetchAIA) {
            throw CommandFailure.usage("--fetch-aia judges as the platforms that fetch missing intermediates: give --platform too", command: "verify")
        }

        var results: [JSON] = []
        var allTrusted = true
        for (index, job) in jobs.enumerated() {
            let evaluation = evaluator.evaluate(job.leaf, extraIntermediates: job.extra)
            let pinResult = pinning.map { $0.evaluate(evaluation.chain, host: host, at: time ?? Date()) }
            let pinMatch = pinResult?.summary
            let trusted = evaluation.isTrusted && !(pinResult?.refusesConnection ?? false)
            allTrusted = allTrusted && trusted
            if arguments.flag(.json) {
                results.append(json(job.source, evaluation, policy: policy, anchors: anchors, pinMatch: pinMatch, trusted: trusted))
            } else if arguments.flag(.batch) && !arguments.flag(.verbose) {
                let verdict = trusted ? console.paint("trusted", .green) : console.paint("NOT trusted", .red)
                let reason = evaluation.findings.first.map { ": \($0.reason)" } ?? (pinMatch.map { $0.isSatisfied ? "" : ": no pin matched" } ?? "")
                console.out("\(job.source): \(verdict)\(reason)")
            } else {
                if index > 0 { console.out() }
                if jobs.count > 1 { console.out(console.paint(job.source, .bold)) }
                printHuman(evaluation, policy: policy, anchors: anchors, pinMatch: pinMatch, trusted: trusted, console: console, verbose: arguments.flag(.verbose))
            }
        }
        if arguments.flag(.json) {
            if arguments.flag(.batch) {
                let count = results.count
                let trustedCount = results.filter { if case .object(let pairs) = $0 { pairs.contains { $0.0 == "trusted" && $0.1 == .bool(true) } } else { false } }.count
                console.out(
                    JSON.object([("trusted", .bool(allTrusted)), ("count", .int(count)), ("trustedCount", .int(trustedCount)), ("results", .array(results))]).versioned(1)
                        .serialized())
            } else if let only = results.first {
                console.out(only.versioned(1).serialized())
            }
        }
        return allTrusted ? ExitCode.success : ExitCode.no
    }

    /// `Inputs.certificates` (plain certificate files skip the general PEM reader inside
    /// `CertificateLoader`).
    static func certificates(_ path: String, password: Secret?, console: Console) throws(CommandFailure) -> [Certificate] {
        try Inputs.certificates(path, password: password, console: console)
    }

    private static func json(_ source: String, _ evaluation: TrustEvaluation, policy: TrustPolicy, anchors: [Certificate], pinMatch: PinSet.Match?, trusted: Bool)
        -> JSON
    {
        let chain: [JSON] = evaluation.chain.enumerated().map { depth, certificate in
            CertificateDescription.json(certificate, depth: depth, extra: [("isAnchor", .bool(isAnchor(certificate, evaluation: evaluation, policy: policy, anchors: anchors)))])
        }
        func entries(_ list: [TrustFinding]) -> [JSON] {
            list.map { finding in
                .object([
                    ("depth", .int(finding.depth)), ("subject", .string(finding.subject)), ("error", .string(finding.name)),
                    ("code", .int(Int(finding.code))), ("reason", .string(finding.reason)), ("hint", .string(finding.hint.commandLine)),
                ])
            }
        }
        let findings = entries(evaluation.findings)
        var pairs: [(String, JSON)] = [
            ("source", .string(source)),
            ("trusted", .bool(trusted)),
            ("summary", .string(trusted ? TrustSummary.proceed.rawValue : (evaluation.isTrusted ? TrustSummary.recoverableTrustFailure.rawValue : evaluation.summary.rawValue))),
            ("purpose", .string(policy.purpose.rawValue)),
            ("profile", .string(ProfileOptions.name(policy.profile))),
            ("host", JSON.optional(policy.hostname)),
            ("email", JSON.optional(policy.email)),
            ("keyUsage", .strings(policy.requiredKeyUsage.names)),
            ("time", .string(Timestamp.rfc3339(policy.evaluationTime ?? Date()))),
            ("anchors", .string(policy.anchors.isEmpty ? "system" : (policy.includesSystemRoots ? "given+system" : "given"))),
            ("chain", .array(chain)),
            ("findings", .array(findings)),
            ("warnings", .array(entries(evaluation.warnings))),
            ("pathsTried", .int(evaluation.pathsTried)),
        ]
        if let report = evaluation.revocation { pairs.append(("revocation", RevocationOutput.json(report))) }
        if let pinMatch {
            pairs.append(
                (
                    "pins",
                    .object([
                        ("satisfied", .bool(pinMatch.isSatisfied)),
                        ("expired", .bool(pinMatch.expired)),
                        ("expected", .strings(pinMatch.expected.map(\.description))),
                        ("presented", .strings(pinMatch.presented.map(\.description))),
                        ("matched", .array(pinMatch.matched.map { .object([("pin", .string($0.pin.description)), ("depth", .int($0.depth))]) })),
                    ])
                ))
        }
        return .object(pairs)
    }

    private static func isAnchor(_ certificate: Certificate, evaluation: TrustEvaluation, policy: TrustPolicy, anchors: [Certificate]) -> Bool {
        if anchors.contains(certificate) { return true }
        return policy.includesSystemRoots && evaluation.isTrusted && certificate == evaluation.chain.last
    }

    private static func printHuman(
        _ evaluation: TrustEvaluation, policy: TrustPolicy, anchors: [Certificate], pinMatch: PinSet.Match?, trusted: Bool, console: Console, verbose: Bool
    ) {
        console.out("Chain (as built):")
        for (depth, certificate) in evaluation.chain.enumerated() {
            let role: String? = isAnchor(certificate, evaluation: evaluation, policy: policy, anchors: anchors) ? "anchor" : (depth == 0 ? "leaf" : nil)
            let lines =
                verbose
                ? ["  \(depth)  (\(role ?? "intermediate"))"] + CertificateDescription.detailed(certificate, console: console, indent: "     ")
                : CertificateDescription.chainEntry(certificate, depth: depth, role: role, console: console)
            lines.forEach { console.out($0) }
        }
        console.out()
        let at = Timestamp.rfc3339(policy.evaluationTime ?? Date())
        let hostText = policy.hostname.map { " as \($0)" + CertificateDescription.spelled($0) }
        let forWhat =
            "\(policy.purpose == .any ? "any purpose" : "\(policy.purpose.rawValue) authentication")" + (hostText ?? "")
            + (policy.email.map { " as <\($0)>" } ?? "") + (policy.requiredKeyUsage.isEmpty ? "" : " with key usage \(policy.requiredKeyUsage.names.joined(separator: ","))")
        console.out("Profile: \(ProfileOptions.description(policy.profile))")
        if trusted {
            console.out("Verdict: \(console.paint("trusted", .green)) for \(forWhat) at \(at)")
        } else {
            let summary = evaluation.isTrusted ? "pin mismatch" : evaluation.summary.rawValue
            console.out("Verdict: \(console.paint("NOT trusted", .red)) for \(forWhat) at \(at) (\(summary))")
        }
        for finding in evaluation.findings {
            console.out("  \(console.paint("✗", .red)) depth \(finding.depth): \(finding.reason)")
            console.out("    \(console.paint(finding.name, .dim))")
            if !finding.hint.isEmpty { console.out("    hint: \(finding.hint.commandLine)") }
        }
        // Under the clients' profile: what a public CA could not issue, not counted in the verdict.
        for warning in evaluation.warnings {
            console.out("  \(console.paint("⚠", .yellow)) depth \(warning.depth): \(warning.reason)")
            console.out("    \(console.paint(warning.name, .dim)) (warning: Baseline Requirements, not enforced by clients)")
            if !warning.hint.isEmpty { console.out("    hint: \(warning.hint.commandLine)") }
        }
        if let report = evaluation.revocation { RevocationOutput.print(report, chain: evaluation.chain, console: console, verbose: verbose) }
        if let pinMatch {
            if pinMatch.expired {
                console.out("  pins: the pin set expired; not enforced")
            } else if pinMatch.isSatisfied {
                for match in pinMatch.matched { console.out("  \(console.paint("✓", .green)) pin \(match.pin) matches depth \(match.depth)") }
            } else {
                console.out("  \(console.paint("✗", .red)) no pin matched the chain")
                console.out("    expected:  \(pinMatch.expected.map(\.description).joined(separator: ", "))")
                console.out("    presented: \(pinMatch.presented.map(\.description).joined(separator: ", "))")
            }
        }
        if policy.hostname == nil && policy.purpose == .server && trusted {
            console.out("  note: no host name was checked (pass --host NAME)")
        }
        if verbose { console.out("  paths tried: \(evaluation.pathsTried)") }
    }
}

/// `--profile`, `--email` and `--key-usage`: what the chain must satisfy beyond path validation,
/// shared by `verify` and `probe` (`probe` takes `--profile` only).
enum ProfileOptions {
    static let profileSpec = OptionSpec(
        .profile, valueName: "PROFILE",
        help:
            "clients (default: RFC 5280 and what curl, OpenSSL, Java, Chrome and the platforms enforce; Baseline Requirements findings are warnings), webpki (they fail: what a public CA must meet) or rfc5280 (RFC 5280 alone).",
        kind: .choice(["clients", "webpki", "rfc5280"]))
    static let specs: [OptionSpec] = [
        profileSpec,
        OptionSpec(.email, valueName: "ADDRESS", help: "Email address (rfc822Name) the leaf must carry in its subjectAltName."),
        OptionSpec(
            .keyUsage, valueName: "LIST",
            help: "Key usages the leaf must allow, comma-separated RFC 5280 names (digitalSignature,keyEncipherment)."),
    ]

    /// The name of a profile on the command line and in JSON.
    static func name(_ profile: TrustPolicy.Profile) -> String {
        switch profile {
        case .automatic: "clients"
        case .rfc5280: "rfc5280"
        case .webPKI: "webpki"
        }
    }

    /// The profile and what it means, for the text output.
    static func description(_ profile: TrustPolicy.Profile) -> String {
        switch profile {
        case .webPKI: "webpki (RFC 5280 and the CA/Browser Forum Baseline Requirements; --profile rfc5280 for RFC 5280 alone)"
        case .automatic:
            "clients (RFC 5280 and the rules real clients enforce, the default; Baseline Requirements findings are warnings, --profile webpki makes them failures)"
        case .rfc5280: "rfc5280 (RFC 5280 alone; --profile webpki adds the CA/Browser Forum Baseline Requirements)"
        }
    }

    /// `--profile NAME`, or nil when the option is absent.
    static func profile(_ arguments: ParsedArguments, command: String) throws(CommandFailure) -> TrustPolicy.Profile? {
        guard let text = arguments.value(.profile) else { return nil }
        switch text.lowercased() {
        case "clients": return .automatic
        case "webpki": return .webPKI
        case "rfc5280": return .rfc5280
        default: throw CommandFailure.usage("--profile '\(text)' must be clients, webpki or rfc5280", command: command)
        }
    }

    /// Sets the policy's profile, email and key-usage requirements from the options.
    static func apply(_ arguments: ParsedArguments, to policy: inout TrustPolicy, command: String) throws(CommandFailure) {
        if let profile = try profile(arguments, command: command) { policy.profile = profile }
        if let email = arguments.value(.email) {
            guard email.contains("@"), !email.hasPrefix("@"), !email.hasSuffix("@"), email.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw CommandFailure.usage("--email '\(email)' is not an email address (local@domain, ASCII)", command: command)
            }
            policy.email = email
        }
        if let list = arguments.value(.keyUsage) {
            var usage: KeyUsage = []
            for item in list.split(separator: ",").map({ $0.trimmingWhitespace() }) where !item.isEmpty {
                guard let bit = KeyUsage(name: item) else {
                    throw CommandFailure.usage(
                        "--key-usage '\(item)' is not a key usage; use RFC 5280 names: \(KeyUsage.allNames.joined(separator: ", "))", command: command)
                }
                usage.insert(bit)
            }
            guard !usage.isEmpty else { throw CommandFailure.usage("--key-usage needs at least one usage name", command: command) }
            policy.requiredKeyUsage = usage
        }
    }
}

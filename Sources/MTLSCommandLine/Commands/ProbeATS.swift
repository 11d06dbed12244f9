#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// `mtls probe URL --platform apple`: App Transport Security diagnostics for a live server, as
/// `nscurl --ats-diagnostics` gives them on macOS.
///
/// Handshakes under each ATS setting (the default: TLS 1.2 or later with an ECDHE cipher suite from
/// Apple's list; then without forward secrecy; then TLS 1.1 and 1.0), the server certificate under
/// the iOS 13 / macOS 10.15 rules (``PlatformEvaluator``), and the `Info.plist` exception keys an
/// app would need. Exit 0 when ATS allows the connection as it stands, 1 when the app would need an
/// exception or the certificate is refused, 4 when no setting gets a TLS connection.
enum ProbeATS {
    static let option = OptionSpec(
        .platform, valueName: "PLATFORM", help: "apple: App Transport Security diagnostics instead of the HTTP probe (what macOS nscurl reports for ATS).",
        kind: .choice(["apple"]))

    /// The forward-secret cipher suites ATS accepts by default (Apple, "Requirements for Connecting
    /// Using ATS"), IANA name → OpenSSL name. TLS 1.3's suites are all forward secret.
    static let forwardSecretSuites: [(iana: String, openssl: String)] = [
        ("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"),
        ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"),
        ("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "ECDHE-ECDSA-AES256-SHA384"),
        ("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"),
        ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"),
        ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"),
        ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"),
        ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"),
        ("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", "ECDHE-RSA-AES256-SHA384"),
        ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"),
        ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"),
    ]

    /// The RSA key-exchange suites ATS adds when `NSExceptionRequiresForwardSecrecy` is NO.
    static let nonForwardSecretSuites: [(iana: String, openssl: String)] = [
        ("TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"),
        ("TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"),
        ("TLS_RSA_WITH_AES_256_CBC_SHA256", "AES256-SHA256"),
        ("TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"),
        ("TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"),
        ("TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"),
    ]

    /// One ATS setting to try: the exception keys it stands for and the handshake it allows.
    struct Trial {
        var title: String
        var minimumTLS: String?  // NSExceptionMinimumTLSVersion, nil for the default (TLSv1.2)
        var forwardSecrecy: Bool  // NSExceptionRequiresForwardSecrecy
        var minimum: TLSVersion
        var maximum: TLSVersion?
        var passed = false
        var version: String?
        var cipher: String?
        var error: String?

        var exceptions: [(String, JSON)] {
            var keys: [(String, JSON)] = []
            if let minimumTLS { keys.append(("NSExceptionMinimumTLSVersion", .string(minimumTLS))) }
            if !forwardSecrecy { keys.append(("NSExceptionRequiresForwardSecrecy", .bool(false))) }
            return keys
        }
    }

    static var trials: [Trial] {
        [
            Trial(title: "ATS default (TLS 1.2+, forward secrecy)", minimumTLS: nil, forwardSecrecy: true, minimum: .tls1_2, maximum: nil),
            Trial(title: "NSExceptionRequiresForwardSecrecy = NO", minimumTLS: nil, forwardSecrecy: false, minimum: .tls1_2, maximum: nil),
            Trial(title: "NSExceptionMinimumTLSVersion = TLSv1.1", minimumTLS: "TLSv1.1", forwardSecrecy: true, minimum: .tls1_1, maximum: .tls1_1),
            Trial(title: "TLSv1.1 and NSExceptionRequiresForwardSecrecy = NO", minimumTLS: "TLSv1.1", forwardSecrecy: false, minimum: .tls1_1, maximum: .tls1_1),
            Trial(title: "NSExceptionMinimumTLSVersion = TLSv1.0", minimumTLS: "TLSv1.0", forwardSecrecy: true, minimum: .tls1_0, maximum: .tls1_0),
            Trial(title: "TLSv1.0 and NSExceptionRequiresForwardSecrecy = NO", minimumTLS: "TLSv1.0", forwardSecrecy: false, minimum: .tls1_0, maximum: .tls1_0),
        ]
    }

    /// Checks the `--platform` value: only `apple` has live-server diagnostics.
    static func requested(_ arguments: ParsedArguments) throws(CommandFailure) -> Bool {
        guard let value = arguments.value(.platform) else {
            if arguments.flag(.fetchAIA) { throw CommandFailure.usage("--fetch-aia judges as iOS does: give --platform apple too", command: "probe") }
            return false
        }
        guard value.lowercased() == "apple" else {
            throw CommandFailure.usage(
                "--platform '\(value)': probe has App Transport Security diagnostics for apple only; for android, java or chrome save the chain (--save-chain FILE) and run `mtls verify FILE --platform all`",
                command: "probe")
        }
        return true
    }

    static func run(url: HTTPSURL, configuration base: TLSClientConfiguration, arguments: ParsedArguments, console: Console) throws(CommandFailure) -> Int32 {
        var results = trials
        var chain: [Certificate] = []
        for index in results.indices {
            var configuration = base
            configuration.minimumVersion = results[index].minimum
            configuration.maximumVersion = results[index].maximum
            let suites = forwardSecretSuites + (results[index].forwardSecrecy ? [] : nonForwardSecretSuites)
            configuration.cipherList = suites.map(\.openssl).joined(separator: ":") + (results[index].minimum < .tls1_2 ? ":@SECLEVEL=0" : "")
            configuration.continuesOnTrustFailure = true  // the certificate is judged below, by Apple's rules
            configuration.alpn = []
            do throws(HTTPSError) {
                let client = try TLSClient(configuration: configuration)
                let connection = try client.connect(host: url.host, port: url.port, connectTo: TLSOptions.connectTo(arguments))
                let report = connection.report
                connection.close()
                results[index].passed = true
                results[index].version = report.version
                results[index].cipher = report.cipher
                if chain.isEmpty { chain = report.peerChainAsSent }
            } catch {
                if error.phase == .configuration { throw TLSOptions.failure(error) }
                results[index].error = error.message
                if chain.isEmpty, let sent = error.report?.peerChainAsSent, !sent.isEmpty { chain = sent }
            }
        }

        // The certificate under Apple's rules.
        var certificateVerdict: PlatformVerdict? = nil
        if let leaf = chain.first {
            var policy = base.trust
            policy.hostname = base.validatesHostname ? bareHost(url.host) : nil
            do throws(MTLSTrustError) {
                certificateVerdict = try PlatformEvaluator.evaluate(
                    leaf, extraIntermediates: Array(chain.dropFirst()), policy: policy, platforms: [.apple],
                    fetchIssuer: arguments.flag(.fetchAIA) ? { IssuerFetch.fetch($0) } : nil
                ).verdicts.first
            } catch {
                throw CommandFailure(error)
            }
        }
        let working = results.first { $0.passed }
        let transportOK = results.first?.passed ?? false
        let certificateOK = certificateVerdict?.outcome == .accepted
        let exitCode: Int32 = working == nil ? ExitCode.network : (transportOK && certificateOK ? ExitCode.success : ExitCode.no)
        let host = bareHost(url.host)
        let plist = working.map { infoPlist(host: host, exceptions: $0.exceptions) }
        // The ATS rules the server breaks, from the least exception that connects.
        var violations: [PlatformRule] = []
        if let working, !transportOK {
            if working.minimumTLS != nil { violations.append(PlatformRules.appleATSTLSVersion) }
            if !working.forwardSecrecy { violations.append(PlatformRules.appleATSForwardSecrecy) }
        }
        violations += certificateVerdict?.failures.map(\.rule) ?? []

        if arguments.flag(.json) {
            let trialJSON: [JSON] = results.map { trial in
                .object([
                    ("setting", .string(trial.title)), ("exceptions", .object(trial.exceptions)), ("passed", .bool(trial.passed)),
                    ("version", JSON.optional(trial.version)), ("cipher", JSON.optional(trial.cipher)), ("error", JSON.optional(trial.error)),
                ])
            }
            var certificate: JSON = .null
            if let verdict = certificateVerdict {
                certificate = .object([
                    ("verdict", .string(verdict.outcome.rawValue)),
                    (
                        "failures",
                        .array(
                            verdict.failures.map {
                                .object([("code", .string($0.rule.code)), ("depth", .int($0.depth)), ("reason", .string($0.reason)), ("fix", .string($0.fix.commandLine))])
                            })
                    ),
                    ("notes", .strings(verdict.notes)),
                ])
            }
            console.out(
                JSON.object([
                    ("url", .string(url.origin)), ("platform", .string("apple")), ("atsAllows", .bool(exitCode == ExitCode.success)),
                    ("violations", .strings(violations.map(\.code))),
                    ("trials", .array(trialJSON)), ("certificate", certificate),
                    ("infoPlistExceptions", working.map { .object($0.exceptions) } ?? .null), ("infoPlist", JSON.optional(plist)),
                ]).serialized())
            return exitCode
        }

        console.out(console.paint("App Transport Security diagnostics for \(url.origin) (as nscurl --ats-diagnostics)", .bold))
        for trial in results {
            let mark = trial.passed ? console.paint("PASS", .green) : console.paint("FAIL", .red)
            let detail = trial.passed ? "\(trial.version ?? "TLS") \(trial.cipher ?? "")" : (trial.error ?? "no connection")
            console.out("  \(mark)  \(trial.title.padded(to: 52)) \(detail)")
        }
        if let verdict = certificateVerdict {
            var line =
                "  Certificate (\(Platform.apple.displayName) rules): \(console.paint(verdict.outcome == .accepted ? "accepted" : "refused", verdict.outcome == .accepted ? .green : .red))"
            if let first = verdict.failures.first { line += " — \(first.reason); \(first.fix.commandLine)" }
            console.out(line)
            for failure in verdict.failures.dropFirst() { console.out("    and: \(failure.reason); \(failure.fix.commandLine)") }
            for note in verdict.notes { console.out("    note: \(note)") }
        } else {
            console.out("  Certificate: the server sent none")
        }
        if let working, let plist {
            if working.exceptions.isEmpty {
                console.out("  Info.plist: no exception needed for the TLS version and cipher suites")
            } else {
                console.out("  Info.plist: an app needs this exception for \(host) (or NSAllowsArbitraryLoads = YES, which turns ATS off everywhere):")
                for line in plist.split(separator: "\n") { console.out("    " + line) }
                if IPAddress.parse(host) != nil {
                    console.out("    note: NSExceptionDomains takes domain names; connect by name to use it")
                }
            }
            if !certificateOK && certificateVerdict != nil {
                console.out("  Info.plist: no key makes this certificate acceptable (ATS exceptions do not turn off the system's trust evaluation): reissue it")
            }
        }
        switch exitCode {
        case ExitCode.success: console.out("Verdict: \(console.paint("ATS allows", .green)) connections to \(host) with no exception")
        case ExitCode.network:
            console.out("Verdict: \(console.paint("no TLS connection", .red)) to \(url.origin) under any ATS setting (TLS 1.0 to 1.3, with or without forward secrecy)")
        default:
            var needs: [String] = []
            if !transportOK, let working { needs.append(working.exceptions.map(\.0).joined(separator: " and ")) }
            if !certificateOK { needs.append("a certificate that meets Apple's rules") }
            console.out("Verdict: \(console.paint("ATS blocks", .red)) connections to \(host): needs \(needs.joined(separator: "; and "))")
            console.out("  " + console.paint(violations.map(\.code).joined(separator: ", "), .dim))
        }
        return exitCode
    }

    static func bareHost(_ host: String) -> String { host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host }

    /// The `NSAppTransportSecurity` dictionary with one domain exception, as Xcode's source view shows it.
    static func infoPlist(host: String, exceptions: [(String, JSON)]) -> String {
        var lines = ["<key>NSAppTransportSecurity</key>", "<dict>", "  <key>NSExceptionDomains</key>", "  <dict>", "    <key>\(host)</key>", "    <dict>"]
        for (key, value) in exceptions {
            lines.append("      <key>\(key)</key>")
            switch value {
            case .bool(let flag): lines.append(flag ? "      <true/>" : "      <false/>")
            case .string(let text): lines.append("      <string>\(text)</string>")
            default: break
            }
        }
        lines += ["    </dict>", "  </dict>", "</dict>"]
        return lines.joined(separator: "\n")
    }
}

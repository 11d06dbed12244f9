#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// The TLS client options shared by `probe` and `pin https://…` (see CLI.md).
enum TLSOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(.anchors, valueName: "FILE", repeatable: true, help: "Trust only these anchors: a file, or a directory of certificates such as /etc/ssl/certs (repeatable)."),
        OptionSpec(.systemRoots, help: "Also trust the system roots when --anchors is given."),
        OptionSpec(.insecure, short: "-k", help: "Report trust problems but continue (diagnosis only)."),
        OptionSpec(.noHostnameCheck, help: "Do not check the server's name against its certificate."),
        OptionSpec(.pin, valueName: "SPEC", repeatable: true, help: "Require a chain certificate to match this pin (sha256/BASE64)."),
        OptionSpec(.pins, valueName: "FILE", help: "Require the pins FILE sets for the host (any format `mtls pin` writes)."),
        OptionSpec(.p12, valueName: "FILE", help: "Client identity from a PKCS#12/PFX file."),
        OptionSpec(.password, valueName: "SPEC", help: "Password of --p12 (pass:, env:, file:, fd:, stdin)."),
        OptionSpec(.cert, valueName: "FILE", help: "Client certificate (PEM/DER; may include the chain)."),
        OptionSpec(.key, valueName: "FILE", help: "Client private key (default: the --cert file, when it holds the key too)."),
        OptionSpec(.keyPassword, valueName: "SPEC", help: "Password of an encrypted --key."),
        OptionSpec(.tlsMin, valueName: "VERSION", help: "Lowest TLS version.", kind: .choice(TLSVersion.allCases.map(\.rawValue)), defaultValue: "1.2"),
        OptionSpec(.tlsMax, valueName: "VERSION", help: "Highest TLS version.", kind: .choice(TLSVersion.allCases.map(\.rawValue))),
        OptionSpec(.servername, valueName: "NAME", help: "The SNI name to send."),
        OptionSpec(.connectTo, valueName: "HOST:PORT", help: "Connect here instead, keeping the URL's host for SNI and checks."),
        OptionSpec(
            .timeout, valueName: "SECONDS", help: "Connect, handshake and idle-read timeout (the whole exchange: 120 s, or 4 × SECONDS).", defaultValue: "10"),
        OptionSpec(.legacyRenegotiation, help: "Allow renegotiation without RFC 5746 (insecure; warns)."),
    ]

    /// What `--timeout` documents when it is not given.
    static let defaultTimeouts = Timeouts(connect: .seconds(10), handshake: .seconds(10), idleRead: .seconds(10), total: .seconds(120))

    static func version(_ text: String?, option: String, command: String) throws(CommandFailure) -> TLSVersion? {
        guard let text else { return nil }
        guard let version = TLSVersion(rawValue: text) else {
            throw CommandFailure.usage("\(option) '\(text)' must be 1.0, 1.1, 1.2 or 1.3", command: command)
        }
        return version
    }

    /// Builds the client configuration from the parsed options.
    static func configuration(_ arguments: ParsedArguments, command: String, console: Console, evaluationTime: Date? = nil) throws(CommandFailure) -> TLSClientConfiguration {
        let password = try SecretSpec.resolve(arguments.value(.password), option: "--password", prompt: arguments.value(.p12).map { "Password for \($0): " }, console: console)
        var anchors: [Certificate] = []
        for path in arguments.values(.anchors) { anchors += try Inputs.certificates(path, password: nil, console: console) }
        let pinning = try Inputs.pinDocument(pins: arguments.values(.pin), pinsFile: arguments.value(.pins), console: console)
        let keyPassword =
            arguments.value(.cert) == nil ? nil : try SecretSpec.resolve(arguments.value(.keyPassword), option: "--key-password", prompt: nil, console: console)
        var identities: [ClientIdentity] = []
        let keyPath = try arguments.value(.cert).map { cert throws(CommandFailure) in try Inputs.keyPath(forCertificate: cert, key: arguments.value(.key), command: command) }
        do throws(MTLSTrustError) {
            if let p12 = arguments.value(.p12) {
                identities.append(try ClientIdentity.pkcs12(path: p12, password: password))
            }
            if let cert = arguments.value(.cert), let keyPath {
                identities.append(try ClientIdentity.files(certificatePath: cert, keyPath: keyPath, keyPassword: keyPassword))
            }
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message, hint: Inputs.hint(for: error, path: arguments.value(.p12) ?? arguments.value(.cert) ?? ""))
        }
        // The defaults the help states: 10 s to connect, to handshake and without data, 120 s in all.
        var timeouts = TLSOptions.defaultTimeouts
        if let text = arguments.value(.timeout) {
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                throw CommandFailure.usage("--timeout '\(text)' must be a number of seconds (0 < s ≤ 3600)", command: command)
            }
            timeouts = Timeouts.uniform(.seconds(seconds))
        }
        let minimum = try version(arguments.value(.tlsMin), option: "--tls-min", command: command) ?? .tls1_2
        let maximum = try version(arguments.value(.tlsMax), option: "--tls-max", command: command)
        if let maximum, maximum < minimum {
            throw CommandFailure.usage("--tls-max \(maximum.rawValue) is below --tls-min \(minimum.rawValue)", command: command)
        }
        if arguments.flag(.legacyRenegotiation) {
            console.err("warning: --legacy-renegotiation allows renegotiation without RFC 5746; an attacker on the network can inject a request prefix")
        }
        if arguments.flag(.insecure) {
            console.err("warning: --insecure: trust problems are reported but the connection continues")
        }
        var trust = TrustPolicy(anchors: anchors, includesSystemRoots: anchors.isEmpty || arguments.flag(.systemRoots), evaluationTime: evaluationTime, purpose: .server)
        // `--profile` where the command declares it (probe, its fleet mode): the same rules as verify.
        // `pin` reads live chains with these options but has no `--profile`: its chains are pinned, not judged.
        if arguments.declares(.profile), let profile = try ProfileOptions.profile(arguments, command: command) { trust.profile = profile }
        if arguments.declares(.revocation) { try RevocationOutput.apply(arguments, to: &trust, command: command) }
        var connectTo: (String, Int)? = nil
        if let text = arguments.value(.connectTo) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else {
                throw CommandFailure.usage("--connect-to '\(text)' must be HOST:PORT", command: command)
            }
            connectTo = (String(text[..<colon]), port)
        }
        _ = connectTo
        return TLSClientConfiguration(
            trust: trust, validatesHostname: !arguments.flag(.noHostnameCheck), continuesOnTrustFailure: arguments.flag(.insecure),
            pinning: pinning, identities: identities, minimumVersion: minimum, maximumVersion: maximum, serverName: arguments.value(.servername),
            allowsLegacyRenegotiation: arguments.flag(.legacyRenegotiation), timeouts: timeouts)
    }

    static func connectTo(_ arguments: ParsedArguments) -> (host: String, port: Int)? {
        guard let text = arguments.value(.connectTo), let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// Maps a transport error to the contract: 4 for network/TLS, 1 for an untrusted server.
    static func failure(_ error: HTTPSError) -> CommandFailure {
        switch error.phase {
        case .serverCertificate: return CommandFailure(ExitCode.no, error.commandLineDescription, hint: error.hint?.commandLine)
        case .url, .configuration: return CommandFailure(ExitCode.usage, error.commandLineDescription, hint: error.hint?.commandLine)
        default: return CommandFailure(ExitCode.network, error.commandLineDescription, hint: error.hint?.commandLine)
        }
    }
}

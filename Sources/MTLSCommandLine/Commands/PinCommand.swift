#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MTLSTrust

/// `mtls pin SOURCE...`: pin sets for every platform's format, and drift checks against them.
enum PinCommand {
    static let formatHelp = "spki, cert, json, curl, hpkp, trustkit, trustkit-objc, trustkit-plist, android, android-trustkit, okhttp, okhttp-java, ats, swift or der."

    static let spec = CommandSpec(
        name: "pin",
        abstract: "Make pin sets (sha256/BASE64) for TrustKit, OkHttp, Android, ATS, curl and more, and check them for drift.",
        discussion: """
            SOURCE is a certificate file (PEM, DER, bundle or PKCS#12), https://host[:port] (the live chain, \
            validated with the TLS client options), or a backup key: a public key or CSR of a key not yet in use, \
            so the backup pin exists before its certificate does. Pins are SHA-256 digests of SubjectPublicKeyInfo. \
            Rules per target: fewer than two pins is an error for enforcing TrustKit and a warning elsewhere; \
            a warning when the only pins are of a leaf that expires within 90 days; curl checks the leaf only. \
            --check reads a pin set in any of these formats, prints the presented pins the way OkHttp does, \
            a rotation calendar, and exits 1 on drift.
            """,
        arguments: [ArgumentSpec(name: "SOURCE", help: "Certificate files, https://host[:port], public keys or CSRs.", variadic: true)],
        options: [
            OptionSpec(.format, valueName: "FORMAT", help: formatHelp, kind: .choice(PinFormat.allCases.map(\.rawValue)), defaultValue: "spki"),
            OptionSpec(
                .level, valueName: "LEVEL", help: "leaf, intermediate, root or all; backup keys are always kept.",
                kind: .choice(["leaf", "intermediate", "root", "all"]), defaultValue: "all"),
            OptionSpec(
                .host, valueName: "NAME", repeatable: true, help: "Host the pins apply to (repeatable; *.NAME and **.NAME patterns; default: the https:// source's)."),
            OptionSpec(.includeSubdomains, help: "Also pin every name below --host (OkHttp 4+: **.NAME)."),
            OptionSpec(.expires, valueName: "YYYY-MM-DD", help: "Last day the pins are enforced (TrustKit, Android, HPKP max-age, json, swift)."),
            OptionSpec(.reportOnly, help: "TrustKit: enforcePinning = false; HPKP: Public-Key-Pins-Report-Only."),
            OptionSpec(.reportUri, valueName: "URL", repeatable: true, help: "TrustKit and HPKP report URI (repeatable)."),
            OptionSpec(.name, valueName: "NAME", help: "Type, class or variable name in code outputs."),
            OptionSpec(
                .okhttpVersion, valueName: "3|4", help: "OkHttp major version for --format okhttp/okhttp-java (4: 4.x and 5.x).",
                kind: .choice(["3", "4"]), defaultValue: "4"),
            OptionSpec(.check, valueName: "PINFILE", help: "Compare the sources against a pin set in any format (a .cer directory too); exit 1 on drift."),
            OptionSpec(.at, valueName: "TIME", help: "Evaluate expiry and the calendar at TIME (RFC 3339, YYYY-MM-DD or Unix seconds)."),
            OptionSpec(.out, valueName: "FILE", help: "Write to FILE atomically (a directory for --format der)."),
            OptionSpec(.force, help: "Overwrite existing output."),
            OptionSpec(.offline, help: "Refuse https:// sources (for builds: no network)."),
            OptionSpec(.json, help: "Print one JSON object: the --check result, or the pin set (--format json)."),
        ]
            + TLSOptions.specs.map { option in
                var copy = option
                if option.key == .password { copy.help = "Password of PKCS#12 sources and of --p12 (pass:, env:, file:, fd:, stdin)." }
                return copy
            },
        examples: [
            "mtls pin server-chain.pem backup.csr",
            "mtls pin https://api.example.com backup.csr --format okhttp --include-subdomains",
            "mtls pin chain.pem backup.pub --format trustkit --host api.example.com --expires 2027-01-01",
            "mtls pin chain.pem backup.csr --format android --host api.example.com --out res/xml/network_security_config.xml",
            "mtls pin https://api.example.com --check app/src/main/res/xml/network_security_config.xml",
        ])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        let formatName = arguments.value(.format) ?? "spki"
        guard var format = PinFormat(name: formatName) else {
            throw CommandFailure.usage("--format '\(formatName)' is not a pin format: use \(PinFormat.names)", command: "pin")
        }
        // --json promises one JSON object on stdout: the check result, or else the JSON pin set.
        if arguments.flag(.json), arguments.value(.check) == nil {
            guard arguments.value(.format) == nil || format == .json else {
                throw CommandFailure.usage("--json prints the pin set as JSON; it cannot be combined with --format \(format.rawValue)", command: "pin")
            }
            format = .json
        }
        let level = arguments.value(.level) ?? "all"
        guard ["leaf", "intermediate", "root", "all"].contains(level) else {
            throw CommandFailure.usage("--level '\(level)' must be leaf, intermediate, root or all", command: "pin")
        }
        guard !arguments.positionals.isEmpty else {
            throw CommandFailure.usage("Missing expected argument '<SOURCE> ...'", command: "pin")
        }
        var now = Date()
        if let text = arguments.value(.at) {
            guard let date = Timestamp.parse(text) else {
                throw CommandFailure.usage("--at '\(text)' is not a time: use RFC 3339 (2030-01-01T00:00:00Z), YYYY-MM-DD or Unix seconds", command: "pin")
            }
            now = date
        }
        var options = try outputOptions(arguments, format: format, now: now)
        if arguments.flag(.offline), let live = arguments.positionals.first(where: PinSources.isLive) {
            throw CommandFailure.usage("--offline: \(live) would need the network; pin certificate files instead", command: "pin")
        }

        // Sources.
        let password = try SecretSpec.resolve(arguments.value(.password), option: "--password", prompt: nil, console: console)
        // Formats that need only each certificate's key, subject, expiry and role read plain
        // certificate files without OpenSSL's X.509 parse (`MTLS_PIN_FULL_PARSE=1` forces it).
        let summariesSuffice =
            arguments.value(.check) == nil && !format.pinsCertificates && console.environment["MTLS_PIN_FULL_PARSE"] == nil
        var loaded: [LoadedPinSource] = []
        for source in arguments.positionals {
            if PinSources.isLive(source) {
                loaded.append(try PinSources.live(source, arguments: arguments, evaluationTime: arguments.value(.at) == nil ? nil : now, console: console))
            } else if summariesSuffice, let summary = PinSources.summaryFile(source) {
                loaded.append(summary)
            } else {
                loaded.append(try PinSources.file(source, password: password, console: console))
            }
        }

        if let pinFile = arguments.value(.check) {
            return try check(pinFile: pinFile, loaded: loaded, arguments: arguments, now: now, console: console)
        }

        // Pins at the chosen level; backup keys always.
        if options.hosts.isEmpty, let host = loaded.compactMap(\.host).first, format.needsHost || format == .hpkp || format == .swift || format == .json {
            options.hosts = [PinHost(name: host.lowercased(), includesSubdomains: arguments.flag(.includeSubdomains))]
        }
        var entries = loaded.flatMap(\.entries)
        if level != "all" {
            let kept = entries.filter { $0.role.rawValue == level || $0.role == .backup }
            if kept.allSatisfy({ $0.role == .backup }) {
                let names = loaded.filter { $0.entries.contains { $0.role != .backup } }.map(\.source).joined(separator: ", ")
                let hint = level == "root" ? "servers seldom send their root: give the root's own file, or use --level intermediate" : nil
                throw CommandFailure(ExitCode.badInput, "\(names.isEmpty ? "the sources" : names) hold\(loaded.count == 1 ? "s" : "") no \(level) certificate", hint: hint)
            }
            entries = kept
        }
        let outcome = try PinRules.apply(entries, format: format, options: options, now: now)
        for warning in outcome.warnings { console.err("warning: \(warning)") }
        for note in outcome.notes { console.err("note: \(note)") }

        switch PinWriter.write(outcome.entries, format: format, options: outcome.options) {
        case .text(let text):
            if let out = arguments.value(.out) {
                try OutputFile.write(Array(text.utf8), to: out, force: arguments.flag(.force))
                console.err("wrote \(out) (\(format.platform))")
            } else {
                console.write(text)
            }
        case .files(let files):
            guard let directory = arguments.value(.out) else {
                throw CommandFailure.usage("--format der writes .cer files: give the directory with --out DIR", command: "pin")
            }
            let entry = FileSystem.entry(directory)
            if entry != .missing {
                guard entry == .directory else { throw CommandFailure(ExitCode.badInput, "\(directory) is a file; --format der writes into a directory") }
            } else {
                do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                    throw CommandFailure(ExitCode.badInput, "cannot create the directory \(directory): \(FileSystem.reason(error))")
                }
            }
            let paths = files.map { (path: PathText.appending(directory, $0.name), bytes: $0.bytes, mode: mode_t(0o644)) }
            try OutputFile.writeAll(paths, force: arguments.flag(.force))
            for path in paths { console.out(path.path) }
        }
        return ExitCode.success
    }

    /// `--host`, `--expires`, `--name` … checked and gathered.
    static func outputOptions(_ arguments: ParsedArguments, format: PinFormat, now: Date) throws(CommandFailure) -> PinOutputOptions {
        var options = PinOutputOptions()
        options.now = now
        let includeSubdomains = arguments.flag(.includeSubdomains)
        for text in arguments.values(.host) {
            guard let host = PinHost.parse(text, includeSubdomains: includeSubdomains) else {
                throw CommandFailure.usage(
                    "--host '\(text)' is not a host name: give a DNS name such as api.example.com (or *.example.com), without scheme, port or path", command: "pin")
            }
            options.hosts.append(host)
        }
        if let text = arguments.value(.expires) {
            guard let day = PinDates.day(text) else {
                throw CommandFailure.usage("--expires '\(text)' is not a date: use YYYY-MM-DD (the last day the pins are enforced)", command: "pin")
            }
            options.expires = day
        }
        options.enforce = !arguments.flag(.reportOnly)
        options.reportURIs = arguments.values(.reportUri)
        // Written into string literals and XML: a URL's printable ASCII only (RFC 3986 has no
        // white space, quotes, angle brackets or controls; anything else is percent-encoded).
        for uri in options.reportURIs
        where !(uri.hasPrefix("https://") || uri.hasPrefix("http://"))
            || !uri.unicodeScalars.allSatisfy({ (0x21..<0x7F).contains($0.value) && !"\"<>\\^`{|}".unicodeScalars.contains($0) })
        {
            throw CommandFailure.usage(
                "--report-uri \(DisplayText.quoted(uri)) must be an http(s) URL in printable ASCII (percent-encode spaces, quotes and other characters)", command: "pin")
        }
        if let name = arguments.value(.name) {
            let valid = name.first.map { $0.isLetter || $0 == "_" } == true && name.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
            guard valid else { throw CommandFailure.usage("--name '\(name)' must be an identifier (letters, digits and _, not starting with a digit)", command: "pin") }
            options.name = name
        }
        if let text = arguments.value(.okhttpVersion) {
            guard let version = Int(text.split(separator: ".").first ?? ""), (3...5).contains(version) else {
                throw CommandFailure.usage("--okhttp-version '\(text)' must be 3 or 4 (4 also covers 5)", command: "pin")
            }
            options.okhttpVersion = version
        }
        options.commandLine = commandLine(arguments, format: format)
        return options
    }

    /// The command that regenerates an output, for header comments: sources by file name, so the
    /// text does not depend on where the build ran.
    static func commandLine(_ arguments: ParsedArguments, format: PinFormat) -> String {
        var parts = ["mtls", "pin"]
        parts += arguments.positionals.map { PinSources.isLive($0) ? $0 : fileName($0) }
        parts += ["--format", format.rawValue]
        if let level = arguments.value(.level), level != "all" { parts += ["--level", level] }
        for host in arguments.values(.host) { parts += ["--host", host] }
        if arguments.flag(.includeSubdomains) { parts.append("--include-subdomains") }
        if let expires = arguments.value(.expires) { parts += ["--expires", expires] }
        if arguments.flag(.reportOnly) { parts.append("--report-only") }
        for uri in arguments.values(.reportUri) { parts += ["--report-uri", uri] }
        if let name = arguments.value(.name) { parts += ["--name", name] }
        if let version = arguments.value(.okhttpVersion) { parts += ["--okhttp-version", version] }
        // File names and hosts are the user's, but a file name may hold a newline or `*/`.
        return PinWriter.commentSafe(parts.joined(separator: " "))
    }

    /// `PathText.lastComponent`, without its copies for the usual `dir/name` (thousands of sources).
    static func fileName(_ path: String) -> String {
        guard !path.isEmpty, !path.hasSuffix("/") else { return PathText.lastComponent(path) }
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// `--check PINFILE`.
    static func check(pinFile: String, loaded: [LoadedPinSource], arguments: ParsedArguments, now: Date, console: Console) throws(CommandFailure) -> Int32 {
        let document = try PinFileReader.read(pinFile, console: console)
        var targets: [PinCheck.Target] = []
        var fileChain: [Certificate] = []
        var fileSources: [String] = []
        for source in loaded {
            if source.host != nil {
                targets.append(PinCheck.Target(source: source.source, chain: source.chain, host: source.host, chainDescription: source.chainDescription ?? "chain"))
            } else if source.chain.isEmpty {
                console.err("warning: \(source.source) is a key, not a certificate chain: --check compares chains, so it is ignored")
            } else {
                fileChain += source.chain
                fileSources.append(source.source)
            }
        }
        if !fileChain.isEmpty {
            targets.insert(PinCheck.Target(source: fileSources.joined(separator: " + "), chain: fileChain, host: nil, chainDescription: "certificates from file"), at: 0)
        }
        guard !targets.isEmpty else { throw CommandFailure(ExitCode.badInput, "nothing to check: the sources hold no certificate chain") }
        var host: String?
        if let text = arguments.values(.host).first {
            guard let parsed = PinHost.parse(text, includeSubdomains: false) else { throw CommandFailure.usage("--host '\(text)' is not a host name", command: "pin") }
            host = parsed.name
        }
        return try PinCheck.run(document: document, pinFile: pinFile, targets: targets, host: host, now: now, console: console, json: arguments.flag(.json))
    }
}

import Foundation
import MTLSHTTP
import MTLSTrust

/// `mtls probe URL`: explain a client-certificate login and a server's trust in one command.
enum ProbeCommand {
    static let spec = CommandSpec(
        name: "probe",
        abstract: "Explain an HTTPS login: TLS, the server's trust, when a client certificate is asked for, and the HTTP answer.",
        discussion: """
            Connects to https://host[:port]/path, sends the request, and reports the TLS version and cipher, \
            the server chain as sent and the trust verdict, whether and WHEN the server asked for a client \
            certificate (in the handshake, or after the request by TLS 1.2 renegotiation or TLS 1.3 \
            post-handshake auth, as IIS does per path), the CA names it accepts, what was sent, the HTTP \
            status with its meaning (IIS 403.7, 403.16, 401.x …), and a verdict with ranked causes and fixes.
            """,
        arguments: [ArgumentSpec(name: "URL", help: "https://host[:port]/path (not with --targets)", optional: true)],
        options: TLSOptions.specs + [
            OptionSpec(names: ["-X", "--method"], valueName: "METHOD", help: "The HTTP method (default GET, or POST with --data)."),
            OptionSpec(names: ["-H", "--header"], valueName: "HEADER", repeatable: true, help: "An extra header, \"Name: value\" (repeatable)."),
            OptionSpec(names: ["--data"], valueName: "TEXT|@FILE", help: "A request body (sent with Expect: 100-continue)."),
            OptionSpec(names: ["--user"], valueName: "NAME", help: "User for Basic, Digest or NTLM challenges (DOMAIN\\\\user for NTLM)."),
            OptionSpec(names: ["--user-password"], valueName: "SPEC", help: "The user's password (pass:, env:, file:, fd:, stdin); asked for on a terminal."),
            OptionSpec(names: ["--auth"], valueName: "SCHEME", help: "basic, digest, ntlm or any (default any: the strongest offered)."),
            OptionSpec(names: ["--auth-origin"], valueName: "ORIGIN", repeatable: true, help: "Another origin (https://idp.example:8443) allowed to receive the credentials."),
            OptionSpec(names: ["--saml"], help: "Submit SAML/WS-Federation POST-binding forms automatically, as a browser would."),
            OptionSpec(names: ["--cookie-jar"], valueName: "FILE", help: "Load cookies from FILE (Netscape format, as curl) and save them back."),
            OptionSpec(names: ["--follow", "-L"], help: "Follow redirects."),
            OptionSpec(names: ["--max-redirects"], valueName: "N", help: "The most redirects followed (default 10)."),
            OptionSpec(names: ["--output"], valueName: "FILE", help: "Write the final body to FILE."),
            OptionSpec(names: ["--save-chain"], valueName: "FILE", help: "Write the server chain as sent (PEM), to review and pass as --anchors."),
            OptionSpec(names: ["--at"], valueName: "TIME", help: "Evaluate the server's certificate at this time (RFC 3339 or Unix seconds)."),
            OptionSpec(names: ["--force"], help: "Overwrite --output/--save-chain files."),
            OptionSpec(names: ["-v", "--verbose"], help: "Trace TLS handshake messages and HTTP headers (secrets redacted)."),
            OptionSpec(names: ["--show-secrets"], help: "With -v, show Authorization and cookie values unredacted (careful: logs keep them)."),
            OptionSpec(names: ["--json"], help: "Print one JSON object (with --targets: one JSON object per line)."),
            OptionSpec(names: ["--targets"], valueName: "FILE", help: "Probe every URL or host:port in FILE (one a line; '-' for stdin)."),
            OptionSpec(names: ["--concurrency"], valueName: "N", help: "With --targets: probes at once (default 16)."),
            OptionSpec(names: ["--shard"], valueName: "I/N", help: "With --targets: only the I-th of N slices (1-based), to split a fleet across machines."),
            ProfileOptions.profileSpec,
        ],
        examples: [
            "mtls probe https://iis.example.com/secure --p12 alice.pfx --password env:PFX_PASSWORD",
            "mtls probe https://localhost:8443/secure --anchors ca.pem --tls-max 1.2 -v",
            "mtls probe https://self-signed.local/ --insecure --save-chain server-chain.pem",
        ])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        if let targets = arguments.value("targets") {
            return try FleetProbe.run(targetsFile: targets, arguments: arguments, console: console)
        }
        guard let urlText = arguments.positionals.first else { throw CommandFailure.usage("Missing expected argument '<URL>' (or --targets FILE)", command: "probe") }
        let url = try parseURL(urlText)
        let time = try Inputs.time(arguments.value("at"))
        var configuration = try TLSOptions.configuration(arguments, command: "probe", console: console, evaluationTime: time)
        if let profile = try ProfileOptions.profile(arguments, command: "probe") { configuration.trust.profile = profile }
        let request = try makeRequest(url, arguments: arguments, console: console)
        let sink = TraceSink()
        let analysis = try probe(
            request, configuration: configuration, arguments: arguments, credentials: try credentials(arguments, console: console), trace: arguments.flag("verbose") ? sink : nil)
        if let path = arguments.value("save-chain"), let chain = analysis.report?.peerChainAsSent, !chain.isEmpty {
            try OutputFile.write(Array(chain.map(\.pemString).joined().utf8), to: path, force: arguments.flag("force"))
        }
        if let path = arguments.value("output"), let last = analysis.final {
            try OutputFile.write(last.body, to: path, force: arguments.flag("force"))
        }
        if arguments.flag("json") {
            console.out(analysis.json().serialized())
        } else {
            analysis.printHuman(console: console, verbose: arguments.flag("verbose"), trace: sink.lines)
        }
        return analysis.exitCode
    }

    static func parseURL(_ text: String) throws(CommandFailure) -> HTTPSURL {
        var candidate = text
        if !candidate.contains("://") { candidate = "https://" + candidate }
        let url: HTTPSURL
        do throws(HTTPSError) { url = try HTTPSURL(candidate) } catch { throw CommandFailure(ExitCode.usage, error.message, hint: "See 'mtls probe --help' for more information.") }
        guard url.scheme == "https" else { throw CommandFailure.usage("only https:// URLs can be probed", command: "probe") }
        return url
    }

    /// The first request, from -X, -H and --data.
    static func makeRequest(_ url: HTTPSURL, arguments: ParsedArguments, console: Console) throws(CommandFailure) -> HTTPRequest {
        var headers = HTTPHeaders()
        for header in arguments.values("header") {
            guard let colon = header.firstIndex(of: ":") else { throw CommandFailure.usage("-H '\(header)' must be \"Name: value\"", command: "probe") }
            headers.add(String(header[..<colon]).trimmingCharacters(in: .whitespaces), String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        var body: [UInt8]? = nil
        if let data = arguments.value("data") {
            body = data.hasPrefix("@") ? try Inputs.read(String(data.dropFirst()), console: console) : Array(data.utf8)
            if !headers.contains("Content-Type") { headers.add("Content-Type", "application/x-www-form-urlencoded") }
        }
        let method = arguments.value("method") ?? (body == nil ? "GET" : "POST")
        return HTTPRequest(
            method: method, url: url, headers: headers, body: body, expectsContinue: body != nil,
            firstOriginOnlyHeaders: Set(arguments.values("header").compactMap { $0.split(separator: ":").first.map { String($0).trimmingCharacters(in: .whitespaces) } }))
    }

    /// `--user` and `--user-password` (`DOMAIN\\user` for NTLM).
    static func credentials(_ arguments: ParsedArguments, console: Console) throws(CommandFailure) -> Credentials? {
        guard let user = arguments.value("user") else {
            if arguments.value("user-password") != nil { throw CommandFailure.usage("--user-password needs --user", command: "probe") }
            return nil
        }
        let password = try SecretSpec.resolve(arguments.value("user-password"), option: "--user-password", prompt: "Password for \(user): ", console: console) ?? ""
        if let slash = user.firstIndex(of: "\\") {
            return Credentials(user: String(user[user.index(after: slash)...]), password: password, domain: String(user[..<slash]))
        }
        return Credentials(user: user, password: password)
    }

    /// Runs one probe — the request, redirects, challenges and SAML forms when asked — and the
    /// analysis. Never prints.
    static func probe(_ first: HTTPRequest, configuration: TLSClientConfiguration, arguments: ParsedArguments, credentials: Credentials?, trace: TraceSink?) throws(CommandFailure)
        -> ProbeAnalysis
    {
        let client: HTTPSClient
        do throws(HTTPSError) { client = try HTTPSClient(configuration: configuration) } catch { throw TLSOptions.failure(error) }
        defer { client.closeIdleConnections() }
        if let target = TLSOptions.connectTo(arguments) { client.connectTo[first.url.host] = target }
        if let trace { client.trace = { line in trace.append(line) } }
        client.redactsSecrets = !arguments.flag("show-secrets")
        let maxRedirects = try Inputs.integer(arguments.value("max-redirects"), option: "--max-redirects", command: "probe", range: 0...100) ?? 10
        let jar = CookieJar()
        let jarPath = arguments.value("cookie-jar")
        if let jarPath, FileManager.default.fileExists(atPath: jarPath) {
            do throws(HTTPSError) { _ = try jar.load(fromPath: jarPath) } catch { throw CommandFailure(ExitCode.badInput, error.message, hint: error.hint) }
        }
        var origins = Set<String>()
        for text in arguments.values("auth-origin") {
            do throws(HTTPSError) { origins.insert(try HTTPSURL(text).origin) } catch {
                throw CommandFailure.usage("--auth-origin '\(text)' is not an origin like https://idp.example:8443", command: "probe")
            }
        }
        let session = LoginSession(client: client, cookies: jar, credentials: credentials, authOrigins: origins)
        session.followsRedirects = arguments.flag("follow") || arguments.flag("saml")
        session.maximumRedirects = maxRedirects
        session.submitsPostBindingForms = arguments.flag("saml")
        if let scheme = arguments.value("auth")?.lowercased(), scheme != "any" {
            guard let chosen = AuthScheme(rawValue: scheme) else { throw CommandFailure.usage("--auth '\(scheme)' must be basic, digest, ntlm or any", command: "probe") }
            session.allowedSchemes = [chosen]
        }
        if let trace { session.trace = { line in trace.append("* " + line) } }
        var final: HTTPResponse? = nil
        var failure: HTTPSError? = nil
        do throws(HTTPSError) {
            final = try session.send(first).response
        } catch {
            failure = error
        }
        if let jarPath {
            do throws(HTTPSError) { try jar.save(toPath: jarPath) } catch { throw CommandFailure(ExitCode.badInput, error.message) }
        }
        return ProbeAnalysis(
            url: first.url, firstRequest: first, final: final, loginHops: session.hops, failure: failure, report: final?.tls ?? failure?.report, configuration: configuration)
    }
}

/// Collects trace lines from the client.
final class TraceSink: @unchecked Sendable {
    // @unchecked Sendable: guarded by `lock`.
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) {
        lock.lock()
        stored.append(line)
        lock.unlock()
    }
    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

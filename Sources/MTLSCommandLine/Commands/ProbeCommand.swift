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
import MTLSHTTP
import MTLSTrust
import Synchronization

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

            Every section and cause is derived by rules from an ordered event log of the connection (each \
            handshake message with its direction and phase, alerts and who sent them, closes with or without \
            close_notify, socket errors, each HTTP exchange); -v prints that log to stderr as it happens, and \
            --json includes it ("events") with the rule id of each cause; --report FILE.html draws it as a sequence diagram \
            on a self-contained page. The verdict line also goes to stderr when stdout is not a terminal, or with --json.

            Exit codes: 0 the page was reached (2xx/3xx) and nothing failed; 1 the server refuses or requires \
            our certificate, refuses our credentials, is not trusted, or answers with an error status; \
            2 usage error (also a header with CR/LF, or --user without a password and no terminal); \
            3 bad input (unreadable identity, existing --output without --force); 4 network or TLS failure \
            unrelated to our identity (refused, timeout, not TLS, plain HTTP, malformed HTTP). \
            "verdict.ok" is true exactly when the exit code is 0; warnings are listed apart.

            Timeouts: connect 10 s, handshake 10 s, 10 s without data while reading, 120 s for the whole \
            exchange; --timeout S sets the first three to S and the whole to 4 × S.
            """,
        arguments: [ArgumentSpec(name: "URL", help: "https://host[:port]/path (not with --targets)", optional: true)],
        options: TLSOptions.specs + [
            OptionSpec(.method, short: "-X", valueName: "METHOD", help: "The HTTP method (default GET, or POST with --data)."),
            OptionSpec(.header, short: "-H", valueName: "HEADER", repeatable: true, help: "An extra header, \"Name: value\" (repeatable)."),
            OptionSpec(.data, valueName: "TEXT|@FILE", help: "A request body (sent with Expect: 100-continue)."),
            OptionSpec(.user, valueName: "NAME", help: "User for Basic, Digest, NTLM or Kerberos (DOMAIN\\\\user for NTLM, user@REALM for Kerberos)."),
            OptionSpec(.userPassword, valueName: "SPEC", help: "The user's password (pass:, env:, file:, fd:, stdin); asked for on a terminal."),
            OptionSpec(
                .auth, valueName: "SCHEME",
                help: "basic, digest, ntlm, negotiate (Kerberos: the ticket cache, or --user's password) or any (Kerberos when a ticket can be had, else the strongest offered).",
                kind: .choice(["basic", "digest", "ntlm", "negotiate", "any"]),
                defaultValue: "any"),
            OptionSpec(
                .noChannelBinding,
                help: "NTLM and Kerberos: send no TLS channel binding (as curl does), to test whether the server requires Extended Protection; sent by default."),
            OptionSpec(.authOrigin, valueName: "ORIGIN", repeatable: true, help: "Another origin (https://idp.example:8443) allowed to receive the credentials."),
            OptionSpec(.saml, help: "Submit SAML/WS-Federation POST-binding forms automatically, as a browser would."),
            OptionSpec(.cookieJar, valueName: "FILE", help: "Load cookies from FILE (Netscape format, as curl) and save them back."),
            OptionSpec(.follow, short: "-L", help: "Follow redirects, and a page's meta refresh or Refresh header of at most 5 s."),
            OptionSpec(.maxRedirects, valueName: "N", help: "The most redirects followed.", defaultValue: "10"),
            OptionSpec(.output, short: "-o", valueName: "FILE", help: "Stream the final body, as received, to FILE ('-': stdout; any size, constant memory)."),
            OptionSpec(
                .outputText, valueName: "FILE",
                help: "Write the final body decoded from its charset to UTF-8 ('-': stdout; on a terminal, control characters are shown as escapes)."),
            OptionSpec(.saveChain, valueName: "FILE", help: "Write the server chain as sent (PEM), to review and pass as --anchors."),
            OptionSpec(.at, valueName: "TIME", help: "Evaluate the server's certificate at this time (RFC 3339 or Unix seconds)."),
            OptionSpec(.force, help: "Overwrite --output/--save-chain/--report files."),
            OptionSpec(.verbose, short: "-v", help: "Trace TLS handshake messages, alerts and HTTP heads to stderr as they happen (secrets redacted)."),
            OptionSpec(.showSecrets, help: "With -v, show Authorization and cookie values unredacted (careful: logs keep them)."),
            OptionSpec(.json, help: "Print one JSON object (with --targets: one JSON object per line)."),
            OptionSpec(
                .report, valueName: "FILE",
                help: "Also write the report as one self-contained HTML page: a sequence diagram of the connection (with --targets: the fleet's page)."),
            OptionSpec(.targets, valueName: "FILE", help: "Probe every URL or host:port in FILE (one a line; '-' for stdin)."),
            OptionSpec(.concurrency, valueName: "N", help: "With --targets: probes at once.", defaultValue: "16"),
            OptionSpec(.shard, valueName: "I/N", help: "With --targets: only the I-th of N slices (1-based), to split a fleet across machines."),
            ProbeATS.option,
            OptionSpec(
                .fetchAIA,
                help: "With --platform apple: fetch an intermediate the server leaves out from its authorityInfoAccess (http://), as iOS does."),
            ProfileOptions.profileSpec,
            RevocationOutput.option,
        ],
        examples: [
            "mtls probe https://iis.example.com/secure --p12 alice.pfx --password env:PFX_PASSWORD",
            "mtls probe https://localhost:8443/secure --anchors ca.pem --tls-max 1.2 -v",
            "mtls probe https://self-signed.local/ --insecure --save-chain server-chain.pem",
        ])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        if let targets = arguments.value(.targets) {
            if arguments.value(.platform) != nil {
                throw CommandFailure.usage("--platform apple diagnoses one server: give its URL instead of --targets", command: "probe")
            }
            return try FleetProbe.run(targetsFile: targets, arguments: arguments, console: console)
        }
        guard let urlText = arguments.positionals.first else { throw CommandFailure.usage("Missing expected argument '<URL>' (or --targets FILE)", command: "probe") }
        let url = try parseURL(urlText)
        let time = try Inputs.time(arguments.value(.at))
        let request = try makeRequest(url, arguments: arguments, console: console)
        let credentials = try credentials(arguments, console: console)
        let configuration = try TLSOptions.configuration(arguments, command: "probe", console: console, evaluationTime: time)
        if try ProbeATS.requested(arguments) { return try ProbeATS.run(url: url, configuration: configuration, arguments: arguments, console: console) }
        let force = arguments.flag(.force)
        if let path = arguments.value(.report) { try ReportFile.checkWritable(path, force: force) }
        // Opened before connecting: a file that cannot be written fails before any traffic.
        let output = try arguments.value(.output).map { path throws(CommandFailure) in try BodyOutput(path: path, force: force, console: console) }
        let textOutput = try arguments.value(.outputText).map { path throws(CommandFailure) in try BodyOutput(path: path, force: force, console: console) }
        // -v streams to stderr as things happen (as curl -v does), in their order.
        let trace: TraceSink? = arguments.flag(.verbose) ? TraceSink { line in console.err(line) } : nil
        var analysis: ProbeAnalysis
        do throws(CommandFailure) {
            analysis = try probe(request, configuration: configuration, arguments: arguments, credentials: credentials, trace: trace, output: output)
        } catch {
            output?.discard()
            textOutput?.discard()
            throw error
        }
        if let path = arguments.value(.saveChain), let chain = analysis.report?.peerChainAsSent, !chain.isEmpty {
            try OutputFile.write(Array(chain.map(\.pemString).joined().utf8), to: path, force: force)
        }
        if let output {
            if let final = analysis.final, analysis.streamedBodyBytes == nil { try output.append(final.body[...]) }
            if analysis.final != nil { try output.finish() } else { output.discard() }
        }
        if let textOutput {
            if let page = analysis.page, analysis.streamedBodyBytes == nil || (analysis.bodyPreview?.count ?? 0) == analysis.streamedBodyBytes {
                // Text is for reading: on a terminal it is shown as any line for people is (a page
                // chose its controls); to a file or a pipe, the exact text.
                let text = textOutput.path == "-" && console.stdoutIsTerminal ? console.shown(page.text) : page.text
                try textOutput.append(Array(text.utf8)[...])
                try textOutput.finish()
            } else {
                textOutput.discard()
                if analysis.final != nil {
                    console.err("warning: --output-text: the body was larger than \(BodyOutput.previewLimit >> 20) MiB and was streamed; decode it from the --output file")
                }
            }
        }
        if let path = arguments.value(.report) { try ReportFile.writeProbe(analysis.json(), to: path, force: force) }
        if arguments.flag(.json) {
            console.out(analysis.json().serialized())
        } else {
            analysis.printHuman(console: console, verbose: arguments.flag(.verbose))
        }
        // The verdict (and the top cause with its fix) also on stderr, for scripts that keep stdout;
        // not when a person reads the text report on the terminal already (no hint twice).
        if arguments.flag(.json) || !console.stdoutIsTerminal {
            console.err(analysis.verdictLine)
            if let top = analysis.causes.first { console.err("  fix: \(top.fix)") }
        }
        return analysis.exitCode
    }

    /// The form every "no host" error shows.
    static let urlForm = "https://HOST[:PORT]/PATH"

    /// A URL of `probe` (or of `pin`'s live sources): `https://` may be left out; a URL without a
    /// host is a usage error that shows the form, before any lookup.
    static func parseURL(_ text: String, command: String = "probe") throws(CommandFailure) -> HTTPSURL {
        var candidate = text
        if !candidate.contains("://") { candidate = "https://" + candidate }
        // A URL parser (WHATWG, as browsers) skips every slash after `https:`, so `https:///secure`
        // would name the host `secure` and look it up; the person typing it left the host out.
        if let separator = candidate.firstRange(of: "://"), let next = candidate[separator.upperBound...].first, next == "/" || next == "\\" {
            throw CommandFailure.usage("'\(text)' has no host: give \(urlForm)", command: command)
        }
        let url: HTTPSURL
        do throws(HTTPSError) { url = try HTTPSURL(candidate) } catch {
            let message = error.message.contains("no host") ? "'\(text)': \(error.message): give \(urlForm)" : error.message
            throw CommandFailure.usage(message, command: command)
        }
        guard url.scheme == "https" else {
            throw CommandFailure.usage(command == "pin" ? "\(text): only https:// sources can be pinned" : "only https:// URLs can be probed", command: command)
        }
        return url
    }

    /// The first request, from -X, -H and --data.
    static func makeRequest(_ url: HTTPSURL, arguments: ParsedArguments, console: Console) throws(CommandFailure) -> HTTPRequest {
        var headers = HTTPHeaders()
        for header in arguments.values(.header) {
            if header.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                throw CommandFailure.usage("-H: the header contains CR, LF or NUL, which would inject a header; refused", command: "probe")
            }
            guard let colon = header.firstIndex(of: ":") else { throw CommandFailure.usage("-H '\(header)' must be \"Name: value\"", command: "probe") }
            headers.add(String(header[..<colon]).trimmingWhitespace(), String(header[header.index(after: colon)...]).trimmingWhitespace())
        }
        var body: [UInt8]? = nil
        if let data = arguments.value(.data) {
            body = data.hasPrefix("@") ? try Inputs.read(String(data.dropFirst()), console: console) : Array(data.utf8)
            if !headers.contains("Content-Type") { headers.add("Content-Type", "application/x-www-form-urlencoded") }
        }
        let method = arguments.value(.method) ?? (body == nil ? "GET" : "POST")
        return HTTPRequest(
            method: method, url: url, headers: headers, body: body, expectsContinue: body != nil,
            firstOriginOnlyHeaders: Set(arguments.values(.header).compactMap { $0.split(separator: ":").first.map { String($0).trimmingWhitespace() } }))
    }

    /// `--user` and `--user-password` (`DOMAIN\\user` for NTLM).
    static func credentials(_ arguments: ParsedArguments, console: Console) throws(CommandFailure) -> Credentials? {
        guard let user = arguments.value(.user) else {
            if arguments.value(.userPassword) != nil { throw CommandFailure.usage("--user-password needs --user", command: "probe") }
            return nil
        }
        guard let password = try SecretSpec.resolve(arguments.value(.userPassword), option: "--user-password", prompt: "Password for \(user): ", console: console)
        else {
            // Not an empty password: no terminal to ask on, and none given.
            throw CommandFailure.usage(
                "--user \(user) needs a password: give --user-password SPEC (pass:, env:, file:, fd:, stdin), or run on a terminal to be asked", command: "probe")
        }
        if let slash = user.firstIndex(of: "\\") {
            return Credentials(user: String(user[user.index(after: slash)...]), password: password, domain: String(user[..<slash]))
        }
        return Credentials(user: user, password: password)
    }

    /// Runs one probe — the request, redirects, challenges and SAML forms when asked — and the
    /// analysis. Never prints. The blocking form of the async ``probe(_:configuration:arguments:credentials:trace:output:)``,
    /// which `probe --targets` runs many of at once.
    static func probe(
        _ first: HTTPRequest, configuration: TLSClientConfiguration, arguments: ParsedArguments, credentials: Credentials?, trace: TraceSink?, output: BodyOutput? = nil
    ) throws(CommandFailure) -> ProbeAnalysis {
        try Engine.blocking(onLoop: false) { () async throws(CommandFailure) -> ProbeAnalysis in
            try await probe(first, configuration: configuration, arguments: arguments, credentials: credentials, trace: trace, output: output)
        }
    }

    /// Runs one probe through the library's async API (``LoginSession/send(_:finalBodySink:)``).
    ///
    /// With `sharing` (a fleet), the probe's client uses that client's `SSL_CTX` and trust
    /// evaluators, made once for the fleet; its sessions and connections are still its own.
    static func probe(
        _ first: HTTPRequest, configuration: TLSClientConfiguration, arguments: ParsedArguments, credentials: Credentials?, trace: TraceSink?, output: BodyOutput? = nil,
        sharing: HTTPSClient? = nil
    ) async throws(CommandFailure) -> ProbeAnalysis {
        var options = HTTPClientOptions(redactsSecrets: !arguments.flag(.showSecrets))
        if let target = TLSOptions.connectTo(arguments) { options.connectTo[first.url.host] = target }
        if let trace { options.trace = { line in trace.append(line) } }
        let client: HTTPSClient
        if let sharing {
            client = HTTPSClient(sharingContextWith: sharing, options: options)
        } else {
            do throws(HTTPSError) { client = try HTTPSClient(configuration: configuration, options: options) } catch { throw TLSOptions.failure(error) }
        }
        defer { client.closeIdleConnections() }
        let maxRedirects = try Inputs.integer(arguments.value(.maxRedirects), option: "--max-redirects", command: "probe", range: 0...100) ?? 10
        let jar = CookieJar()
        let jarPath = arguments.value(.cookieJar)
        if let jarPath, FileManager.default.fileExists(atPath: jarPath) {
            do throws(HTTPSError) { _ = try jar.load(fromPath: jarPath) } catch { throw CommandFailure(ExitCode.badInput, error.message, hint: error.hint?.commandLine) }
        }
        var origins = Set<String>()
        for text in arguments.values(.authOrigin) {
            do throws(HTTPSError) { origins.insert(try HTTPSURL(text).origin) } catch {
                throw CommandFailure.usage("--auth-origin '\(text)' is not an origin like https://idp.example:8443", command: "probe")
            }
        }
        var loginOptions = LoginOptions(
            credentials: credentials, authOrigins: origins, followsRedirects: arguments.flag(.follow) || arguments.flag(.saml), maximumRedirects: maxRedirects,
            submitsPostBindingForms: arguments.flag(.saml), sendsChannelBinding: !arguments.flag(.noChannelBinding))
        var allowed: [String]? = nil
        if let scheme = arguments.value(.auth)?.lowercased(), scheme != "any" {
            guard let chosen = AuthScheme(rawValue: scheme) else {
                throw CommandFailure.usage("--auth '\(scheme)' must be basic, digest, ntlm, negotiate or any", command: "probe")
            }
            loginOptions.allowedSchemes = [chosen]
            allowed = [scheme]
            // Kerberos as `curl --negotiate -u :`: the credentials cache, or a ticket from --user's password.
            if chosen == .negotiate { loginOptions.kerberos = credentials == nil ? .credentialsCache() : .password }
        } else {
            // --auth any: Kerberos first when a ticket can be had (the cache's, of --user's user when
            // given, else one from --user's password), then NTLM with --user: IIS's provider order.
            loginOptions.kerberos = .automatic()
        }
        if let trace { loginOptions.trace = { line in trace.append("* " + line) } }
        let session = LoginSession(client: client, cookies: jar, options: loginOptions)
        var final: HTTPResponse? = nil
        var failure: HTTPSError? = nil
        do throws(HTTPSError) {
            let sink = output.map { output in { (_: HTTPResponseHead) in { (bytes: ArraySlice<UInt8>) throws in try output.append(bytes) } } }
            final = try await session.send(first, finalBodySink: sink).response
        } catch {
            failure = error
        }
        if let jarPath {
            do throws(HTTPSError) { try jar.save(toPath: jarPath) } catch { throw CommandFailure(ExitCode.badInput, error.message) }
        }
        // A refused login keeps its last response (the 401) and the TLS record of its connection.
        if final == nil, failure?.phase == .auth { final = session.lastResponse }
        var analysis = ProbeAnalysis(
            url: first.url, firstRequest: first, final: final, loginHops: session.hops, failure: failure, report: final?.tls ?? failure?.report, configuration: configuration)
        analysis.user = credentials?.user
        analysis.clientRevocation = RevocationOutput.checkSentIdentity(analysis.report, configuration: configuration)
        analysis.allowedSchemes = allowed
        analysis.channelBindingDisabled = !session.options.sendsChannelBinding
        if let output, output.written > 0 || (final.map { $0.body.isEmpty && $0.wireBodyLength > 0 } ?? false) {
            analysis.streamedBodyBytes = output.written
            analysis.bodyPreview = output.preview
        }
        return analysis
    }
}

/// Trace lines: handed on as they come (to stderr for -v), or collected.
final class TraceSink: Sendable {
    private let sink: (@Sendable (String) -> Void)?
    /// The collected lines; also held while the sink is called, so that lines never interleave.
    private let stored = Locked<[String]>([])
    /// Collects the lines (read them with ``lines``).
    init() { sink = nil }
    /// Passes each line on at once.
    init(_ sink: @escaping @Sendable (String) -> Void) { self.sink = sink }
    func append(_ line: String) {
        stored.withLock { stored in
            if let sink { sink(line) } else { stored.append(line) }
        }
    }
    var lines: [String] { stored.withLock { $0 } }
}

/// Where `--output`/`--output-text` go: stdout for `-`; an existing device, FIFO or socket written
/// into as it is, never replaced (`-o /dev/null`, as curl; a FIFO without a reader is an error, not
/// a hang); or a regular file through ``OutputWriter`` (a private temporary file renamed into place
/// when complete, removed on errors and signals). Streams: memory stays constant whatever the size;
/// the first bytes are kept as a preview for the page's title and first line.
final class BodyOutput: @unchecked Sendable {
    // @unchecked Sendable: captured by the login session's `finalBodySink`, which only the one task
    // running the probe's exchange calls; nothing else touches it until that returns.
    static let previewLimit = 64 << 20
    private static let keptPreview = 256 << 10
    let path: String
    private let console: Console
    /// The device, FIFO or socket written into, when the path is one.
    private var fd: Int32 = -1
    private var writer: OutputWriter?
    private(set) var written = 0
    private(set) var preview: [UInt8] = []

    init(path: String, force: Bool, console: Console) throws(CommandFailure) {
        self.path = path
        self.console = console
        if path == "-" { return }
        var info = stat()
        if stat(path, &info) == 0 {
            let type = info.st_mode & S_IFMT
            if type == S_IFCHR || type == S_IFIFO || type == S_IFSOCK {
                // Non-blocking open: a FIFO with no reader fails (ENXIO) instead of waiting forever.
                fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
                guard fd >= 0 else {
                    let reason = errno == ENXIO ? "nothing reads from it" : String(cString: strerror(errno))
                    throw CommandFailure(ExitCode.badInput, "cannot write \(path): \(reason)")
                }
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
                return
            }
        }
        do throws(MTLSTrustError) {
            writer = try OutputWriter(path: path, mode: 0o644, force: force)
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message)
        }
    }

    deinit { discard() }

    /// Appends bytes (to stdout, the device or the temporary file).
    func append(_ bytes: ArraySlice<UInt8>) throws(CommandFailure) {
        if preview.count < Self.keptPreview { preview += bytes.prefix(Self.keptPreview - preview.count) }
        written += bytes.count
        if path == "-" {
            console.writeBytes(Array(bytes))
            return
        }
        if let writer {
            do throws(MTLSTrustError) {
                try writer.write(Array(bytes))
            } catch {
                throw CommandFailure(ExitCode.badInput, error.message)
            }
            return
        }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += n
            }
        }
        if failure != 0 { throw CommandFailure(ExitCode.badInput, "cannot write \(path): \(String(cString: strerror(failure)))") }
    }

    /// Completes the file: puts the temporary file in place.
    func finish() throws(CommandFailure) {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if let writer {
            self.writer = nil
            do throws(MTLSTrustError) { try writer.commit() } catch { throw CommandFailure(ExitCode.badInput, error.message) }
        }
    }

    /// Abandons the output: removes the temporary file.
    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        writer?.discard()
        writer = nil
    }
}

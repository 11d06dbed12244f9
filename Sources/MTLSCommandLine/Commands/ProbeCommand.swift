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
            OptionSpec(names: ["--follow"], help: "Follow redirects."),
            OptionSpec(names: ["--max-redirects"], valueName: "N", help: "The most redirects followed (default 10)."),
            OptionSpec(names: ["--output"], valueName: "FILE", help: "Write the final body to FILE."),
            OptionSpec(names: ["--save-chain"], valueName: "FILE", help: "Write the server chain as sent (PEM), to review and pass as --anchors."),
            OptionSpec(names: ["--at"], valueName: "TIME", help: "Evaluate the server's certificate at this time (RFC 3339 or Unix seconds)."),
            OptionSpec(names: ["--force"], help: "Overwrite --output/--save-chain files."),
            OptionSpec(names: ["-v", "--verbose"], help: "Trace TLS handshake messages and HTTP headers (secrets redacted)."),
            OptionSpec(names: ["--json"], help: "Print one JSON object (with --targets: one JSON object per line)."),
            OptionSpec(names: ["--targets"], valueName: "FILE", help: "Probe every URL or host:port in FILE (one a line; '-' for stdin)."),
            OptionSpec(names: ["--concurrency"], valueName: "N", help: "With --targets: probes at once (default 16)."),
            OptionSpec(names: ["--shard"], valueName: "I/N", help: "With --targets: only the I-th of N slices (1-based), to split a fleet across machines."),
        ],
        examples: [
            "mtls probe https://iis.example.com/secure --p12 alice.pfx --password env:PFX_PASSWORD",
            "mtls probe https://localhost:8443/secure --anchors ca.pem --tls-max 1.2 -v",
            "mtls probe https://self-signed.local/ --insecure --save-chain server-chain.pem",
        ])

    struct Hop {
        var request: HTTPRequest
        var response: HTTPResponse
    }

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        if let targets = arguments.value("targets") {
            return try FleetProbe.run(targetsFile: targets, arguments: arguments, console: console)
        }
        guard let urlText = arguments.positionals.first else { throw CommandFailure.usage("Missing expected argument '<URL>' (or --targets FILE)", command: "probe") }
        let url = try parseURL(urlText)
        let time = try Inputs.time(arguments.value("at"))
        let configuration = try TLSOptions.configuration(arguments, command: "probe", console: console, evaluationTime: time)
        let request = try makeRequest(url, arguments: arguments, console: console)
        let sink = TraceSink()
        let analysis = try probe(request, configuration: configuration, arguments: arguments, trace: arguments.flag("verbose") ? sink : nil)
        if let path = arguments.value("save-chain"), let chain = analysis.report?.peerChainAsSent, !chain.isEmpty {
            try OutputFile.write(Array(chain.map(\.pemString).joined().utf8), to: path, force: arguments.flag("force"))
        }
        if let path = arguments.value("output"), let last = analysis.hops.last {
            try OutputFile.write(last.response.body, to: path, force: arguments.flag("force"))
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
        return HTTPRequest(method: method, url: url, headers: headers, body: body, expectsContinue: body != nil, firstOriginOnlyHeaders: Set(arguments.values("header").compactMap { $0.split(separator: ":").first.map { String($0).trimmingCharacters(in: .whitespaces) } }))
    }

    /// Runs one probe: the request, redirects when asked, and the analysis. Never prints.
    static func probe(_ first: HTTPRequest, configuration: TLSClientConfiguration, arguments: ParsedArguments, trace: TraceSink?) throws(CommandFailure) -> ProbeAnalysis {
        let client: HTTPSClient
        do throws(HTTPSError) { client = try HTTPSClient(configuration: configuration) } catch { throw TLSOptions.failure(error) }
        defer { client.closeIdleConnections() }
        if let target = TLSOptions.connectTo(arguments) { client.connectTo[first.url.host] = target }
        if let trace { client.trace = { line in trace.append(line) } }
        let maxRedirects = try Inputs.integer(arguments.value("max-redirects"), option: "--max-redirects", command: "probe", range: 0...100) ?? 10
        var request = first
        var hops: [Hop] = []
        var failure: HTTPSError? = nil
        while true {
            do throws(HTTPSError) {
                let response = try client.send(request)
                hops.append(Hop(request: request, response: response))
                guard arguments.flag("follow"), [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"] else { break }
                if hops.count > maxRedirects {
                    failure = HTTPSError(.redirect, host: first.url.hostHeader, "more than \(maxRedirects) redirects", hint: "a redirect loop? raise --max-redirects if the chain is long")
                    break
                }
                let next = try response.url.resolving(location)
                var nextRequest = request
                nextRequest.url = next
                if response.status == 303 || ((response.status == 301 || response.status == 302) && request.method.uppercased() == "POST") {
                    nextRequest.method = "GET"
                    nextRequest.body = nil
                    nextRequest.expectsContinue = false
                    nextRequest.headers.remove("Content-Type")
                }
                if next.origin != request.url.origin {
                    nextRequest.headers.remove("Authorization")
                    nextRequest.headers.remove("Cookie")
                    for name in request.firstOriginOnlyHeaders { nextRequest.headers.remove(name) }
                }
                request = nextRequest
            } catch {
                failure = error
                break
            }
        }
        return ProbeAnalysis(url: first.url, hops: hops, failure: failure, report: hops.last?.response.tls ?? failure?.report, configuration: configuration)
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

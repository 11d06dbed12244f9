#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

import Dispatch
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MTLSHTTP
import MTLSTrust
import MTLSTestServer

/// `mtls serve`: an IIS-like local mutual-TLS test server.
enum ServeCommand {
    static let spec = CommandSpec(
        name: "serve",
        abstract: "Run a local HTTPS test server that asks for client certificates the way IIS does.",
        discussion: """
            Paths: / (no client certificate), /secure (Require: asked for after the request — renegotiation \
            on TLS 1.2, post-handshake auth on TLS 1.3), /optional (Accept), /basic and /digest (user mtls, \
            password mtls), /echo-cert, /sjis (Shift_JIS), /redirect, /refresh (a meta refresh to /), /cookie. Answers 403.7 (no certificate), \
            403.16 (untrusted), 403.17 (expired), 403.13 (revoked), 403.4 (plain HTTP) with the substatus in the \
            body and in X-MTLS-Substatus. --pki-dir holds ca.pem, server.pem, server.key, client.pem, client.key \
            and client.p12 (password mtls), made on first use and reused after; without --pki-dir the PKI \
            is made in a new temporary directory, removed (it holds private keys) when serve stops, on \
            Ctrl-C or SIGTERM, or when it cannot start. Stop with Ctrl-C.
            Config file lines: PATH cert=ignore|accept|require auth=none|basic|digest handler=page|echo-cert|sjis|cookie|redirect:TARGET|refresh:TARGET
            """,
        options: [
            OptionSpec(.port, valueName: "N", help: "The port (0 picks a free one).", defaultValue: "8443"),
            OptionSpec(.bind, valueName: "ADDR", help: "The address to listen on.", defaultValue: "127.0.0.1"),
            OptionSpec(.pkiDir, valueName: "DIR", help: "Where the test PKI lives (default: a new temporary directory)."),
            OptionSpec(.cert, valueName: "FILE", help: "Server certificate (and chain) instead of the test PKI's."),
            OptionSpec(.key, valueName: "FILE", help: "Server private key for --cert (default: the --cert file, when it holds the key too)."),
            OptionSpec(.clientCa, valueName: "FILE", repeatable: true, help: "CAs trusted for client certificates (default: the test CA)."),
            OptionSpec(.crl, valueName: "FILE", repeatable: true, help: "CRLs checked for client certificates (403.13)."),
            OptionSpec(.config, valueName: "FILE", help: "Path rules from FILE instead of the defaults."),
            OptionSpec(.negotiateAtHandshake, help: "Ask for the client certificate in the handshake (clientcertnegotiation=enable)."),
            OptionSpec(.noCaNames, help: "Send no CA names in certificate requests (IIS 2012+ default)."),
            OptionSpec(.httpsys, help: "Answer a TLS 1.3 per-path request like http.sys: 500 with 0x80070032."),
            OptionSpec(.tlsMin, valueName: "VERSION", help: "Lowest TLS version.", kind: .choice(TLSVersion.allCases.map(\.rawValue)), defaultValue: "1.2"),
            OptionSpec(.tlsMax, valueName: "VERSION", help: "Highest TLS version.", kind: .choice(TLSVersion.allCases.map(\.rawValue)), defaultValue: "1.3"),
            OptionSpec(
                .allowRenegotiationResumption,
                help: "Let a client resume its session in a TLS 1.2 renegotiation (no certificate request then), as Node.js and OpenSSL servers do by default."),
            OptionSpec(.duration, valueName: "SECONDS", help: "Stop after SECONDS (for scripts)."),
        ],
        examples: ["mtls serve", "mtls serve --port 9443 --tls-max 1.2 --no-ca-names", "mtls serve --pki-dir ./pki --httpsys"])

    static func makeServer(_ arguments: ParsedArguments, console: Console, defaultPort: Int) throws(CommandFailure) -> (TestServer, TestPKI?) {
        let port = try Inputs.integer(arguments.value(.port), option: "--port", command: "serve", range: 0...65535) ?? defaultPort
        let minimum = try TLSOptions.version(arguments.value(.tlsMin), option: "--tls-min", command: "serve") ?? .tls1_2
        let maximum = try TLSOptions.version(arguments.value(.tlsMax), option: "--tls-max", command: "serve")
        if let maximum, minimum > maximum {
            throw CommandFailure.usage("--tls-min \(minimum.rawValue) is above --tls-max \(maximum.rawValue): no TLS version is left", command: "serve")
        }
        // Every input is read before a temporary PKI is made, so a bad one leaves no keys behind.
        var extraClientCAs: [Certificate] = []
        for path in arguments.values(.clientCa) { extraClientCAs += try Inputs.certificates(path, password: nil, console: console) }
        var crls: [CertificateRevocationList] = []
        for path in arguments.values(.crl) { crls += try Inputs.crls(path, console: console) }
        var rules = PathRule.defaults
        if let path = arguments.value(.config) {
            let bytes = try Inputs.read(path, console: console)
            do throws(TestServerConfigurationError) { rules = try PathRule.parse(String(decoding: bytes, as: UTF8.self)) } catch {
                throw CommandFailure(ExitCode.badInput, "\(path): \(error)")
            }
        }
        var pki: TestPKI? = nil
        var certificate: Certificate
        var key: PrivateKey
        var chain: [Certificate] = []
        var clientCAs: [Certificate] = []
        if let certPath = arguments.value(.cert) {
            let keyPath = try Inputs.keyPath(forCertificate: certPath, key: arguments.value(.key), command: "serve")
            let certificates = try Inputs.certificates(certPath, password: nil, console: console)
            key = try Inputs.privateKey(keyPath, password: nil, console: console)
            guard let leaf = certificates.first(where: { key.matches($0) }) else {
                throw CommandFailure(ExitCode.badInput, "the key in \(keyPath) does not belong to the certificate in \(certPath)")
            }
            certificate = leaf
            chain = certificates.filter { $0 != leaf }
        } else {
            let directory = arguments.value(.pkiDir) ?? FileSystem.temporaryName("mtls-serve")
            let (loaded, created) = try TestPKI.loadOrCreate(in: directory)
            var made = loaded
            made.isTemporary = arguments.value(.pkiDir) == nil
            pki = made
            certificate = made.server
            key = made.serverKey
            chain = [made.ca]
            clientCAs = [made.ca]
            console.err("\(created ? "made" : "using") the test PKI in \(directory) (client.p12 password: \(TestPKI.p12Password))")
        }
        clientCAs += extraClientCAs
        let tls = TLSServerConfiguration(
            certificate: certificate, privateKey: key, chain: chain, clientCAs: clientCAs, sendsCANames: !arguments.flag(.noCaNames),
            requestsCertificateAtHandshake: arguments.flag(.negotiateAtHandshake), crls: crls, minimumVersion: minimum, maximumVersion: maximum,
            allowsResumptionInRenegotiation: arguments.flag(.allowRenegotiationResumption))
        let configuration = TestServerConfiguration(tls: tls, bindAddress: arguments.value(.bind) ?? "127.0.0.1", port: port, rules: rules, httpSysMode: arguments.flag(.httpsys))
        do throws(HTTPSError) {
            return (try TestServer(configuration: configuration, log: { line in console.out(line) }), pki)
        } catch {
            pki?.removeIfTemporary(console: console)
            throw CommandFailure(ExitCode.badInput, error.message)
        }
    }

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        var seconds: Double? = nil
        if let text = arguments.value(.duration) {
            guard let value = Double(text), value > 0 else { throw CommandFailure.usage("--duration must be a positive number of seconds", command: "serve") }
            seconds = value
        }
        // Signals are caught before the PKI is made, so that Ctrl-C or SIGTERM ends through the
        // cleanup below rather than killing the process with private keys left on disk.
        let done = DispatchSemaphore(value: 0)
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { done.signal() }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        let (server, pki) = try makeServer(arguments, console: console, defaultPort: 8443)
        // The temporary PKI holds private keys: it goes on every way out.
        defer { pki?.removeIfTemporary(console: console) }
        let port: Int
        do throws(HTTPSError) { port = try server.start() } catch { throw CommandFailure(ExitCode.network, error.message, hint: error.hint?.commandLine) }
        let bind = server.configuration.bindAddress
        let host = bind.contains(":") ? "[\(bind)]" : bind
        console.out(
            "mtls serve listening on https://\(host):\(port)/ — paths: "
                + server.configuration.rules.map { "\($0.path) (\($0.clientCertificate.rawValue)\($0.authentication == .none ? "" : ", \($0.authentication.rawValue)"))" }.joined(
                    separator: ", "))
        if let seconds { DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { done.signal() } }
        done.wait()
        server.stop()
        console.out("mtls serve stopped")
        return ExitCode.success
    }
}

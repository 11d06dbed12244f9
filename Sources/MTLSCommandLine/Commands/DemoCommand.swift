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
import MTLSTestServer

/// `mtls demo`: the one-command tour — a local IIS-like server, a trust check, a failed and a
/// successful client-certificate login, and a pin set.
enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo",
        abstract: "A one-command tour: starts a local IIS-like server and shows verify, probe and pin against it.",
        discussion:
            "Needs no arguments and no network: it makes test certificates in a temporary directory, starts `mtls serve` on a free loopback port in-process, runs the tour, and cleans up.",
        options: [OptionSpec(.keep, help: "Keep the temporary directory (its path is printed).")],
        examples: ["mtls demo"])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        let directory = FileSystem.temporaryName("mtls-demo")
        defer { if !arguments.flag(.keep) { try? FileManager.default.removeItem(atPath: directory) } }
        let (pki, _) = try TestPKI.loadOrCreate(in: directory)
        let tls = TLSServerConfiguration(certificate: pki.server, privateKey: pki.serverKey, chain: [pki.ca], clientCAs: [pki.ca], sendsCANames: true)
        let serverLog = TraceSink()
        let server: TestServer
        do throws(HTTPSError) {
            server = try TestServer(configuration: TestServerConfiguration(tls: tls, bindAddress: "127.0.0.1", port: 0), log: { serverLog.append($0) })
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message)
        }
        let port: Int
        do throws(HTTPSError) { port = try server.start() } catch { throw CommandFailure(ExitCode.network, error.message) }
        defer { server.stop() }
        let base = "https://localhost:\(port)"
        var failures = 0

        func step(_ title: String, _ explanation: String) {
            console.out()
            console.out(console.paint("▶ \(title)", .bold))
            console.out(console.paint("  \(explanation)", .dim))
        }
        func run(_ args: [String], expect: Int32, sections: [String]? = nil) {
            let shown = args.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ").replacingAll(directory + "/", with: "")
            console.out("  $ mtls \(shown)")
            let captured = TraceSink()
            let inner = Console(
                within: console,
                // probe repeats its verdict and top fix on stderr for scripts; the tour shows stdout's.
                stdout: { captured.append($0) },
                stderr: { text in
                    if !(args.first == "probe" && (text.hasPrefix("Verdict:") || text.hasPrefix("  fix:"))) { captured.append(text) }
                },
                environment: console.environment.merging(["MTLS_QUIET_PASS_WARNING": "1"]))
            let code = MTLSCommand.run(arguments: args, console: inner)
            var lines = captured.lines.joined().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if let sections {
                var keep = false
                lines = lines.filter { line in
                    if let first = line.first, !first.isWhitespace, !line.isEmpty { keep = sections.contains { line.hasPrefix($0) } }
                    return keep
                }
            }
            for line in lines where !line.isEmpty { console.out("    " + line.replacingAll(directory + "/", with: "")) }
            console.out("    " + console.paint("(exit \(code))", .dim))
            if code != expect {
                failures += 1
                console.out("    " + console.paint("unexpected exit code: wanted \(expect)", .red))
            }
        }

        console.out(console.paint("mtls demo", .bold) + " — a local IIS-like server on \(base) with a fresh test CA in \(directory)")
        step(
            "1. Is this server certificate trusted?",
            "Trusting only another certificate, the chain ends at a root we do not know (the reason says what to do); with the private CA as the only anchor, it is trusted.")
        run(["verify", pki.serverPath, "--anchors", pki.clientPath, "--host", "localhost"], expect: ExitCode.no, sections: ["Verdict"])
        run(["verify", pki.serverPath, "--anchors", pki.caPath, "--host", "localhost"], expect: ExitCode.success, sections: ["Verdict"])
        step("2. A client-certificate login without a certificate", "/secure asks for the certificate after the request, as IIS does per path; with none, 403.7.")
        run(["probe", base + "/secure", "--anchors", pki.caPath], expect: ExitCode.no, sections: ["Client certificate", "HTTP", "Verdict"])
        step("3. The same login with the .p12 identity", "Now the certificate is sent when asked, and the server answers 200.")
        run(
            ["probe", base + "/secure", "--anchors", pki.caPath, "--p12", pki.p12Path, "--password", "pass:\(TestPKI.p12Password)"], expect: ExitCode.success,
            sections: ["Client certificate", "HTTP", "Verdict"])
        step("4. A pin set for the app build", "SPKI SHA-256 pins of the server certificate and its CA (a backup pin), as OkHttp/TrustKit/curl use them.")
        run(["pin", pki.serverPath], expect: ExitCode.success)
        step(
            "5. Would iOS, Android, Java and Chrome accept it?",
            "The demo's server certificate (398 days, SAN, serverAuth) meets every platform's published rules; Android wants the private CA in the app's network security config. A 10-year certificate with its name only in the CN is what iOS 13 and Chrome refuse."
        )
        run(["verify", pki.serverPath, "--anchors", pki.caPath, "--host", "localhost", "--platform", "all"], expect: ExitCode.success)
        let legacyPath = try DemoCommand.legacyCertificate(pki)
        run(["verify", legacyPath, "--anchors", pki.caPath, "--platform", "apple,chrome"], expect: ExitCode.no)
        console.out()
        console.out(console.paint("Server log", .bold))
        for line in serverLog.lines { console.out("  " + line) }
        console.out()
        if failures == 0 {
            let (serve, probe) = tryItYourself(executable: DemoCommand.executablePath(), path: console.environment["PATH"], directory: FileManager.default.currentDirectoryPath)
            console.out(console.paint("Demo complete.", .green) + " Try it yourself: `\(serve)`, then in another terminal `\(probe)`")
            return ExitCode.success
        }
        console.out(console.paint("Demo finished with \(failures) unexpected result\(failures == 1 ? "" : "s").", .red))
        return ExitCode.no
    }

    /// The closing commands, runnable as printed: this binary as a shell finds it (`mtls` when PATH
    /// leads to it, else its absolute path — a `swift run` build is under .build/), a PKI directory
    /// that `serve` makes on first use and keeps (the tour's own is removed: it holds keys), and the
    /// password from the environment (no command-line warning, nothing in the shell's history).
    static func tryItYourself(executable: String?, path: String?, directory: String) -> (serve: String, probe: String) {
        var program = "swift run mtls"
        if let executable, executable.hasSuffix("/mtls") {
            let resolved = Self.realPath(executable) ?? executable
            let onPath = (path ?? "").split(separator: ":").contains { Self.realPath(String($0) + "/mtls") == resolved }
            program = onPath ? "mtls" : shellQuoted(executable)
        }
        let pki = (directory.hasSuffix("/") ? directory : directory + "/") + "mtls-pki"
        let serve = "\(program) serve --pki-dir \(shellQuoted(pki))"
        let probe =
            "MTLS_P12_PASSWORD=\(TestPKI.p12Password) \(program) probe https://localhost:8443/secure --anchors \(shellQuoted(pki + "/ca.pem")) --p12 \(shellQuoted(pki + "/client.p12")) --password env:MTLS_P12_PASSWORD"
        return (serve, probe)
    }

    /// The running executable (Linux: /proc/self/exe), resolved.
    static func executablePath() -> String? { realPath("/proc/self/exe") ?? CommandLine.arguments.first.flatMap(realPath) }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A word for sh: as it is when it holds only safe characters, else in single quotes.
    static func shellQuoted(_ word: String) -> String {
        if !word.isEmpty,
            word.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "/._-+:@%,=".unicodeScalars.contains($0) })
        {
            return word
        }
        return "'" + word.replacingAll("'", with: "'\\''") + "'"
    }

    /// A deliberately non-compliant server certificate from the demo CA, as an old internal CA
    /// would issue it: valid 3,650 days, the host name only in the subject CN.
    static func legacyCertificate(_ pki: TestPKI) throws(CommandFailure) -> String {
        let path = pki.directory + "/legacy-server.pem"
        let now = Date()
        let certificate: Certificate
        do throws(MTLSTrustError) {
            let key = try CertificateIssuer.generateKey()
            certificate = try CertificateIssuer.issue(
                .init(role: .server, commonName: "legacy.localhost", notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(3650 * 86400 - 3600)),
                key: key, issuer: (pki.ca, pki.caKey), serial: UInt64.random(in: 1...UInt64(Int64.max)))
        } catch {
            throw CommandFailure(ExitCode.badInput, "could not make the non-compliant demo certificate: \(error.message)")
        }
        try OutputFile.writeAll([(path, Array(certificate.pemString.utf8), 0o644)], force: false)
        return path
    }
}

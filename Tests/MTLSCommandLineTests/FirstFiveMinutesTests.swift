import Foundation
import XCTest

@testable import MTLSCommandLine

/// What a new user meets first: the demo's closing commands run as printed, a URL without a host
/// is a usage error that shows the form, "not a certificate" reads the same in every command, and
/// no hint is printed twice.
final class FirstFiveMinutesTests: XCTestCase {
    func testTheDemosClosingCommandsRunAsPrinted() throws {
        let binary = try BuiltBinary.path()
        let directory = try TemporaryDirectory(self)
        let demo = try runProcess("/bin/sh", ["-c", "cd \(DemoCommand.shellQuoted(directory.path)) && exec \(DemoCommand.shellQuoted(binary)) demo"])
        XCTAssertEqual(demo.status, 0, demo.description)
        let closing = try XCTUnwrap(demo.stdoutText.split(separator: "\n").last { $0.contains("Try it yourself") }.map(String.init), demo.stdoutText)
        let commands = closing.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        XCTAssertEqual(commands.count, 2, closing)
        let (serveCommand, probeCommand) = (commands[0], commands[1])
        XCTAssertFalse(probeCommand.contains("pass:"), "the password is not on the command line: \(probeCommand)")
        XCTAssertTrue(serveCommand.contains(directory.path + "/mtls-pki"), serveCommand)

        // As printed: serve in the background, the probe from another shell.
        let serve = Process()
        serve.executableURL = URL(fileURLWithPath: "/bin/sh")
        serve.arguments = ["-c", "exec " + serveCommand]
        let serveOutput = Pipe()
        serve.standardOutput = serveOutput
        serve.standardError = serveOutput
        try serve.run()
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        var started = false
        for _ in 0..<150 where !started {
            usleep(100_000)
            if !serve.isRunning {
                let text = String(decoding: serveOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                if text.contains("in use") { throw XCTSkip("port 8443 is in use on this machine: \(text)") }
                XCTFail("serve stopped: \(text)")
                return
            }
            // Listening once the PKI is made and a connection to 8443 succeeds (bash's /dev/tcp).
            started =
                FileManager.default.fileExists(atPath: directory.path + "/mtls-pki/client.p12")
                && (try? runProcess("/bin/bash", ["-c", "exec 3<>/dev/tcp/127.0.0.1/8443"]))?.status == 0
        }
        XCTAssertTrue(started, "serve did not listen on 8443")
        let probe = try runProcess("/bin/sh", ["-c", probeCommand])
        XCTAssertEqual(probe.status, 0, probe.description)
        XCTAssertTrue(probe.stdoutText.contains("Verdict: OK"), probe.description)
        XCTAssertFalse(probe.stderr.lowercased().contains("warning"), probe.stderr)
    }

    func testTheClosingCommandNamesTheBinaryAShellFinds() {
        let onPath = DemoCommand.tryItYourself(executable: "/bin/sh", path: "/usr/bin:/bin", directory: "/tmp/x")
        XCTAssertTrue(onPath.serve.hasPrefix("swift run mtls serve"), "not an mtls binary (a test bundle): swift run")
        let built = DemoCommand.tryItYourself(executable: "/work/my repo/.build/debug/mtls", path: "/usr/bin", directory: "/tmp/a b")
        XCTAssertEqual(built.serve, "'/work/my repo/.build/debug/mtls' serve --pki-dir '/tmp/a b/mtls-pki'")
        XCTAssertTrue(
            built.probe.hasPrefix("MTLS_P12_PASSWORD=mtls '/work/my repo/.build/debug/mtls' probe https://localhost:8443/secure --anchors '/tmp/a b/mtls-pki/ca.pem'"), built.probe)
        XCTAssertTrue(built.probe.hasSuffix("--password env:MTLS_P12_PASSWORD"), built.probe)
        XCTAssertEqual(DemoCommand.shellQuoted("it's"), #"'it'\''s'"#)
    }

    func testAURLWithoutAHostIsAUsageErrorThatShowsTheForm() {
        for url in ["https:///secure", "///secure", "https://:8443/x", "https://user@/x", "https://"] {
            let result = mtls(["probe", url, "--timeout", "1"])
            XCTAssertEqual(result.exitCode, 2, "\(url): \(result.description)")
            XCTAssertTrue(result.stderr.contains("https://HOST[:PORT]/PATH"), "\(url): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("resolve") || result.stdout.contains("resolve"), "\(url): looked up: \(result.description)")
        }
        let pin = mtls(["pin", "https:///secure"])
        XCTAssertEqual(pin.exitCode, 2, pin.description)
        XCTAssertTrue(pin.stderr.contains("https://HOST[:PORT]/PATH"), pin.stderr)
        // In a fleet, such a line is that endpoint's usage error, not a lookup.
        XCTAssertTrue(try ProbeCommandHostCheck.fleetLineFails("https:///secure"))
    }

    func testNotACertificateReadsTheSameInVerifyConvertInspectAndPin() throws {
        let directory = try TemporaryDirectory(self)
        let text = try directory.write("notes.txt", text: "hello, this is not a certificate\n")
        let binary = try directory.write("noise.bin", [0x01, 0x02, 0xFF, 0x00, 0x7F, 0x80, 0x10, 0x11])
        for (file, sentence) in [(text, "it is text without a PEM certificate block"), (binary, "it is not a certificate in PEM, DER or PKCS#12 form")] {
            for arguments in [["verify", file], ["convert", file, "--to", "der", "--out", directory.file("out.der")], ["inspect", file], ["pin", file]] {
                let result = mtls(arguments)
                XCTAssertEqual(result.exitCode, 3, "\(arguments): \(result.description)")
                XCTAssertTrue(result.stderr.hasPrefix("Error: \(file): \(sentence)"), "\(arguments[0]): \(result.stderr)")
            }
        }
    }

    func testNoHintIsPrintedTwice() {
        // On a terminal the report already ends with the verdict and its fix: stderr does not repeat them.
        let terminal = mtls(["probe", "https://127.0.0.1:1/", "--timeout", "2"], stdoutIsTerminal: true)
        XCTAssertEqual(terminal.exitCode, 4, terminal.description)
        let all = terminal.stdout + terminal.stderr
        XCTAssertEqual(all.components(separatedBy: "fix: ").count - 1, 1, all)
        XCTAssertEqual(all.components(separatedBy: "Verdict:").count - 1, 1, all)
        // Into a pipe, scripts that keep stdout still find the verdict on stderr.
        let piped = mtls(["probe", "https://127.0.0.1:1/", "--timeout", "2"])
        XCTAssertTrue(piped.stderr.contains("Verdict: FAILED (exit 4)"), piped.stderr)
        // A usage error: the message and one pointer to --help.
        let usage = mtls(["probe", "https:///secure"])
        XCTAssertEqual(usage.stderr.components(separatedBy: "--help").count - 1, 1, usage.stderr)
    }
}

/// A fleet's targets line goes through the same URL check as a single probe.
enum ProbeCommandHostCheck {
    static func fleetLineFails(_ line: String) throws -> Bool {
        do throws(CommandFailure) {
            _ = try ProbeCommand.parseURL(line)
            return false
        } catch {
            return error.exitCode == 2 && error.message.contains("https://HOST[:PORT]/PATH")
        }
    }
}

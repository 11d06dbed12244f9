import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSTrust

/// Text that a certificate, a PKCS#12 file or a pin document chose, on its way to a terminal, a
/// JSON reader or a generated source file: inert on the terminal, exact in JSON, and in source the
/// escape that compiles to the value (`mtls probe` against a hostile server: UntrustedTextCLITests).
final class TerminalSafetyTests: XCTestCase {
    /// ESC sequences (erase, title, hide), the 8-bit CSI, a right-to-left override, a zero-width
    /// space and a line separator.
    static let hostile = "\u{1B}[2J\u{1B}]0;pwned\u{07}\u{1B}[8m\u{9B}31m\u{202E}gnp.exe\u{200B}\u{2028}"

    private func unsafe(in text: String) -> [String] {
        text.unicodeScalars.filter { DisplayText.isUnsafe($0) && $0 != "\n" && $0 != "\t" }.map { "U+" + String($0.value, radix: 16) }
    }

    private func capture(terminal: Bool, environment: [String: String] = [:], _ body: (Console) -> Void) -> (out: String, err: String) {
        let lock = NSLock()
        var out = ""
        var err = ""
        let console = Console(
            stdout: { text in lock.withLock { out += text } }, stderr: { text in lock.withLock { err += text } }, stdoutIsTerminal: terminal, environment: environment)
        body(console)
        return lock.withLock { (out, err) }
    }

    // MARK: The console

    func testLinesForPeopleKeepOnlyTheConsolesOwnColours() {
        let (out, err) = capture(terminal: true) { console in
            console.out(console.paint("trusted", .green) + " " + Self.hostile + " \u{1B}[31;1m \u{1B}[38;5;1m \u{1B}[")
            console.err(console.paint("error", .red) + ": " + Self.hostile)
        }
        XCTAssertTrue(out.hasPrefix("\u{1B}[32mtrusted\u{1B}[0m "), out.debugDescription)
        XCTAssertTrue(err.hasPrefix("\u{1B}[31merror\u{1B}[0m: "), err.debugDescription)
        for text in [out, err] {
            // What is left of ESC: only the sequences paint writes.
            let escapes = text.components(separatedBy: "\u{1B}").dropFirst().map { String($0.prefix(4)) }
            XCTAssertTrue(escapes.allSatisfy { $0.hasPrefix("[32m") || $0.hasPrefix("[31m") || $0.hasPrefix("[0m") }, text.debugDescription)
            XCTAssertTrue(text.contains("\\u{1B}[2J\\u{1B}]0;pwned\\u{7}\\u{1B}[8m\\u{9B}31m\\u{202E}gnp.exe\\u{200B}\\u{2028}"), text.debugDescription)
            XCTAssertEqual(unsafe(in: text.replacingOccurrences(of: "\u{1B}", with: "")), [])
        }
        XCTAssertTrue(out.contains("\\u{1B}[31;1m \\u{1B}[38;5;1m \\u{1B}["), "sequences paint does not write are escaped: \(out.debugDescription)")
    }

    /// With colour on, a peer's own `ESC [ 32 m` (a forged green "trusted" inside a subject) is
    /// escaped like any control: colours come only from this console's `paint`, whose marks are
    /// random for each console, so neither the sequence nor another console's mark passes.
    func testAPeerCannotPaintItsOwnText() {
        var foreignMark = ""
        let (out, _) = capture(terminal: true) { console in
            let forged = "CN=evil \u{1B}[32mtrusted\u{1B}[0m"
            let peer = Console(stdout: { _ in }, stderr: { _ in }, stdoutIsTerminal: true)
            foreignMark = peer.paint("trusted", .green)
            console.out("Verdict: " + console.paint("NOT trusted", .red) + " for " + forged + " " + foreignMark + " " + String(Console.markStart) + "32m")
        }
        XCTAssertTrue(out.hasPrefix("Verdict: \u{1B}[31mNOT trusted\u{1B}[0m for CN=evil \\u{1B}[32mtrusted\\u{1B}[0m "), out.debugDescription)
        XCTAssertEqual(out.components(separatedBy: "\u{1B}").count - 1, 2, "only the console's own red and reset: \(out.debugDescription)")
        XCTAssertTrue(foreignMark.unicodeScalars.contains(Console.markStart), foreignMark.debugDescription)
        XCTAssertTrue(out.contains("\\u{FDD0}"), "another console's mark and a bare mark are escaped: \(out.debugDescription)")
        XCTAssertEqual(unsafe(in: out.replacingOccurrences(of: "\u{1B}", with: "")), [])
    }

    /// The demo runs commands inside a console of its own and shows their lines: the inner
    /// command's colours arrive as colours and the text as safely as the outer console's own.
    func testACommandRunWithinAnotherShowsThroughIt() {
        let (out, _) = capture(terminal: true) { console in
            var lines: [String] = []
            let inner = Console(within: console, stdout: { lines.append($0) }, stderr: { lines.append($0) }, environment: Environment([:]))
            inner.out(inner.paint("trusted", .green) + " " + Self.hostile)
            for line in lines.joined().split(separator: "\n") { console.out("    " + line) }
        }
        XCTAssertTrue(out.hasPrefix("    \u{1B}[32mtrusted\u{1B}[0m \\u{1B}[2J"), out.debugDescription)
        XCTAssertEqual(unsafe(in: out.replacingOccurrences(of: "\u{1B}", with: "")), [])
    }

    func testWithoutColourNoEscapeReachesTheTerminal() {
        for environment in [[:], ["NO_COLOR": "1"]] {
            let terminal = !environment.isEmpty
            let (out, _) = capture(terminal: terminal, environment: environment) { console in
                console.out(console.paint("trusted", .green) + " \u{1B}[32mforged\u{1B}[0m")
            }
            XCTAssertEqual(out, "trusted \\u{1B}[32mforged\\u{1B}[0m\n")
        }
    }

    func testTheLayoutOfTheOutputIsKept() {
        let (out, _) = capture(terminal: false) { console in console.out("a\tb\nc\r") }
        XCTAssertEqual(out, "a\tb\nc\\r\n")
    }

    // MARK: Certificates and PKCS#12

    /// A certificate whose subject and alternative names hold the hostile text (openssl CLI).
    private func hostileCertificate(_ directory: TemporaryDirectory) throws -> (certificate: String, key: String) {
        let certificate = directory.file("hostile.pem")
        let key = directory.file("hostile.key")
        let made = try OpenSSL.run([
            "req", "-utf8", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", certificate, "-days", "30",
            "-subj", "/CN=a.example/O=\u{9B}31m\u{202E}gnp.exe/OU=\u{200B}\u{2028}x",
            "-addext", "subjectAltName=DNS:a.example,email:x\u{1B}[2J@example.com,URI:https://a\u{1B}]0;pwned\u{07}.example/",
        ])
        XCTAssertEqual(made.status, 0, made.description)
        return (certificate, key)
    }

    func testInspectShowsHostileNamesEscapedAndJSONKeepsThemExactly() throws {
        let directory = try TemporaryDirectory(self)
        let (certificate, key) = try hostileCertificate(directory)
        let p12 = directory.file("hostile.p12")
        let friendlyName = "id\u{1B}[2J\nForged: yes \"quoted\" \u{202E}"
        let exported = try OpenSSL.run(["pkcs12", "-export", "-in", certificate, "-inkey", key, "-name", friendlyName, "-passout", "pass:x", "-out", p12])
        XCTAssertEqual(exported.status, 0, exported.description)

        for arguments in [[certificate], [p12, "--password", "pass:x"]] {
            let text = mtls(["inspect"] + arguments, stdoutIsTerminal: true)
            XCTAssertEqual(text.exitCode, 0, text.stderr)
            XCTAssertEqual(unsafe(in: (text.stdout + text.stderr).replacingOccurrences(of: "\u{1B}[1m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")), [])
            XCTAssertTrue(text.stdout.contains("email:x\\u{1B}[2J@example.com"), text.stdout)
            XCTAssertTrue(text.stdout.contains("O=\\u{9B}31m\\u{202E}gnp.exe"), text.stdout)
            XCTAssertFalse(text.stdout.contains("\nForged"), "a newline in a friendly name cannot start a line: \(text.stdout)")

            let json = mtls(["inspect", "--json"] + arguments)
            XCTAssertEqual(unsafe(in: json.stdout), [], "JSON writes them as \\u escapes")
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
            let item = try XCTUnwrap((object["items"] as? [[String: Any]])?.first)
            let described = try XCTUnwrap((item["certificate"] ?? item["leaf"]) as? [String: Any], json.stdout)
            XCTAssertEqual(described["subject"] as? String, "OU=\u{200B}\u{2028}x,O=\u{9B}31m\u{202E}gnp.exe,CN=a.example")
            XCTAssertEqual(
                described["subjectAltNames"] as? [String], ["DNS:a.example", "email:x\u{1B}[2J@example.com", "URI:https://a\u{1B}]0;pwned\u{07}.example/"])
            if arguments.count > 1 {
                XCTAssertTrue(text.stdout.contains("\"id\\u{1B}[2J\\nForged: yes \\\"quoted\\\" \\u{202E}\""), text.stdout)
                XCTAssertEqual(described["friendlyName"] as? String, friendlyName)
            }
        }
    }

    // MARK: Generated sources

    func testEveryPinFormatIsInertAndTheSwiftLiteralIsExact() throws {
        let directory = try TemporaryDirectory(self)
        let (certificate, _) = try hostileCertificate(directory)
        // A backup key, so that the formats that refuse a single pin write theirs.
        let backupKey = directory.file("backup.key")
        let backup = directory.file("backup.pub")
        XCTAssertEqual(try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", backupKey]).status, 0)
        XCTAssertEqual(try OpenSSL.run(["pkey", "-in", backupKey, "-pubout", "-out", backup]).status, 0)
        for format in PinFormat.allCases where format != .der {
            let result = mtls(["pin", certificate, backup, "--format", format.rawValue, "--host", "a.example"])
            XCTAssertEqual(result.exitCode, 0, "\(format): \(result.stderr)")
            XCTAssertEqual(unsafe(in: result.stdout), [], "\(format.rawValue):\n\(result.stdout)")
            XCTAssertFalse(result.stdout.contains("\u{202E}"), format.rawValue)
        }
        let swift = mtls(["pin", certificate, backup, "--format", "swift", "--host", "a.example"])
        XCTAssertTrue(swift.stdout.contains("subject: \"OU=\\u{200B}\\u{2028}x,O=\\u{9B}31m\\u{202E}gnp.exe,CN=a.example\""), swift.stdout)
    }

    func testAReportURIThatCouldNotBeWrittenExactlyIsAUsageError() {
        for uri in ["https://r.example/\u{1B}[2J", "https://r.example/a b", "https://r.example/\"x", "https://r.example/\u{202E}", "https://r.example/é"] {
            let result = mtls(["pin", Fixtures.path("server.pem"), Fixtures.path("keys/backup.csr"), "--format", "trustkit", "--host", "a.example", "--report-uri", uri])
            XCTAssertEqual(result.exitCode, 2, uri.debugDescription)
            XCTAssertTrue(result.stderr.contains("must be an http(s) URL in printable ASCII"), result.stderr)
            XCTAssertEqual(unsafe(in: result.stderr), [], result.stderr)
        }
        XCTAssertEqual(
            mtls([
                "pin", Fixtures.path("server.pem"), Fixtures.path("keys/backup.csr"), "--format", "trustkit", "--host", "a.example", "--report-uri",
                "https://r.example/p?a=1&b=%20",
            ]).exitCode, 0)
    }

    func testStringLiteralsUseEachLanguagesEscape() {
        let value = "a\u{1B}\u{202E}\u{E0041}\"\\\n"
        XCTAssertEqual(PinWriter.quoted(value, .swift), "\"a\\u{1B}\\u{202E}\\u{E0041}\\\"\\\\\\n\"")
        XCTAssertEqual(PinWriter.quoted(value, .javaKotlin), "\"a\\u001B\\u202E\\uDB40\\uDC41\\\"\\\\\\n\"")
        XCTAssertEqual(PinWriter.quoted(value, .objectiveC), "\"a\\033\\342\\200\\256\\363\\240\\201\\201\\\"\\\\\\n\"")
    }

    func testCommentsHoldNoTerminatorNoControlAndNoJavaUnicodeEscape() {
        XCTAssertEqual(PinWriter.commentSafe("C:\\users\\\\u1 */ \u{202E}\n\u{1B}"), "C:\\\\users\\\\\\\\u1 * / <U+202E> <U+001B>")
        XCTAssertEqual(PinWriter.commentSafe("a\\b\\"), "a\\b\\")
        XCTAssertEqual(XMLText.escape("a\u{1B}\u{202E}\n<&>"), "a\\u{1B}&#x202E;&#xA;&lt;&amp;&gt;")
    }
}

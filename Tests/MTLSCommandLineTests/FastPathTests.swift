import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSTrust

/// The fast paths give what the general paths give: `mtls pin` over plain certificate files reads
/// them as `CertificateLoader.summaries` (no OpenSSL X.509 parse; `MTLS_PIN_FULL_PARSE=1` forces the
/// full parse), and `CertificateLoader` decodes certificate-only PEM files without the general PEM
/// reader (what `mtls verify` reads).
final class FastPathTests: XCTestCase {
    private func assertSameAsFullParse(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) {
        let fast = mtls(arguments)
        let full = mtls(arguments, environment: ["MTLS_PIN_FULL_PARSE": "1"])
        XCTAssertEqual(fast.exitCode, full.exitCode, "exit status of \(arguments)", file: file, line: line)
        XCTAssertEqual(fast.stdout, full.stdout, "output of \(arguments)", file: file, line: line)
        XCTAssertEqual(fast.stderr, full.stderr, "messages of \(arguments)", file: file, line: line)
    }

    func testOutputIsTheFullParsesForPlainCertificateFiles() throws {
        let leaves = ["server.pem", "server.der", "server.cer", "server-rsa2048.pem", "server-p384.pem", "server-ed25519.pem", "client-alice.pem", "server-multi.pem"]
        for name in leaves { assertSameAsFullParse(["pin", Fixtures.path(name)]) }
        assertSameAsFullParse(["pin"] + leaves.map(Fixtures.path))
        assertSameAsFullParse(["pin", Fixtures.path("intermediate-ca.pem"), Fixtures.path("server.pem"), "--level", "intermediate"])
        assertSameAsFullParse(["pin", Fixtures.path("server.pem"), "--level", "leaf", "--host", "api.example.com", "--expires", "2030-01-01"])
        assertSameAsFullParse(["pin", Fixtures.path("server.pem"), "--expires", "2001-01-01"])  // expired --expires: a warning
        assertSameAsFullParse(["pin", Fixtures.path("server.pem"), "--at", "2100-01-01"])  // the only pin's leaf has expired: a warning
        assertSameAsFullParse(["pin", Fixtures.path("server-expired.pem")])
    }

    /// Every format that pins keys reads certificate files by summary, so each must write exactly
    /// what the full parse gives: subjects, expiry dates, roles, warnings.
    func testEveryKeyPinFormatWritesWhatTheFullParseWrites() throws {
        let sources = ["server.pem", "intermediate-ca.pem", "server-rsa2048.pem", "server-expired.pem"].map(Fixtures.path)
        for format in PinFormat.allCases where !format.pinsCertificates {
            assertSameAsFullParse(["pin"] + sources + ["--format", format.rawValue, "--host", "api.example.com", "--expires", "2030-01-01", "--at", "2026-01-01"])
        }
        let swift = mtls(["pin"] + sources + ["--format", "swift", "--host", "api.example.com", "--at", "2026-01-01"])
        XCTAssertExit(swift, 0)
        XCTAssertEqual(swift.stdout.components(separatedBy: "notAfter: \"").count - 1, 4, swift.stdout)
    }

    func testEverythingElseGoesTheGeneralWay() throws {
        // Chains with a root (self-signed: the signature decides), keys, CSRs, PKCS#12, errors.
        assertSameAsFullParse(["pin", Fixtures.path("server-fullchain.pem")])
        assertSameAsFullParse(["pin", Fixtures.path("server.pem"), Fixtures.path("keys/backup.csr")])
        assertSameAsFullParse(["pin", Fixtures.path("server.pem"), "--level", "root"])
        assertSameAsFullParse(["pin", Fixtures.path("self-signed.pem")])
        assertSameAsFullParse(["pin", Fixtures.path("bad/truncated.der")])
        assertSameAsFullParse(["pin", Fixtures.path("bad/broken-base64.pem")])
        assertSameAsFullParse(["pin", Fixtures.path("no-such-file.pem")])
        assertSameAsFullParse(["pin", Fixtures.path("server.pem"), "--format", "json"])
        assertSameAsFullParse(["pin", Fixtures.path("server.pem"), "--format", "curl"])
    }

    func testOutFileIsWrittenAlike() throws {
        let directory = try TemporaryDirectory(self)
        let fast = mtls(["pin", Fixtures.path("server.pem"), "--out", directory.file("fast.txt")])
        let full = mtls(["pin", Fixtures.path("server.pem"), "--out", directory.file("full.txt")], environment: ["MTLS_PIN_FULL_PARSE": "1"])
        XCTAssertExit(fast, 0)
        XCTAssertExit(full, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: directory.file("fast.txt"))), try Data(contentsOf: URL(fileURLWithPath: directory.file("full.txt"))))
        XCTAssertEqual(fast.stderr.replacingOccurrences(of: "fast.txt", with: "full.txt"), full.stderr)
    }

    func testLiveSourcesAreHTTPAndHTTPSURLsInAnyCase() {
        for source in ["https://a.example", "http://x", "HTTPS://A", "hTtP://x", "a/b.pem", "c:d.pem", "https:/x", "https", "", "é://ü", "dir/https://x", "ftp://x", "httpss://x"] {
            XCTAssertEqual(PinSources.isLive(source), source.lowercased().hasPrefix("https://") || source.lowercased().hasPrefix("http://"), source)
        }
    }

    func testFileNameIsNSStringsLastPathComponent() {
        for path in ["a/b.pem", "b.pem", "/abs/dir/c.der", "dir//d.pem", "./e.pem", "f/", "/", "", "a/b/", "~/g.pem", "é/ü.pem"] {
            XCTAssertEqual(PinCommand.fileName(path), (path as NSString).lastPathComponent, path)
        }
    }

    func testVerifyReadsTheSameCertificatesAsTheGeneralReader() throws {
        let console = Console(stdout: { _ in }, stderr: { _ in }, stdoutIsTerminal: false, stdinIsTerminal: false, environment: [:], readStandardInput: { [] })
        let files = [
            "server.pem", "server.der", "server-fullchain.pem", "bundle-with-text.pem", "all-roots.pem", "client-alice-chain.pem", "p12/server.p12", "keys/backup.csr",
            "bad/truncated.der", "bad/broken-base64.pem", "bad/empty.pem", "no-such-file.pem",
        ]
        for name in files {
            let path = Fixtures.path(name)
            let fast: Result<[Certificate], CommandFailure>
            let general: Result<[Certificate], CommandFailure>
            do throws(CommandFailure) { fast = .success(try VerifyCommand.certificates(path, password: "pass:", console: console)) } catch { fast = .failure(error) }
            do throws(CommandFailure) { general = .success(try Inputs.certificates(path, password: "pass:", console: console)) } catch { general = .failure(error) }
            switch (fast, general) {
            case (.success(let a), .success(let b)): XCTAssertEqual(a, b, name)
            case (.failure(let a), .failure(let b)):
                XCTAssertEqual(a.message, b.message, name)
                XCTAssertEqual(a.exitCode, b.exitCode, name)
            default: XCTFail("\(name): \(fast) vs \(general)")
            }
        }
        // And whole runs agree with the general reader's verdicts and output.
        let verdict = verify([
            "--batch", Fixtures.path("server.pem"), Fixtures.path("server.der"), Fixtures.path("server-expired.pem"), "--anchors", Fixtures.path("root-ca.pem"), "--intermediates",
            Fixtures.path("intermediate-ca.pem"),
        ])
        XCTAssertContains(verdict.stdout, "server.pem: ")
        XCTAssertContains(verdict.stdout, "server-expired.pem: ")
    }
}

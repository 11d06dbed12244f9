import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSHTTP

/// `mtls serve` leaves no private keys behind (its temporary PKI goes on exit, on SIGTERM and
/// when the bind fails), refuses an empty version range as a usage error, and logs each failed
/// handshake with the peer's address and the side that sent the alert.
final class ServeLifecycleTests: XCTestCase {
    /// The directory named in "made the test PKI in DIR (…)".
    private func pkiDirectory(_ stderr: String) throws -> String {
        let line = try XCTUnwrap(stderr.split(separator: "\n").first { $0.contains("made the test PKI in ") }, stderr)
        let rest = line[line.range(of: "made the test PKI in ")!.upperBound...]
        return String(rest.split(separator: " ").first ?? "")
    }

    func testTheTemporaryPKIIsRemovedWhenServeStops() throws {
        let result = mtls(["serve", "--port", "0", "--duration", "0.3"])
        XCTAssertEqual(result.exitCode, 0, result.description)
        let directory = try pkiDirectory(result.stderr)
        XCTAssertFalse(directory.isEmpty)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "\(directory) (with private keys) is still there")
    }

    func testAGivenPKIDirectoryIsKept() throws {
        let temporary = try TemporaryDirectory(self)
        let result = mtls(["serve", "--port", "0", "--pki-dir", temporary.file("pki"), "--duration", "0.2"])
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertTrue(FileManager.default.fileExists(atPath: temporary.file("pki/server.key")))
    }

    func testTheTemporaryPKIIsRemovedWhenTheBindFails() throws {
        let (listener, port) = try TCP.listen(address: "127.0.0.1", port: 0)
        defer { listener.close() }
        let result = mtls(["serve", "--port", "\(port)", "--duration", "5"])
        XCTAssertEqual(result.exitCode, 4, result.description)
        XCTAssertTrue(result.stderr.contains("\(port)"), result.stderr)
        let directory = try pkiDirectory(result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "\(directory) is still there after the failed bind")
    }

    func testTLSMinAboveTLSMaxIsAUsageErrorBeforeAnyPKIIsMade() {
        let result = mtls(["serve", "--port", "0", "--tls-min", "1.3", "--tls-max", "1.2", "--duration", "0.2"])
        XCTAssertEqual(result.exitCode, 2, result.description)
        XCTAssertTrue(result.stderr.contains("--tls-min 1.3 is above --tls-max 1.2"), result.stderr)
        XCTAssertFalse(result.stderr.contains("made the test PKI"), result.stderr)
        XCTAssertEqual(mtls(["serve", "--port", "0", "--tls-min", "1.2", "--tls-max", "1.2", "--duration", "0.1"]).exitCode, 0)
    }

    /// The real binary, stopped by SIGTERM: the PKI goes, and the log names who sent each alert.
    func testSIGTERMRemovesThePKIAndTheLogNamesThePeerAndTheAlertSender() throws {
        let binary = Fixtures.packageRoot.appendingPathComponent(".build/debug/mtls").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { throw XCTSkip("build the mtls executable first: \(binary)") }
        let temporary = try TemporaryDirectory(self)
        let outPath = temporary.file("out")
        let errPath = temporary.file("err")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let arguments = [binary, "serve", "--port", "0", "--tls-max", "1.2", "--negotiate-at-handshake"]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        XCTAssertEqual(posix_spawn(&pid, binary, &actions, nil, argv, environ), 0)
        var port = 0
        for _ in 0..<200 where port == 0 {
            usleep(50_000)
            let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
            if let range = out.range(of: "https://127.0.0.1:") {
                port = Int(out[range.upperBound...].prefix { $0.isNumber }) ?? 0
            }
        }
        XCTAssertNotEqual(port, 0, "serve did not say where it listens")
        let directory = try pkiDirectory((try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory + "/ca.key"))
        // The client refuses the server (wrong anchors: the client sends "unknown ca"), then a
        // TLS 1.3-only client meets a TLS 1.2 server (the server sends "protocol version").
        let wrongAnchors = try runProcess(
            "/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", Fixtures.path("root-ca.pem"), "-verify_return_error"], stdin: Array("Q\n".utf8))
        XCTAssertNotEqual(wrongAnchors.status, 0)
        let tooNew = try runProcess("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-tls1_3"], stdin: Array("Q\n".utf8))
        XCTAssertNotEqual(tooNew.status, 0)
        usleep(300_000)
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        XCTAssertEqual((status >> 8) & 0xFF, 0, "serve should exit 0 on SIGTERM")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "\(directory) (with private keys) survived SIGTERM")
        let log = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let lines = log.split(separator: "\n").filter { $0.contains("TLS handshake failed") }
        XCTAssertEqual(lines.count, 2, log)
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("127.0.0.1:") }, log)
        XCTAssertTrue(lines.contains { $0.contains("\"unknown ca\" sent by the client") }, log)
        XCTAssertTrue(lines.contains { $0.contains("\"protocol version\" sent by us (the server)") }, log)
    }
}

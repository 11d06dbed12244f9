import Foundation
import COpenSSL
import MTLSTrust
import XCTest

@testable import MTLSHTTP
import MTLSTestSupport

/// `mtls probe` (the built binary) against a server whose every string is hostile: the certificate's
/// subject and alternative names, the CA names of its certificate request, the status line's reason,
/// the authentication realm and the page's title carry ESC and OSC sequences, the 8-bit CSI, a
/// right-to-left override, CR, a zero-width space and a line separator. Nothing of it may reach the
/// output as a character a terminal acts on, neither on stdout nor on stderr, and JSON keeps each
/// value exactly.
final class UntrustedTextCLITests: XCTestCase {
    /// The characters a terminal or a reader would act on, as they appear in the peer's strings.
    static let hostile = "\u{1B}[2J\u{1B}]0;pwned\u{07}\u{9B}31m\u{202E}gnp.exe\u{200B}\u{2028}"

    private func binary() throws -> String {
        let path = SupportFixtures.mtlsExecutable
        guard FileManager.default.isExecutableFile(atPath: path) else { throw XCTSkip("build the mtls executable first: \(path)") }
        return path
    }

    /// Runs the binary with stderr joined to stdout.
    private func run(_ arguments: [String]) throws -> Subprocess.Result {
        let quoted = ([try binary()] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return Subprocess.run("/bin/sh", ["-c", "exec \(quoted) 2>&1"])
    }

    /// A self-signed leaf whose subject and alternative names hold the hostile characters, made
    /// by the openssl CLI.
    private func hostileLeaf(in directory: URL) throws -> (certificate: Certificate, key: PrivateKey) {
        let certificate = directory.appendingPathComponent("hostile.pem").path
        let key = directory.appendingPathComponent("hostile.key").path
        let made = Subprocess.run(
            "/usr/bin/openssl",
            [
                "req", "-utf8", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", certificate, "-days", "30",
                "-subj", "/CN=127.0.0.1/O=A\u{9B}31m\u{202E}gnp.exe/OU=\u{200B}\u{2028}x",
                "-addext", "subjectAltName=IP:127.0.0.1,email:x\u{1B}[2J@example.com,URI:https://a\u{1B}]0;pwned\u{07}.example/",
            ])
        XCTAssertEqual(made.status, 0, made.stdout)
        return (try CertificateLoader.certificates(atPath: certificate)[0], try PrivateKey(bytes: try CertificateLoader.readFile(key)))
    }

    /// Asserts that `text` holds no character ``DisplayText/isUnsafe(_:)`` names other than the
    /// newlines and tabs of the layout.
    private func assertInert(_ text: String, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        let unsafe = text.unicodeScalars.filter { DisplayText.isUnsafe($0) && $0 != "\n" && $0 != "\t" }
        XCTAssertTrue(unsafe.isEmpty, "\(label) lets through \(unsafe.map { "U+" + String($0.value, radix: 16) }):\n\(text.debugDescription)", file: file, line: line)
    }

    func testProbeShowsAHostileServersStringsEscaped() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-untrusted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let leaf = try hostileLeaf(in: directory)
        var options = try HostileTLSOptions.standard()
        options.leaf = leaf.certificate
        options.key = leaf.key
        options.chain = []
        options.maximumVersion = TLS1_2_VERSION
        options.requestsCertificateAtHandshake = true
        options.caNames = [try Raw.subjectDER(leaf.certificate)]
        let page = "<html><head><title>Title \(Self.hostile)\rForged: yes</title></head><body>Text \(Self.hostile)</body></html>"
        let server = try HostileServer(tls: options) { connection in
            guard connection.handshake(), connection.readRequest() != nil else { return }
            _ = connection.respond("200 O\u{1B}[8mK", headers: ["Content-Type: text/html; charset=utf-8", "X-Note: \(Self.hostile)"], text: page)
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let url = try server.url().description

        let text = try run(["probe", url, "--insecure"])
        XCTAssertTrue(text.stdout.contains("Verdict:"), text.stdout)
        assertInert(text.stdout, "probe's text")
        XCTAssertTrue(text.stdout.contains("\\u{202E}gnp.exe"), "the override is shown as an escape: \(text.stdout)")
        XCTAssertTrue(text.stdout.contains("title           Title \\u{1B}[2J\\u{1B}]0;pwned\\u{7}"), text.stdout)
        XCTAssertFalse(text.stdout.contains("\nForged: yes"), "a CR or newline in the title cannot start a line: \(text.stdout)")

        let json = Subprocess.run(try binary(), ["probe", url, "--insecure", "--json"])
        assertInert(json.stdout, "probe's JSON")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], json.stdout)
        let chain = try XCTUnwrap(object["serverChain"] as? [[String: Any]], json.stdout)
        XCTAssertEqual(chain.first?["subject"] as? String, leaf.certificate.subject, "JSON carries the subject exactly")

        let verbose = try run(["probe", url, "--insecure", "--verbose"])
        assertInert(verbose.stdout, "probe --verbose (the trace on stderr)")
    }

    func testAHostileRealmAndReasonInAnAuthenticationFailureAreEscaped() throws {
        let server = try HostileServer { connection in
            guard connection.handshake(), connection.readRequest() != nil else { return }
            _ = connection.respond("401 \u{1B}]8;;https://evil.example/\u{07}Unauthorized", headers: ["WWW-Authenticate: Basic realm=\"\(Self.hostile)\""], text: "no")
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let url = try server.url().description
        let anchors = SupportFixtures.path("root-ca.pem")
        for arguments in [["probe", url, "--anchors", anchors], ["probe", url, "--anchors", anchors, "--user", "alice", "--user-password", "pass:secret"]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 1, result.stdout)
            assertInert(result.stdout, arguments.joined(separator: " "))
            XCTAssertTrue(result.stdout.contains("\\u{1B}"), "the realm is shown, escaped: \(result.stdout)")
        }
    }
}

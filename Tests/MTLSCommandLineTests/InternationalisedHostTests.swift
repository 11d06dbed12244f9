import Foundation
import XCTest

@testable import MTLSCommandLine

/// Host names with non-ASCII letters, end to end: `verify --host`, `inspect` and `probe URL` use the
/// UTS 46 (`IDNA`) ASCII form a certificate carries and a server sees in SNI. The judges:
/// `openssl s_server -servername … -servername_fatal`, which refuses any other SNI with a fatal
/// alert; curl, which converts the same URL with libidn2; `openssl verify -verify_hostname`,
/// which compares the ASCII form.
final class InternationalisedHostTests: XCTestCase {
    /// A self-signed certificate for `xn--bcher-kva.example` (bücher.example) and
    /// `*.xn--nxasmm1c.com` (*.βόλος.com), made here with the openssl CLI.
    private static let certificate: (pem: String, key: String)? = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-idn-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let pem = directory.appendingPathComponent("idn.pem").path
        let key = directory.appendingPathComponent("idn.key").path
        let made = try? OpenSSL.run([
            "req", "-utf8", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", pem,
            "-subj", "/CN=IDN test", "-addext", "subjectAltName=DNS:xn--bcher-kva.example,DNS:*.xn--nxasmm1c.com", "-days", "30",
        ])
        return made?.status == 0 ? (pem, key) : nil
    }()

    private func files() throws -> (pem: String, key: String) {
        guard let files = Self.certificate else { throw XCTSkip("the openssl CLI could not make the test certificate") }
        return files
    }

    func testVerifyTakesAHostInUnicodeAndChecksItsASCIIForm() throws {
        let (pem, _) = try files()
        let trusted = mtls(["verify", pem, "--anchors", pem, "--host", "BÜCHER.example"])
        XCTAssertExit(trusted, 0)
        XCTAssertContains(trusted.stdout, "as xn--bcher-kva.example (bücher.example)")
        let json = try mtls(["verify", pem, "--anchors", pem, "--host", "bu\u{308}cher.example", "--json"]).json()
        XCTAssertEqual(json["host"] as? String, "xn--bcher-kva.example", "mapped, normalised, then encoded")
        XCTAssertExit(mtls(["verify", pem, "--anchors", pem, "--host", "www.Βόλος.com"]), 0, "the wildcard")
        // Capital Σ maps to σ, not to the final ς: βόλοσ is another name (xn--nxasmq6b), as UTS 46 has it.
        XCTAssertExit(mtls(["verify", pem, "--anchors", pem, "--host", "www.ΒΌΛΟΣ.com"]), 1)
        XCTAssertExit(mtls(["verify", pem, "--anchors", pem, "--host", "bucher.example"]), 1)

        let refused = mtls(["verify", pem, "--anchors", pem, "--host", "a\u{2488}.example"])
        XCTAssertExit(refused, 2)
        XCTAssertContains(refused.stderr, "--host \"a⒈.example\" is not a valid host name")
        XCTAssertContains(refused.stderr, "U+2488 (⒈), which a domain name cannot have")

        // The judge compares the ASCII form, and does no IDNA of its own.
        let judge = try OpenSSL.run(["verify", "-CAfile", pem, "-verify_hostname", "xn--bcher-kva.example", pem])
        XCTAssertEqual(judge.status, 0, judge.description)
    }

    func testInspectShowsWhatAnXNLabelSpells() throws {
        let (pem, _) = try files()
        let result = mtls(["inspect", pem])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stdout, "DNS:xn--bcher-kva.example (bücher.example), DNS:*.xn--nxasmm1c.com (*.βόλος.com)")
        let json = try mtls(["inspect", pem, "--json"]).json()
        XCTAssertContains("\(json)", "DNS:xn--bcher-kva.example", "JSON keeps the names as the certificate has them")
    }

    func testProbeSendsTheASCIIFormInSNIAsCurlDoes() throws {
        let (pem, key) = try files()
        let server = try SServerPeer(certificate: pem, key: key, ["-servername", "xn--bcher-kva.example", "-servername_fatal", "-cert2", pem, "-key2", key])
        defer { server.stop() }
        let url = "https://Bücher.example:\(server.port)/"
        let result = mtls(["probe", url, "--connect-to", "127.0.0.1:\(server.port)", "--anchors", pem])
        XCTAssertExit(result, 0)
        XCTAssertContains(result.stdout, "SNI             xn--bcher-kva.example")
        XCTAssertContains(result.stdout, "URL             https://xn--bcher-kva.example:\(server.port)/ (bücher.example)")

        // The judges: the server refuses another name; curl converts the same URL the same way.
        let other = mtls(["probe", "https://bucher.example:\(server.port)/", "--connect-to", "127.0.0.1:\(server.port)", "--anchors", pem])
        XCTAssertExit(other, 4, "s_server refuses any other SNI")
        let curl = try runProcess("/usr/bin/env", ["curl", "-sS", "-o", "/dev/null", "--cacert", pem, "--connect-to", "::127.0.0.1:\(server.port)", url])
        guard curl.status != 127 else { throw XCTSkip("curl is not installed") }
        XCTAssertEqual(curl.status, 0, curl.description)

        let refused = mtls(["probe", "https://a\u{2488}.example/"])
        XCTAssertExit(refused, 2)
        XCTAssertContains(refused.stderr, "is not a valid domain name")
    }
}

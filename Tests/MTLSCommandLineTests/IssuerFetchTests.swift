import Foundation
import XCTest

@testable import MTLSCommandLine

/// A server that leaves its intermediate out: iOS, macOS and Chrome fetch it from the leaf's
/// authorityInfoAccess caIssuers URL, Android and Java refuse. `verify --platform all --fetch-aia`
/// must judge each platform on the chain it would build, against a real HTTP server on loopback
/// (Python's `http.server`) serving the intermediate; curl and `openssl verify` are the judges of
/// what the URL serves and of the completed chain. PKCS#7 bundles (`.p7c`, `.p7b`) are read too.
final class IssuerFetchTests: XCTestCase {
    /// Python's `http.server` serving a directory.
    private final class HTTPPeer {
        private let peer: ScriptPeer
        var port: Int { peer.port }

        init(serving directory: URL) throws {
            let script = """
                import functools, http.server, socketserver, sys
                handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
                server = socketserver.TCPServer(("127.0.0.1", 0), handler)
                print(server.server_address[1], flush=True)
                server.serve_forever()
                """
            do { peer = try ScriptPeer("/usr/bin/env", ["python3", "-c", script, directory.path]) } catch {
                throw XCTSkip("python3's http.server did not start: \(error)")
            }
        }

        func stop() { peer.stop() }
    }

    /// root → intermediate → leaf (aia.test), the leaf's caIssuers URL on `port`; written in
    /// `directory`, the intermediate also as DER (`int.der`) and as a PKCS#7 bundle (`int.p7c`).
    private func makePKI(in directory: URL, caIssuers: String) throws {
        func openssl(_ arguments: [String]) throws {
            let result = try OpenSSL.run(arguments)
            guard result.status == 0 else { throw XCTSkip("openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(result.stderr)") }
        }
        let d = directory.path
        try "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
            .write(toFile: "\(d)/ca.ext", atomically: true, encoding: .utf8)
        try """
        basicConstraints=critical,CA:FALSE
        keyUsage=critical,digitalSignature
        extendedKeyUsage=serverAuth
        subjectAltName=DNS:aia.test
        authorityInfoAccess=caIssuers;URI:\(caIssuers)
        subjectKeyIdentifier=hash
        authorityKeyIdentifier=keyid

        """.write(toFile: "\(d)/leaf.ext", atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try openssl(
            ["req", "-x509"] + ec + [
                "-keyout", "\(d)/root.key", "-out", "\(d)/root.pem", "-subj", "/CN=AIA Test Root", "-days", "3650", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try openssl(["req"] + ec + ["-keyout", "\(d)/int.key", "-out", "\(d)/int.csr", "-subj", "/CN=AIA Test Intermediate"])
        try openssl([
            "x509", "-req", "-in", "\(d)/int.csr", "-CA", "\(d)/root.pem", "-CAkey", "\(d)/root.key", "-set_serial", "2", "-days", "1825", "-extfile", "\(d)/ca.ext", "-out",
            "\(d)/int.pem",
        ])
        try openssl(["req"] + ec + ["-keyout", "\(d)/leaf.key", "-out", "\(d)/leaf.csr", "-subj", "/CN=aia.test"])
        try openssl([
            "x509", "-req", "-in", "\(d)/leaf.csr", "-CA", "\(d)/int.pem", "-CAkey", "\(d)/int.key", "-set_serial", "3", "-days", "300", "-extfile", "\(d)/leaf.ext", "-out",
            "\(d)/leaf.pem",
        ])
        try openssl(["x509", "-in", "\(d)/int.pem", "-outform", "DER", "-out", "\(d)/int.der"])
        try openssl(["crl2pkcs7", "-nocrl", "-certfile", "\(d)/int.pem", "-outform", "DER", "-out", "\(d)/int.p7c"])
    }

    private func verdicts(_ json: [String: Any]) -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for case let platform as [String: Any] in json["platforms"] as? [Any] ?? [] {
            if let name = platform["platform"] as? String { out[name] = platform }
        }
        return out
    }

    func testFetchingPlatformsCompleteTheChainAndTheOthersRefuseIt() throws {
        let directory = try TemporaryDirectory(self)
        let server = try HTTPPeer(serving: directory.url)
        defer { server.stop() }
        for file in ["int.der", "int.p7c"] {
            let url = "http://127.0.0.1:\(server.port)/\(file)"
            try makePKI(in: directory.url, caIssuers: url)
            let d = directory.path
            // The judges: the URL serves the intermediate, and with it the chain is valid.
            let curl = try runProcess("/usr/bin/env", ["curl", "-sS", "-o", "\(d)/fetched", url])
            guard curl.status != 127 else { throw XCTSkip("curl is not installed") }
            XCTAssertEqual(curl.status, 0, curl.description)
            let served = try Data(contentsOf: directory.url.appendingPathComponent("fetched"))
            XCTAssertEqual(served, try Data(contentsOf: directory.url.appendingPathComponent(file)))
            XCTAssertEqual(try OpenSSL.run(["verify", "-CAfile", "\(d)/root.pem", "-untrusted", "\(d)/int.pem", "\(d)/leaf.pem"]).status, 0)
            XCTAssertNotEqual(try OpenSSL.run(["verify", "-CAfile", "\(d)/root.pem", "\(d)/leaf.pem"]).status, 0, "without it, openssl refuses")

            let arguments = ["verify", "\(d)/leaf.pem", "--anchors", "\(d)/root.pem", "--host", "aia.test", "--platform", "all"]
            let fetched = mtls(arguments + ["--fetch-aia", "--json"])
            XCTAssertExit(fetched, 1, "Android and Java refuse")
            let judged = verdicts(try fetched.json())
            XCTAssertEqual(judged["apple"]?["verdict"] as? String, "accepted", "\(file): \(fetched.stdout)")
            XCTAssertEqual(judged["chrome"]?["verdict"] as? String, "accepted", "\(file): \(fetched.stdout)")
            XCTAssertEqual(judged["android"]?["verdict"] as? String, "refused")
            XCTAssertEqual(judged["java"]?["verdict"] as? String, "refused")
            let items = judged["apple"]?["fetchedIssuers"] as? [[String: Any]]
            XCTAssertEqual(items?.first?["url"] as? String, url)
            XCTAssertEqual(items?.first?["certificates"] as? [String], ["CN=AIA Test Intermediate"])
            XCTAssertEqual((judged["android"]?["fetchedIssuers"] as? [Any])?.count, 0)
            XCTAssertTrue((judged["android"]?["notes"] as? [String])?.contains { $0.contains("does not fetch") && $0.contains(url) } ?? false, fetched.stdout)

            let text = mtls(arguments + ["--fetch-aia"])
            XCTAssertContains(text.stdout, "iOS 13+ / macOS 10.15+: accepted")
            XCTAssertContains(text.stdout, "CN=AIA Test Intermediate fetched from \(url) (authorityInfoAccess caIssuers)")

            // Without --fetch-aia nothing is fetched: the chain as sent, and where iOS would look.
            let asSent = mtls(arguments + ["--json"])
            XCTAssertExit(asSent, 1)
            let unfetched = verdicts(try asSent.json())
            XCTAssertEqual(unfetched["apple"]?["verdict"] as? String, "refused")
            XCTAssertTrue((unfetched["apple"]?["notes"] as? [String])?.contains { $0.contains(url) && $0.contains("as sent") } ?? false, asSent.stdout)
        }
    }

    /// `probe URL --platform apple` against a live server that sends its leaf alone (s_server).
    func testProbeJudgesALiveServerAsIOSWouldWithFetchAIA() throws {
        let directory = try TemporaryDirectory(self)
        let http = try HTTPPeer(serving: directory.url)
        defer { http.stop() }
        let url = "http://127.0.0.1:\(http.port)/int.der"
        try makePKI(in: directory.url, caIssuers: url)
        let d = directory.path
        let tls = try SServerPeer(certificate: "\(d)/leaf.pem", key: "\(d)/leaf.key", [])
        defer { tls.stop() }
        let arguments = ["probe", "https://aia.test:\(tls.port)/", "--connect-to", "127.0.0.1:\(tls.port)", "--anchors", "\(d)/root.pem", "--platform", "apple"]
        let fetched = mtls(arguments + ["--fetch-aia", "--json"])
        let certificate = try fetched.json()["certificate"] as? [String: Any]
        XCTAssertEqual(certificate?["verdict"] as? String, "accepted", fetched.stdout)
        XCTAssertTrue((certificate?["notes"] as? [String])?.contains { $0.contains("fetched from \(url)") } ?? false, fetched.stdout)
        let asSent = mtls(arguments + ["--json"])
        XCTAssertExit(asSent, 1)
        XCTAssertEqual((try asSent.json()["certificate"] as? [String: Any])?["verdict"] as? String, "refused", asSent.stdout)
        XCTAssertExit(mtls(["probe", "https://aia.test:\(tls.port)/", "--fetch-aia"]), 2, "--fetch-aia needs --platform apple")
    }

    /// probe's "completeness" follows the path from the leaf through what was sent: a missing
    /// intermediate is said (with where iOS would fetch it), a missing root is normal.
    func testProbeSaysWhetherTheServerSentItsIntermediate() throws {
        let directory = try TemporaryDirectory(self)
        let url = "http://127.0.0.1:1/int.der"
        try makePKI(in: directory.url, caIssuers: url)
        let d = directory.path
        try (String(contentsOfFile: "\(d)/int.pem", encoding: .utf8) + String(contentsOfFile: "\(d)/root.pem", encoding: .utf8))
            .write(toFile: "\(d)/int-root.pem", atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (
                [],
                "the path ends at CN=aia.test, whose issuer CN=AIA Test Intermediate was not sent and is not an anchor here: if it is an intermediate, the server must send it (iOS, macOS and Chrome fetch it from \(url); Android and Java do not)"
            ),
            (["-cert_chain", "\(d)/int.pem"], "completeness    root not sent (normal)"),
            (["-cert_chain", "\(d)/int-root.pem"], "completeness    includes the root (harmless, but not needed)"),
        ]
        for (extra, expected) in cases {
            let server = try SServerPeer(certificate: "\(d)/leaf.pem", key: "\(d)/leaf.key", extra)
            defer { server.stop() }
            let result = mtls(["probe", "https://aia.test:\(server.port)/", "--connect-to", "127.0.0.1:\(server.port)", "--anchors", "\(d)/root.pem"])
            XCTAssertContains(result.stdout, expected, "\(extra)")
            XCTAssertExit(result, extra.isEmpty ? 1 : 0, "\(extra)")
        }
    }

    func testAFetchThatFailsIsSaidAndChangesNothing() throws {
        let directory = try TemporaryDirectory(self)
        let server = try HTTPPeer(serving: directory.url)
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/missing.der"
        try makePKI(in: directory.url, caIssuers: url)
        let d = directory.path
        let result = mtls(["verify", "\(d)/leaf.pem", "--anchors", "\(d)/root.pem", "--host", "aia.test", "--platform", "apple", "--fetch-aia", "--json"])
        XCTAssertExit(result, 1)
        let apple = verdicts(try result.json())["apple"]
        XCTAssertEqual(apple?["verdict"] as? String, "refused")
        let item = (apple?["fetchedIssuers"] as? [[String: Any]])?.first
        XCTAssertContains(item?["failure"] as? String ?? "", "HTTP 404")
        XCTAssertExit(mtls(["verify", "\(d)/leaf.pem", "--anchors", "\(d)/root.pem", "--fetch-aia"]), 2, "--fetch-aia needs --platform")
    }

    /// Windows exports a chain as a PKCS#7 `.p7b` (DER or Base64): read wherever certificates are.
    func testPKCS7BundlesAreCertificateFiles() throws {
        let directory = try TemporaryDirectory(self)
        let d = directory.path
        try makePKI(in: directory.url, caIssuers: "http://127.0.0.1:1/int.der")
        _ = try OpenSSL.output(["crl2pkcs7", "-nocrl", "-certfile", "\(d)/leaf.pem", "-certfile", "\(d)/int.pem", "-out", "\(d)/chain.p7b"])
        for bundle in ["\(d)/chain.p7b", "\(d)/int.p7c"] {
            let inspect = mtls(["inspect", bundle, "--json"])
            XCTAssertExit(inspect, 0)
            let count = (try inspect.json()["items"] as? [Any])?.count
            XCTAssertEqual(count, bundle.hasSuffix(".p7b") ? 2 : 1, inspect.stdout)
        }
        XCTAssertExit(mtls(["verify", "\(d)/leaf.pem", "--intermediates", "\(d)/int.p7c", "--anchors", "\(d)/root.pem", "--host", "aia.test"]), 0)
        let converted = mtls(["convert", "\(d)/chain.p7b", "--to", "pem"])
        XCTAssertExit(converted, 0)
        XCTAssertEqual(converted.stdout.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1, 2)
        // The judge: openssl prints the same two certificates from the bundle.
        let judge = String(decoding: try OpenSSL.output(["pkcs7", "-in", "\(d)/chain.p7b", "-print_certs"]), as: UTF8.self)
        XCTAssertEqual(judge.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1, 2)
    }
}

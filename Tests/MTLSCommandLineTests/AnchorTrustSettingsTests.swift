import Foundation
import MTLSTrust
import XCTest

/// Anchors given in OpenSSL's TRUSTED CERTIFICATE form carry the purposes they may anchor
/// (`openssl x509 -trustout -addtrust/-addreject`, p11-kit's `ca-bundle.trust.crt`). `openssl
/// verify` is the judge: for every setting and purpose, `mtls verify` trusts the chain exactly when
/// it does, and says which setting refused the anchor.
final class AnchorTrustSettingsTests: XCTestCase {
    private func anchor(_ directory: TemporaryDirectory, _ name: String, _ settings: [String]) throws -> String {
        let path = directory.file(name)
        _ = try OpenSSL.output(["x509", "-in", Fixtures.path("root-ca.pem"), "-trustout", "-out", path] + settings)
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("-----BEGIN TRUSTED CERTIFICATE-----"))
        return path
    }

    func testTrustSettingsDecideAsInOpenSSLVerifyForEachPurpose() throws {
        let directory = try TemporaryDirectory(self)
        let cases: [(String, [String])] = [
            ("none", []),
            ("trust-server", ["-addtrust", "serverAuth"]),
            ("trust-client", ["-addtrust", "clientAuth"]),
            ("trust-any", ["-addtrust", "anyExtendedKeyUsage"]),
            ("trust-email", ["-addtrust", "emailProtection"]),
            ("reject-server", ["-addreject", "serverAuth"]),
            ("reject-any", ["-addreject", "anyExtendedKeyUsage"]),
            ("trust-server-reject-client", ["-addtrust", "serverAuth", "-addreject", "clientAuth"]),
        ]
        let chains: [(purpose: String, opensslPurpose: String, leaf: String, host: [String])] = [
            ("server", "sslserver", "server.pem", ["--host", "localhost"]),
            ("client", "sslclient", "client-alice.pem", []),
        ]
        var agreed = 0
        for (name, settings) in cases {
            let anchor = try anchor(directory, "\(name).pem", settings)
            for chain in chains {
                let judge = try OpenSSL.run([
                    "verify", "-CAfile", anchor, "-untrusted", Fixtures.path("intermediate-ca.pem"), "-purpose", chain.opensslPurpose, "-attime", "1780272000",
                    Fixtures.path(chain.leaf),
                ])
                let ours = mtls(
                    [
                        "verify", Fixtures.path(chain.leaf), "--intermediates", Fixtures.path("intermediate-ca.pem"), "--anchors", anchor, "--purpose", chain.purpose,
                        "--at", "2026-06-01T00:00:00Z",
                    ] + chain.host)
                XCTAssertExit(ours, judge.status == 0 ? 0 : 1, "\(name), \(chain.purpose): openssl verify says \(judge.status == 0 ? "OK" : "refused")")
                if judge.status != 0 {
                    XCTAssertContains(ours.stdout, "X509_V_ERR_CERT_REJECTED")
                    XCTAssertContains(ours.stdout, "may not be used for \(chain.purpose)Auth")
                    XCTAssertFalse(ours.stdout.contains("X509_V_ERR_INVALID_PURPOSE"), "the rejection is told once:\n\(ours.stdout)")
                }
                if ours.exitCode == (judge.status == 0 ? 0 : 1) { agreed += 1 }
            }
        }
        XCTAssertEqual(agreed, cases.count * chains.count)
    }

    func testTheReasonNamesTheSettingAndInspectShowsThem() throws {
        let directory = try TemporaryDirectory(self)
        let emailOnly = try anchor(directory, "email.pem", ["-addtrust", "emailProtection", "-setalias", "Mail CA"])
        let refused = mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors", emailOnly, "--host", "localhost", "--at", "2026-06-01T00:00:00Z"])
        XCTAssertExit(refused, 1)
        XCTAssertContains(refused.stdout, "its trust settings trust it only for emailProtection (it was given as a TRUSTED CERTIFICATE)")
        let rejected = try anchor(directory, "rejected.pem", ["-addreject", "serverAuth"])
        let json = mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors", rejected, "--host", "localhost", "--at", "2026-06-01T00:00:00Z", "--json"])
        XCTAssertExit(json, 1)
        XCTAssertContains(json.stdout, "its trust settings reject it for serverAuth")
        let inspected = mtls(["inspect", emailOnly])
        XCTAssertExit(inspected, 0)
        XCTAssertContains(inspected.stdout, "Trusted for         emailProtection")
        XCTAssertContains(inspected.stdout, "Alias               Mail CA")
        let inspectedJSON = mtls(["inspect", rejected, "--json"])
        XCTAssertContains(inspectedJSON.stdout, #""trustSettings":{"trusted":[],"rejected":["serverAuth"],"alias":null}"#)
    }

    /// `--anchors DIR` reads a directory as curl's `--capath` and OpenSSL's CApath do: the
    /// certificate files and the hash links `openssl rehash` makes, each certificate once; the
    /// verdict is openssl verify -CApath's.
    func testADirectoryOfAnchorsIsReadAsCurlsCapath() throws {
        let directory = try TemporaryDirectory(self)
        let capath = directory.file("capath")
        try FileManager.default.createDirectory(atPath: capath, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: Fixtures.path("root-ca.pem"), toPath: capath + "/root-ca.pem")
        _ = try OpenSSL.output(["rehash", capath])
        try FileManager.default.createDirectory(atPath: capath + "/java", withIntermediateDirectories: false)
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: capath + "/README"))
        let judge = try OpenSSL.run(["verify", "-CApath", capath, "-untrusted", Fixtures.path("intermediate-ca.pem"), "-attime", "1780272000", Fixtures.path("server.pem")])
        XCTAssertEqual(judge.status, 0, judge.description)
        let trusted = mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors", capath, "--host", "localhost", "--at", "2026-06-01T00:00:00Z", "--json"])
        XCTAssertExit(trusted, 0)
        let json = try trusted.json()
        let chain = try XCTUnwrap(json["chain"] as? [[String: Any]])
        XCTAssertEqual(chain.filter { $0["isAnchor"] as? Bool == true }.count, 1)
        // The only file, through its hash link as well: no certificate twice, no complaint about the rest.
        let hashOnly = directory.file("hash-only")
        try FileManager.default.createDirectory(atPath: hashOnly, withIntermediateDirectories: false)
        let links = try FileManager.default.contentsOfDirectory(atPath: capath).filter { $0.hasSuffix(".0") }
        XCTAssertEqual(links.count, 1)
        try FileManager.default.copyItem(atPath: Fixtures.path("root-ca.pem"), toPath: hashOnly + "/" + links[0])
        XCTAssertExit(mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors", hashOnly, "--host", "localhost", "--at", "2026-06-01T00:00:00Z"]), 0)
        // SSL_CERT_DIR adds its directories to the system roots, as OpenSSL's default paths do.
        setenv("SSL_CERT_DIR", "/nonexistent:" + capath, 1)
        defer { unsetenv("SSL_CERT_DIR") }
        let roots = try CertificateLoader.systemRoots()
        XCTAssertTrue(roots.contains(try Certificate(derBytes: try OpenSSL.output(["x509", "-in", Fixtures.path("root-ca.pem"), "-outform", "DER"]))))
        unsetenv("SSL_CERT_DIR")
        XCTAssertFalse(try CertificateLoader.systemRoots().contains { $0.subject.contains("mtls Test Root CA") })
        let empty = directory.file("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let refused = mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors", empty])
        XCTAssertExit(refused, 3)
        XCTAssertContains(refused.stderr, "holds no certificate file")
        let broken = directory.file("broken")
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: false)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: broken + "/bad.pem"))
        let bad = mtls(["verify", Fixtures.path("server-chain.pem"), "--anchors", broken])
        XCTAssertExit(bad, 3)
        XCTAssertContains(bad.stderr, "bad.pem")
    }
}

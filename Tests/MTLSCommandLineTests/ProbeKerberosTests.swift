import Foundation
import XCTest
import MTLSTestSupport

/// `mtls probe --auth negotiate` against a private MIT KDC and Apache mod_auth_gssapi
/// (scripts/peers/kerberos.sh, started once for the class), run as a user runs it: the built
/// binary with KRB5_CONFIG and KRB5CCNAME in its environment, curl --negotiate as the judge.
final class ProbeKerberosTests: XCTestCase {
    nonisolated(unsafe) private static var peer: [String: String]?
    nonisolated(unsafe) private static var startFailure: String?

    private static var script: String { Fixtures.packageRoot.appendingPathComponent("scripts/peers/kerberos.sh").path }

    nonisolated(unsafe) private static var ntlmPeer: [String: String]?

    override class func tearDown() {
        if let dir = peer?["DIR"] { _ = spawn(["/bin/sh", "-c", "exec /bin/bash \"$0\" stop --dir \"$1\" </dev/null >/dev/null 2>&1", script, dir]) }
        peer = nil
        if let dir = ntlmPeer?["DIR"] {
            let ntlm = Fixtures.packageRoot.appendingPathComponent("scripts/peers/ntlm/ntlm.sh").path
            _ = spawn(["/bin/sh", "-c", "exec /bin/bash \"$0\" stop --dir \"$1\" </dev/null >/dev/null 2>&1", ntlm, dir])
        }
        ntlmPeer = nil
        super.tearDown()
    }

    /// posix_spawn and waitpid, no pipes: the peer's daemons must not hold a pipe of ours open
    /// (Foundation's Process hands them its pipes, and its read then never ends).
    private static func spawn(_ arguments: [String]) -> Int32 {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, arguments[0], nil, nil, &argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    private func peer() throws -> [String: String] {
        if let peer = Self.peer { return peer }
        if let failure = Self.startFailure { throw XCTSkip(failure) }
        for binary in ["/usr/sbin/krb5kdc", "/usr/sbin/apache2", "/usr/bin/kinit", "/usr/bin/curl"] where !FileManager.default.isExecutableFile(atPath: binary) {
            Self.startFailure = "\(binary) is not installed (see scripts/install-deps.sh)"
            throw XCTSkip(Self.startFailure!)
        }
        do {
            Self.peer = try Self.start(Self.script)
        } catch let skip as XCTSkip {
            Self.startFailure = "\(skip)"
            throw skip
        }
        return Self.peer!
    }

    /// The NTLM peer (scripts/peers/ntlm/ntlm.sh), started once for the class when first needed.
    private func ntlmPeer() throws -> [String: String] {
        if let peer = Self.ntlmPeer { return peer }
        Self.ntlmPeer = try Self.start(Fixtures.packageRoot.appendingPathComponent("scripts/peers/ntlm/ntlm.sh").path)
        return Self.ntlmPeer!
    }

    /// `script start`, its KEY=value lines. Exit status 3 (a dependency missing) skips.
    private static func start(_ script: String) throws -> [String: String] {
        // The script's output goes to files, not pipes: Foundation's Process can miss the exit of
        // a script whose daemons outlive it (as LoginPeer in MTLSHTTPTests notes).
        let base = NSTemporaryDirectory() + "mtls-peer-start-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".err")
        }
        let status = spawn(["/bin/sh", "-c", "exec /bin/bash \"$0\" start </dev/null >\"$1.out\" 2>\"$1.err\"", script, base])
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        if status == 3 { throw XCTSkip(err) }
        XCTAssertEqual(status, 0, err)
        var values: [String: String] = [:]
        for line in out.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return values
    }

    /// The environment of a user whose ticket cache is `cache` (nothing of the test process's own).
    private func environment(_ peer: [String: String], cache: String) -> [String: String] {
        ["PATH": "/usr/bin:/bin:/usr/sbin", "KRB5_CONFIG": peer["KRB5_CONFIG"]!, "KRB5CCNAME": cache, "HOME": peer["DIR"]!]
    }

    private func kinit(_ peer: [String: String], lifetime: String? = nil) throws -> String {
        let cache = "FILE:\(peer["DIR"]!)/cli-cc-\(UUID().uuidString)"
        let result = try runProcess(
            "/usr/bin/kinit", (lifetime.map { ["-l", $0] } ?? []) + [peer["USER"]!], stdin: Array((peer["PASSWORD"]! + "\n").utf8), environment: environment(peer, cache: cache))
        XCTAssertEqual(result.status, 0, result.description)
        return cache
    }

    private func probe(_ peer: [String: String], cache: String, _ url: String, _ extra: [String] = []) throws -> ProcessResult {
        try runProcess(
            try BuiltBinary.path(), ["probe", url, "--anchors", Fixtures.path("root-ca.pem"), "--auth", "negotiate", "--json"] + extra, environment: environment(peer, cache: cache)
        )
    }

    private func json(_ result: ProcessResult) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any], result.description)
    }

    private func causes(_ result: ProcessResult) throws -> [[String: Any]] {
        try XCTUnwrap((try json(result)["verdict"] as? [String: Any])?["causes"] as? [[String: Any]])
    }

    func testTheTicketCacheLogsInAsCurlNegotiateDoes() throws {
        let peer = try peer()
        let cache = try kinit(peer)
        let url = "https://localhost:\(peer["PORT"]!)/kerberos"
        let result = try probe(peer, cache: cache, url)
        XCTAssertEqual(result.status, 0, result.description)
        let hops = try XCTUnwrap(try json(result)["http"] as? [[String: Any]])
        XCTAssertEqual(hops.map { $0["status"] as? Int }, [401, 200])
        let negotiate = try XCTUnwrap(hops.last?["negotiate"] as? [String: Any])
        XCTAssertEqual(negotiate["clientPrincipal"] as? String, "alice@MTLS.TEST")
        XCTAssertEqual(negotiate["servicePrincipal"] as? String, "HTTP/localhost")
        XCTAssertEqual(negotiate["mutualAuthentication"] as? Bool, true)
        XCTAssertEqual(negotiate["persistentAuth"] as? String, "true")
        XCTAssertEqual(negotiate["channelBinding"] as? Bool, true)
        // The judge: curl --negotiate -u : with the same cache.
        let curl = try runProcess(
            "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", Fixtures.path("root-ca.pem"), "--negotiate", "-u", ":", url],
            environment: environment(peer, cache: cache))
        XCTAssertEqual(curl.stdoutText, "200")
        // The text report shows the Kerberos rows.
        let text = try runProcess(
            try BuiltBinary.path(), ["probe", url, "--anchors", Fixtures.path("root-ca.pem"), "--auth", "negotiate"], environment: environment(peer, cache: cache))
        XCTAssertTrue(text.stdoutText.contains("alice@MTLS.TEST → HTTP/localhost"), text.stdoutText)
        XCTAssertTrue(text.stdoutText.contains("mutual auth     verified"), text.stdoutText)
        XCTAssertTrue(text.stdoutText.contains("Persistent-Auth: true"), text.stdoutText)
        XCTAssertTrue(text.stdoutText.contains("Verdict: OK — 200 OK, logged in with Kerberos (alice@MTLS.TEST)"), text.stdoutText)
    }

    func testUserAndPasswordNeedNoKinit() throws {
        let peer = try peer()
        var env = environment(peer, cache: "FILE:\(peer["DIR"]!)/empty-cache")
        env["KPW"] = peer["PASSWORD"]!
        let result = try runProcess(
            try BuiltBinary.path(),
            [
                "probe", "https://localhost:\(peer["PORT"]!)/kerberos", "--anchors", Fixtures.path("root-ca.pem"), "--auth", "negotiate", "--json", "--user", peer["USER"]!,
                "--user-password", "env:KPW",
            ],
            environment: env)
        XCTAssertEqual(result.status, 0, result.description)
        let hops = try XCTUnwrap(try json(result)["http"] as? [[String: Any]])
        XCTAssertEqual((hops.last?["negotiate"] as? [String: Any])?["clientPrincipal"] as? String, "alice@MTLS.TEST")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(peer["DIR"]!)/empty-cache"), "the ticket stays in memory")
    }

    /// Each failure class, made to happen for real, names its cause and fix; curl only sees a 401.
    func testEachFailureClassIsExplained() throws {
        let peer = try peer()
        let cache = try kinit(peer)
        let port = peer["PORT"]!
        let cases: [(String, String, String, String)] = [
            // (cache, url, rule, words in the cause or fix)
            ("FILE:\(peer["DIR"]!)/no-cache", "https://localhost:\(port)/kerberos", "kerberos-no-credentials", "kinit"),
            (cache, "https://127.0.0.1:\(port)/kerberos", "kerberos-spn-unknown", "reached by IP address"),
            (cache, "https://localhost:\(peer["WRONG_SPN_PORT"]!)/kerberos", "kerberos-wrong-spn", "setspn -S HTTP/localhost"),
            (cache, "https://localhost:\(peer["OLD_KVNO_PORT"]!)/kerberos", "kerberos-kvno-outdated", "KRB_AP_ERR_BADKEYVER"),
            (cache, "https://localhost:\(peer["SKEW_PORT"]!)/kerberos", "kerberos-clock-skew", "synchronise the clocks"),
        ]
        for (cache, url, rule, words) in cases {
            let result = try probe(peer, cache: cache, url)
            XCTAssertEqual(result.status, 1, "\(rule): \(result.description)")
            let cause = try XCTUnwrap(try causes(result).first, rule)
            XCTAssertEqual(cause["rule"] as? String, rule, result.description)
            let text = "\(cause["cause"] ?? "") \(cause["fix"] ?? "")"
            XCTAssertTrue(text.contains(words), "\(rule): \(text)")
            let error = try XCTUnwrap(try json(result)["error"] as? [String: Any])
            XCTAssertEqual((error["kerberos"] as? [String: Any])?["reason"] as? String, String(rule.dropFirst("kerberos-".count)))
            // curl --negotiate: a 401 and no reason.
            let curl = try runProcess(
                "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", Fixtures.path("root-ca.pem"), "--negotiate", "-u", ":", url],
                environment: environment(peer, cache: cache))
            XCTAssertEqual(curl.stdoutText, "401", rule)
        }
    }

    func testExpiredPasswordAndDisabledAccountWithUser() throws {
        let peer = try peer()
        for (user, rule) in [(peer["EXPIRED_USER"]!, "kerberos-password-expired"), (peer["DISABLED_USER"]!, "kerberos-account-disabled")] {
            var env = environment(peer, cache: "FILE:\(peer["DIR"]!)/unused")
            env["KPW"] = peer["PASSWORD"]!
            let result = try runProcess(
                try BuiltBinary.path(),
                [
                    "probe", "https://localhost:\(peer["PORT"]!)/kerberos", "--anchors", Fixtures.path("root-ca.pem"), "--auth", "negotiate", "--json", "--user", user,
                    "--user-password", "env:KPW",
                ],
                environment: env)
            XCTAssertEqual(result.status, 1, result.description)
            let cause = try XCTUnwrap(try causes(result).first)
            XCTAssertEqual(cause["rule"] as? String, rule, result.description)
            XCTAssertTrue((cause["cause"] as? String)?.contains("'\(user)'") ?? false, "the principal is named: \(cause)")
        }
    }

    func testNoChannelBindingAndAKerberosLoginBeforeARenegotiatedCertificate() throws {
        let peer = try peer()
        let cache = try kinit(peer)
        let plain = try probe(peer, cache: cache, "https://localhost:\(peer["PORT"]!)/kerberos", ["--no-channel-binding"])
        XCTAssertEqual(plain.status, 0, plain.description)
        XCTAssertEqual(((try json(plain)["http"] as? [[String: Any]])?.last?["negotiate"] as? [String: Any])?["channelBinding"] as? Bool, false)
        let withCertificate = try probe(
            peer, cache: cache, "https://localhost:\(peer["RENEG_PORT"]!)/kerberos-cert", ["--cert", Fixtures.path("client-alice.pem"), "--key", Fixtures.path("client-alice.key")])
        XCTAssertEqual(withCertificate.status, 0, withCertificate.description)
        let client = try XCTUnwrap(try json(withCertificate)["clientCertificate"] as? [String: Any])
        XCTAssertEqual(client["requestPhases"] as? [String], ["renegotiation"])
    }

    private func events(_ result: ProcessResult) throws -> [String] {
        try XCTUnwrap(try json(result)["events"] as? [[String: Any]]).compactMap { $0["line"] as? String }
    }

    /// IIS's order: the 401 Negotiate first, the certificate on the authenticated request (TLS 1.2
    /// renegotiation; TLS 1.3 post-handshake auth), in the JSON event log and the text report's
    /// "order" row; Apache's /kerberos-cert asks in the other order, and the row says so too.
    func testTheCertificateRequestAfterTheKerberos401IsShownInOrder() throws {
        let peer = try peer()
        let cache = try kinit(peer)
        let identity = ["--cert", Fixtures.path("client-alice.pem"), "--key", Fixtures.path("client-alice.key")]
        for (port, phase) in [("IIS_PORT", "renegotiation"), ("IIS_PHA_PORT", "post-handshake")] {
            let url = "https://localhost:\(peer[port]!)/kerberos-cert"
            let result = try probe(peer, cache: cache, url, identity)
            XCTAssertEqual(result.status, 0, "\(port): \(result.description)")
            let lines = try events(result)
            let unauthorized = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("< 401") }, "\(port): \(lines)")
            let request = try XCTUnwrap(lines.firstIndex { $0 == "<<< CertificateRequest (\(phase))" }, "\(port): \(lines)")
            let ok = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("< 200") }, "\(port): \(lines)")
            XCTAssertTrue(unauthorized < request && request < ok, "\(port): \(lines)")
            XCTAssertEqual((try json(result)["clientCertificate"] as? [String: Any])?["requestPhases"] as? [String], [phase])
            let text = try runProcess(
                try BuiltBinary.path(), ["probe", url, "--anchors", Fixtures.path("root-ca.pem"), "--auth", "negotiate"] + identity,
                environment: environment(peer, cache: cache))
            XCTAssertTrue(
                text.stdoutText.contains(
                    "order           GET /kerberos-cert → 401 Negotiate → GET /kerberos-cert (Kerberos answer) → CertificateRequest (\(phase)) → 200"),
                "\(port): \(text.stdoutText)")
            XCTAssertTrue(text.stdoutText.contains("logged in with the client certificate and Kerberos (alice@MTLS.TEST)"), text.stdoutText)
        }
        let apache = try runProcess(
            try BuiltBinary.path(),
            ["probe", "https://localhost:\(peer["RENEG_PORT"]!)/kerberos-cert", "--anchors", Fixtures.path("root-ca.pem"), "--auth", "negotiate"] + identity,
            environment: environment(peer, cache: cache))
        XCTAssertEqual(apache.status, 0, apache.description)
        XCTAssertTrue(
            apache.stdoutText.contains("order           GET /kerberos-cert → CertificateRequest (renegotiation) → 401 Negotiate → GET /kerberos-cert (Kerberos answer) → 200"),
            apache.stdoutText)
    }

    /// `--auth any` (the default) with a ticket in the cache: Kerberos, no --user needed.
    func testAuthAnyPrefersKerberosWhenTheCacheHoldsATicket() throws {
        let peer = try peer()
        let result = try runProcess(
            try BuiltBinary.path(), ["probe", "https://localhost:\(peer["PORT"]!)/kerberos", "--anchors", Fixtures.path("root-ca.pem"), "--json"],
            environment: environment(peer, cache: try kinit(peer)))
        XCTAssertEqual(result.status, 0, result.description)
        let negotiate = try XCTUnwrap((try json(result)["http"] as? [[String: Any]])?.last?["negotiate"] as? [String: Any])
        XCTAssertEqual(negotiate["mechanism"] as? String, "Kerberos")
        XCTAssertEqual(negotiate["ticket"] as? String, "credentials cache")
        XCTAssertEqual(negotiate["mutualAuthentication"] as? Bool, true)
    }

    /// `--auth any` without a ticket or --user: the 401 stands, and the cause says why Kerberos could not answer.
    func testAuthAnyWithoutATicketSaysWhyNotKerberos() throws {
        let peer = try peer()
        let result = try runProcess(
            try BuiltBinary.path(), ["probe", "https://localhost:\(peer["PORT"]!)/kerberos", "--anchors", Fixtures.path("root-ca.pem"), "--json"],
            environment: environment(peer, cache: "FILE:\(peer["DIR"]!)/no-cache"))
        XCTAssertEqual(result.status, 1, result.description)
        let cause = try XCTUnwrap(try causes(result).first)
        XCTAssertEqual(cause["rule"] as? String, "credentials-wanted")
        XCTAssertTrue((cause["cause"] as? String)?.contains("Kerberos could not answer: no Kerberos ticket") ?? false, "\(cause)")
        XCTAssertTrue((cause["fix"] as? String)?.contains("kinit") ?? false, "\(cause)")
        let fallback = (((try json(result)["http"] as? [[String: Any]])?.last?["negotiate"] as? [String: Any])?["fallback"] as? [String: Any])
        XCTAssertEqual(fallback?["reason"] as? String, "no-credentials")
    }

    /// `--auth any --user DOMAIN\\user` and no ticket to be had: NTLM inside Negotiate (IIS's
    /// provider order), and the report says why Kerberos was not used.
    func testAuthAnyFallsBackToNTLMWithUserAndSaysWhy() throws {
        let peer = try peer()
        let ntlm = try ntlmPeer()
        var env = environment(peer, cache: "FILE:\(peer["DIR"]!)/no-cache")
        env["NPW"] = ntlm["NTLM_PASSWORD"]!
        let arguments = [
            "probe", "https://localhost:\(ntlm["PORT"]!)/negotiate", "--anchors", Fixtures.path("root-ca.pem"), "--user", "\(ntlm["NTLM_DOMAIN"]!)\\\(ntlm["NTLM_USER"]!)",
            "--user-password", "env:NPW",
        ]
        let result = try runProcess(try BuiltBinary.path(), arguments + ["--json"], environment: env)
        XCTAssertEqual(result.status, 0, result.description)
        let negotiate = try XCTUnwrap((try json(result)["http"] as? [[String: Any]])?.last?["negotiate"] as? [String: Any], result.stdoutText)
        XCTAssertEqual(negotiate["mechanism"] as? String, "NTLM")
        XCTAssertEqual((negotiate["fallback"] as? [String: Any])?["reason"] as? String, "kdc-unreachable")
        let text = try runProcess(try BuiltBinary.path(), arguments, environment: env)
        XCTAssertTrue(text.stdoutText.contains("answered with NTLM"), text.stdoutText)
        XCTAssertTrue(text.stdoutText.contains("kerberos        not used (kdc-unreachable)"), text.stdoutText)
    }
}

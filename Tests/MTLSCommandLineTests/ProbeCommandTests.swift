import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSHTTP
import MTLSTrust
import MTLSTestServer

/// `mtls probe` against the in-process IIS-like server: each outcome on the human and JSON output,
/// the JSON checked against the committed schema (docs/schemas/probe.schema.json).
final class ProbeCommandTests: XCTestCase {
    private func startServer(maximumVersion: TLSVersion? = nil, httpSys: Bool = false, atHandshake: Bool = false, sendsCANames: Bool = true) throws -> TestServer {
        let configuration = TLSServerConfiguration(
            certificate: try CertificateLoader.certificates(atPath: Fixtures.path("server.pem"))[0],
            privateKey: try PrivateKey(bytes: try Fixtures.bytes("server.key")),
            chain: try CertificateLoader.certificates(atPath: Fixtures.path("intermediate-ca.pem")),
            clientCAs: try CertificateLoader.certificates(atPath: Fixtures.path("root-ca.pem")) + CertificateLoader.certificates(atPath: Fixtures.path("intermediate-ca.pem")),
            sendsCANames: sendsCANames, requestsCertificateAtHandshake: atHandshake, maximumVersion: maximumVersion)
        let server = try TestServer(configuration: TestServerConfiguration(tls: configuration, port: 0, httpSysMode: httpSys))
        try server.start()
        return server
    }

    private func probe(_ server: TestServer, _ path: String, _ extra: [String] = []) -> CLIResult {
        mtls(
            ["probe", "https://localhost:\(server.boundPort)\(path)", "--anchors", Fixtures.path("root-ca.pem"), "--at", fixedTime] + extra,
            environment: ["MTLS_QUIET_PASS_WARNING": "1"])
    }

    private let alice = ["--p12", Fixtures.path("p12/client-alice-legacy-rc2.p12"), "--password", "pass:mtls"]

    func testTLS12RenegotiationIsExplainedAndTheLoginWorksWithTheIdentity() throws {
        let server = try startServer(maximumVersion: .tls1_2)
        defer { server.stop() }
        let refused = probe(server, "/secure")
        XCTAssertEqual(refused.exitCode, 1, refused.description)
        XCTAssertTrue(refused.stdout.contains("yes, after the request, by TLS 1.2 renegotiation"), refused.stdout)
        XCTAssertTrue(refused.stdout.contains("IIS 403.7"), refused.stdout)
        XCTAssertTrue(refused.stdout.contains("fix: pass your identity with --p12"), refused.stdout)
        let accepted = probe(server, "/secure", alice)
        XCTAssertEqual(accepted.exitCode, 0, accepted.description)
        XCTAssertTrue(accepted.stdout.contains("sent            CN=client-alice"), accepted.stdout)
        XCTAssertTrue(accepted.stdout.contains("Verdict: OK"), accepted.stdout)
    }

    func testTLS13PerPathRequestOnHTTPSysIsExplainedWithTheTLS12Fix() throws {
        let server = try startServer(httpSys: true)
        defer { server.stop() }
        let result = probe(server, "/secure", alice)
        XCTAssertEqual(result.exitCode, 1, result.description)
        XCTAssertTrue(result.stdout.contains("0x80070032"), result.stdout)
        XCTAssertTrue(result.stdout.contains("--tls-max 1.2"), result.stdout)
        XCTAssertTrue(result.stdout.contains("clientcertnegotiation=enable"), result.stdout)
        XCTAssertEqual(probe(server, "/secure", alice + ["--tls-max", "1.2"]).exitCode, 0)
    }

    func testHandshakeRequestWithoutCANamesIsReported() throws {
        let server = try startServer(atHandshake: true, sendsCANames: false)
        defer { server.stop() }
        let result = probe(server, "/secure", alice)
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertTrue(result.stdout.contains("yes, during the TLS handshake"), result.stdout)
        XCTAssertTrue(result.stdout.contains("none sent"), result.stdout)
    }

    func testUntrustedClientAndServerAreNamedAsCauses() throws {
        let server = try startServer()
        defer { server.stop() }
        let other = probe(server, "/secure", ["--cert", Fixtures.path("client-other.pem"), "--key", Fixtures.path("client-other.key")])
        XCTAssertEqual(other.exitCode, 1)
        XCTAssertTrue(other.stdout.contains("IIS 403.16"), other.stdout)
        XCTAssertTrue(other.stdout.contains("does not trust our client certificate"), other.stdout)
        let untrusted = mtls(["probe", "https://localhost:\(server.boundPort)/", "--anchors", Fixtures.path("other-root-ca.pem"), "--at", fixedTime])
        XCTAssertEqual(untrusted.exitCode, 1, untrusted.description)
        XCTAssertTrue(untrusted.stdout.contains("not trusted"), untrusted.stdout)
        let insecure = mtls(["probe", "https://localhost:\(server.boundPort)/", "--anchors", Fixtures.path("other-root-ca.pem"), "--at", fixedTime, "--insecure"])
        XCTAssertTrue(insecure.stdout.contains("ignored because of --insecure"), insecure.stdout)
        XCTAssertTrue(insecure.stderr.contains("warning: --insecure"), insecure.stderr)
    }

    func testSaveChainWritesTheChainAsSent() throws {
        let server = try startServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory(self)
        let path = directory.file("chain.pem")
        XCTAssertEqual(probe(server, "/", ["--save-chain", path]).exitCode, 0)
        let saved = try CertificateLoader.certificates(atPath: path)
        XCTAssertEqual(
            saved.map(\.subject),
            [
                try CertificateLoader.certificates(atPath: Fixtures.path("server.pem"))[0].subject,
                try CertificateLoader.certificates(atPath: Fixtures.path("intermediate-ca.pem"))[0].subject,
            ])
    }

    func testNetworkFailureExitsFourAndUsageErrorsTwo() throws {
        let refused = mtls(["probe", "https://127.0.0.1:1/", "--json"])
        XCTAssertEqual(refused.exitCode, 4, refused.description)
        let json = try refused.json()
        XCTAssertEqual((json["error"] as? [String: Any])?["phase"] as? String, "connect")
        XCTAssertEqual(mtls(["probe", "ftp://example.com/"]).exitCode, 2)
        XCTAssertEqual(mtls(["probe", "https://localhost/", "--tls-max", "1.7"]).exitCode, 2)
    }

    func testBasicAndDigestChallengesAreAnsweredOnceAndAWrongPasswordIsAClearRefusal() throws {
        let server = try startServer()
        defer { server.stop() }
        for path in ["/basic", "/digest"] {
            let ok = probe(server, path, ["--user", "mtls", "--user-password", "pass:mtls", "--json"])
            XCTAssertEqual(ok.exitCode, 0, ok.description)
            let kinds = (try ok.json()["http"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
            XCTAssertEqual(kinds, ["initial", "authentication"], path)
            let wrong = probe(server, path, ["--user", "mtls", "--user-password", "pass:nope"])
            XCTAssertEqual(wrong.exitCode, 1, wrong.description)
            XCTAssertTrue(wrong.stdout.contains("401"), wrong.stdout)
            XCTAssertFalse(wrong.stdout.contains("nope"), "the password is never printed")
        }
    }

    func testRedirectsAndCookiesAreFollowedAndSavedInCurlsFormat() throws {
        let server = try startServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory(self)
        let jar = directory.file("cookies.txt")
        let result = probe(server, "/cookie", ["--cookie-jar", jar])
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertTrue(result.stdout.contains("mtls-session=[redacted] stored"), result.stdout)
        let saved = try String(contentsOfFile: jar, encoding: .utf8)
        XCTAssertTrue(saved.contains("#HttpOnly_localhost") && saved.contains("mtls-session"), saved)
        let redirected = probe(server, "/redirect", ["--follow", "--json"])
        let hops = try redirected.json()["http"] as? [[String: Any]]
        XCTAssertEqual(hops?.compactMap { $0["status"] as? Int }, [302, 200])
    }

    /// A page's meta refresh (mtls serve's `/refresh`, "signing you in…") is followed with
    /// `--follow`, shown as a refresh hop in text and JSON, and not followed without it.
    func testAMetaRefreshIsFollowedWithFollow() throws {
        let server = try startServer()
        defer { server.stop() }
        let followed = probe(server, "/refresh", ["--follow", "--json"])
        XCTAssertEqual(followed.exitCode, 0, followed.description)
        let hops = try XCTUnwrap(try followed.json()["http"] as? [[String: Any]])
        XCTAssertEqual(hops.compactMap { $0["kind"] as? String }, ["initial", "refresh"])
        XCTAssertEqual(hops.compactMap { $0["url"] as? String }.last, "https://localhost:\(server.boundPort)/")
        let text = probe(server, "/refresh", ["--follow"])
        XCTAssertTrue(text.stdout.contains("refresh (0 s)"), text.stdout)
        let stopped = probe(server, "/refresh", ["--json"])
        XCTAssertEqual((try stopped.json()["http"] as? [[String: Any]])?.count, 1, stopped.stdout)

        // With -o, the refreshing page is read before it would be written, and the file holds the
        // page the refresh leads to.
        let directory = try TemporaryDirectory(self)
        let output = directory.url.appendingPathComponent("page.html").path
        let saved = probe(server, "/refresh", ["--follow", "--json", "-o", output])
        XCTAssertEqual(saved.exitCode, 0, saved.description)
        XCTAssertEqual((try saved.json()["http"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }, ["initial", "refresh"])
        let page = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertFalse(page.lowercased().contains("http-equiv=\"refresh\""), "the file holds the refreshing page: \(page.prefix(200))")
        let direct = directory.url.appendingPathComponent("root.html").path
        XCTAssertEqual(probe(server, "/", ["-o", direct]).exitCode, 0)
        XCTAssertEqual(page, try String(contentsOfFile: direct, encoding: .utf8), "the same page as / fetched directly")
    }

    func testJSONOutputMatchesTheCommittedSchema() throws {
        let server = try startServer(maximumVersion: .tls1_2)
        defer { server.stop() }
        let schemaData = try Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/schemas/probe.schema.json"))
        let schema = try XCTUnwrap(JSONSerialization.jsonObject(with: schemaData) as? [String: Any])
        for (path, extra) in [("/secure", [String]()), ("/secure", alice), ("/basic", []), ("/redirect", ["--follow"]), ("/refresh", ["--follow"])] {
            let result = probe(server, path, extra + ["--json"])
            let object = try result.json()
            var problems: [String] = []
            JSONSchemaSubset.validate(object, against: schema, root: schema, at: "$", problems: &problems)
            XCTAssertEqual(problems, [], "\(path) \(extra): \(result.stdout)")
        }
        let failure = mtls(["probe", "https://127.0.0.1:1/", "--json"])
        var problems: [String] = []
        JSONSchemaSubset.validate(try failure.json(), against: schema, root: schema, at: "$", problems: &problems)
        XCTAssertEqual(problems, [])
    }

    func testFleetModeWritesOneJSONLinePerTargetAndShards() throws {
        let server = try startServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory(self)
        let targets = try directory.write("targets.txt", text: "https://localhost:\(server.boundPort)/\nlocalhost:\(server.boundPort)/secure\n# a comment\nhttps://127.0.0.1:1/\n")
        let all = mtls(["probe", "--targets", targets, "--anchors", Fixtures.path("root-ca.pem"), "--json", "--concurrency", "3"])
        let lines = all.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, all.stdout)
        for line in lines { XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(line.utf8))) }
        XCTAssertEqual(all.exitCode, 1)
        let first = mtls(["probe", "--targets", targets, "--anchors", Fixtures.path("root-ca.pem"), "--json", "--shard", "1/2"])
        let second = mtls(["probe", "--targets", targets, "--anchors", Fixtures.path("root-ca.pem"), "--json", "--shard", "2/2"])
        XCTAssertEqual(first.stdout.split(separator: "\n").count + second.stdout.split(separator: "\n").count, 3)
        XCTAssertEqual(mtls(["probe", "--targets", targets, "--shard", "3/2"]).exitCode, 2)
        // More shards than targets (a Kubernetes Indexed Job with spare indexes): a shard with no
        // target of its own writes nothing and succeeds.
        let empty = mtls(["probe", "--targets", targets, "--anchors", Fixtures.path("root-ca.pem"), "--json", "--shard", "4/4"])
        XCTAssertEqual(empty.exitCode, 0, empty.stderr)
        XCTAssertEqual(empty.stdout, "")
    }
}

/// A subset of JSON Schema (type, required, properties, items, enum, anyOf, $ref to #/$defs) — enough to
/// hold the probe output to its documented shape.
enum JSONSchemaSubset {
    static func validate(_ value: Any, against schema: [String: Any], root: [String: Any], at path: String, problems: inout [String]) {
        var schema = schema
        if let ref = schema["$ref"] as? String, ref.hasPrefix("#/$defs/"), let defs = root["$defs"] as? [String: Any], let target = defs[String(ref.dropFirst(8))] as? [String: Any]
        {
            schema = target
        }
        if let branches = schema["anyOf"] as? [[String: Any]] {
            var branchProblems: [[String]] = []
            for branch in branches {
                var found: [String] = []
                validate(value, against: branch, root: root, at: path, problems: &found)
                if found.isEmpty { return }
                branchProblems.append(found)
            }
            problems.append("\(path): matches none of anyOf (\(branchProblems.map { $0.first ?? "" }.joined(separator: " | ")))")
            return
        }
        if let allowed = schema["enum"] as? [Any] {
            if !allowed.contains(where: { "\($0)" == "\(value)" }) { problems.append("\(path): \(value) not in \(allowed)") }
            return
        }
        if let type = schema["type"] {
            let types = (type as? [String]) ?? [(type as? String) ?? ""]
            if !types.contains(where: { matches(value, $0) }) {
                problems.append("\(path): expected \(types), got \(Swift.type(of: value))")
                return
            }
        }
        if let object = value as? [String: Any] {
            for key in (schema["required"] as? [String]) ?? [] where object[key] == nil { problems.append("\(path): missing \(key)") }
            let properties = (schema["properties"] as? [String: Any]) ?? [:]
            for (key, child) in object {
                if let childSchema = properties[key] as? [String: Any] {
                    validate(child, against: childSchema, root: root, at: "\(path).\(key)", problems: &problems)
                } else if !properties.isEmpty {
                    problems.append("\(path): undocumented key \(key)")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, item) in array.enumerated() { validate(item, against: items, root: root, at: "\(path)[\(index)]", problems: &problems) }
        }
    }

    /// JSONSerialization on Linux returns booleans as NSNumber; tell them apart by their type encoding.
    static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c" || type(of: number) != type(of: NSNumber(value: 1))
    }

    static func matches(_ value: Any, _ type: String) -> Bool {
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "integer":
            guard let number = value as? NSNumber, !isBoolean(number) else { return false }
            return number.doubleValue == number.doubleValue.rounded()
        case "number":
            guard let number = value as? NSNumber, !isBoolean(number) else { return false }
            return number.doubleValue.isFinite
        case "boolean": return (value as? NSNumber).map(isBoolean) ?? false
        case "null": return value is NSNull
        default: return false
        }
    }
}

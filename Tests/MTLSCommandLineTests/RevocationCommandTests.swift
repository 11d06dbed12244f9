import Foundation
import MTLSHTTP
import MTLSTrust
import Synchronization
import XCTest

/// `mtls verify --revocation` against the revocation bed (scripts/peers/revocation.sh): an AD
/// CS-shaped hierarchy whose CRLs, delta CRL and OCSP answers are fetched over loopback. The bed
/// is started once for the class; each certificate class must give its verdict with the URL-by-URL
/// evidence, and `openssl ocsp` / `openssl verify -crl_download` judge where they can.
final class RevocationCommandTests: XCTestCase {
    nonisolated(unsafe) static var bed: [String: String] = [:]
    nonisolated(unsafe) static var startFailure: String?
    static let script = Fixtures.packageRoot.appendingPathComponent("scripts/peers/revocation.sh").path

    override class func setUp() {
        super.setUp()
        // Foundation's Process leaves the parent's pipes open in the child; the daemonised server
        // would hold our stdout pipe forever. Close all but 0-2 first (as SServerPeer does).
        let closeInherited = "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done; exec /bin/bash \"$0\" \"$@\""
        do {
            let result = try runProcess("/bin/bash", ["-c", closeInherited, script, "start"])
            for line in result.stdoutText.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { bed[parts[0]] = parts[1] }
            }
            if result.status != 0 || bed["DIR"] == nil { startFailure = "revocation.sh start failed: \(result.stderr)" }
        } catch {
            startFailure = "revocation.sh start failed: \(error)"
        }
    }

    override class func tearDown() {
        if let directory = bed["DIR"] { _ = try? runProcess("/bin/bash", [script, "stop", "--dir", directory]) }
        super.tearDown()
    }

    override func setUpWithError() throws {
        if let failure = Self.startFailure { XCTFail(failure) }
        try XCTSkipIf(Self.startFailure != nil)
    }

    var dir: String { Self.bed["DIR"] ?? "/nonexistent" }
    var httpPort: String { Self.bed["HTTP_PORT"] ?? "0" }

    /// `mtls verify DIR/chain-CLASS.pem --anchors root --revocation MODE --json` (at now: the bed's
    /// CRLs and OCSP answers are made now).
    func check(_ name: String, _ mode: String = "hard", _ extra: [String] = []) throws -> (result: CLIResult, json: [String: Any], entries: [[String: Any]]) {
        let result = mtls(["verify", "\(dir)/chain-\(name).pem", "--anchors", "\(dir)/root.pem", "--revocation", mode, "--json"] + extra)
        let json = try result.json()
        let revocation = json["revocation"] as? [String: Any]
        let entries = revocation?["certificates"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.count, 2, "\(name): one entry per certificate below the anchor\n\(result)")
        return (result, json, entries)
    }

    func findings(_ json: [String: Any]) -> [[String: Any]] { json["findings"] as? [[String: Any]] ?? [] }

    func attempts(_ entry: [String: Any]) -> [[String: Any]] { entry["attempts"] as? [[String: Any]] ?? [] }

    func testGoodCertificateIsCheckedByCRLAndOCSPAndItsIssuingCAByTheRootCRL() throws {
        let (result, _, entries) = try check("good")
        XCTAssertEqual(result.exitCode, 0, "\(result)")
        XCTAssertEqual(entries[0]["status"] as? String, "good")
        XCTAssertEqual(entries[1]["status"] as? String, "good")
        let urls = attempts(entries[0]).map { "\($0["kind"] ?? "") \($0["method"] ?? "") \($0["url"] ?? "")" }
        XCTAssertTrue(urls.contains("CRL GET http://127.0.0.1:\(httpPort)/issuing.crl"), "\(urls)")
        XCTAssertTrue(urls.contains("OCSP GET http://127.0.0.1:\(httpPort)/ocsp/issuing"), "\(urls)")
        let ocsp = try XCTUnwrap(attempts(entries[0]).first { $0["kind"] as? String == "OCSP" })
        XCTAssertEqual(ocsp["httpStatus"] as? Int, 200)
        XCTAssertEqual(ocsp["responderStatus"] as? String, "successful")
        XCTAssertNotNil(ocsp["producedAt"] as? String)
        XCTAssertNotNil(ocsp["nextUpdate"] as? String)
        let crl = try XCTUnwrap(attempts(entries[0]).first { $0["kind"] as? String == "CRL" })
        XCTAssertGreaterThan(crl["bytes"] as? Int ?? 0, 100)
        XCTAssertNotNil(crl["thisUpdate"] as? String)
        XCTAssertTrue(attempts(entries[1]).contains { $0["url"] as? String == "http://127.0.0.1:\(httpPort)/root.crl" })
        // The text lists every URL too, as certutil -urlfetch does.
        let text = mtls(["verify", "\(dir)/chain-good.pem", "--anchors", "\(dir)/root.pem", "--revocation", "hard"])
        XCTAssertContains(text.stdout, "Revocation (hard-fail, as IIS")
        XCTAssertContains(text.stdout, "OCSP GET http://127.0.0.1:\(httpPort)/ocsp/issuing [HTTP 200")
        XCTAssertContains(text.stdout, "CRL GET http://127.0.0.1:\(httpPort)/issuing.crl [HTTP 200")
    }

    func testRevokedLeafFailsWithReasonAndDateAndOpenSSLAgrees() throws {
        let (result, json, entries) = try check("revoked", "soft")
        XCTAssertEqual(result.exitCode, 1, "a revoked certificate fails even soft\n\(result)")
        XCTAssertEqual(entries[0]["status"] as? String, "revoked")
        XCTAssertEqual(entries[0]["revocationReason"] as? String, "keyCompromise")
        XCTAssertNotNil(entries[0]["revocationDate"] as? String)
        XCTAssertTrue(findings(json).contains { $0["error"] as? String == "X509_V_ERR_CERT_REVOKED" && $0["depth"] as? Int == 0 }, "\(findings(json))")
        XCTAssertEqual(json["summary"] as? String, "fatalTrustFailure")
        XCTAssertEqual(try opensslOCSP("revoked"), "revoked")
        XCTAssertEqual(try opensslOCSP("good"), "good")
        XCTAssertContains(try opensslVerifyCRLDownload("revoked"), "certificate revoked")
    }

    func testRevokedIssuingCAIsBlamedAsTheCA() throws {
        let (result, json, entries) = try check("revoked-ca")
        XCTAssertEqual(result.exitCode, 1, "\(result)")
        XCTAssertEqual(entries[0]["status"] as? String, "good")
        XCTAssertEqual(entries[1]["status"] as? String, "revoked")
        XCTAssertEqual(entries[1]["revocationReason"] as? String, "cACompromise")
        let finding = try XCTUnwrap(findings(json).first { $0["error"] as? String == "X509_V_ERR_CERT_REVOKED" })
        XCTAssertEqual(finding["depth"] as? Int, 1)
        XCTAssertContains(finding["reason"] as? String ?? "", "the issuing CA")
        XCTAssertContains(finding["hint"] as? String ?? "", "the CA is at fault")
        XCTAssertContains(try opensslVerifyCRLDownload("revoked-ca", untrusted: "revoked-ca.pem"), "certificate revoked")
    }

    func testStaleCRLCannotBeCheckedHardFailsSoftPasses() throws {
        let (hard, json, entries) = try check("stale-crl")
        XCTAssertEqual(hard.exitCode, 1, "\(hard)")
        XCTAssertEqual(entries[0]["status"] as? String, "offline")
        XCTAssertContains(entries[0]["detail"] as? String ?? "", "stale")
        XCTAssertTrue(findings(json).contains { $0["error"] as? String == "X509_V_ERR_CRL_HAS_EXPIRED" })
        let stale = try XCTUnwrap(attempts(entries[0]).first)
        XCTAssertNotNil(stale["nextUpdate"] as? String, "the stale nextUpdate is shown")
        XCTAssertEqual(try check("stale-crl", "soft").result.exitCode, 0)
    }

    /// RFC 5280 6.3.3 (b)(2): a CRL whose issuingDistributionPoint keeps it to CA certificates, or
    /// to another distribution point, says nothing of this leaf; `openssl verify -extended_crl` agrees.
    func testACRLScopedToOtherCertificatesCannotSayGood() throws {
        for (name, words) in [("scope-ca-only", "only CA certificates"), ("scope-other-dp", "another distribution point")] {
            let (hard, _, entries) = try check(name)
            XCTAssertEqual(hard.exitCode, 1, "\(name): \(hard)")
            XCTAssertEqual(entries[0]["status"] as? String, "offline", "\(name): \(entries[0])")
            XCTAssertContains(entries[0]["detail"] as? String ?? "", words, name)
            let attempt = try XCTUnwrap(attempts(entries[0]).first, name)
            XCTAssertContains(attempt["outcome"] as? String ?? "", words, name)
            XCTAssertEqual(try check(name, "soft").result.exitCode, 0, name)
        }
        let directory = try XCTUnwrap(Self.bed["DIR"])
        let judge = try runProcess(
            "/usr/bin/timeout",
            [
                "20", "openssl", "verify", "-crl_download", "-crl_check", "-extended_crl", "-CAfile", directory + "/root.pem", "-untrusted",
                directory + "/issuing.pem", directory + "/leaf-scope-ca-only.pem",
            ])
        XCTAssertContains(judge.stdoutText + judge.stderr, "different CRL scope")
    }

    func testUnreachableAndStalledCDPAreNamedAndCostSecondsAtMost() throws {
        let refused = Self.bed["REFUSED_PORT"] ?? "0"
        let (unreachable, _, entries) = try check("unreachable-cdp")
        XCTAssertEqual(unreachable.exitCode, 1, "\(unreachable)")
        XCTAssertEqual(entries[0]["status"] as? String, "offline")
        let attempt = try XCTUnwrap(attempts(entries[0]).first)
        XCTAssertEqual(attempt["url"] as? String, "http://127.0.0.1:\(refused)/issuing.crl")
        XCTAssertContains(attempt["outcome"] as? String ?? "", "offline")
        XCTAssertTrue(findings(try unreachable.json()).contains { $0["error"] as? String == "X509_V_ERR_UNABLE_TO_GET_CRL" })

        let start = Date()
        let (stalled, _, stalledEntries) = try check("stalled-cdp")
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(stalled.exitCode, 1, "\(stalled)")
        XCTAssertLessThan(elapsed, 8, "a stalled URL costs its 3 s deadline, not more")
        XCTAssertContains(attempts(stalledEntries[0]).first?["outcome"] as? String ?? "", "timed out")
        XCTAssertEqual(try check("stalled-cdp", "soft").result.exitCode, 0, "soft-fail passes an offline status")
    }

    func testOCSPUnknownAndUnauthorisedResponder() throws {
        let (unknown, json, entries) = try check("ocsp-unknown")
        XCTAssertEqual(unknown.exitCode, 1, "\(unknown)")
        XCTAssertEqual(entries[0]["status"] as? String, "unknown")
        XCTAssertTrue(findings(json).contains { $0["error"] as? String == "X509_V_ERR_OCSP_CERT_UNKNOWN" })
        XCTAssertEqual(try check("ocsp-unknown", "soft").result.exitCode, 0)
        XCTAssertEqual(try opensslOCSP("ocsp-unknown"), "unknown")

        let (rogue, rogueJSON, rogueEntries) = try check("ocsp-unauthorized")
        XCTAssertEqual(rogue.exitCode, 1, "\(rogue)")
        XCTAssertEqual(rogueEntries[0]["status"] as? String, "invalid")
        XCTAssertContains(rogueEntries[0]["detail"] as? String ?? "", "not authorised")
        XCTAssertTrue(findings(rogueJSON).contains { $0["error"] as? String == "X509_V_ERR_OCSP_VERIFY_FAILED" })
        XCTAssertEqual(try opensslOCSP("ocsp-unauthorized", responder: "rogue"), "Response Verify Failure")
    }

    func testDeltaCRLRevokesWhatTheBaseCRLDoesNot() throws {
        let (result, _, entries) = try check("delta-revoked")
        XCTAssertEqual(result.exitCode, 1, "\(result)")
        XCTAssertEqual(entries[0]["status"] as? String, "revoked")
        XCTAssertEqual(entries[0]["revocationReason"] as? String, "superseded")
        XCTAssertContains(entries[0]["decidedBy"] as? String ?? "", "delta CRL http://127.0.0.1:\(httpPort)/issuing-delta.crl")
        let kinds = attempts(entries[0]).map { $0["kind"] as? String ?? "" }
        XCTAssertEqual(kinds, ["CRL", "delta CRL"])
    }

    func testNoRevocationInformationHardFailsSoftPasses() throws {
        let (hard, _, entries) = try check("no-revocation-info")
        XCTAssertEqual(hard.exitCode, 1, "\(hard)")
        XCTAssertContains(entries[0]["detail"] as? String ?? "", "no revocation information")
        XCTAssertEqual(try check("no-revocation-info", "soft").result.exitCode, 0)
    }

    /// `--crl FILE` still works without --revocation, and combines with the fetched CRLs.
    func testLocalCRLStillWorksAndCombines() throws {
        let local = "\(dir)/www/issuing.crl"
        let offline = mtls(["verify", "\(dir)/chain-no-revocation-info.pem", "--anchors", "\(dir)/root.pem", "--crl", local, "--crl", "\(dir)/www/root.crl"])
        XCTAssertEqual(offline.exitCode, 0, "\(offline)")
        let (combined, _, entries) = try check("no-revocation-info", "hard", ["--crl", local])
        XCTAssertEqual(entries[0]["status"] as? String, "good", "\(combined)")
        XCTAssertEqual(attempts(entries[0]).first?["kind"] as? String, "local CRL")
    }

    // MARK: - Judges

    /// `openssl ocsp` against the bed's responder: the status word, or its verify failure.
    func opensslOCSP(_ name: String, responder: String = "issuing") throws -> String {
        let cafile = "\(dir)/cafile.pem"
        if !FileManager.default.fileExists(atPath: cafile) {
            let bundle = try String(contentsOfFile: "\(dir)/root.pem", encoding: .utf8) + String(contentsOfFile: "\(dir)/issuing.pem", encoding: .utf8)
            try bundle.write(toFile: cafile, atomically: true, encoding: .utf8)
        }
        let result = try runProcess(
            "/usr/bin/timeout",
            [
                "10", "openssl", "ocsp", "-issuer", "\(dir)/issuing.pem", "-cert", "\(dir)/leaf-\(name).pem", "-url", "http://127.0.0.1:\(httpPort)/ocsp/\(responder)", "-CAfile",
                cafile,
            ])
        let text = result.stdoutText + result.stderr
        if text.contains("Response Verify Failure") { return "Response Verify Failure" }
        for word in ["good", "revoked", "unknown"] where text.contains("leaf-\(name).pem: \(word)") { return word }
        return text
    }

    /// `openssl verify -crl_download -crl_check` under `timeout` (it retries a refused URL forever).
    func opensslVerifyCRLDownload(_ name: String, untrusted: String = "issuing.pem") throws -> String {
        let result = try runProcess(
            "/usr/bin/timeout",
            ["10", "openssl", "verify", "-crl_download", "-crl_check_all", "-CAfile", "\(dir)/root.pem", "-untrusted", "\(dir)/\(untrusted)", "\(dir)/leaf-\(name).pem"])
        return result.stdoutText + result.stderr
    }
}

/// OCSP stapling: `probe` asks for the status in every handshake and judges the staple;
/// `openssl s_server -status_file` staples the bed's answers, `curl --cert-status` judges too.
extension RevocationCommandTests {
    func stapling(_ name: String) throws -> SServerPeer {
        try SServerPeer(
            certificate: "\(dir)/leaf-\(name).pem", key: "\(dir)/leaf-\(name).key", ["-cert_chain", "\(dir)/issuing.pem", "-status_file", "\(dir)/staple-\(name).der"])
    }

    func testStapledGoodIsShownWithItsTimes() throws {
        let server = try stapling("good")
        defer { server.stop() }
        let result = mtls(["probe", "https://127.0.0.1:\(server.port)/", "--anchors", "\(dir)/root.pem", "--json"])
        let json = try result.json()
        let staple = try XCTUnwrap(json["stapledOCSP"] as? [String: Any], "\(result)")
        XCTAssertEqual(staple["status"] as? String, "good")
        XCTAssertEqual(staple["kind"] as? String, "stapled OCSP")
        XCTAssertNotNil(staple["producedAt"] as? String)
        XCTAssertNotNil(staple["thisUpdate"] as? String)
        XCTAssertEqual((json["trust"] as? [String: Any])?["trusted"] as? Bool, true, "\(result)")
        let text = mtls(["probe", "https://127.0.0.1:\(server.port)/", "--anchors", "\(dir)/root.pem"])
        XCTAssertContains(text.stdout, "stapled OCSP")
        XCTAssertContains(text.stdout, "good [")
        let curl = try runProcess("/usr/bin/curl", ["-sS", "-o", "/dev/null", "--cert-status", "--cacert", "\(dir)/root.pem", "https://127.0.0.1:\(server.port)/"])
        XCTAssertEqual(curl.status, 0, "curl --cert-status accepts the good staple: \(curl.stderr)")
    }

    func testStapledRevokedFailsTrustAsCurlDoes() throws {
        let server = try stapling("revoked")
        defer { server.stop() }
        let result = mtls(["probe", "https://127.0.0.1:\(server.port)/", "--anchors", "\(dir)/root.pem", "--json"])
        XCTAssertNotEqual(result.exitCode, 0, "\(result)")
        XCTAssertContains(result.stdout + result.stderr, "revoked")
        XCTAssertContains(result.stdout + result.stderr, "keyCompromise")
        let insecure = try mtls(["probe", "https://127.0.0.1:\(server.port)/", "--anchors", "\(dir)/root.pem", "--insecure", "--json"]).json()
        XCTAssertEqual((insecure["stapledOCSP"] as? [String: Any])?["status"] as? String, "revoked")
        let findings = (insecure["trust"] as? [String: Any])?["findings"] as? [[String: Any]] ?? []
        XCTAssertTrue(findings.contains { $0["error"] as? String == "X509_V_ERR_CERT_REVOKED" }, "\(insecure)")
        let curl = try runProcess("/usr/bin/curl", ["-sS", "-o", "/dev/null", "--cert-status", "--cacert", "\(dir)/root.pem", "https://127.0.0.1:\(server.port)/"])
        XCTAssertNotEqual(curl.status, 0, "curl --cert-status refuses the revoked staple too")
    }

    /// `probe --revocation hard` checks the server's chain as verify does.
    func testProbeRevocationChecksTheServerChain() throws {
        let server = try stapling("good")
        defer { server.stop() }
        let json = try mtls(["probe", "https://127.0.0.1:\(server.port)/", "--anchors", "\(dir)/root.pem", "--revocation", "hard", "--json"]).json()
        let revocation = (json["trust"] as? [String: Any])?["revocation"] as? [String: Any]
        let entries = revocation?["certificates"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.map { $0["status"] as? String ?? "" }, ["good", "good"], "\(json)")
    }
}

/// The library: `TrustPolicy.revocation` with a replaceable fetcher.
extension RevocationCommandTests {
    /// Refuses every OCSP GET (as some responders do) and passes the rest to `RevocationFetch`,
    /// counting the requests.
    final class NoGETFetcher: RevocationFetching {
        let network = RevocationFetch()
        let seen = Locked<[String]>([])
        func fetch(_ request: RevocationRequest, timeout: Double) -> RevocationResponse {
            seen.withLock { $0.append("\(request.method) \(request.url)") }
            if request.method == "GET" && request.url.contains("/ocsp/") { return RevocationResponse(status: 405) }
            return network.fetch(request, timeout: timeout)
        }
    }

    func testLibraryFallsBackToPOSTAndCachesPerFetcher() throws {
        let root = try Certificate.fromPEM(Array(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/root.pem"))))
        let chain = try Certificate.fromPEM(Array(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/chain-revoked.pem"))))
        let fetcher = NoGETFetcher()
        var policy = TrustPolicy(anchors: root, intermediates: Array(chain.dropFirst()), purpose: .client)
        policy.revocation = .hard
        policy.revocationFetcher = fetcher
        let evaluator = try TrustEvaluator(policy: policy)
        let evaluation = evaluator.evaluate(chain[0])
        XCTAssertFalse(evaluation.isTrusted)
        let leaf = try XCTUnwrap(evaluation.revocation?.certificates.first)
        XCTAssertEqual(leaf.status.name, "revoked")
        let methods = leaf.attempts.filter { $0.kind == "OCSP" }.map(\.method)
        XCTAssertEqual(methods, ["GET", "POST"], "POST after a refused GET")
        XCTAssertEqual(leaf.attempts.last?.status?.name, "revoked")
        // The same fetcher again: every answer from its cache.
        let again = evaluator.evaluate(chain[0])
        XCTAssertTrue(again.revocation?.certificates.flatMap(\.attempts).filter { $0.kind != "OCSP" || $0.method == "POST" }.allSatisfy(\.cached) ?? false)
        // Off (the default): no fetch at all.
        policy.revocation = .off
        let before = fetcher.seen.withLock { $0.count }
        XCTAssertNil(try TrustEvaluator(policy: policy).evaluate(chain[0]).revocation)
        XCTAssertEqual(fetcher.seen.withLock { $0.count }, before)
    }

    /// Plain http:// only: an https:// or ldap:// location is not fetched.
    func testFetcherRefusesOtherSchemes() {
        let response = RevocationFetch().fetch(RevocationRequest(url: "https://127.0.0.1:\(httpPort)/root.crl"), timeout: 2)
        XCTAssertNil(response.status)
        XCTAssertContains(response.failure ?? "", "http:// URL")
    }
}

/// `probe --revocation`: the client certificate we send, checked as the server will check it.
extension RevocationCommandTests {
    func testProbeChecksOurClientCertificateAsTheServerWill() throws {
        // Asks for a client certificate (-verify 1) and accepts any: what the server's revocation
        // check would find is ours to tell.
        let server = try SServerPeer(
            certificate: "\(dir)/leaf-good.pem", key: "\(dir)/leaf-good.key", ["-cert_chain", "\(dir)/issuing.pem", "-verify", "1"])
        defer { server.stop() }
        let arguments = [
            "probe", "https://127.0.0.1:\(server.port)/", "--anchors", "\(dir)/root.pem", "--cert", "\(dir)/chain-revoked.pem", "--key",
            "\(dir)/leaf-revoked.key", "--revocation", "soft",
        ]
        let json = try mtls(arguments + ["--json"]).json()
        let client = try XCTUnwrap(json["clientRevocation"] as? [String: Any], "\(json)")
        let entries = client["certificates"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.first?["status"] as? String, "revoked", "\(client)")
        XCTAssertEqual(entries.first?["revocationReason"] as? String, "keyCompromise")
        let text = mtls(arguments)
        XCTAssertContains(text.stdout, "what the server finds when it checks the revocation of our certificate")
        XCTAssertContains(text.stdout, "REVOKED (keyCompromise)")
    }
}

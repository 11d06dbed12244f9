import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTestSupport

/// `mtls probe --json` against servers it was not built with — Node.js, gnutls-serv, Go net/http,
/// Python ssl (post-handshake auth), Java JSSE and lighttpd, each started by `scripts/peers/` —
/// with curl as the judge. Each cell (server × TLS version × scenario) asserts the phase of the
/// certificate request, the CA names, what was sent, the HTTP status, the exit code (the server
/// refusing or requiring our certificate, or our trust refusing the server: 1), the top cause,
/// `verdict.ok` against the exit code, and that curl agrees on success. Refusals run three times:
/// the verdict must not depend on timing.
final class InteropMatrixTests: XCTestCase {
    /// One way a server asks for the client certificate.
    struct Endpoint {
        var server: String
        var script: String
        var portKey: String
        var path = "/"
        var versions: [String]
        var phase: String
        /// The server refuses when no certificate is sent.
        var requires: Bool
        /// The server refuses a certificate from a CA it does not accept.
        var verifies: Bool
        /// The HTTP status of a refusal at the HTTP level (nil: TLS refuses, no HTTP exchange).
        var noneStatus: Int? = nil
        var otherStatus: Int? = nil
        var sendsCANames = true
    }

    enum Scenario: String, CaseIterable {
        case none = "no certificate"
        case p12 = "the right certificate (PKCS#12)"
        case pem = "the right certificate (PEM)"
        case otherCA = "a certificate from a CA the server does not accept"
        case wrongAnchors = "wrong anchors"
        case expiredServer = "an expired server certificate"
    }

    static let endpoints: [String: [Endpoint]] = [
        "node": [
            Endpoint(
                server: "Node.js renegotiate()", script: "node.sh", portKey: "RENEG_PORT", path: "/secure", versions: ["1.2"], phase: "renegotiation", requires: true,
                verifies: true, noneStatus: 403, otherStatus: 403),
            Endpoint(server: "Node.js requestCert", script: "node.sh", portKey: "HANDSHAKE_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: true, verifies: true),
        ],
        "gnutls": [
            Endpoint(
                server: "gnutls-serv --require-client-cert", script: "gnutls.sh", portKey: "REQUIRE_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: true,
                verifies: false),
            Endpoint(
                server: "gnutls-serv --verify-client-cert", script: "gnutls.sh", portKey: "VERIFY_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: false,
                verifies: true),
            Endpoint(
                server: "gnutls-serv (require + verify)", script: "gnutls.sh", portKey: "BOTH_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: true, verifies: true),
        ],
        "go": [
            Endpoint(
                server: "Go RequestClientCert", script: "go.sh", portKey: "REQUEST_PORT", versions: ["1.3"], phase: "handshake", requires: true, verifies: true, noneStatus: 403,
                otherStatus: 403),
            Endpoint(server: "Go RequireAndVerifyClientCert", script: "go.sh", portKey: "REQUIRE_PORT", versions: ["1.3"], phase: "handshake", requires: true, verifies: true),
        ],
        "python": [
            Endpoint(
                server: "Python ssl PHA CERT_OPTIONAL", script: "python_pha.sh", portKey: "OPTIONAL_PORT", path: "/secure", versions: ["1.3"], phase: "post-handshake",
                requires: true,
                verifies: true, noneStatus: 403, sendsCANames: false),
            Endpoint(
                server: "Python ssl PHA CERT_REQUIRED", script: "python_pha.sh", portKey: "REQUIRED_PORT", path: "/secure", versions: ["1.3"], phase: "post-handshake",
                requires: true,
                verifies: true, sendsCANames: false),
        ],
        "java": [
            Endpoint(server: "Java JSSE needClientAuth", script: "java.sh", portKey: "NEED_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: true, verifies: true),
            Endpoint(
                server: "Java JSSE wantClientAuth", script: "java.sh", portKey: "WANT_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: true, verifies: true,
                noneStatus: 403),
        ],
        "lighttpd": [
            Endpoint(
                server: "lighttpd verifyclient.enforce", script: "lighttpd.sh", portKey: "ENFORCE_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: true,
                verifies: true),
            Endpoint(
                server: "lighttpd verifyclient (enforce disable)", script: "lighttpd.sh", portKey: "OPTIONAL_PORT", versions: ["1.2", "1.3"], phase: "handshake", requires: false,
                verifies: false),
        ],
    ]

    static let caNames = ["CN=mtls Test Intermediate CA,O=mtls test,C=US", "CN=mtls Test Root CA,O=mtls test,C=US"]
    static let alice = "CN=client-alice,O=mtls test,C=US"
    static let other = "CN=client-other,O=mtls test,C=US"

    nonisolated(unsafe) static var peers: [String: InteropPeer] = [:]
    static let lock = NSLock()

    override class func tearDown() {
        lock.lock()
        let all = Array(peers.values)
        peers.removeAll()
        lock.unlock()
        all.forEach { $0.stop() }
        super.tearDown()
    }

    /// One instance per script and server certificate for the whole class.
    private func peer(_ script: String, expired: Bool) throws -> InteropPeer {
        let key = script + (expired ? "/expired" : "")
        Self.lock.lock()
        defer { Self.lock.unlock() }
        if let running = Self.peers[key] { return running }
        let started = try InteropPeer(script, expired ? ["--server-cert", "server-expired"] : [])
        Self.peers[key] = started
        return started
    }

    private var mtlsPath: String { HTTPFixtures.root.appendingPathComponent(".build/debug/mtls").path }

    struct Outcome: Equatable {
        var exit: Int32
        var topCause: String?
    }

    /// Runs every cell of the endpoints of one server; returns the number of cells.
    @discardableResult
    private func runMatrix(_ name: String) throws -> Int {
        guard FileManager.default.isExecutableFile(atPath: mtlsPath) else { throw XCTSkip("build the mtls executable first: \(mtlsPath)") }
        var cells = 0
        for endpoint in Self.endpoints[name] ?? [] {
            for version in endpoint.versions {
                for scenario in Scenario.allCases {
                    let instance = try peer(endpoint.script, expired: scenario == .expiredServer)
                    try check(endpoint, version: version, scenario: scenario, port: instance.port(endpoint.portKey))
                    cells += 1
                }
            }
        }
        return cells
    }

    private func check(_ endpoint: Endpoint, version: String, scenario: Scenario, port: Int) throws {
        let cell = "\(endpoint.server), TLS \(version), \(scenario.rawValue)"
        let url = "https://localhost:\(port)\(endpoint.path)"
        let anchors = HTTPFixtures.path(scenario == .wrongAnchors ? "other-root-ca.pem" : "root-ca.pem")
        var identity: [String] = []
        var curlIdentity: [String] = []
        switch scenario {
        case .p12:
            identity = ["--p12", HTTPFixtures.path("p12/client-alice-modern.p12"), "--password", "pass:mtls"]
            curlIdentity = ["--cert-type", "P12", "--cert", HTTPFixtures.path("p12/client-alice-modern.p12") + ":mtls"]
        case .pem, .wrongAnchors, .expiredServer:
            identity = ["--cert", HTTPFixtures.path("client-alice.pem"), "--key", HTTPFixtures.path("client-alice.key")]
            curlIdentity = identity
        case .otherCA:
            identity = ["--cert", HTTPFixtures.path("client-other.pem"), "--key", HTTPFixtures.path("client-other.key")]
            curlIdentity = identity
        case .none:
            break
        }
        let versionFlags = ["--tls-min", version, "--tls-max", version]

        // What should happen.
        let trustFails = scenario == .wrongAnchors || scenario == .expiredServer
        let succeeds: Bool
        switch scenario {
        case .none: succeeds = !endpoint.requires
        case .otherCA: succeeds = !endpoint.verifies
        case .p12, .pem: succeeds = true
        case .wrongAnchors, .expiredServer: succeeds = false
        }
        let expectedStatus: Int? = succeeds ? 200 : scenario == .none ? endpoint.noneStatus : scenario == .otherCA ? endpoint.otherStatus : nil

        // curl, the judge.
        let curl = Subprocess.run(
            "/usr/bin/curl",
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--fail", "--max-time", "20", "--cacert", anchors, "--tlsv\(version)", "--tls-max", version, url] + curlIdentity)
        let curlSucceeded = curl.status == 0 && curl.stdout == "200"
        expect(curlSucceeded == succeeds, cell, "curl", "curl \(curlSucceeded ? "succeeded" : "failed (exit \(curl.status), HTTP \(curl.stdout))")")

        let runs = succeeds ? 1 : 3
        var outcomes: [Outcome] = []
        for run in 0..<runs {
            let result = Subprocess.run(mtlsPath, ["probe", url, "--json", "--anchors", anchors, "--timeout", "10"] + versionFlags + identity)
            guard let json = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
                expect(false, cell, "json", "probe printed no JSON (exit \(result.status)): \(result.stdout.prefix(300))")
                continue
            }
            let verdict = json["verdict"] as? [String: Any] ?? [:]
            let causes = (verdict["causes"] as? [[String: Any]] ?? []).compactMap { $0["cause"] as? String }
            // Numbers (days since expiry, ports) may differ between runs; the verdict may not.
            outcomes.append(Outcome(exit: result.status, topCause: causes.first?.filter { !$0.isNumber }))
            if run > 0 { continue }  // the repeats only have to agree with the first run
            let expectedExit: Int32 = succeeds ? 0 : 1
            expect(result.status == expectedExit, cell, "exit", "exit \(result.status), expected \(expectedExit); causes: \(causes)")
            expect(json["exitCode"] as? Int == Int(result.status), cell, "exitCode", "JSON exitCode \(json["exitCode"] ?? "none") differs from the process's \(result.status)")
            expect(verdict["ok"] as? Bool == (result.status == 0), cell, "ok", "verdict.ok \(verdict["ok"] ?? "none") with exit \(result.status)")
            let http = json["http"] as? [[String: Any]] ?? []
            let status = http.last?["status"] as? Int
            expect(status == expectedStatus, cell, "status", "HTTP status \(status.map(String.init) ?? "none"), expected \(expectedStatus.map(String.init) ?? "none")")
            let placeholders = causes.filter { $0.contains("?") || $0.contains("by ,") || $0.contains("()") }
            expect(placeholders.isEmpty, cell, "placeholder", "placeholder in causes: \(placeholders)")
            expect(succeeds == causes.isEmpty, cell, "causes", succeeds ? "causes on a success: \(causes)" : "no cause for a failure")
            if !succeeds {
                let top = (causes.first ?? "").lowercased()
                switch scenario {
                case .none: expect(top.contains("client certificate"), cell, "topCause", "the top cause must name the missing client certificate: \(causes)")
                case .otherCA: expect(top.contains("client-other"), cell, "topCause", "the top cause must name our refused certificate: \(causes)")
                case .wrongAnchors: expect(top.contains("server") && top.contains("trust"), cell, "topCause", "the top cause must be the untrusted server: \(causes)")
                case .expiredServer: expect(top.contains("expired"), cell, "topCause", "the top cause must be the expired server certificate: \(causes)")
                case .p12, .pem: break
                }
            }
            // The certificate request: its phase, CA names and what we sent.
            let client = json["clientCertificate"] as? [String: Any] ?? [:]
            let requests = client["requests"] as? [[String: Any]] ?? []
            let request = requests.first ?? [:]
            let sent = request["sent"] as? String
            let phases = client["requestPhases"] as? [String]
            if trustFails {
                // We stop at the server's certificate. In TLS 1.3 the server's CertificateRequest
                // precedes its Certificate: it was received (in the log's requestPhases) and never
                // answered (no entry in requests). In TLS 1.2 it follows the Certificate in the same
                // flight, and a per-path request (renegotiation, post-handshake) would only follow
                // our HTTP request: we never get that far, so whether the server asks is unknown
                // (null), neither yes nor no.
                let received = endpoint.phase == "handshake" && version == "1.3"
                if received {
                    expect(client["requested"] as? Bool == true, cell, "requested", "requested \(client["requested"] ?? "none"), expected true")
                    expect(phases == ["handshake"], cell, "phase", "requestPhases \(phases ?? []), expected [handshake]")
                } else {
                    expect(client["requested"] is NSNull, cell, "requested", "requested \(client["requested"] ?? "none"), expected null (unknown)")
                    expect(phases == [], cell, "phase", "requestPhases \(phases ?? []), expected none")
                }
                expect(requests.isEmpty, cell, "requests", "answered requests \(requests) although the handshake stopped at the server's certificate")
                expect(sent == nil, cell, "sent", "sent \(sent ?? "") to an untrusted server")
            } else {
                expect(client["requested"] as? Bool == true, cell, "requested", "requested \(client["requested"] ?? "none"), expected true")
                expect(request["phase"] as? String == endpoint.phase, cell, "phase", "phase \(request["phase"] ?? "none"), expected \(endpoint.phase)")
                let names = request["acceptedCANames"] as? [String]
                expect(names == (endpoint.sendsCANames ? Self.caNames : []), cell, "caNames", "CA names \(names ?? [])")
                let expectedSent: String? = scenario == .none ? nil : scenario == .otherCA ? Self.other : Self.alice
                expect(sent == expectedSent, cell, "sent", "sent \(sent ?? "nothing"), expected \(expectedSent ?? "nothing")")
            }
            expect((result.status == 0) == curlSucceeded, cell, "agree", "probe (exit \(result.status)) and curl (\(curlSucceeded ? "success" : "failure")) disagree")
        }
        if outcomes.count > 1 {
            expect(outcomes.allSatisfy { $0 == outcomes[0] }, cell, "stable", "the verdict changed between runs: \(outcomes)")
        }
    }

    /// A cell's check: every failed check fails the test, named by cell and check.
    private func expect(_ condition: Bool, _ cell: String, _ check: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        if !condition { XCTFail("\(cell) | \(check): \(message)", file: file, line: line) }
    }

    /// Every matrix peer starts on loopback ports, reports itself running, and stop ends each of
    /// its processes by PID and removes its instance directory.
    func testThePeersStartAndStopByPID() throws {
        for script in ["node.sh", "gnutls.sh", "go.sh", "python_pha.sh", "java.sh", "lighttpd.sh"] {
            let peer = try InteropPeer(script)
            let pids = peer["PIDS"].split(separator: " ").compactMap { pid_t(String($0)) }
            XCTAssertFalse(pids.isEmpty, "\(script): no PIDS line")
            let ports = peer.values.filter { $0.key.hasSuffix("_PORT") }.compactMap { Int($0.value) }
            XCTAssertFalse(ports.isEmpty, "\(script): no port")
            for port in ports { XCTAssertNotNil(try? TCP.connect(host: "127.0.0.1", port: port, deadline: .after(2)), "\(script): port \(port) closed") }
            let status = Subprocess.run("/bin/bash", [peer.script, "status", "--dir", peer["DIR"]])
            XCTAssertEqual(status.status, 0, "\(script): \(status.stdout)")
            XCTAssertTrue(status.stdout.contains("RUNNING=1"), status.stdout)
            peer.stop()
            for pid in pids {
                // A zombie (not yet reaped by whoever inherited it) has stopped too.
                let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: ")").last?.split(separator: " ").first
                XCTAssertTrue(kill(pid, 0) != 0 || state == "Z", "\(script): process \(pid) survived stop (state \(state.map(String.init) ?? "unknown"))")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: peer["DIR"]), "\(script): \(peer["DIR"]) not removed")
        }
    }

    func testNodeJS() throws { try runMatrix("node") }
    func testGnuTLS() throws { try runMatrix("gnutls") }
    func testGoNetHTTP() throws { try runMatrix("go") }
    func testPythonSSLPostHandshakeAuth() throws { try runMatrix("python") }
    func testJavaJSSE() throws { try runMatrix("java") }
    func testLighttpd() throws { try runMatrix("lighttpd") }
}

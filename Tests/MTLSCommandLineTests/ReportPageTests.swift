import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSHTTP
import MTLSTrust
import MTLSTestServer

/// The HTML reports' generator: pages drawn from probe JSON, every value escaped by the one
/// escaper, the policy that allows only the page's own blocks, and the `report` command.
/// (scripts/report-browser-test.sh loads the pages in Chromium.)
final class ReportPageTests: XCTestCase {
    private let hostileSubject = "CN=<script>document.body.dataset.pwned=1</script>,O=<img src=x onerror=\"document.body.dataset.pwned=2\">"

    private func record(_ json: String) throws -> ReportRecord { try ReportRecord.decode(Array(json.utf8)) }

    private let renegotiationRecord = """
        {"schemaVersion":2,"url":"https://iis.example/secure","connection":{"address":"192.0.2.1:443","handshakeFinished":true,"tlsVersion":"TLSv1.2",
        "cipher":"ECDHE-RSA-AES128-GCM-SHA256","resumed":false,"secureRenegotiation":true,"renegotiationResumed":false,"renegotiations":1,"alerts":[]},
        "serverChain":[{"depth":0,"subject":"CN=iis.example","issuer":"CN=Issuing CA","notAfter":"2027-01-01T00:00:00Z","key":"RSA 2048"},
        {"depth":1,"subject":"CN=Issuing CA","issuer":"CN=Root","notAfter":"2030-01-01T00:00:00Z","key":"RSA 4096"}],
        "trust":{"trusted":true,"summary":"ok","findings":[]},
        "clientCertificate":{"requested":true,"requestPhases":["renegotiation"],"requests":[{"phase":"renegotiation","acceptedCANames":[],"sent":null,"hadNoIdentity":true,"identityFits":false}]},
        "http":[{"kind":"initial","method":"GET","url":"https://iis.example/secure","status":403,"substatus":7,"meaning":"IIS 403.7: client certificate required","authSchemes":[]}],
        "verdict":{"ok":false,"causes":[{"rule":"no-identity","cause":"the server asked for a client certificate and none was given","fix":"pass your identity with --p12 FILE"}],"warnings":[]},
        "events":[
        {"kind":"message","sentByUs":true,"name":"ClientHello","phase":"handshake","line":"> ClientHello"},
        {"kind":"message","sentByUs":false,"name":"ServerHello","phase":"handshake","line":"< ServerHello"},
        {"kind":"handshakeFinished","phase":"handshake","version":"TLSv1.2","resumed":false,"line":"handshake done"},
        {"kind":"httpRequest","method":"GET","target":"/secure","line":"> GET /secure"},
        {"kind":"message","sentByUs":false,"name":"HelloRequest","phase":"renegotiation","line":"< HelloRequest"},
        {"kind":"message","sentByUs":false,"name":"CertificateRequest","phase":"renegotiation","line":"< CertificateRequest"},
        {"kind":"message","sentByUs":true,"name":"Certificate","phase":"renegotiation","line":"> Certificate (empty)"},
        {"kind":"alert","sentByUs":false,"level":"warning","description":"close notify","line":"< alert"},
        {"kind":"httpResponse","status":403,"reason":"Forbidden","line":"< 403"}],
        "exitCode":1}
        """

    func testTheDiagramHasOneStepPerEventInOrderWithItsSender() throws {
        let record = try record(renegotiationRecord)
        let steps = ProbeReportPage.steps(record.events ?? [])
        XCTAssertEqual(steps.map(\.kind), ["message", "message", "handshakeFinished", "httpRequest", "message", "message", "message", "alert", "httpResponse"])
        XCTAssertEqual(steps.map(\.direction), [.toServer, .toClient, .note, .toServer, .toClient, .toClient, .toServer, .toClient, .toClient])
        XCTAssertEqual(steps[5].tone, "request", "the CertificateRequest stands out")
        XCTAssertEqual(steps[3].label, "GET /secure")
        XCTAssertEqual(steps[8].label, "403 Forbidden")
        let page = ProbeReportPage.html(record)
        XCTAssertEqual(page.components(separatedBy: "<g class=\"ev ").count - 1, 9)
        XCTAssertTrue(page.contains("data-kind=\"alert\" data-from=\"server\""), page)
        XCTAssertTrue(page.contains("yes, after the request, by TLS 1.2 renegotiation"))
        XCTAssertTrue(page.contains("fix: pass your identity with --p12 FILE"))
        XCTAssertTrue(page.contains("403.7"))
        XCTAssertTrue(page.contains("Verdict: FAILED (exit 1)"))
    }

    func testTheProbePageStatesNoMoreThanTheJSON() throws {
        // Without a chain, a trust verdict or HTTP, the page has none of those sections.
        let page = ProbeReportPage.html(
            try record(
                #"{"url":"https://down.example/","connection":{"handshakeFinished":false,"alerts":[]},"http":[],"verdict":{"ok":false,"causes":[],"warnings":[]},"events":[],"exitCode":4}"#
            ))
        XCTAssertFalse(page.contains("id=\"chain\""))
        XCTAssertFalse(page.contains("id=\"http\""))
        XCTAssertFalse(page.contains("trusted"))
        XCTAssertTrue(page.contains("No events were logged"))
    }

    func testServerValuesAreEscapedEverywhere() throws {
        var json = renegotiationRecord.replacingOccurrences(of: "CN=iis.example\"", with: "\(hostileSubject.replacingOccurrences(of: "\"", with: "\\\""))\"")
        json = json.replacingOccurrences(of: "\"reason\":\"Forbidden\"", with: "\"reason\":\"<svg onload=alert(1)>\"")
        json = json.replacingOccurrences(of: "\"authSchemes\":[]", with: "\"authSchemes\":[\"Basic realm=\\\"<script>x</script>\\\"\"]")
        let page = ProbeReportPage.html(try record(json))
        for markup in ["<script>document", "<img", "<svg onload", "<script>x"] { XCTAssertFalse(page.contains(markup), "\(markup) unescaped") }
        XCTAssertTrue(page.contains("CN=&lt;script&gt;document.body.dataset.pwned=1&lt;/script&gt;"))
        XCTAssertTrue(page.contains("&lt;svg onload=alert(1)&gt;"))
        XCTAssertEqual(page.components(separatedBy: "<script>").count - 1, 1, "only the page's own script block")
        // The same escaper as the XML property lists: one implementation.
        XCTAssertEqual(HTMLPage.text("a<b>&\"'"), XMLText.escape("a<b>&\"'"))
    }

    func testTheHostileFixtureSubjectIsShownAsText() throws {
        let certificate = try CertificateLoader.certificates(atPath: Fixtures.path("hostile/server.pem"))[0]
        XCTAssertTrue(certificate.subject.contains("CN=\\<script\\>document"), certificate.subject)
        let chain = CertificateDescription.json(certificate, depth: 0).serialized()
        let page = ProbeReportPage.html(try record(#"{"url":"https://h.example/","serverChain":[\#(chain)],"verdict":{"ok":true},"events":[],"exitCode":0}"#))
        XCTAssertFalse(page.contains("<script>document"))
        XCTAssertFalse(page.contains("<img"))
        XCTAssertTrue(page.contains(XMLText.escape(certificate.subject)))
    }

    func testThePolicyAllowsExactlyThePagesOwnBlocks() throws {
        let page = FleetReportPage.html([], now: Date(timeIntervalSince1970: 1_780_272_000), sources: ["x.jsonl"])
        let policy = try XCTUnwrap(page.firstMatch(of: /content="(default-src 'none';[^"]*)"/)).1
        XCTAssertTrue(policy.contains("script-src '\(HTMLPage.hash(FleetReportPage.script))'"), String(policy))
        XCTAssertTrue(policy.contains("style-src '\(HTMLPage.hash(HTMLPage.baseStyle + FleetReportPage.style))'"))
        XCTAssertFalse(page.contains("http://") || page.contains("https://"), "nothing external")
        // sha256 of "" (a known value): the hash is of the exact block text.
        XCTAssertEqual(HTMLPage.hash(""), "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
    }

    private func fleetLine(_ target: String, exit: Int, tls: String?, phase: String?, trusted: Bool?, notAfter: String?, pins: Bool? = nil) -> String {
        var pairs = ["\"target\":\"\(target)\"", "\"exitCode\":\(exit)"]
        if let tls { pairs.append(#""connection":{"handshakeFinished":true,"tlsVersion":"\#(tls)","alerts":[]}"#) }
        if let phase { pairs.append(#""clientCertificate":{"requested":true,"requestPhases":["\#(phase)"],"requests":[]}"#) }
        if let trusted {
            pairs.append(
                #""trust":{"trusted":\#(trusted),"summary":"\#(trusted ? "ok" : "untrustedRoot")","findings":\#(trusted ? "[]" : #"[{"depth":0,"reason":"unknown root"}]"#)}"#)
        }
        if let notAfter { pairs.append(#""serverChain":[{"subject":"CN=\#(target)","issuer":"CN=CA","notAfter":"\#(notAfter)"}]"#) }
        if let pins { pairs.append(#""pins":{"satisfied":\#(pins),"presented":["sha256/AAAA"],"matched":[]}"#) }
        pairs.append(#""verdict":{"ok":\#(exit == 0),"causes":\#(exit == 0 ? "[]" : #"[{"rule":"r","cause":"c","fix":"f"}]"#)}"#)
        return "{" + pairs.joined(separator: ",") + "}"
    }

    func testFleetSummaryCountsFromTheRecords() throws {
        let now = Date(timeIntervalSince1970: 1_780_272_000)  // 2026-06-01
        let lines = [
            fleetLine("a:443", exit: 0, tls: "TLSv1.3", phase: nil, trusted: true, notAfter: "2026-06-20T00:00:00Z", pins: true),
            fleetLine("b:443", exit: 1, tls: "TLSv1.2", phase: "renegotiation", trusted: true, notAfter: "2026-08-01T00:00:00Z", pins: false),
            fleetLine("c:443", exit: 1, tls: "TLSv1.1", phase: "handshake", trusted: false, notAfter: "2026-01-01T00:00:00Z"),
            fleetLine("d:443", exit: 4, tls: nil, phase: nil, trusted: nil, notAfter: nil),
        ]
        let rows = try lines.map { FleetRow(try record($0)) }
        let s = FleetReportPage.summary(rows, now: now)
        XCTAssertEqual([s.endpoints, s.ok, s.refused, s.unreachable], [4, 1, 2, 1])
        XCTAssertEqual([s.askDuringHandshake, s.askAfterRequest, s.oldTLS, s.untrusted], [1, 1, 1, 1])
        XCTAssertEqual([s.expired, s.within30, s.within90], [1, 1, 1])
        XCTAssertEqual([s.pinsChecked, s.pinDrift], [2, 1])
        let page = FleetReportPage.html(rows, now: now, sources: ["f.jsonl"])
        XCTAssertTrue(page.contains("<table id=\"client-certs\""))
        XCTAssertEqual(page.components(separatedBy: "<tr><td class=\"mono\">").count - 1, 4 + 2 + 1 + 1 + 1, "all, asking, old TLS, trust problems, pin drift")
        XCTAssertTrue(page.contains("<svg id=\"timeline\""))
        XCTAssertTrue(page.contains("data-count=\"pin-drift\"><b>1</b>"))
        XCTAssertTrue(page.contains("<p class=\"filter\" hidden>"), "the filters appear only with the script")
    }

    func testReportCommandMergesShardsAndShowsEachEndpointOnce() throws {
        let directory = try TemporaryDirectory(self)
        let one = try directory.write("shard-1.jsonl", text: fleetLine("a:443", exit: 0, tls: "TLSv1.3", phase: nil, trusted: true, notAfter: "2027-01-01T00:00:00Z") + "\n\n")
        let two = try directory.write(
            "shard-2.jsonl",
            text: [
                fleetLine("b:443", exit: 1, tls: "TLSv1.2", phase: "post-handshake", trusted: true, notAfter: nil),
                fleetLine("a:443", exit: 1, tls: "TLSv1.3", phase: nil, trusted: true, notAfter: nil),
            ].joined(separator: "\n"))
        let out = directory.file("fleet.html")
        let result = mtls(["report", one, two, "--out", out, "--at", fixedTime])
        XCTAssertEqual(result.exitCode, 0, result.description)
        XCTAssertTrue(result.stderr.contains("a:443 appears again in \(two) line 2"), result.stderr)
        let page = try String(contentsOfFile: out, encoding: .utf8)
        XCTAssertTrue(page.contains("data-count=\"endpoints\"><b>2</b>"), page)
        XCTAssertTrue(page.contains("data-count=\"ok\"><b>0</b>"), "the later record of a:443 is shown")
        // An existing page is kept without --force; a bad line is named.
        XCTAssertEqual(mtls(["report", one, "--out", out]).exitCode, 3)
        let bad = try directory.write("bad.jsonl", text: fleetLine("a:443", exit: 0, tls: nil, phase: nil, trusted: nil, notAfter: nil) + "\n{not json\n")
        let failed = mtls(["report", bad, "--out", directory.file("x.html")])
        XCTAssertEqual(failed.exitCode, 3, failed.description)
        XCTAssertTrue(failed.stderr.contains("\(bad) line 2: not JSON"), failed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("x.html")))
        XCTAssertEqual(mtls(["report", one]).exitCode, 2, "--out is required")
        // Another command's JSON is not a probe record.
        let verify = try directory.write("verify.json", text: #"{"schemaVersion":1,"trusted":true,"chain":[]}"# + "\n")
        let other = mtls(["report", verify, "--out", directory.file("y.html")])
        XCTAssertEqual(other.exitCode, 3, other.description)
        XCTAssertTrue(other.stderr.contains("\(verify) line 1: not a probe record: exitCode is missing"), other.stderr)
    }

    func testProbeReportIsWrittenFromTheSameJSON() throws {
        let configuration = TLSServerConfiguration(
            certificate: try CertificateLoader.certificates(atPath: Fixtures.path("server.pem"))[0], privateKey: try PrivateKey(bytes: try Fixtures.bytes("server.key")),
            chain: try CertificateLoader.certificates(atPath: Fixtures.path("intermediate-ca.pem")),
            clientCAs: try CertificateLoader.certificates(atPath: Fixtures.path("root-ca.pem")), sendsCANames: true, maximumVersion: .tls1_2)
        let server = try TestServer(configuration: TestServerConfiguration(tls: configuration, port: 0))
        try server.start()
        defer { server.stop() }
        let directory = try TemporaryDirectory(self)
        let page = directory.file("probe.html")
        let result = mtls(["probe", "https://localhost:\(server.boundPort)/secure", "--anchors", Fixtures.path("root-ca.pem"), "--at", fixedTime, "--json", "--report", page])
        XCTAssertEqual(result.exitCode, 1, result.description)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        let events = json["events"] as! [[String: Any]]
        let html = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertEqual(html.components(separatedBy: "<g class=\"ev ").count - 1, events.count)
        XCTAssertTrue(html.contains("data-kind=\"message\" data-from=\"server\"><title>"), html)
        XCTAssertTrue(html.contains(">CertificateRequest</text>"))
        XCTAssertTrue(html.contains(">403 Forbidden</text>"), html)
        // An existing page stops the probe before it connects.
        let again = mtls(["probe", "https://localhost:\(server.boundPort)/secure", "--report", page])
        XCTAssertEqual(again.exitCode, 3, again.description)
        XCTAssertTrue(again.stderr.contains("already exists; pass --force"), again.stderr)
    }

    func testExchangesOnEarlierConnectionsAreDrawnBeforeTheLog() throws {
        // A redirect to another origin: the first exchange ran on a connection whose log is not kept.
        let json = #"""
            {"url":"https://a.example/","http":[{"kind":"initial","method":"GET","url":"https://a.example/","status":302},
            {"kind":"redirect","method":"GET","url":"https://b.example/","status":200}],"verdict":{"ok":true},
            "events":[{"kind":"httpRequest","method":"GET","target":"/","line":"> GET /"},{"kind":"httpResponse","status":200,"reason":"OK","line":"< 200 OK"}],"exitCode":0}
            """#
        let record = try record(json)
        XCTAssertEqual(ProbeReportPage.earlierExchanges(record).map(\.status), [302])
        let page = ProbeReportPage.html(record)
        XCTAssertEqual(page.components(separatedBy: "<g class=\"hop ").count - 1, 2, "the earlier request and its answer")
        XCTAssertEqual(page.components(separatedBy: "<g class=\"ev ").count - 1, 2)
        XCTAssertTrue(page.contains("the connection whose log follows"))
    }

    func testFleetProbeWritesItsPageWhenTheFleetHasEnded() throws {
        let configuration = TLSServerConfiguration(
            certificate: try CertificateLoader.certificates(atPath: Fixtures.path("server.pem"))[0], privateKey: try PrivateKey(bytes: try Fixtures.bytes("server.key")),
            chain: try CertificateLoader.certificates(atPath: Fixtures.path("intermediate-ca.pem")),
            clientCAs: try CertificateLoader.certificates(atPath: Fixtures.path("root-ca.pem")), sendsCANames: true)
        let server = try TestServer(configuration: TestServerConfiguration(tls: configuration, port: 0))
        try server.start()
        defer { server.stop() }
        let directory = try TemporaryDirectory(self)
        let targets = try directory.write(
            "targets.txt", text: "https://localhost:\(server.boundPort)/\nhttps://localhost:\(server.boundPort)/secure\nhttps:///secure\n")
        let page = directory.file("fleet.html")
        let result = mtls(["probe", "--targets", targets, "--anchors", Fixtures.path("root-ca.pem"), "--at", fixedTime, "--report", page])
        XCTAssertEqual(result.exitCode, 1, result.description)
        XCTAssertTrue(result.stderr.contains("Wrote \(page) (3 endpoints)"), result.stderr)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertTrue(html.contains("data-count=\"endpoints\"><b>3</b>"), html)
        XCTAssertTrue(html.contains("data-count=\"ok\"><b>1</b>"))
        XCTAssertTrue(html.contains("data-count=\"other\"><b>1</b>"), "the line without a host is a usage error")
        XCTAssertTrue(html.contains("<table id=\"client-certs\""))
    }
}

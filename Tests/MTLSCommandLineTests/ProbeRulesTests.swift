import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSHTTP

/// `probe`'s rules, each from logged facts and without sockets: the cause named, its exit code,
/// `verdict.ok` against the exit code, and that no sentence holds a placeholder.
final class ProbeRulesTests: XCTestCase {
    // MARK: Event-log building blocks

    private let tls13Handshake: [TLSEvent] = [
        .message(sentByUs: true, name: "ClientHello", phase: .handshake),
        .message(sentByUs: false, name: "ServerHello", phase: .handshake),
        .serverHello(version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384"),
        .message(sentByUs: false, name: "EncryptedExtensions", phase: .handshake),
    ]
    private let serverFlight13: [TLSEvent] = [
        .message(sentByUs: false, name: "Certificate", phase: .handshake),
        .message(sentByUs: false, name: "CertificateVerify", phase: .handshake),
        .message(sentByUs: false, name: "Finished", phase: .handshake),
    ]
    private func finished(_ version: String = "TLSv1.3", resumed: Bool = false) -> TLSEvent {
        .handshakeFinished(phase: .handshake, version: version, cipher: "TLS_AES_256_GCM_SHA384", resumed: resumed)
    }
    private let alice = ProbeFacts.SentIdentity(subject: "CN=client-alice", issuer: "CN=mtls Test Intermediate CA", label: "alice.p12")
    private let other = ProbeFacts.SentIdentity(subject: "CN=client-other", issuer: "CN=mtls Other Root CA", label: nil)

    private func facts(_ events: [TLSEvent], configure: (inout ProbeFacts) -> Void = { _ in }) -> ProbeFacts {
        var facts = ProbeFacts(host: "server.example:443")
        facts.events = events
        configure(&facts)
        return facts
    }

    /// Asserts the top cause and its exit code, and the contract around them.
    @discardableResult
    private func assertTop(_ facts: ProbeFacts, _ id: String, exit: Int32, contains fragments: [String] = [], file: StaticString = #filePath, line: UInt = #line) -> ProbeFinding? {
        let causes = ProbeRules.causes(facts)
        XCTAssertEqual(causes.first?.id, id, causes.map(\.id).description, file: file, line: line)
        XCTAssertEqual(ProbeRules.exitCode(causes), exit, file: file, line: line)
        for cause in causes + ProbeRules.warnings(facts) { assertNoPlaceholder(cause, file: file, line: line) }
        for fragment in fragments { XCTAssertTrue(causes.first?.text.contains(fragment) == true, "\(causes.first?.text ?? "no cause") lacks \(fragment)", file: file, line: line) }
        return causes.first
    }

    private func assertNoPlaceholder(_ finding: ProbeFinding, file: StaticString = #filePath, line: UInt = #line) {
        for text in [finding.text, finding.fix] {
            for bad in ["?", "()", "( ", " ,", "by ;", "by  ", "issued by ,", "''", "\"\""] {
                XCTAssertFalse(text.contains(bad), "placeholder \(bad) in: \(text)", file: file, line: line)
            }
            XCTAssertFalse(text.hasSuffix(" "), text, file: file, line: line)
        }
    }

    // MARK: Transport

    func testPlainHTTPOnThePortIsNamedAndMakesNoTLSClaims() {
        let facts = facts([.message(sentByUs: true, name: "ClientHello", phase: .handshake), .notTLS(prefix: "HTTP/")]) {
            $0.failure = .init(phase: .tlsHandshake, message: "the server did not answer with TLS (wrong version number)", hint: nil, alert: nil)
        }
        assertTop(facts, "plain-http", exit: 4, contains: ["plain HTTP"])
        XCTAssertEqual(ProbeAnalysis.tlsLine(facts, alpn: nil), "none: the port answered with plain HTTP")
        XCTAssertEqual(ProbeAnalysis.requestedLine(facts), "unknown: the handshake did not finish")
        XCTAssertNil(facts.finishedHandshake)
    }

    func testAStalledServerIsATimeoutWithoutAVersion() {
        let stalled = facts([.message(sentByUs: true, name: "ClientHello", phase: .handshake), .timeout(during: "TLS handshake", seconds: 10)]) {
            $0.failure = .init(phase: .timeout, message: "TLS handshake: the deadline passed", hint: nil, alert: nil)
        }
        assertTop(stalled, "timeout-handshake", exit: 4, contains: ["did not answer our ClientHello within 10 s"])
        XCTAssertEqual(ProbeAnalysis.tlsLine(stalled, alpn: nil), "handshake not finished (no ServerHello)")
        let silent = facts(tls13Handshake + serverFlight13 + [finished(), .httpRequest(method: "GET", target: "/"), .timeout(during: "the wait for the response", seconds: 10)]) {
            $0.failure = .init(phase: .timeout, message: "I/O: no data for 10 s (idle timeout)", hint: nil, alert: nil)
        }
        assertTop(silent, "timeout-response", exit: 4, contains: ["sent no HTTP response within 10 s"])
    }

    func testCipherIsKnownAfterATrustFailureButNoVersionIsClaimed() {
        let facts = facts(tls13Handshake + [.message(sentByUs: false, name: "Certificate", phase: .handshake), .alert(sentByUs: true, level: "fatal", description: "unknown ca")]) {
            $0.failure = .init(
                phase: .serverCertificate, message: "the server's certificate is not trusted: unable to get local issuer certificate", hint: "pass its CA with --anchors",
                alert: nil)
            $0.serverTrusted = false
        }
        assertTop(facts, "server-not-trusted", exit: 1)
        XCTAssertEqual(ProbeAnalysis.tlsLine(facts, alpn: nil), "handshake not finished (the ServerHello chose TLSv1.3, TLS_AES_256_GCM_SHA384)")
    }

    func testACertificateRequestSeenBeforeATrustFailureIsReportedAsRequested() {
        // TLS 1.3 sends CertificateRequest before its Certificate: it was received, never answered.
        let facts = facts(
            tls13Handshake + [.message(sentByUs: false, name: "CertificateRequest", phase: .handshake), .message(sentByUs: false, name: "Certificate", phase: .handshake)]
        ) { $0.failure = .init(phase: .serverCertificate, message: "the server's certificate is not trusted: certificate has expired", hint: nil, alert: nil) }
        XCTAssertEqual(ProbeAnalysis.requestedLine(facts), "yes, during the TLS handshake (the handshake failed before we answered it)")
    }

    // MARK: Client certificate

    func testACloseWithoutAlertAfterOurEmptyCertificateNamesTheMissingCertificate() {
        for (reaction, words) in [
            (TLSEvent.peerClosed(closeNotify: false), "closed the connection without an alert"),
            (.alert(sentByUs: false, level: "fatal", description: "decode error"), "\"decode error\""),
            (.alert(sentByUs: false, level: "fatal", description: "handshake failure"), "\"handshake failure\""),
            (.alert(sentByUs: false, level: "fatal", description: "certificate required"), "\"certificate required\""),
            (.alert(sentByUs: false, level: "fatal", description: "bad certificate"), "\"bad certificate\""),
            (.socketError(operation: "read", reason: "Connection reset by peer"), "closed the connection without an alert"),
        ] {
            let events: [TLSEvent] = [
                .message(sentByUs: true, name: "ClientHello", phase: .handshake), .message(sentByUs: false, name: "ServerHello", phase: .handshake),
                .serverHello(version: "TLSv1.2", cipher: "ECDHE-ECDSA-AES256-GCM-SHA384"), .message(sentByUs: false, name: "CertificateRequest", phase: .handshake),
                .message(sentByUs: false, name: "ServerHelloDone", phase: .handshake), .message(sentByUs: true, name: "Certificate (empty)", phase: .handshake), reaction,
            ]
            let facts = facts(events) {
                $0.requests = [.init(phase: .handshake, acceptedCANames: [], sent: nil, hadNoIdentity: true, identityFits: false)]
                $0.failure = .init(
                    phase: .tlsHandshake, message: "the server closed the connection without a TLS close_notify during the handshake", hint: "try --tls-max 1.2", alert: nil)
            }
            let top = assertTop(facts, "certificate-required", exit: 1, contains: ["requires a client certificate", words])
            XCTAssertFalse(top?.text.contains("--tls-max") == true)
            XCTAssertTrue(top?.fix.contains("--p12") == true)
        }
    }

    func testARefusedCertificateUnderTLS13IsARefusalNotABrokenPipe() {
        let events =
            tls13Handshake + [.message(sentByUs: false, name: "CertificateRequest", phase: .handshake)] + serverFlight13 + [
                .message(sentByUs: true, name: "Certificate", phase: .handshake), .message(sentByUs: true, name: "CertificateVerify", phase: .handshake),
                .message(sentByUs: true, name: "Finished", phase: .handshake), finished(), .httpRequest(method: "GET", target: "/"),
                .socketError(operation: "write", reason: "Broken pipe"), .alert(sentByUs: false, level: "fatal", description: "unknown ca"),
            ]
        let facts = facts(events) {
            $0.requests = [.init(phase: .handshake, acceptedCANames: ["CN=mtls Test Root CA"], sent: other, hadNoIdentity: false, identityFits: false)]
            $0.failure = .init(phase: .io, message: "the connection failed: Broken pipe", hint: nil, alert: nil)
        }
        let top = assertTop(
            facts, "certificate-refused", exit: 1,
            contains: ["refused our client certificate CN=client-other", "issued by CN=mtls Other Root CA", "answered with the TLS alert \"unknown ca\""])
        XCTAssertTrue(top?.text.contains("it accepts certificates issued by CN=mtls Test Root CA") == true)
        XCTAssertEqual(ProbeRules.causes(facts).filter { $0.id == "identity-does-not-fit" }.count, 0, "named once")
        // The alert read from the buffer first: the same verdict, word for word.
        var alertFirst = facts
        alertFirst.events.removeAll { if case .socketError = $0 { true } else { false } }
        XCTAssertEqual(assertTop(alertFirst, "certificate-refused", exit: 1), top)
    }

    /// A server that drops the connection after our certificate without an alert (Node.js and
    /// Java JSSE under TLS 1.3): whether we see its FIN, its reset on our read, or `EPIPE` on our
    /// request depends on timing only, so the verdict is the same sentence and exit code.
    func testACloseAResetAndABrokenPipeAfterOurCertificateAreOneVerdict() {
        let handshake =
            tls13Handshake + [.message(sentByUs: false, name: "CertificateRequest", phase: .handshake)] + serverFlight13
        for sent in [other, nil] {
            var verdicts: [ProbeFinding] = []
            for ending: [TLSEvent] in [
                [.peerClosed(closeNotify: false)],
                [.socketError(operation: "read", reason: "Connection reset by peer")],
                [.socketError(operation: "write", reason: "Broken pipe")],
                [.socketError(operation: "write", reason: "Connection reset by peer"), .peerClosed(closeNotify: false)],
            ] {
                let ours: TLSEvent = .message(sentByUs: true, name: sent == nil ? "Certificate (empty)" : "Certificate", phase: .handshake)
                let facts = facts(handshake + [ours, .message(sentByUs: true, name: "Finished", phase: .handshake), finished(), .httpRequest(method: "GET", target: "/")] + ending)
                {
                    $0.requests = [.init(phase: .handshake, acceptedCANames: ["CN=mtls Test Root CA"], sent: sent, hadNoIdentity: sent == nil, identityFits: false)]
                    $0.failure = .init(phase: .io, message: "the connection failed: Broken pipe", hint: nil, alert: nil)
                }
                let id = sent == nil ? "certificate-required" : "certificate-refused"
                if let top = assertTop(facts, id, exit: 1, contains: ["closed the connection without an alert"]) { verdicts.append(top) }
            }
            XCTAssertEqual(Set(verdicts.map(\.text)).count, 1, "\(verdicts.map(\.text))")
        }
    }

    func testTheSameRefusalHasTheSameExitCodeWhetherOrNotWeSentACertificate() {
        let base: [TLSEvent] = [.message(sentByUs: false, name: "CertificateRequest", phase: .handshake)]
        let empty = facts(
            base + [.message(sentByUs: true, name: "Certificate (empty)", phase: .handshake), .alert(sentByUs: false, level: "fatal", description: "handshake failure")]
        ) {
            $0.requests = [.init(phase: .handshake, acceptedCANames: [], sent: nil, hadNoIdentity: true, identityFits: false)]
            $0.failure = .init(phase: .tlsHandshake, message: "the server sent the TLS alert \"handshake failure\"", hint: nil, alert: "handshake failure")
        }
        let sent = facts(base + [.message(sentByUs: true, name: "Certificate", phase: .handshake), .alert(sentByUs: false, level: "fatal", description: "handshake failure")]) {
            $0.requests = [.init(phase: .handshake, acceptedCANames: [], sent: alice, hadNoIdentity: false, identityFits: true)]
            $0.failure = .init(phase: .tlsHandshake, message: "the server sent the TLS alert \"handshake failure\"", hint: nil, alert: "handshake failure")
        }
        XCTAssertEqual(ProbeRules.exitCode(ProbeRules.causes(empty)), 1)
        XCTAssertEqual(ProbeRules.exitCode(ProbeRules.causes(sent)), 1)
        // Without CA names the sentence does not claim a fit or an issuer list.
        let text = ProbeRules.causes(sent).first?.text ?? ""
        XCTAssertFalse(text.contains("accepts certificates issued by"), text)
    }

    func testAServerThatResumedInTheRenegotiationIsNamedAsTheCause() {
        let events: [TLSEvent] = [
            .message(sentByUs: true, name: "ClientHello", phase: .handshake), .serverHello(version: "TLSv1.2", cipher: "ECDHE-RSA-AES128-GCM-SHA256"),
            .handshakeFinished(phase: .handshake, version: "TLSv1.2", cipher: "ECDHE-RSA-AES128-GCM-SHA256", resumed: false),
            .httpRequest(method: "GET", target: "/secure"), .message(sentByUs: false, name: "HelloRequest", phase: .renegotiation),
            .message(sentByUs: true, name: "ClientHello", phase: .renegotiation), .message(sentByUs: false, name: "ServerHello", phase: .renegotiation),
            .message(sentByUs: false, name: "Finished", phase: .renegotiation), .message(sentByUs: true, name: "Finished", phase: .renegotiation),
            .handshakeFinished(phase: .renegotiation, version: "TLSv1.2", cipher: "ECDHE-RSA-AES128-GCM-SHA256", resumed: true),
            .httpResponse(status: 403, reason: "Forbidden"),
        ]
        let facts = facts(events) {
            $0.finalStatus = 403
            $0.finalReason = "Forbidden"
            $0.exchanges = [.init(kind: "initial", status: 403, answeredWith: nil, offered: [])]
        }
        assertTop(facts, "renegotiation-resumed", exit: 1, contains: ["resumed the TLS session"])
        XCTAssertNotEqual(ProbeAnalysis.requestedLine(facts), "no: the server never asked on this connection")
    }

    func testARequiredPostHandshakeRequestIsExplainedAsPostHandshake() {
        let events =
            tls13Handshake + serverFlight13 + [
                finished(), .httpRequest(method: "GET", target: "/secure"), .message(sentByUs: false, name: "CertificateRequest", phase: .postHandshake),
                .message(sentByUs: true, name: "Certificate (empty)", phase: .postHandshake), .httpResponse(status: 403, reason: "Forbidden"),
            ]
        let facts = facts(events) {
            $0.requests = [.init(phase: .postHandshake, acceptedCANames: ["CN=mtls Test Root CA"], sent: nil, hadNoIdentity: true, identityFits: false)]
            $0.finalStatus = 403
            $0.exchanges = [.init(kind: "initial", status: 403, answeredWith: nil, offered: [])]
        }
        let top = assertTop(facts, "certificate-required-403", exit: 1, contains: ["post-handshake authentication"])
        XCTAssertFalse(top?.text.contains("in the handshake") == true)
    }

    func testAnOptionalRequestAnsweredWith200IsAWarningAndOkMatchesTheExitCode() {
        let facts = facts(tls13Handshake + serverFlight13 + [finished()]) {
            $0.requests = [.init(phase: .handshake, acceptedCANames: [], sent: nil, hadNoIdentity: true, identityFits: false)]
            $0.finalStatus = 200
            $0.exchanges = [.init(kind: "initial", status: 200, answeredWith: nil, offered: [])]
            $0.overriddenProblems = ["certificate has expired"]
        }
        XCTAssertEqual(ProbeRules.causes(facts), [])
        XCTAssertEqual(ProbeRules.exitCode(ProbeRules.causes(facts)), 0)
        XCTAssertEqual(ProbeRules.warnings(facts).map(\.id), ["insecure-overridden", "optional-certificate-not-sent"])
    }

    // MARK: HTTP and credentials

    func testAnNTLMLogin401WithoutChannelBindingIsExtendedProtection() {
        let facts = facts(tls13Handshake + serverFlight13 + [finished()]) {
            $0.user = "alice"
            $0.finalStatus = 401
            $0.exchanges = [
                .init(kind: "initial", status: 401, answeredWith: nil, offered: ["NTLM", "Negotiate"]),
                .init(kind: "authentication", status: 401, answeredWith: "NTLM", offered: ["NTLM"], channelBindingSent: false),
                .init(kind: "authentication", status: 401, answeredWith: "NTLM", offered: ["NTLM", "Negotiate"], channelBindingSent: false),
            ]
            $0.failure = .init(phase: .auth, message: "the server refused the NTLM credentials for user 'alice' (401 again after one answer)", hint: nil, alert: nil)
        }
        let top = assertTop(facts, "epa-channel-binding", exit: 1, contains: ["Extended Protection", "no TLS channel binding", "'alice'"])
        XCTAssertTrue(top?.fix.contains("Accept") == true)
        XCTAssertFalse(top?.text.contains("--no-channel-binding") == true)
        // Left out on purpose (--no-channel-binding): the fix is to send it.
        var withheld = facts
        withheld.channelBindingDisabled = true
        let named = assertTop(withheld, "epa-channel-binding", exit: 1, contains: ["no TLS channel binding (--no-channel-binding)"])
        XCTAssertTrue(named?.fix.hasPrefix("retry without --no-channel-binding") == true, named?.fix ?? "")
        // With a binding sent (or not known), it is a plain refusal.
        var bound = facts
        bound.exchanges = bound.exchanges.map {
            var exchange = $0
            if exchange.answeredWith != nil { exchange.channelBindingSent = true }
            return exchange
        }
        assertTop(bound, "credentials-refused", exit: 1)
        var unknown = facts
        unknown.exchanges = unknown.exchanges.map {
            var exchange = $0
            exchange.channelBindingSent = nil
            return exchange
        }
        assertTop(unknown, "credentials-refused", exit: 1)
    }

    func testAuthBasicAgainstADigestPathSuggestsAuthDigest() {
        let facts = facts(tls13Handshake + serverFlight13 + [finished()]) {
            $0.user = "mtls"
            $0.allowedSchemes = ["basic"]
            $0.finalStatus = 401
            $0.exchanges = [.init(kind: "initial", status: 401, answeredWith: nil, offered: ["Digest"])]
        }
        let top = assertTop(facts, "auth-scheme-excluded", exit: 1, contains: ["--auth basic excludes it"])
        XCTAssertEqual(top?.fix, "retry with --auth digest (or --auth any)")
        XCTAssertFalse(top?.fix.contains("--user") == true)
        var noUser = facts
        noUser.user = nil
        assertTop(noUser, "credentials-wanted", exit: 1)
    }

    func testAConnectFailureIsANetworkFailureWithItsFix() {
        let facts = facts([.message(sentByUs: true, name: "ClientHello", phase: .handshake)]) {
            $0.failure = .init(phase: .connect, message: "connection refused by 127.0.0.1:1", hint: nil, alert: nil)
        }
        let top = assertTop(facts, "failure-connect", exit: 4)
        XCTAssertEqual(top?.fix, "check the address and port, and that the server is running")
    }

    // MARK: The page

    func testThePageTitleAndFirstLineAreDecodedFromTheirCharset() {
        let sjis: [UInt8] =
            Array("<html><head><title>".utf8) + [0x83, 0x65, 0x83, 0x58, 0x83, 0x67] + Array("</title></head><body><p>".utf8) + [0x82, 0xB1, 0x82, 0xF1]
            + Array("</p></body></html>".utf8)
        let page = ProbePage(body: sjis, mediaType: MediaType("text/html; charset=Shift_JIS"))
        XCTAssertEqual(page.title, "テスト")
        XCTAssertEqual(page.firstLine, "こん")
        XCTAssertEqual(page.charset, "Shift_JIS")
        let latin = ProbePage(
            body: Array("<title>Caf".utf8) + [0xE9] + Array("</title><h1>Men".utf8) + [0xFC] + Array("</h1>".utf8), mediaType: MediaType("text/html; charset=windows-1252"))
        XCTAssertEqual(latin.title, "Café")
        XCTAssertEqual(latin.firstLine, "Menü")
        let euc = ProbePage(body: [0xA4, 0xB3, 0xA4, 0xF3], mediaType: MediaType("text/plain; charset=EUC-JP"))
        XCTAssertEqual(euc.firstLine, "こん")
        XCTAssertNil(euc.title)
    }
}

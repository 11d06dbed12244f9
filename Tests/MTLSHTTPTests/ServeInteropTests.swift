import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestServer

/// The IIS-like test server against independent clients: curl, `openssl s_client` and Python's
/// `ssl`/`http.client` — renegotiation and post-handshake auth observed, each 403.x reproduced.
final class ServeInteropTests: XCTestCase {
    private func run(_ executable: String, _ arguments: [String], stdin: String = "", timeout: TimeInterval = 20) throws -> (status: Int32, out: String, err: String) {
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw XCTSkip("\(executable) is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = HTTPFixtures.testCerts
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, out, err)
    }

    private func curl(_ server: TestServer, _ path: String, _ extra: [String]) throws -> (status: Int32, out: String, err: String) {
        try run(
            "/usr/bin/curl",
            ["-sS", "-i", "--cacert", "root-ca.pem", "--resolve", "localhost:\(server.boundPort):127.0.0.1", "https://localhost:\(server.boundPort)\(path)"] + extra)
    }

    func testCurlFollowsTLS12RenegotiationAndTLS13PostHandshakeAuth() throws {
        for version in ["1.2", "1.3"] {
            let log = LogLines()
            let server = try HTTPFixtures.startServer(log: { log.append($0) })
            defer { server.stop() }
            let maxFlag = version == "1.2" ? ["--tls-max", "1.2"] : ["--tlsv1.3"]
            let ok = try curl(server, "/secure", maxFlag + ["--cert", "client-alice-chain.pem", "--key", "client-alice.key"])
            XCTAssertTrue(ok.out.hasPrefix("HTTP/1.1 200"), "TLS \(version): \(ok.out)\(ok.err)")
            XCTAssertTrue(ok.out.contains("subject: CN=client-alice"), ok.out)
            let refused = try curl(server, "/secure", maxFlag)
            XCTAssertTrue(refused.out.hasPrefix("HTTP/1.1 403"), refused.out)
            XCTAssertTrue(refused.out.contains("X-MTLS-Substatus: 403.7"), refused.out)
            XCTAssertTrue(refused.out.contains("HTTP Error 403.7"), refused.out)
            let phase = version == "1.2" ? "asked by renegotiation" : "asked by post-handshake"
            XCTAssertTrue(log.lines.contains { $0.contains("200") && $0.contains(phase) }, "\(log.lines)")
        }
    }

    func testCurlSeesEach403Substatus() throws {
        let server = try HTTPFixtures.startServer(crls: ["crls.pem"])
        defer { server.stop() }
        let cases: [([String], String)] = [
            (["--cert", "client-other.pem", "--key", "client-other.key"], "403.16"),
            (["--cert", "client-alice-expired.pem", "--key", "client-alice-expired.key"], "403.17"),
            (["--cert", "client-revoked.pem", "--key", "client-revoked.key"], "403.13"),
        ]
        for (flags, substatus) in cases {
            for version in [["--tls-max", "1.2"], ["--tlsv1.3"]] {
                let result = try curl(server, "/secure", version + flags)
                XCTAssertTrue(result.out.contains("X-MTLS-Substatus: \(substatus)"), "\(version) \(flags): \(result.out)\(result.err)")
            }
        }
        let good = try curl(server, "/secure", ["--cert", "client-alice-chain.pem", "--key", "client-alice.key"])
        XCTAssertTrue(good.out.hasPrefix("HTTP/1.1 200"), "a good certificate passes the CRL check: \(good.out)")
    }

    func testPlainHTTPOnTheTLSPortGets403Point4() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let result = try run("/usr/bin/curl", ["-sS", "-i", "http://127.0.0.1:\(server.boundPort)/secure"])
        XCTAssertTrue(result.out.contains("403.4"), result.out + result.err)
    }

    func testHTTPSysModeGives0x80070032ToCurlOnTLS13() throws {
        let server = try HTTPFixtures.startServer(httpSys: true)
        defer { server.stop() }
        let result = try curl(server, "/secure", ["--tlsv1.3", "--cert", "client-alice-chain.pem", "--key", "client-alice.key"])
        XCTAssertTrue(result.out.hasPrefix("HTTP/1.1 500"), result.out)
        XCTAssertTrue(result.out.contains("0x80070032"), result.out)
    }

    func testBasicAndDigestWorkWithCurl() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        XCTAssertTrue(try curl(server, "/basic", ["-u", "mtls:mtls"]).out.hasPrefix("HTTP/1.1 200"))
        let wrong = try curl(server, "/basic", ["-u", "mtls:nope"]).out
        XCTAssertTrue(wrong.hasPrefix("HTTP/1.1 401") && wrong.contains("401.1"), wrong)
        let digest = try curl(server, "/digest", ["--digest", "-u", "mtls:mtls"]).out
        XCTAssertTrue(digest.contains("HTTP/1.1 200"), digest)
    }

    func testOpenSSLSClientObservesTheRenegotiation() throws {
        let server = try HTTPFixtures.startServer(maximumVersion: .tls1_2)
        defer { server.stop() }
        let request = "GET /secure HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        let result = try run(
            "/usr/bin/openssl",
            [
                "s_client", "-connect", "127.0.0.1:\(server.boundPort)", "-servername", "localhost", "-CAfile", "root-ca.pem", "-cert", "client-alice.pem", "-key",
                "client-alice.key", "-cert_chain", "intermediate-ca.pem", "-quiet", "-msg", "-ign_eof",
            ], stdin: request)
        XCTAssertTrue(result.out.contains("HTTP/1.1 200"), result.out + result.err)
        XCTAssertTrue((result.out + result.err).contains("HelloRequest"), "s_client -msg shows the server's HelloRequest")
    }

    func testPythonSSLWithPostHandshakeAuthLogsIn() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let script = """
            import ssl, http.client, sys
            ctx = ssl.create_default_context(cafile="root-ca.pem")
            ctx.post_handshake_auth = True
            ctx.load_cert_chain("client-alice-chain.pem", "client-alice.key")
            c = http.client.HTTPSConnection("localhost", \(server.boundPort), context=ctx)
            c.request("GET", "/secure")
            r = c.getresponse()
            print(r.status, r.getheader("X-Client-Subject"))
            c2 = http.client.HTTPSConnection("localhost", \(server.boundPort), context=ssl.create_default_context(cafile="root-ca.pem"))
            c2.request("GET", "/secure")
            r2 = c2.getresponse()
            print(r2.status, r2.getheader("X-MTLS-Substatus"))
            """
        let result = try run("/usr/bin/python3", ["-c", script])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("200 CN=client-alice"), result.out + result.err)
        XCTAssertTrue(result.out.contains("403 403.7"), result.out)
    }

    func testShiftJISPageIsServedInCP932() throws {
        let server = try HTTPFixtures.startServer()
        defer { server.stop() }
        let client = try HTTPFixtures.client()
        let response = try client.send(HTTPRequest(url: try HTTPFixtures.url(server, "/sjis")))
        XCTAssertEqual(response.headers["Content-Type"], "text/html; charset=Shift_JIS")
        let expected = Array("日本語".data(using: .shiftJIS) ?? Data())
        XCTAssertFalse(expected.isEmpty)
        XCTAssertNotNil(response.body.firstRange(of: expected), "the page holds 日本語 in Shift_JIS bytes")
        client.closeIdleConnections()
    }
}

final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) {
        lock.lock()
        stored.append(line)
        lock.unlock()
    }
    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

import Foundation
import MTLSTestServer
import MTLSTrust
import XCTest

@testable import MTLSHTTP

/// `mtls serve`'s server under idle and slow clients (issue 38): bounded connections with idle
/// reaping, one deadline for the handshake and for the request head, and normal requests still
/// answered while hundreds of such connections are held. Bounded in count and time, on loopback.
final class ServeUnderLoadTests: XCTestCase {
    private func startServer(_ adjust: (inout TestServerConfiguration) -> Void) throws -> TestServer {
        let tls = TLSServerConfiguration(
            certificate: try HTTPFixtures.certificates("server.pem")[0], privateKey: try HTTPFixtures.key("server.key"),
            chain: try HTTPFixtures.certificates("intermediate-ca.pem"), clientCAs: try HTTPFixtures.certificates("root-ca.pem"))
        var configuration = TestServerConfiguration(tls: tls, bindAddress: "127.0.0.1", port: 0)
        adjust(&configuration)
        let server = try TestServer(configuration: configuration)
        try server.start()
        addTeardownBlock { server.stop() }
        return server
    }

    /// A plain TCP connection to the server that sends `bytes` (nothing by default).
    private func rawConnection(_ port: Int, sending bytes: [UInt8] = []) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            close(fd)
            return -1
        }
        if !bytes.isEmpty { _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        return fd
    }

    /// True when the server closed `fd` (reads end of file or an error) within `seconds`.
    private func closedByServer(_ fd: Int32, within seconds: Double) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return true }
        }
        return false
    }

    private func normalRequest(_ server: TestServer) throws -> (status: Int, seconds: Double) {
        let client = try HTTPFixtures.client()
        let started = Date()
        let response = try client.send(HTTPRequest(url: try HTTPFixtures.url(server, "/")))
        return (response.status, Date().timeIntervalSince(started))
    }

    /// 300 idle connections (no TLS byte) from the same address: normal requests are answered
    /// at once, and the idle connections are closed.
    func testIdleConnectionsDoNotDenyService() throws {
        let server = try startServer {
            $0.maximumConnections = 128
            $0.maximumConnectionsPerClient = 96
        }
        var idle: [Int32] = []
        defer { idle.forEach { close($0) } }
        for _ in 0..<300 {
            let fd = rawConnection(server.boundPort)
            if fd >= 0 { idle.append(fd) }
        }
        XCTAssertGreaterThan(idle.count, 250)
        Thread.sleep(forTimeInterval: 1.5)  // older than pressureIdleTimeout
        for attempt in 0..<5 {
            let (status, seconds) = try normalRequest(server)
            XCTAssertEqual(status, 200, "request \(attempt)")
            XCTAssertLessThan(seconds, 3, "request \(attempt) took \(seconds) s")
        }
        // The idle connections held from the start were closed by the server (reaped or refused).
        XCTAssertTrue(closedByServer(idle[0], within: 3), "the oldest idle connection was reaped")
    }

    /// 100 slowloris connections (TLS done, a request head dribbled a byte at a time): each is
    /// closed when its head deadline passes, and normal requests are answered meanwhile.
    func testSlowRequestHeadsHaveOneDeadline() throws {
        let server = try startServer { $0.requestHeadTimeout = .seconds(2) }
        let client = try HTTPFixtures.client()
        var slow: [TLSConnection] = []
        for _ in 0..<100 {
            let connection = try client.tls.connect(host: "localhost", port: server.boundPort)
            try connection.write(Array("GET / HTTP/1.1\r\n".utf8), deadline: .after(5))
            slow.append(connection)
        }
        defer { slow.forEach { $0.close() } }
        let started = Date()
        var closed = Set<Int>()
        // A header byte every 200 ms would keep a per-read timeout fresh forever.
        while Date().timeIntervalSince(started) < 6 && closed.count < slow.count {
            for (index, connection) in slow.enumerated() where !closed.contains(index) {
                do throws(HTTPSError) {
                    try connection.write(Array("X".utf8), deadline: .after(1))
                } catch {
                    closed.insert(index)
                }
            }
            if Date().timeIntervalSince(started) > 0.5 && Date().timeIntervalSince(started) < 1.5 {
                let (status, seconds) = try normalRequest(server)
                XCTAssertEqual(status, 200)
                XCTAssertLessThan(seconds, 3)
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertEqual(closed.count, slow.count, "every slow head was cut off by its deadline")
        XCTAssertLessThan(Date().timeIntervalSince(started), 6)
    }

    /// More than a few blank lines before the request line end the connection.
    func testBlankLinesBeforeTheRequestLineAreBounded() throws {
        let server = try startServer { _ in }
        let client = try HTTPFixtures.client()
        let connection = try client.tls.connect(host: "localhost", port: server.boundPort)
        defer { connection.close() }
        try connection.write(Array(String(repeating: "\r\n", count: 100).utf8), deadline: .after(5))
        var buffer = [UInt8](repeating: 0, count: 4096)
        var text = ""
        while true {
            let n: Int
            do throws(HTTPSError) { n = try connection.read(into: &buffer, deadline: .after(5), idle: nil) } catch { break }
            if n == 0 { break }
            text += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 400"), text)
    }

    /// A request body above the server's bound is refused with 413, not buffered.
    func testRequestBodiesAreBounded() throws {
        let server = try startServer { $0.maximumBodySize = 64 << 10 }
        let client = try HTTPFixtures.client()
        let response = try client.send(HTTPRequest(method: "POST", url: try HTTPFixtures.url(server, "/"), body: [UInt8](repeating: 0x61, count: 1 << 20)))
        XCTAssertEqual(response.status, 413)
    }
}

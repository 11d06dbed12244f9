import Foundation
import XCTest
#if canImport(Glibc)
    import Glibc
#endif

@testable import MTLSHTTP
import MTLSTestSupport

/// Connection reuse decisions, header-name matching and the resolver cache: the behaviour behind
/// the keep-alive fast path (read ahead, one session store per connection, no Foundation string
/// search per response).
final class KeepAliveAndHeaderTests: XCTestCase {
    /// A server that answers every request on a connection with `response`, counting connections.
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() {
            lock.lock()
            value += 1
            lock.unlock()
        }
        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }

    private func server(answering response: String, connections: Counter) throws -> HostileServer {
        try HostileServer { connection in
            guard connection.handshake() else { return }
            connections.increment()
            while connection.readRequest() != nil {
                guard connection.send(response) else { return }
            }
        }
    }

    private func exchange(_ response: String, requests: Int) throws -> (reused: [Bool], connections: Int) {
        let connections = Counter()
        let server = try server(answering: response, connections: connections)
        defer { server.stop() }
        let client = try HostileServerTests.makeClient()
        var reused: [Bool] = []
        for _ in 0..<requests {
            let answer = try client.send(HTTPRequest(method: "GET", url: try server.url("/")))
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(String(decoding: answer.body, as: UTF8.self), "ok")
            reused.append(answer.reusedConnection)
        }
        client.closeIdleConnections()
        return (reused, connections.count)
    }

    func testKeptAliveConnectionIsReusedForEveryRequest() throws {
        let result = try exchange("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok", requests: 5)
        XCTAssertEqual(result.reused, [false, true, true, true, true])
        XCTAssertEqual(result.connections, 1)
    }

    func testCloseAmongTheConnectionOptionsEndsTheConnectionInAnyCaseAndPosition() throws {
        for header in ["close", "Close", "keep-alive, CLOSE", " Upgrade ,\tclose "] {
            let result = try exchange("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: \(header)\r\n\r\nok", requests: 3)
            XCTAssertEqual(result.reused, [false, false, false], "Connection: \(header)")
            XCTAssertEqual(result.connections, 3, "Connection: \(header)")
        }
    }

    func testAnOptionThatOnlyContainsTheWordCloseDoesNotEndTheConnection() throws {
        let result = try exchange("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: x-closed\r\n\r\nok", requests: 3)
        XCTAssertEqual(result.reused, [false, true, true])
    }

    func testAResponseAndCloseNotifyInOneReadAreNotMistakenForAReusableConnection() throws {
        // With read ahead, OpenSSL may hold the close_notify unprocessed after the response: the
        // reuse check must see it (SSL_has_pending), not only the socket.
        let connections = Counter()
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            connections.increment()
            guard connection.readRequest() != nil else { return }
            // Corked, the response and the close_notify leave in one segment and reach the client
            // together (sent apart, the close_notify may come after the client has checked the
            // connection, a race no client can win; then the POST fails, rightly).
            var on: Int32 = 1
            setsockopt(connection.fd, Int32(IPPROTO_TCP), TCP_CORK, &on, socklen_t(MemoryLayout<Int32>.size))
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            connection.closeNotify()
            var off: Int32 = 0
            setsockopt(connection.fd, Int32(IPPROTO_TCP), TCP_CORK, &off, socklen_t(MemoryLayout<Int32>.size))
            connection.awaitClose(5)
        }
        defer { server.stop() }
        let client = try HostileServerTests.makeClient()
        // POST: a request the client does not retry, so a wrongly reused connection is an error.
        for _ in 0..<3 {
            let answer = try client.send(HTTPRequest(method: "POST", url: try server.url("/"), body: Array("x=1".utf8)))
            XCTAssertEqual(answer.status, 200)
            XCTAssertFalse(answer.reusedConnection)
        }
        XCTAssertEqual(connections.count, 3)
    }

    func testAGetOnAConnectionTheServerJustClosedIsRetriedOnAFreshOne() throws {
        // Reused within a second, an idle connection is not probed with poll before an idempotent
        // request (HTTPSClient.unprobedReuseSeconds): the server that closed it without saying so
        // costs a retry on a fresh connection, never an error.
        let connections = Counter()
        let server = try HostileServer { connection in
            guard connection.handshake() else { return }
            connections.increment()
            guard connection.readRequest() != nil else { return }
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            connection.closeNotify()
        }
        defer { server.stop() }
        let client = try HostileServerTests.makeClient()
        for index in 0..<3 {
            let answer = try client.send(HTTPRequest(method: "GET", url: try server.url("/")))
            XCTAssertEqual(answer.status, 200, "request \(index)")
            XCTAssertEqual(answer.body, Array("ok".utf8), "request \(index)")
            XCTAssertFalse(answer.reusedConnection, "request \(index)")
        }
        XCTAssertEqual(connections.count, 3)
    }

    /// One connection per host, whichever of the two places it is kept in.
    func testTheIdlePoolKeepsOneConnectionPerHostWhateverTheOrder() {
        var pool = IdleConnections<String>()
        XCTAssertNil(pool.take("a"))
        XCTAssertNil(pool.put("a1", for: "a"))
        XCTAssertEqual(pool.put("a2", for: "a"), "a1", "the one replaced is handed back to be closed")
        XCTAssertNil(pool.put("b1", for: "b"))
        XCTAssertNil(pool.put("c1", for: "c"))
        XCTAssertEqual(pool.put("b2", for: "b"), "b1")
        XCTAssertEqual(pool.take("a"), "a2")
        XCTAssertNil(pool.take("a"))
        XCTAssertEqual(pool.take("c"), "c1")
        XCTAssertNil(pool.put("a3", for: "a"))
        XCTAssertEqual(Set(pool.removeAll()), ["a3", "b2"])
        XCTAssertNil(pool.take("b"))
        XCTAssertEqual(pool.removeAll(), [])
    }

    /// Peer addresses as the report names them: inet_ntop must say what getnameinfo says, and a
    /// scoped IPv6 address keeps its zone.
    func testPeerAddressesAreNamedAsGetnameinfoNamesThem() {
        func v4(_ text: String, _ port: UInt16) -> sockaddr_storage {
            var storage = sockaddr_storage()
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    address.pointee.sin_family = sa_family_t(AF_INET)
                    address.pointee.sin_port = port.bigEndian
                    _ = inet_pton(AF_INET, text, &address.pointee.sin_addr)
                }
            }
            return storage
        }
        func v6(_ text: String, _ port: UInt16, scope: UInt32 = 0) -> sockaddr_storage {
            var storage = sockaddr_storage()
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    address.pointee.sin6_family = sa_family_t(AF_INET6)
                    address.pointee.sin6_port = port.bigEndian
                    address.pointee.sin6_scope_id = scope
                    _ = inet_pton(AF_INET6, text, &address.pointee.sin6_addr)
                }
            }
            return storage
        }
        let cases: [(sockaddr_storage, String)] = [
            (v4("127.0.0.1", 443), "127.0.0.1:443"), (v4("10.200.3.4", 65535), "10.200.3.4:65535"), (v4("0.0.0.0", 1), "0.0.0.0:1"),
            (v6("::1", 8443), "[::1]:8443"), (v6("2001:db8::17:0:1", 443), "[2001:db8::17:0:1]:443"), (v6("::ffff:192.0.2.1", 80), "[::ffff:192.0.2.1]:80"),
        ]
        for (storage, expected) in cases {
            var address = storage
            var reference = storage
            XCTAssertEqual(SocketAddress.describe(&address), expected)
            XCTAssertEqual(SocketAddress.describe(&address), SocketAddress.describeByName(&reference))
        }
        var scoped = v6("fe80::1", 443, scope: 1)
        var scopedReference = scoped
        XCTAssertEqual(SocketAddress.describe(&scoped), SocketAddress.describeByName(&scopedReference))
        XCTAssertTrue(SocketAddress.describe(&scoped).contains("%"), "the zone is kept: \(SocketAddress.describe(&scoped))")
    }

    /// The 128-bit set against RFC 9110's list, for every byte.
    func testTokenBytesAreExactlyRFC9110sTchar() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        for byte in UInt8.min...UInt8.max {
            XCTAssertEqual(HTTPResponseParser.isTokenByte(byte), tchar.contains(byte), "byte \(byte)")
        }
    }

    func testHeaderNamesMatchWithoutRegardToASCIICase() {
        let headers: HTTPHeaders = ["Content-Length": "5", "set-cookie": "a=1", "SET-COOKIE": "b=2"]
        XCTAssertEqual(headers["content-length"], "5")
        XCTAssertEqual(headers["CONTENT-LENGTH"], "5")
        XCTAssertEqual(headers.values("Set-Cookie"), ["a=1", "b=2"])
        XCTAssertNil(headers["Content-Lengt"])
        XCTAssertNil(headers["Content-Length "])
        XCTAssertFalse(HTTPHeaders.sameName("a[", "A{"))  // 0x5B/0x7B differ by 0x20 but are not letters
        XCTAssertTrue(HTTPHeaders.sameName("ÄRGER", "ärger"))
        // The byte-wise comparison agrees with Unicode lowercasing on every pair, including names
        // whose lowercase is ASCII (the Kelvin sign) and prefixes of each other.
        let names = [
            "", "a", "A", "ab", "aB", "abc", "k", "K", "\u{212A}", "x\u{212A}", "xk", "xK", "ä", "Ä", "äb", "a[", "A{", "Content-Length", "content-length",
            "Content-Lengt", "Content-Length ", "İ", "i̇", "ß", "SS", "ss", "\u{1F600}", "A\u{301}", "a\u{301}", "á",
        ]
        for a in names {
            for b in names {
                XCTAssertEqual(HTTPHeaders.sameName(a, b), a.lowercased() == b.lowercased(), "\(a.debugDescription) vs \(b.debugDescription)")
            }
        }
    }

    func testNamesAreResolvedOnceAMinuteAndLiteralsNever() async throws {
        let first = try await Resolver.addresses(host: "localhost", port: 443, label: "localhost:443")
        XCTAssertFalse(first.isEmpty)
        XCTAssertTrue(Resolver.cachedNames.contains("localhost|443"))
        let second = try await Resolver.addresses(host: "LOCALHOST", port: 443, label: "localhost:443")
        XCTAssertEqual(first.map(\.length), second.map(\.length))
        _ = try await Resolver.addresses(host: "127.0.0.1", port: 443, label: "127.0.0.1:443")
        _ = try await Resolver.addresses(host: "[::1]", port: 443, label: "[::1]:443")
        XCTAssertFalse(Resolver.cachedNames.contains { $0.hasPrefix("127.0.0.1") || $0.hasPrefix("::1") })
        do {
            _ = try await Resolver.addresses(host: "no-such-host.invalid", port: 443, label: "no-such-host.invalid:443")
            XCTFail("an unresolvable name resolved")
        } catch {
            XCTAssertEqual(error.phase, .nameResolution)
        }
        XCTAssertFalse(Resolver.cachedNames.contains { $0.hasPrefix("no-such-host") }, "failures are not cached")
    }
}

import Foundation
import MTLSHTTP
import MTLSTrust
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// The async API: `try await` picks the async overloads, their errors are typed `HTTPSError` as in
/// the blocking API, and cancelling the task closes the connection at once instead of waiting for a
/// timeout. The server is a loopback TCP listener that never answers, so the client waits for the
/// ServerHello until something stops it: cancellation (phase `.cancelled`) or, if cancellation did
/// not reach the socket, the 60 s timeout (phase `.timeout`, which fails the test).
final class AsyncCancellationTests: XCTestCase {
    private final class SilentListener {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw XCTSkip("no socket") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard bound == 0, listen(fd, 8) == 0 else {
                close(fd)
                throw XCTSkip("cannot listen on loopback")
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }

    private func client() throws -> HTTPSClient {
        let anchors = try HTTPFixtures.certificates("root-ca.pem")
        return try HTTPSClient(configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors), timeouts: .uniform(.seconds(60))))
    }

    func testCancellingTheTaskClosesTheConnectionWithATypedCancelledError() async throws {
        let listener = try SilentListener()
        let client = try client()
        let request = HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/"))
        let task = Task { () -> HTTPSError.Phase? in
            do throws(HTTPSError) {
                _ = try await client.send(request)
                return nil
            } catch {
                return error.phase  // typed: HTTPSError, as the blocking overload throws
            }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let phase = await task.value
        XCTAssertEqual(phase, .cancelled)
    }

    func testALoginFlowStopsWhenItsTaskIsCancelled() async throws {
        let listener = try SilentListener()
        let session = LoginSession(client: try client())
        let request = HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/login"))
        let task = Task { () -> HTTPSError.Phase? in
            do throws(HTTPSError) {
                _ = try await session.send(request)
                return nil
            } catch {
                return error.phase
            }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let phase = await task.value
        XCTAssertEqual(phase, .cancelled)
    }

    func testATaskCancelledBeforeItStartsNeverConnects() async throws {
        let listener = try SilentListener()
        let client = try client()
        let request = HTTPRequest(url: try HTTPSURL("https://127.0.0.1:\(listener.port)/"))
        let task = Task { () -> HTTPSError.Phase? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(HTTPSError) {
                _ = try await client.send(request)
                return nil
            } catch {
                return error.phase
            }
        }
        let phase = await task.value
        XCTAssertEqual(phase, .cancelled)
    }
}

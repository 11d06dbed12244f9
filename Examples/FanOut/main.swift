// MTLSFanOut: a library user's fan-out through the public async API only: N concurrent
// `await client.send` in one task group (at most CONCURRENCY in flight), then one more send that
// is cancelled while it waits, which must end at once with the typed `.cancelled` error.
//
//   MTLSFanOut BASE_URL CA_PEM [COUNT [CONCURRENCY]]   e.g. https://localhost:8443 and the ca.pem
//                                                       of `mtls serve --pki-dir`
//
// Prints one line per step; the exit code is 0 when every send was answered 200 and the cancelled
// one ended as cancelled, 1 otherwise.

import Foundation
import MTLSHTTP
import MTLSTrust

/// A loopback port that accepts TCP connections and never answers: a stalled server.
func silentListener() -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = listen(fd, 4)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

func fanOut(base: String, caFile: String, count: Int, concurrency: Int) async throws -> Bool {
    let anchors = try CertificateLoader.certificates(atPath: caFile)
    let client = try HTTPSClient(configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors)))
    let url = try HTTPSURL("\(base)/")
    let began = Date()
    // At most `concurrency` sends in flight: the next one starts as one finishes.
    let statuses = await withTaskGroup(of: Int?.self) { group in
        var started = 0
        var all: [Int?] = []
        while started < min(concurrency, count) {
            group.addTask { try? await client.send(HTTPRequest(url: url)).status }
            started += 1
        }
        while let status = await group.next() {
            all.append(status)
            if started < count {
                group.addTask { try? await client.send(HTTPRequest(url: url)).status }
                started += 1
            }
        }
        return all
    }
    let seconds = Date().timeIntervalSince(began)
    let ok = statuses.filter { $0 == 200 }.count
    print("\(ok == count ? "ok  " : "FAIL") fan-out: \(ok) of \(count) sends answered 200, \(concurrency) at a time, in \(String(format: "%.2f", seconds)) s")

    // Cancellation: a send to a port that never answers the handshake, cancelled after 200 ms.
    let silent = silentListener()
    defer { close(silent.fd) }
    let stalled = try HTTPSURL("https://127.0.0.1:\(silent.port)/")
    let task = Task { () -> HTTPSError.Phase? in
        do throws(HTTPSError) {
            _ = try await client.send(HTTPRequest(url: stalled))
            return nil
        } catch {
            return error.phase
        }
    }
    try await Task.sleep(nanoseconds: 200_000_000)
    let cancelledAt = Date()
    task.cancel()
    let phase = await task.value
    let milliseconds = Int(Date().timeIntervalSince(cancelledAt) * 1000)
    let cancelled = phase == .cancelled
    print("\(cancelled ? "ok  " : "FAIL") cancel: the stalled send ended \(phase.map { "as \($0.rawValue)" } ?? "with an answer") \(milliseconds) ms after its task was cancelled")
    return ok == count && cancelled
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, !arguments[0].hasPrefix("-") else {
    print("usage: MTLSFanOut BASE_URL CA_PEM [COUNT [CONCURRENCY]]")
    exit(arguments.first == "--help" ? 0 : 2)
}
let count = arguments.count > 2 ? Int(arguments[2]) ?? 100 : 100
let concurrency = arguments.count > 3 ? Int(arguments[3]) ?? count : count
do {
    exit(try await fanOut(base: arguments[0], caFile: arguments[1], count: max(1, count), concurrency: max(1, concurrency)) ? 0 : 1)
} catch {
    print("FAIL \(error)")
    exit(1)
}

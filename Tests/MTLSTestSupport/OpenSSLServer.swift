import Foundation
import XCTest

/// `openssl s_server` on a loopback port the kernel picks, for the length of a test: the one
/// starter of the library's and the command line's tests.
///
/// The port is read from the server's "ACCEPT 127.0.0.1:PORT" line (`-accept 127.0.0.1:0`): a port
/// chosen by the test could be another process's listener, which a readiness probe would then
/// mistake for this server.
public final class OpenSSLServer: @unchecked Sendable {
    // @unchecked Sendable: `process` and `output` are set in init and only stopped afterwards
    // (stop is idempotent: a second SIGKILL of an ended process does nothing).
    public let port: Int
    private let process = Process()
    private let output = Pipe()

    /// Starts `s_server` with `TestCerts/`'s server certificate, key and intermediate (or the
    /// given ones), then `arguments`; in `directory` when given (`-WWW`, `-HTTP` serve files from
    /// it). Skips the test when the openssl CLI is not installed; throws when the server does not
    /// start (a test that needs it must not pass without it).
    public init(
        _ arguments: [String], certificate: String = SupportFixtures.path("server.pem"), key: String = SupportFixtures.path("server.key"),
        chain: String = SupportFixtures.path("intermediate-ca.pem"), directory: URL? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("the openssl CLI is not installed") }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_server", "-accept", "127.0.0.1:0", "-cert", certificate, "-key", key, "-cert_chain", chain] + arguments
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = Pipe()
        try process.run()
        // s_server flushes the line once it listens; EOF means it exited (the handle's read ends).
        var seen = ""
        var found: Int? = nil
        let handle = output.fileHandleForReading
        while found == nil {
            let data = handle.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
            if let range = seen.range(of: "ACCEPT 127.0.0.1:"), seen[range.upperBound...].contains("\n") {
                found = Int(seen[range.upperBound...].prefix { $0.isNumber })
            }
        }
        guard let found else {
            kill(process.processIdentifier, SIGKILL)
            throw DidNotStart(description: "openssl s_server \(arguments.joined(separator: " ")) did not start: \(seen)")
        }
        port = found
        // Keep draining its output (-www logs each request) so that it never blocks on a full
        // pipe, on a thread that ends at EOF (the server's exit). Not `readabilityHandler`:
        // Foundation's monitor leaves a weak-reference side table behind that LeakSanitizer reports.
        let drain = Thread { while !handle.availableData.isEmpty {} }
        drain.start()
    }

    public struct DidNotStart: Error, CustomStringConvertible {
        public let description: String
    }

    /// Stops the server now (its port then refuses connections).
    public func stop() {
        // SIGKILL: a test runner may hand SIGTERM down ignored (it survives exec), and s_server
        // keeps nothing that needs a clean exit. The wait is bounded: Foundation's waitUntilExit
        // can miss a child's exit on Linux under load and hang.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
    }

    deinit { stop() }
}

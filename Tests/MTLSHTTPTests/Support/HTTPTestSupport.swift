import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestServer

/// Fixtures and helpers for the HTTP tests.
enum HTTPFixtures {
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let testCerts = root.appendingPathComponent("TestCerts")
    static func path(_ name: String) -> String { testCerts.appendingPathComponent(name).path }
    static func certificates(_ name: String) throws -> [Certificate] { try CertificateLoader.certificates(atPath: path(name)) }
    static func key(_ name: String) throws -> PrivateKey { try PrivateKey(bytes: try CertificateLoader.readFile(path(name))) }

    /// The fixed evaluation time of the fixtures (2026-06-01T00:00:00Z).
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    /// The number of open file descriptors of this process.
    static func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// An in-process IIS-like server on a free port with the TestCerts server identity, trusting the test root.
    static func startServer(
        maximumVersion: TLSVersion? = nil, atHandshake: Bool = false, sendsCANames: Bool = true, httpSys: Bool = false, crls: [String] = [],
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws
        -> TestServer
    {
        let server = try certificates("server.pem")[0]
        let configuration = TLSServerConfiguration(
            certificate: server, privateKey: try key("server.key"), chain: try certificates("intermediate-ca.pem"),
            clientCAs: try certificates("root-ca.pem") + certificates("intermediate-ca.pem"), sendsCANames: sendsCANames,
            requestsCertificateAtHandshake: atHandshake, crls: try crls.flatMap { try CertificateLoader.crls(atPath: path($0)) }, maximumVersion: maximumVersion)
        let instance = try TestServer(configuration: TestServerConfiguration(tls: configuration, bindAddress: "127.0.0.1", port: 0, httpSysMode: httpSys), log: log)
        try instance.start()
        return instance
    }

    /// A client trusting the test root (at the fixed time), with optional identity.
    static func client(
        identity: String? = nil, maximumVersion: TLSVersion? = nil, offersPHA: Bool = true, options: HTTPClientOptions = HTTPClientOptions()
    ) throws -> HTTPSClient {
        var identities: [ClientIdentity] = []
        if let identity { identities.append(try ClientIdentity.pkcs12(path: path(identity), password: "mtls")) }
        let configuration = TLSClientConfiguration(
            trust: TrustPolicy(anchors: try certificates("root-ca.pem"), evaluationTime: fixedTime), identities: identities,
            maximumVersion: maximumVersion, offersPostHandshakeAuth: offersPHA, timeouts: Timeouts.uniform(.seconds(10)))
        return try HTTPSClient(configuration: configuration, options: options)
    }

    static func url(_ server: TestServer, _ path: String) throws -> HTTPSURL { try HTTPSURL("https://localhost:\(server.boundPort)\(path)") }
}

/// Runs `openssl s_server` on a free loopback port for the duration of a test.
final class OpenSSLServer {
    let process = Process()
    let port: Int
    private let output = Pipe()

    /// Starts `openssl s_server` on a port the kernel picks (`-accept 127.0.0.1:0`) and reads the
    /// port from its "ACCEPT 127.0.0.1:PORT" line: a port chosen here could be another process's
    /// listener, which a readiness probe would then mistake for this server.
    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.currentDirectoryURL = HTTPFixtures.testCerts
        process.arguments =
            ["s_server", "-accept", "127.0.0.1:0", "-cert", "server.pem", "-key", "server.key", "-cert_chain", "intermediate-ca.pem", "-naccept", "20"] + arguments
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
            process.terminate()
            throw XCTSkip("openssl s_server did not start: \(seen)")
        }
        port = found
        // Keep draining its output (-www logs each request) so that it never blocks on a full pipe.
        handle.readabilityHandler = { _ = $0.availableData }
    }

    func stop() {
        output.fileHandleForReading.readabilityHandler = nil
        if process.isRunning { process.terminate() }
        // Bounded: Foundation's waitUntilExit can miss a child's exit on Linux under load and hang.
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }
}

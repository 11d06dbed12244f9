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

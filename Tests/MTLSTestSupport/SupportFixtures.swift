import Foundation
import MTLSTrust

/// Test support shared by the library's and the command line's test targets: real peers from
/// `scripts/peers/`, the hostile TLS server, a subprocess runner and the fixtures' paths. A target of
/// its own (not a test target), so that a test can live with the code it tests and still use them.
public enum SupportFixtures {
    /// The repository root (Tests/MTLSTestSupport/ → two levels up).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    public static let testCerts = root.appendingPathComponent("TestCerts")
    public static func path(_ name: String) -> String { testCerts.appendingPathComponent(name).path }
    public static func certificates(_ name: String) throws -> [Certificate] { try CertificateLoader.certificates(atPath: path(name)) }
    public static func key(_ name: String) throws -> PrivateKey { try PrivateKey(bytes: try CertificateLoader.readFile(path(name))) }
    /// The `mtls` executable of the debug build, which the CLI-process tests run.
    public static var mtlsExecutable: String { root.appendingPathComponent(".build/debug/mtls").path }
}

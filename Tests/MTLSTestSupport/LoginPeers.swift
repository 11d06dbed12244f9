import Foundation
import MTLSHTTP
import MTLSTrust
import XCTest

/// Paths and client settings for the login tests.
public enum LoginFixtures {
    public static var root: URL { SupportFixtures.root }

    public static func cert(_ name: String) -> String { root.appendingPathComponent("TestCerts").appendingPathComponent(name).path }

    /// A client configuration trusting only the test root.
    public static func configuration() throws -> TLSClientConfiguration {
        let anchors = try CertificateLoader.certificates(atPath: cert("root-ca.pem"))
        return TLSClientConfiguration(
            trust: TrustPolicy(anchors: anchors), timeouts: Timeouts(connect: .seconds(5), handshake: .seconds(5), idleRead: .seconds(15), total: .seconds(30)))
    }

    /// A new login session trusting the test root.
    public static func session(credentials: Credentials? = nil, authOrigins: Set<String> = []) throws -> LoginSession {
        try session(LoginOptions(credentials: credentials, authOrigins: authOrigins))
    }

    /// A new login session trusting the test root, with these options.
    public static func session(_ options: LoginOptions) throws -> LoginSession {
        try LoginSession(configuration: configuration(), options: options)
    }

    /// `key=value` lines of a text body.
    public static func fields(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            result[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return result
    }
}

/// A peer started by one of the scripts under `scripts/peers/` (`start` prints KEY=value lines;
/// exit status 3, or a missing server binary, means a dependency is missing and the test skips).
public final class LoginPeer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    public let script: String
    public let values: [String: String]

    public subscript(key: String) -> String { values[key] ?? "" }
    public var port: String { self["PORT"] }

    private init(script: String, values: [String: String]) {
        self.script = script
        self.values = values
    }

    /// Starts `scripts/peers/<script> start`.
    public static func start(_ script: String, requiring binaries: [String] = []) throws -> LoginPeer {
        for binary in binaries where !FileManager.default.isExecutableFile(atPath: binary) {
            throw XCTSkip("\(binary) is not installed; \(script) cannot run (see scripts/install-deps.sh)")
        }
        let path = LoginFixtures.root.appendingPathComponent("scripts/peers").appendingPathComponent(script).path
        guard FileManager.default.fileExists(atPath: path) else {
            throw XCTSkip("scripts/peers/\(script) does not exist yet")
        }
        let (status, out, err) = try run(["/bin/bash", path, "start"])
        if status == 3 { throw XCTSkip("scripts/peers/\(script): \(err.trimmingCharacters(in: .whitespacesAndNewlines))") }
        guard status == 0 else {
            throw NSError(domain: "LoginPeer", code: Int(status), userInfo: [NSLocalizedDescriptionKey: "scripts/peers/\(script) start failed (\(status)): \(err)"])
        }
        var values: [String: String] = [:]
        for line in out.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return LoginPeer(script: path, values: values)
    }

    /// Stops the peer (by the PIDs its start recorded) and removes its temp dir.
    public func stop() {
        _ = try? LoginPeer.run(["/bin/bash", script, "stop", "--dir", self["DIR"]])
    }

    /// Runs a command with stdout and stderr in temp files, waiting with `waitpid` (Foundation's
    /// `Process.waitUntilExit` can miss the exit of a script whose daemons outlive it).
    private static func run(_ arguments: [String]) throws -> (Int32, String, String) {
        let base = NSTemporaryDirectory() + "mtls-peer-run-\(UUID().uuidString)"
        let outPath = base + ".out"
        let errPath = base + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard spawned == 0 else {
            throw NSError(domain: "LoginPeer", code: Int(spawned), userInfo: [NSLocalizedDescriptionKey: "could not run \(arguments[0]): errno \(spawned)"])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return (exitCode, out, err)
    }
}

/// One running instance per peer script for the whole test process, started on first use and
/// stopped at exit.
public final class LoginPeers: @unchecked Sendable {
    // @unchecked Sendable: `started` and `failures` are guarded by `lock`.
    public static let shared = LoginPeers()
    private let lock = NSLock()
    private var started: [String: LoginPeer] = [:]
    private var failures: [String: Error] = [:]

    private init() {
        atexit {
            LoginPeers.shared.stopAll()
        }
    }

    /// The other helper's Apache (/basic, /digest, /redirect, /cookie, /sjis, /cp932).
    public func apache() throws -> LoginPeer { try peer("apache.sh", requiring: ["/usr/sbin/apache2"]) }
    /// Mellon SP + pysaml2 IdP + redirect/cookie/auth test locations.
    public func saml() throws -> LoginPeer { try peer("saml/saml.sh", requiring: ["/usr/sbin/apache2", "/usr/bin/python3"]) }
    /// pyspnego NTLM endpoint.
    public func ntlm() throws -> LoginPeer { try peer("ntlm/ntlm.sh", requiring: ["/usr/bin/python3"]) }
    /// A private MIT KDC and Apache mod_auth_gssapi (Negotiate with Kerberos).
    public func kerberos() throws -> LoginPeer { try peer("kerberos.sh", requiring: ["/usr/sbin/krb5kdc", "/usr/sbin/apache2", "/usr/bin/kinit"]) }

    private func peer(_ script: String, requiring binaries: [String]) throws -> LoginPeer {
        lock.lock()
        defer { lock.unlock() }
        if let peer = started[script] { return peer }
        if let failure = failures[script] { throw failure }
        do {
            let peer = try LoginPeer.start(script, requiring: binaries)
            started[script] = peer
            return peer
        } catch {
            failures[script] = error
            throw error
        }
    }

    public func stopAll() {
        lock.lock()
        let peers = Array(started.values)
        started.removeAll()
        lock.unlock()
        peers.forEach { $0.stop() }
    }
}

import Foundation
import XCTest

@testable import MTLSTrust

/// The fixtures in `TestCerts/`, located from this file's path so that tests run from any working
/// directory. Every file the generator writes has a name here; tests never spell paths by hand.
///
/// Fixtures are made by `scripts/make-test-certs.sh` with fresh keys on each run, so tests compare
/// against the `openssl` CLI (see ``OpenSSLCLI``) rather than against hard-coded key material.
enum TestCertificates {
    /// The `TestCerts` directory: `<package>/Tests/MTLSTrustTests/Support/TestCertificates.swift` → `<package>/TestCerts`.
    static let directory: URL = {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Support
            .deletingLastPathComponent()  // MTLSTrustTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
            .appendingPathComponent("TestCerts", isDirectory: true)
    }()

    /// The URL of a fixture given by its path relative to `TestCerts/`.
    static func url(_ relativePath: String) -> URL { directory.appendingPathComponent(relativePath) }

    /// The bytes of a fixture; fails the calling test when the file is missing.
    static func bytes(_ relativePath: String, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        let url = url(relativePath)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            XCTFail("missing fixture \(url.path) (run scripts/make-test-certs.sh)", file: file, line: line)
            throw FixtureError.missing(url.path)
        }
        return [UInt8](data)
    }

    enum FixtureError: Error { case missing(String), notOneCertificate(String) }

    // MARK: Certificates (each has `.pem`, `.der` and `.key` with the same basename)

    /// A certificate fixture: `<basename>.pem`, `<basename>.der`, `<basename>.key`.
    struct Identity: Sendable, CustomStringConvertible {
        let basename: String
        var pem: String { "\(basename).pem" }
        var der: String { "\(basename).der" }
        var key: String { "\(basename).key" }
        var description: String { basename }
    }

    static let rootCA = Identity(basename: "root-ca")
    static let intermediateCA = Identity(basename: "intermediate-ca")
    static let otherRootCA = Identity(basename: "other-root-ca")

    static let server = Identity(basename: "server")
    static let serverRSA2048 = Identity(basename: "server-rsa2048")
    static let serverRSA4096 = Identity(basename: "server-rsa4096")
    static let serverP384 = Identity(basename: "server-p384")
    static let serverEd25519 = Identity(basename: "server-ed25519")
    static let serverExpired = Identity(basename: "server-expired")
    static let serverNotYetValid = Identity(basename: "server-notyetvalid")
    static let serverWrongHost = Identity(basename: "server-wronghost")
    static let serverMulti = Identity(basename: "server-multi")
    static let serverCNOnly = Identity(basename: "server-cn-only")
    static let serverClientAuthOnly = Identity(basename: "server-clientauth-only")
    static let serverRevoked = Identity(basename: "server-revoked")
    static let selfSigned = Identity(basename: "self-signed")

    static let clientAlice = Identity(basename: "client-alice")
    static let clientAliceExpired = Identity(basename: "client-alice-expired")
    static let clientBobRSA = Identity(basename: "client-bob-rsa")
    static let clientOther = Identity(basename: "client-other")
    static let clientServerAuthOnly = Identity(basename: "client-serverauth-only")

    /// Every single-certificate fixture.
    static let allIdentities: [Identity] = [
        rootCA, intermediateCA, otherRootCA,
        server, serverRSA2048, serverRSA4096, serverP384, serverEd25519, serverExpired, serverNotYetValid,
        serverWrongHost, serverMulti, serverCNOnly, serverClientAuthOnly, serverRevoked, selfSigned,
        clientAlice, clientAliceExpired, clientBobRSA, clientOther, clientServerAuthOnly,
    ]

    /// `server.cer`: a DER copy of `server.der`.
    static let serverCER = "server.cer"

    // MARK: Bundles

    static let serverChain = "server-chain.pem"
    static let serverFullChain = "server-fullchain.pem"
    static let clientAliceChain = "client-alice-chain.pem"
    static let anchors = "anchors.pem"
    static let allRoots = "all-roots.pem"
    static let bundleWithText = "bundle-with-text.pem"

    // MARK: CRLs

    static let intermediateCRL = "intermediate-crl.pem"
    static let rootCRL = "root-crl.pem"
    static let crls = "crls.pem"

    // MARK: keys/ (standalone keys; no certificate matches them)

    enum Keys {
        static let rsaPKCS1PEM = "keys/rsa-pkcs1.pem"
        static let rsaPKCS1DER = "keys/rsa-pkcs1.der"
        static let rsaPKCS8PEM = "keys/rsa-pkcs8.pem"
        static let rsaPKCS8DER = "keys/rsa-pkcs8.der"
        static let rsaPKCS8Encrypted = "keys/rsa-pkcs8-encrypted.pem"
        static let rsaTraditionalEncrypted = "keys/rsa-traditional-encrypted.pem"
        static let rsaPublic = "keys/rsa-public.pem"
        static let ecP256SEC1 = "keys/ec-p256-sec1.pem"
        static let ecP256PKCS8 = "keys/ec-p256-pkcs8.pem"
        static let ecP256DER = "keys/ec-p256.der"
        static let ecP256Public = "keys/ec-p256-public.pem"
        static let ecP384SEC1 = "keys/ec-p384-sec1.pem"
        static let ed25519PKCS8 = "keys/ed25519-pkcs8.pem"
        static let backupKey = "keys/backup.key"
        static let backupCSR = "keys/backup.csr"

        /// The password of the encrypted key files.
        static let password = "secret"

        /// Every `rsa-*` private key file (all the same RSA-2048 key).
        static let allRSAPrivate = [rsaPKCS1PEM, rsaPKCS1DER, rsaPKCS8PEM, rsaPKCS8DER, rsaPKCS8Encrypted, rsaTraditionalEncrypted]
        /// Every `ec-p256*` private key file (all the same P-256 key).
        static let allP256Private = [ecP256SEC1, ecP256PKCS8, ecP256DER]
    }

    // MARK: p12/

    enum P12 {
        static let modern = "p12/client-alice-modern.p12"
        static let legacyRC2 = "p12/client-alice-legacy-rc2.p12"
        static let tripleDES = "p12/client-alice-3des.p12"
        static let noChain = "p12/client-alice-nochain.p12"
        static let emptyPassword = "p12/client-alice-emptypass.p12"
        static let noPassword = "p12/client-alice-nopass.p12"
        static let certsOnly = "p12/certs-only.p12"
        static let server = "p12/server.p12"
        static let clientBobRSA = "p12/client-bob-rsa.p12"

        /// The password of every protected `.p12` fixture.
        static let password = "mtls"

        /// Every file with the password `mtls`.
        static let allWithPassword = [modern, legacyRC2, tripleDES, noChain, certsOnly, server, clientBobRSA]
    }

    // MARK: bad/

    enum Bad {
        static let empty = "bad/empty.pem"
        static let truncatedDER = "bad/truncated.der"
        static let brokenBase64 = "bad/broken-base64.pem"
        static let garbage = "bad/garbage.bin"
        static let keyAsCert = "bad/key-as-cert.pem"
        static let corruptMAC = "bad/corrupt-mac.p12"
        static let truncatedP12 = "bad/truncated.p12"
        static let notACert = "bad/not-a-cert.txt"
        static let noCertsBundle = "bad/no-certs-bundle.pem"
    }

    // MARK: Loading

    /// The one certificate in a `.pem` fixture.
    static func certificate(_ identity: Identity, file: StaticString = #filePath, line: UInt = #line) throws -> Certificate {
        let certificates = try Certificate.fromPEM(bytes(identity.pem, file: file, line: line))
        guard certificates.count == 1 else { throw FixtureError.notOneCertificate(identity.pem) }
        return certificates[0]
    }

    /// The private key of a certificate fixture.
    static func privateKey(_ identity: Identity, file: StaticString = #filePath, line: UInt = #line) throws -> PrivateKey {
        try PrivateKey(bytes: bytes(identity.key, file: file, line: line))
    }

    /// A fresh empty temporary directory, removed when the test ends.
    static func temporaryDirectory(for testCase: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("mtls-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        testCase.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// Runs external tools (`openssl`, `pk12util`, `keytool`) as independent judges.
enum ExternalTool {
    struct Output {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
        /// stdout and stderr together, for tools that report on either.
        var combined: String { text + stderr }
    }

    /// The full path of an executable on `PATH` (or common system directories), or nil.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"]
        for directory in directories {
            let candidate = (directory as NSString).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `executable` with `arguments`, feeding `stdin`, and returns what it printed.
    static func run(_ executable: String, _ arguments: [String], stdin: [UInt8] = []) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes concurrently with the writer so that a chatty tool never blocks on a full pipe.
        let group = DispatchGroup()
        let errorData = DataBox()
        let errorHandle = error.fileHandleForReading
        let inputHandle = input.fileHandleForWriting
        DispatchQueue.global().async(group: group) { errorData.set(errorHandle.readDataToEndOfFile()) }
        DispatchQueue.global().async(group: group) {
            if !stdin.isEmpty { inputHandle.write(Data(stdin)) }
            try? inputHandle.close()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: [UInt8](outputData), stderr: String(decoding: errorData.get(), as: UTF8.self))
    }

    /// A lock-protected buffer filled by a reader thread.
    private final class DataBox: @unchecked Sendable {
        // @unchecked Sendable: every access goes through `lock`.
        private let lock = NSLock()
        private var data = Data()
        func set(_ value: Data) { lock.withLock { data = value } }
        func get() -> Data { lock.withLock { data } }
    }
}

/// The `openssl` command-line tool: the independent judge for every value the library computes.
enum OpenSSLCLI {
    static let path = ExternalTool.find("openssl")

    /// Runs `openssl` and returns stdout; fails the test (by throwing) when it exits non-zero.
    @discardableResult
    static func run(_ arguments: [String], stdin: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        let output = try runAllowingFailure(arguments, stdin: stdin)
        guard output.status == 0 else {
            XCTFail("openssl \(arguments.joined(separator: " ")) exited \(output.status): \(output.stderr)", file: file, line: line)
            throw CLIError.failed(output.stderr)
        }
        return output.stdout
    }

    /// Runs `openssl` and returns its status and output whatever it is.
    static func runAllowingFailure(_ arguments: [String], stdin: [UInt8] = []) throws -> ExternalTool.Output {
        guard let path else { throw XCTSkip("the openssl command-line tool is not installed") }
        return try ExternalTool.run(path, arguments, stdin: stdin)
    }

    /// Runs `openssl` and returns stdout as text with the trailing newline removed.
    static func text(_ arguments: [String], stdin: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let bytes = try run(arguments, stdin: stdin, file: file, line: line)
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The value after `=` in output such as `serial=2001` or `sha256 Fingerprint=AB:CD…`.
    static func value(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let output = try text(arguments, file: file, line: line)
        guard let equals = output.firstIndex(of: "=") else { return output }
        return String(output[output.index(after: equals)...])
    }

    /// Parses `Jan  1 00:00:00 2025 GMT` as `openssl x509 -dates` prints it.
    static func parseDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        let normalized = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy zzz"
        return formatter.date(from: normalized)
    }

    enum CLIError: Error { case failed(String) }
}

/// Asserts that `body` throws an ``MTLSTrustError`` with `reason`, and returns it for further checks.
@discardableResult
func assertThrowsMTLSError<T>(
    _ reason: MTLSTrustError.Reason, _ message: @autoclosure () -> String = "",
    file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T
) -> MTLSTrustError? {
    do {
        let value = try body()
        XCTFail("expected \(reason) but it succeeded with \(value). \(message())", file: file, line: line)
        return nil
    } catch let error as MTLSTrustError {
        XCTAssertEqual(error.reason, reason, "\(error.message) \(message())", file: file, line: line)
        XCTAssertFalse(error.message.isEmpty, "the error has no message", file: file, line: line)
        return error
    } catch {
        XCTFail("expected MTLSTrustError \(reason), got \(error). \(message())", file: file, line: line)
        return nil
    }
}

extension Array where Element == UInt8 {
    /// Bytes of UTF-8 text.
    init(text: String) { self = Array(text.utf8) }
}

/// What the `openssl` CLI says about one certificate fixture, gathered for every fixture at once
/// (in parallel shell jobs, on first use) so that the per-fixture comparisons stay fast.
struct OpenSSLCertificateFacts: Sendable {
    /// `subject=`, `issuer=`, `serial=`, `notBefore=`, `notAfter=`, `sha256 Fingerprint=`, `sha1 Fingerprint=` → value.
    var fields: [String: String]
    /// `-ext subjectAltName,keyUsage,extendedKeyUsage,basicConstraints`: extension header (without
    /// `X509v3 ` and `: critical`) → its value line.
    var extensions: [String: String]
    /// The first `Signature Algorithm:` of `-text`.
    var signatureAlgorithm: String
    /// `Public-Key: (N bit)` of `-text`, nil for Ed25519.
    var publicKeyBits: Int?
    /// `openssl x509 -pubkey -noout` output.
    var publicKeyPEM: String
    /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
    var spkiPinBase64: String

    subscript(field: String) -> String? { fields[field] }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [String: OpenSSLCertificateFacts]? = nil

    /// The facts of `identity`.
    static func of(_ identity: TestCertificates.Identity, file: StaticString = #filePath, line: UInt = #line) throws -> OpenSSLCertificateFacts {
        let all = try lock.withLock { () throws -> [String: OpenSSLCertificateFacts] in
            if let cache { return cache }
            let computed = try gather(TestCertificates.allIdentities)
            cache = computed
            return computed
        }
        guard let facts = all[identity.basename] else {
            XCTFail("openssl printed nothing for \(identity)", file: file, line: line)
            throw OpenSSLCLI.CLIError.failed("no facts for \(identity)")
        }
        return facts
    }

    private static func gather(_ identities: [TestCertificates.Identity]) throws -> [String: OpenSSLCertificateFacts] {
        guard OpenSSLCLI.path != nil, let shell = ExternalTool.find("sh") else { throw XCTSkip("openssl or sh is missing") }
        let script = #"""
            set -u
            dir="$1"; out="$2"; shift 2
            for name in "$@"; do
              (
                f="$dir/$name.pem"
                {
                  openssl x509 -in "$f" -noout -nameopt RFC2253 -subject -issuer -serial -dates -fingerprint -sha256 \
                    -ext subjectAltName,keyUsage,extendedKeyUsage,basicConstraints -pubkey -text
                  echo "@@@pin"
                  openssl x509 -in "$f" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
                  echo "@@@sha1"
                  openssl x509 -in "$f" -noout -fingerprint -sha1
                } > "$out/$name.txt" 2>&1
              ) &
            done
            wait
            """#
        let outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-facts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outputDirectory) }
        let result = try ExternalTool.run(
            shell, ["-c", script, "sh", TestCertificates.directory.path, outputDirectory.path] + identities.map(\.basename))
        guard result.status == 0 else { throw OpenSSLCLI.CLIError.failed(result.stderr) }
        var facts: [String: OpenSSLCertificateFacts] = [:]
        for identity in identities {
            let url = outputDirectory.appendingPathComponent("\(identity.basename).txt")
            guard let data = FileManager.default.contents(atPath: url.path) else { continue }
            facts[identity.basename] = parse(String(decoding: data, as: UTF8.self))
        }
        return facts
    }

    private static func parse(_ text: String) -> OpenSSLCertificateFacts {
        var fields: [String: String] = [:]
        var extensions: [String: String] = [:]
        var signatureAlgorithm = ""
        var bits: Int? = nil
        var publicKey = ""
        var pin = ""
        var section = "main"
        var pendingExtension: String? = nil
        var inPublicKey = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(rawLine)
            if line == "@@@pin" {
                section = "pin"
                continue
            }
            if line == "@@@sha1" {
                section = "sha1"
                continue
            }
            switch section {
            case "pin":
                if !line.isEmpty { pin = line }
            case "sha1":
                if let equals = line.firstIndex(of: "=") { fields[String(line[..<equals])] = String(line[line.index(after: equals)...]) }
            default:
                if line == "-----BEGIN PUBLIC KEY-----" { inPublicKey = true }
                if inPublicKey {
                    publicKey += line + "\n"
                    if line == "-----END PUBLIC KEY-----" { inPublicKey = false }
                    continue
                }
                if let header = pendingExtension {
                    extensions[header] = line.trimmingCharacters(in: .whitespaces)
                    pendingExtension = nil
                    continue
                }
                if line.hasPrefix("X509v3 ") {
                    let header = line.dropFirst(7).split(separator: ":")[0]
                    pendingExtension = String(header)
                    continue
                }
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("Signature Algorithm:"), signatureAlgorithm.isEmpty {
                    signatureAlgorithm = trimmed.dropFirst("Signature Algorithm:".count).trimmingCharacters(in: .whitespaces)
                } else if trimmed.hasPrefix("Public-Key: ("), bits == nil {
                    bits = Int(trimmed.dropFirst("Public-Key: (".count).split(separator: " ")[0])
                } else if !line.hasPrefix(" "), let equals = line.firstIndex(of: "="), fields.count < 6 {
                    fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
                }
            }
        }
        return OpenSSLCertificateFacts(
            fields: fields, extensions: extensions, signatureAlgorithm: signatureAlgorithm, publicKeyBits: bits,
            publicKeyPEM: publicKey, spkiPinBase64: pin)
    }
}

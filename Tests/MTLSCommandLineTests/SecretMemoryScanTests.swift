import Foundation
import MTLSHTTP
import MTLSTrust
import XCTest

@testable import MTLSCommandLine

#if canImport(Glibc)
    import Glibc
#endif

/// "Passwords zeroed after use", checked the way an attacker with a memory dump would: a random
/// password is used by every command that takes one, then this process's writable memory (heap,
/// anonymous mappings, stacks) is searched for any piece of it, in UTF-8, UTF-16LE and UTF-16BE.
///
/// The test never holds the password in plain form while it scans: it keeps it XOR-masked and
/// compares masked, so the only copies it can find are ones the code under test left behind.
/// Pieces of 12 characters are searched, not the whole password: malloc writes its free-list
/// pointers over the first 16 bytes of a freed block, which would hide an unwiped block from a
/// whole-password search.
final class SecretMemoryScanTests: XCTestCase {
    private static let mask: UInt8 = 0xA5
    private static let length = 48
    private static let piece = 12

    /// A random alphanumeric password, generated masked; `reveal` gives a plain copy to wipe.
    private struct MaskedPassword {
        let masked: [UInt8]

        init() {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
            var generator = SystemRandomNumberGenerator()
            masked = (0..<SecretMemoryScanTests.length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] ^ SecretMemoryScanTests.mask }
        }

        /// The password as a Secret; the plain buffer it passes through is wiped.
        func secret() -> Secret {
            var plain = masked.map { $0 ^ SecretMemoryScanTests.mask }
            return Secret(wiping: &plain)
        }

        /// Masked search patterns: each 12-character piece in UTF-8, UTF-16LE and UTF-16BE.
        var patterns: [(name: String, masked: [UInt8])] {
            var result: [(String, [UInt8])] = []
            let zero = SecretMemoryScanTests.mask  // 0x00 masked
            for start in stride(from: 0, to: masked.count, by: SecretMemoryScanTests.piece) {
                let piece = Array(masked[start..<(start + SecretMemoryScanTests.piece)])
                result.append(("UTF-8 characters \(start)…", piece))
                result.append(("UTF-16LE characters \(start)…", piece.flatMap { [$0, zero] }))
                result.append(("UTF-16BE characters \(start)…", piece.flatMap { [zero, $0] }))
            }
            return result
        }
    }

    func testNoPieceOfAPasswordIsLeftInMemoryAfterEveryCommandThatTakesOneHasRun() throws {
        let password = MaskedPassword()
        let directory = try TemporaryDirectory(self)
        try useThePasswordEverywhere(password, directory)
        let (found, scanned, regions) = try Self.scanWritableMemory(for: password.patterns)
        XCTAssertGreaterThan(scanned, 1 << 20, "the scan read this process's writable memory")
        XCTAssertGreaterThan(regions, 20, "every writable mapping, not the first block of /proc/self/maps")
        XCTAssertEqual(found, [], "pieces of the password left in memory after use")
        XCTAssertTrue(OpenSSLInfo.wipesFreedMemory, "OpenSSL's frees go through the wiping allocator")
    }

    func testNoPieceOfAPrivateKeyIsLeftInMemoryAfterTheCommandsHaveReadAndWrittenIt() throws {
        // A fresh P-256 key, known to the test only masked: its 32-byte private scalar is searched
        // for raw, in pieces of 10 bytes, after the commands that decrypt it and write it out.
        let directory = try TemporaryDirectory(self)
        let p12 = directory.file("fresh.p12")
        let encryptedKey = directory.file("fresh.enc.pem")
        let maskedScalar: [UInt8]
        var maskedTextPieces: [[UInt8]] = []
        do {
            let key = try CertificateIssuer.generateKey()
            let now = Date()
            let certificate = try CertificateIssuer.issue(
                .init(role: .client, commonName: "memory scan", notBefore: now, notAfter: now.addingTimeInterval(86400)), key: key, issuer: nil, serial: 1)
            try write(try PKCS12Bundle.export(certificate: certificate, privateKey: key, password: "scan"), to: p12)
            try write(try key.pkcs8PEM(password: "scan"), to: encryptedKey)
            try write(Array(certificate.pemString.utf8), to: directory.file("fresh.pem"))
            var der = try key.pkcs8DER()
            defer { Secret.wipe(&der) }
            // ECPrivateKey: INTEGER 1, then OCTET STRING of 32 bytes: the scalar.
            let marker: [UInt8] = [0x02, 0x01, 0x01, 0x04, 0x20]
            let at = try XCTUnwrap((0..<(der.count - marker.count - 32)).first { Array(der[$0..<($0 + marker.count)]) == marker }, "the scalar in the PKCS#8 DER")
            maskedScalar = der[(at + marker.count)..<(at + marker.count + 32)].map { $0 ^ Self.mask }
            // The same scalar as PEM text: base64 of the DER, made masked character by character
            // (Foundation's encoder would leave plain copies of its own). Pieces of three 4-character
            // groups that encode scalar bytes only and stand on one 64-column line.
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
            var maskedBase64: [UInt8] = []
            for group in 0..<(der.count / 3) {
                let value = Int(der[3 * group]) << 16 | Int(der[3 * group + 1]) << 8 | Int(der[3 * group + 2])
                for shift in [18, 12, 6, 0] { maskedBase64.append(alphabet[value >> shift & 63] ^ Self.mask) }
            }
            let scalarStart = at + marker.count
            var group = (scalarStart + 2) / 3
            while 3 * (group + 3) <= scalarStart + 32 {
                if group / 16 == (group + 2) / 16 { maskedTextPieces.append(Array(maskedBase64[(4 * group)..<(4 * group + 12)])) }
                group += 1
            }
        }
        let runs: [[String]] = [
            ["import", p12, "--password", "pass:scan", "--out-dir", directory.file("pem")],
            ["import", p12, "--password", "pass:scan", "--out-dir", directory.file("der"), "--to", "der"],
            ["convert", encryptedKey, "--to", "pem", "--password", "pass:scan", "--out", directory.file("plain.pem")],
            ["convert", encryptedKey, "--to", "der", "--password", "pass:scan", "--out", directory.file("plain.der")],
            ["export", "--cert", directory.file("fresh.pem"), "--key", encryptedKey, "--key-password", "pass:scan", "--password", "pass:scan", "--out", directory.file("re.p12")],
            ["inspect", encryptedKey, "--password", "pass:scan"],
            // And the unencrypted key the first convert wrote, read back (PKCS#8 PEM and DER).
            ["convert", directory.file("plain.pem"), "--to", "der", "--out", directory.file("again.der")],
            ["convert", directory.file("plain.der"), "--to", "pem", "--out", directory.file("again.pem")],
            ["export", "--cert", directory.file("fresh.pem"), "--key", directory.file("plain.pem"), "--password", "pass:scan", "--out", directory.file("plain.p12")],
            ["inspect", directory.file("plain.pem")],
            ["pin", directory.file("plain.pem")],
        ]
        for arguments in runs {
            let result = mtls(arguments, environment: ["MTLS_QUIET_PASS_WARNING": "1"])
            XCTAssertEqual(result.exitCode, 0, "\(arguments.prefix(2)): \(result.stderr)")
        }
        XCTAssertGreaterThanOrEqual(maskedTextPieces.count, 3, "pieces of PEM text that encode the scalar only")
        let patterns =
            stride(from: 0, to: 30, by: 10).map { ("private scalar bytes \($0)…", Array(maskedScalar[$0..<($0 + 10)])) }
            + maskedTextPieces.enumerated().map { ("private key PEM text, piece \($0.offset)", $0.element) }
        let (found, scanned, regions) = try Self.scanWritableMemory(for: patterns)
        XCTAssertGreaterThan(scanned, 1 << 20, "the scan read this process's writable memory")
        XCTAssertGreaterThan(regions, 20, "every writable mapping")
        XCTAssertEqual(found, [], "pieces of the private key left in memory after the commands wrote it")
    }

    func testTheScanFindsAPasswordThatIsStillInMemory() throws {
        // The control: a copy that is not wiped must be found, or the test above proves nothing.
        let password = MaskedPassword()
        let leaked = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
        defer { leaked.deallocate() }
        leaked.initialize(repeating: 0, count: 4096)
        for (index, byte) in password.masked.enumerated() { leaked[100 + index] = byte ^ Self.mask }
        let (found, _, _) = try Self.scanWritableMemory(for: password.patterns)
        for index in 0..<4096 { leaked[index] = 0 }
        XCTAssertEqual(found.filter { $0.hasPrefix("UTF-8") }.count, Self.length / Self.piece, "every UTF-8 piece of the unwiped copy is found: \(found)")
    }

    /// Every path that takes a password, fed this one; every secret it makes is released on return.
    private func useThePasswordEverywhere(_ password: MaskedPassword, _ directory: TemporaryDirectory) throws {
        let passwordFile = directory.file("password.txt")
        let p12 = directory.file("identity.p12")
        let encryptedKey = directory.file("key.enc.pem")
        do {
            let secret = password.secret()
            let certificate = try CertificateLoader.certificates(atPath: Fixtures.path("client-alice.pem"))[0]
            let key = try PrivateKey(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("client-alice.key")))))
            try write(try PKCS12Bundle.export(certificate: certificate, privateKey: key, password: secret, friendlyName: "alice"), to: p12)
            try write(try key.pkcs8PEM(password: secret), to: encryptedKey)
            let fd = open(passwordFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            XCTAssertGreaterThanOrEqual(fd, 0)
            secret.withUnsafeBytes { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        let spec = "file:\(passwordFile)"
        let runs: [[String]] = [
            ["import", p12, "--password", spec, "--out-dir", directory.file("imported")],
            ["inspect", p12, "--password", spec],
            ["inspect", encryptedKey, "--password", spec],
            ["convert", encryptedKey, "--to", "pem", "--password", spec, "--out", directory.file("plain.pem")],
            ["export", "--cert", Fixtures.path("client-alice.pem"), "--key", encryptedKey, "--key-password", spec, "--password", spec, "--out", directory.file("re.p12")],
            ["verify", p12, "--password", spec, "--anchors", Fixtures.path("root-ca.pem"), "--at", fixedTime],
            ["pin", p12, "--password", spec],
        ]
        for arguments in runs {
            let result = mtls(arguments)
            XCTAssertNotEqual(result.exitCode, 2, "\(arguments.prefix(2)): \(result.stderr)")
            XCTAssertNotEqual(result.exitCode, 3, "\(arguments.prefix(2)): \(result.stderr)")
        }
        // The fd: form, through a pipe.
        var pipeEnds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&pipeEnds), 0)
        password.secret().withUnsafeBytes { _ = Glibc.write(pipeEnds[1], $0.baseAddress, $0.count) }
        close(pipeEnds[1])
        XCTAssertEqual(mtls(["import", p12, "--password", "fd:\(pipeEnds[0])"]).exitCode, 0)
        close(pipeEnds[0])
        // The library: a client identity, and HTTP authentication answers of each scheme.
        let secret = try XCTUnwrap(try SecretSpec.resolve(spec, option: "--password", prompt: nil, console: Console(stdout: { _ in }, stderr: { _ in })))
        _ = try ClientIdentity.pkcs12(path: p12, password: secret)
        let credentials = Credentials(user: "alice", password: secret)
        _ = try BasicAuth.authorization(user: credentials.user, password: credentials.password)
        var digest = DigestAuthenticator(realm: "mtls", nonce: "abc", algorithm: .sha256, qop: .auth)
        _ = digest.authorization(credentials: credentials, method: "GET", uri: "/")
        if OpenSSLInfo.legacyProviderAvailable {
            let challenge = try NTLM.Challenge(bytes: Self.ntlmChallenge)
            _ = try NTLM.authenticateMessage(challenge: challenge, credentials: credentials)
        }
    }

    private func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The CHALLENGE_MESSAGE of MS-NLMP §4.2.4.3.
    private static let ntlmChallenge: [UInt8] = {
        let hex =
            "4e544c4d53535000020000000c000c003800000033828ae20123456789abcdef00000000000000002400240044000000060070170000000f53006500720076006500720002000c0044006f006d00610069006e0001000c0053006500720076006500720000000000"
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }()

    /// Searches every readable, writable private mapping of this process for the masked patterns;
    /// returns the names of the patterns found (with where) and the bytes scanned.
    private static func scanWritableMemory(for patterns: [(name: String, masked: [UInt8])]) throws -> (found: [String], scanned: Int, regions: Int) {
        // ASan and TSan reserve terabytes of shadow and allocator space as writable mappings, and
        // keep freed blocks in a quarantine of their own: the scan means something only without them.
        for runtime in ["__asan_init", "__tsan_init", "__msan_init"] where dlsym(UnsafeMutableRawPointer(bitPattern: 0), runtime) != nil {
            throw XCTSkip("a sanitizer runtime (\(runtime)) is loaded; the memory scan runs in the normal test run")
        }
        guard let maps = ProcFile.text("/proc/self/maps") else { throw XCTSkip("/proc/self/maps cannot be read here") }
        let memory = open("/proc/self/mem", O_RDONLY)
        guard memory >= 0 else { throw XCTSkip("/proc/self/mem cannot be read here") }
        defer { close(memory) }
        let chunkSize = 1 << 20
        let overlap = patterns.map(\.masked.count).max()! - 1
        // A mapping of its own (not malloc, which may put it in [heap]), so that skipping it skips
        // nothing else.
        let bufferSize = chunkSize + overlap
        guard let mapped = mmap(nil, bufferSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED else {
            throw XCTSkip("mmap failed")
        }
        defer { munmap(mapped, bufferSize) }
        let buffer = mapped.assumingMemoryBound(to: UInt8.self)
        var found: [String] = []
        var scanned = 0
        var regions = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw"), fields[1].hasSuffix("p") else { continue }
            let name = fields.count >= 6 ? String(fields[5]) : "anonymous"
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16) else { continue }
            // The scan's own buffer holds what it read last; a copy there is not a finding.
            if (start..<end).contains(UInt(bitPattern: buffer)) { continue }
            regions += 1
            var offset = start
            while offset < end {
                let want = Int(min(UInt(chunkSize + overlap), end - offset))
                let got = pread(memory, buffer, want, off_t(Int64(bitPattern: UInt64(offset))))
                guard got > 0 else { break }
                scanned += got
                for pattern in patterns where got >= pattern.masked.count {
                    if let at = search(buffer, got, pattern.masked) {
                        found.append("\(pattern.name) at 0x\(String(offset + UInt(at), radix: 16)) in \(name)")
                    }
                }
                offset += UInt(min(got, chunkSize))
                if got < want { break }
            }
        }
        // A piece found twice through the overlap is one finding.
        return (Array(Set(found)).sorted(), scanned, regions)
    }

    /// The first offset of `masked` (unmasked on the fly) in `bytes[0..<count]`.
    private static func search(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int, _ masked: [UInt8]) -> Int? {
        masked.withUnsafeBufferPointer { needle -> Int? in
            let first = Int32(needle[0] ^ mask)
            var position = 0
            while position <= count - needle.count {
                guard let hit = memchr(bytes + position, first, count - needle.count + 1 - position) else { return nil }
                let at = bytes.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                var matches = true
                for index in 1..<needle.count where bytes[at + index] ^ mask != needle[index] {
                    matches = false
                    break
                }
                if matches { return at }
                position = at + 1
            }
            return nil
        }
    }
}

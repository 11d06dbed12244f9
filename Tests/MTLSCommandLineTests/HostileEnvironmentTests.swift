import Foundation
import MTLSTrust
import XCTest

@testable import MTLSCommandLine

/// The CLI in a careless or hostile environment (issue 38): password sources that cannot be read,
/// outputs that are not plain files, unbounded inputs, hostile iteration counts and secrets in
/// usage errors. Cases that need another user or a mount namespace are in scripts/hostile.sh.
final class HostileEnvironmentTests: XCTestCase {
    private let cert = Fixtures.path("client-alice.pem")
    private let key = Fixtures.path("client-alice.key")
    private let secret = "Quokka-5521-never-shown"

    private func export(_ password: String, out: String, environment: [String: String] = [:], stdin: [UInt8] = [], extra: [String] = []) -> CLIResult {
        mtls(["export", "--cert", cert, "--key", key, "--out", out, "--password", password] + extra, environment: environment, stdin: stdin)
    }

    // MARK: - Secrets

    /// Every unreadable source is exit 3, names the source and writes nothing: never a PKCS#12
    /// protected by the empty password.
    func testUnreadablePasswordSourcesAreErrorsNotEmptyPasswords() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("out.p12")
        var closed: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&closed), 0)
        close(closed[0])
        close(closed[1])
        var emptyPipe: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&emptyPipe), 0)
        close(emptyPipe[1])
        addTeardownBlock { close(emptyPipe[0]) }
        let emptyFile = try directory.write("empty.txt", text: "")
        let cases: [(spec: String, environment: [String: String], stdin: [UInt8], names: String)] = [
            ("fd:\(closed[0])", [:], [], "fd:\(closed[0])"),
            ("fd:\(emptyPipe[0])", [:], [], "fd:\(emptyPipe[0])"),
            ("stdin", [:], [], "stdin"),
            ("env:P12_PASSWORD", [:], [], "P12_PASSWORD"),
            ("file:\(directory.file("missing.txt"))", [:], [], "missing.txt"),
            ("file:\(emptyFile)", [:], [], "empty.txt"),
            ("file:\(directory.path)", [:], [], directory.path),
        ]
        for item in cases {
            let result = export(item.spec, out: out, environment: item.environment, stdin: item.stdin)
            XCTAssertExit(result, 3, item.spec)
            XCTAssertContains(result.stderr, item.names, item.spec)
            XCTAssertContains(result.stderr, "no password was used", item.spec)
            XCTAssertNil(contents(out), "\(item.spec): nothing may be written")
        }
    }

    /// `pass:` with nothing after the colon is the explicit empty password, and works.
    func testTheEmptyPasswordIsTakenWhenExplicit() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("empty-password.p12")
        let result = export("pass:", out: out, environment: ["MTLS_QUIET_PASS_WARNING": "1"])
        XCTAssertExit(result, 0)
        XCTAssertNotNil(contents(out))
    }

    /// Malformed sources and stray positional arguments are never repeated back.
    func testMalformedSourcesAndStrayArgumentsDoNotEchoTheSecret() throws {
        let directory = try TemporaryDirectory(self)
        let out = directory.file("out.p12")
        for spec in ["fd:\(secret)", "env:\(secret)!", "env:", "\(secret)"] {
            let result = export(spec, out: out)
            XCTAssertTrue(result.exitCode == 2 || result.exitCode == 3, "\(spec): \(result)")
            XCTAssertNotContains(result.stderr + result.stdout, secret, spec)
            XCTAssertNil(contents(out))
        }
        // The password typed without its option: a usage error that does not show it.
        let stray = mtls(["export", "--cert", cert, "--key", key, "--out", out, secret])
        XCTAssertExit(stray, 2)
        XCTAssertNotContains(stray.stderr + stray.stdout, secret)
        XCTAssertContains(stray.stderr, "Unexpected argument")
        let flagValue = mtls(["export", "--cert", cert, "--key", key, "--out", out, "--force=\(secret)", "--password", "pass:x"])
        XCTAssertExit(flagValue, 2)
        XCTAssertNotContains(flagValue.stderr + flagValue.stdout, secret)
    }

    // MARK: - Outputs

    /// A symbolic link is never written through: without --force it is refused, dangling or not;
    /// with --force the user's own link is replaced by the file (its target untouched). A FIFO is
    /// not opened (no hang) nor replaced, even with --force.
    func testOutputsThatAreNotRegularFilesAreRefused() throws {
        let directory = try TemporaryDirectory(self)
        let target = try directory.write("target.txt", text: "keep me\n")
        let link = directory.file("link.der")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let dangling = directory.file("dangling.der")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: directory.file("nowhere.der"))
        let fifo = directory.file("fifo.der")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        for (path, force) in [(link, false), (dangling, false), (fifo, true), (fifo, false)] {
            let result = mtls(["convert", Fixtures.path("server.pem"), "--to", "der", "--out", path] + (force ? ["--force"] : []))
            XCTAssertExit(result, 3, "\(path) force=\(force)")
            XCTAssertContains(result.stderr, path)
        }
        XCTAssertEqual(contents(target), Array("keep me\n".utf8), "the link's target is untouched")
        XCTAssertNil(contents(directory.file("nowhere.der")), "nothing was created through the dangling link")
        var info = stat()
        XCTAssertEqual(lstat(link, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFLNK, "the link is still a link")
        XCTAssertEqual(lstat(fifo, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO, "the FIFO is still a FIFO")
        // --force on the user's own dangling link: the link is replaced, nothing appears at its target.
        XCTAssertExit(mtls(["convert", Fixtures.path("server.pem"), "--to", "der", "--out", dangling, "--force"]), 0)
        XCTAssertEqual(lstat(dangling, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG)
        XCTAssertNil(contents(directory.file("nowhere.der")))
        XCTAssertEqual(try directory.contents().filter { $0.hasSuffix(".tmp") }, [], "no temporary file is left")
    }

    /// Keys are 0600 from their creation, whatever the umask; no temporary file is left.
    func testKeysArePrivateWhateverTheUmask() throws {
        let directory = try TemporaryDirectory(self)
        let old = umask(0)
        defer { umask(old) }
        let out = directory.file("key.p12")
        XCTAssertExit(export("pass:x", out: out, environment: ["MTLS_QUIET_PASS_WARNING": "1"]), 0)
        XCTAssertEqual(try permissions(out), 0o600)
        XCTAssertEqual(try directory.contents(), ["key.p12"])
    }

    /// `import --out-dir`: a new directory is 0700; an existing one writable by others is refused.
    func testImportRefusesADirectoryOthersCanWriteAndMakesNewOnesPrivate() throws {
        let directory = try TemporaryDirectory(self)
        let p12 = Fixtures.path("p12/client-alice-modern.p12")
        let shared = directory.file("shared")
        XCTAssertEqual(mkdir(shared, 0o700), 0)
        XCTAssertEqual(chmod(shared, 0o777), 0)
        let refused = mtls(["import", p12, "--password", "env:P", "--out-dir", shared], environment: ["P": "mtls"])
        XCTAssertExit(refused, 3)
        XCTAssertContains(refused.stderr, "writable by everyone")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: shared), [])
        // Writable by a group that is not the user's private group (nogroup): refused too.
        let grouped = directory.file("grouped")
        XCTAssertEqual(mkdir(grouped, 0o700), 0)
        XCTAssertEqual(chown(grouped, geteuid(), 65534), 0)
        XCTAssertEqual(chmod(grouped, 0o770), 0)
        let refusedGroup = mtls(["import", p12, "--password", "env:P", "--out-dir", grouped], environment: ["P": "mtls"])
        XCTAssertExit(refusedGroup, 3)
        XCTAssertContains(refusedGroup.stderr, "writable by its group")

        let old = umask(0)
        defer { umask(old) }
        let fresh = directory.file("fresh/nested")
        XCTAssertExit(mtls(["import", p12, "--password", "env:P", "--out-dir", fresh], environment: ["P": "mtls"]), 0)
        XCTAssertEqual(try permissions(fresh), 0o700)
        XCTAssertEqual(try permissions(directory.file("fresh")), 0o700)
        XCTAssertEqual(try permissions(fresh + "/key.pem"), 0o600)
    }

    // MARK: - Inputs

    /// Standard input beyond 64 MiB is refused by size, not parsed.
    func testStandardInputIsCappedLikeFiles() {
        let big = [UInt8](repeating: 0x41, count: CertificateLoader.maximumInputSize + 1)
        let result = mtls(["inspect", "-"], stdin: big)
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, "larger than 64 MiB")
    }

    /// A FIFO whose writer sends its data and closes is read like a file (no hang either way).
    func testAFIFOInputIsReadWhenItsWriterComes() throws {
        let directory = try TemporaryDirectory(self)
        let fifo = directory.file("cert.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let pem = try Fixtures.bytes("server.pem")
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            _ = pem.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        writer.start()
        let result = mtls(["inspect", fifo])
        XCTAssertExit(result, 0)
    }

    // MARK: - PKCS#12 iteration counts

    /// A 2³¹−1 iteration count in the classic MAC, in PBES2/PBKDF2 or in PBES1 is refused at
    /// once, naming the count, with or without a password.
    func testHugeIterationCountsAreRefusedBeforeAnyWork() throws {
        let directory = try TemporaryDirectory(self)
        let modern = try Fixtures.bytes("p12/client-alice-modern.p12")
        let tripleDES = try Fixtures.bytes("p12/client-alice-3des.p12")
        let variants: [(name: String, bytes: [UInt8], what: String)] = [
            ("mac.p12", try HostileP12.withIterations(modern, mac: true, content: false), "MAC"),
            ("pbes2.p12", try HostileP12.withIterations(modern, mac: false, content: true), "PBES2"),
            ("pbes1.p12", try HostileP12.withIterations(tripleDES, mac: false, content: true), "pbeWithSHA1And3-KeyTripleDES-CBC"),
        ]
        for variant in variants {
            let path = try directory.write(variant.name, variant.bytes)
            for arguments in [["inspect", path], ["inspect", path, "--password", "env:P"], ["import", path, "--password", "env:P"], ["verify", path, "--password", "env:P"]] {
                let started = Date()
                let result = mtls(arguments, environment: ["P": "mtls"])
                let elapsed = Date().timeIntervalSince(started)
                XCTAssertExit(result, 3, "\(arguments)")
                XCTAssertContains(result.stderr, "2147483647 iterations", "\(arguments)")
                XCTAssertContains(result.stderr, variant.what, "\(arguments)")
                XCTAssertContains(result.stderr, variant.name, "\(arguments): the message names the file")
                XCTAssertLessThan(elapsed, 5, "\(arguments) took \(elapsed) s")
            }
        }
    }

    /// An encrypted PKCS#8 key (PBES2) whose PBKDF2 count is 2³¹−1 is refused the same way, in
    /// DER and in PEM, before any derivation.
    func testHugeIterationCountsInAnEncryptedKeyAreRefused() throws {
        let directory = try TemporaryDirectory(self)
        let der = try OpenSSL.output([
            "pkcs8", "-topk8", "-in", Fixtures.path("client-alice.key"), "-outform", "DER", "-v2", "aes-256-cbc", "-iter", "2048", "-passout", "pass:x",
        ])
        let hostile = HostileP12.encode(try HostileP12.parse(der[...]).map(HostileP12.replacingCount))
        XCTAssertNotEqual(hostile, der, "the count was found")
        let derPath = try directory.write("key.der", hostile)
        let base64 = Data(hostile).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let pemPath = try directory.write("key.pem", text: "-----BEGIN ENCRYPTED PRIVATE KEY-----\n\(base64)\n-----END ENCRYPTED PRIVATE KEY-----\n")
        for path in [derPath, pemPath] {
            let started = Date()
            let result = mtls(["convert", path, "--to", "pem", "--password", "env:P"], environment: ["P": "x"])
            XCTAssertExit(result, 3, path)
            XCTAssertContains(result.stderr, "2147483647 iterations", path)
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, path)
        }
    }
}

/// Rewrites iteration counts inside a DER PKCS#12 file, re-encoding every enclosing length.
enum HostileP12 {
    indirect enum Node {
        case primitive(UInt8, [UInt8])
        case constructed(UInt8, [Node])
        /// An OCTET STRING whose content is itself DER (the authSafe, the safes).
        case wrapped([Node])
    }

    struct Malformed: Error {}

    static func parse(_ bytes: ArraySlice<UInt8>) throws -> [Node] {
        var nodes: [Node] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard bytes.endIndex - index >= 2 else { throw Malformed() }
            let tag = bytes[index]
            var length = Int(bytes[index + 1])
            var start = index + 2
            if length & 0x80 != 0 {
                let count = length & 0x7F
                guard count >= 1, count <= 4, start + count <= bytes.endIndex else { throw Malformed() }
                length = bytes[start..<(start + count)].reduce(0) { $0 << 8 | Int($1) }
                start += count
            }
            guard start + length <= bytes.endIndex else { throw Malformed() }
            let content = bytes[start..<(start + length)]
            if tag & 0x20 != 0 {
                nodes.append(.constructed(tag, try parse(content)))
            } else if tag == 0x04, let inner = try? parse(content), encode(inner) == Array(content) {
                nodes.append(.wrapped(inner))
            } else {
                nodes.append(.primitive(tag, Array(content)))
            }
            index = start + length
        }
        return nodes
    }

    static func encode(_ nodes: [Node]) -> [UInt8] {
        nodes.flatMap { node -> [UInt8] in
            switch node {
            case .primitive(let tag, let content): return header(tag, content.count) + content
            case .constructed(let tag, let children):
                let content = encode(children)
                return header(tag, content.count) + content
            case .wrapped(let children):
                let content = encode(children)
                return header(0x04, content.count) + content
            }
        }
    }

    static func header(_ tag: UInt8, _ length: Int) -> [UInt8] {
        if length < 0x80 { return [tag, UInt8(length)] }
        var bytes: [UInt8] = []
        var rest = length
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [tag, 0x80 | UInt8(bytes.count)] + bytes
    }

    /// Replaces every INTEGER 2048 (the fixtures' count) under `node` with 2³¹−1.
    static func replacingCount(_ node: Node) -> Node {
        switch node {
        case .primitive(0x02, [0x08, 0x00]): return .primitive(0x02, [0x7F, 0xFF, 0xFF, 0xFF])
        case .primitive: return node
        case .constructed(let tag, let children): return .constructed(tag, children.map(replacingCount))
        case .wrapped(let children): return .wrapped(children.map(replacingCount))
        }
    }

    /// Replaces the count in the MacData (the PFX's third element) and/or in the authSafe (the
    /// encryption parameters).
    static func withIterations(_ der: [UInt8], mac: Bool, content: Bool) throws -> [UInt8] {
        guard case .constructed(let tag, var pfx)? = try parse(der[...]).first, pfx.count == 3 else { throw Malformed() }
        if content { pfx[1] = replacingCount(pfx[1]) }
        if mac { pfx[2] = replacingCount(pfx[2]) }
        return encode([.constructed(tag, pfx)])
    }
}

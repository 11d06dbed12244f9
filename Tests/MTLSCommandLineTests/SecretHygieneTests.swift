import Foundation
import MTLSTrust
import XCTest

@testable import MTLSCommandLine

#if canImport(Glibc)
    import Glibc
#endif

/// Secrets on disk and in memory (issue #9): every private key and PKCS#12 a command writes is mode
/// 0600 whatever the umask and whatever was there before; no temporary file (`.NAME.mtls-*.tmp`) and
/// no half of a set of files is left behind, on success or on any failure that can be provoked; a
/// failed forced write leaves the files that were there untouched; passwords never appear in what
/// a command prints, and the bytes the secret reader held are wiped.
final class SecretHygieneTests: XCTestCase {
    private let alice = Fixtures.path("p12/client-alice-modern.p12")
    private let cert = Fixtures.path("client-alice.pem")
    private let key = Fixtures.path("client-alice.key")
    private let encryptedKey = Fixtures.path("keys/rsa-pkcs8-encrypted.pem")  // password "secret"
    /// A password no fixture or message contains, so that finding it in output proves an echo.
    private let secret = "Zebra-7731-not-the-password"

    // MARK: - Helpers

    /// Every file and directory under `path` (hidden ones too) with its mode and contents, so that
    /// "nothing changed" is one comparison.
    private func snapshot(_ path: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        func walk(_ relative: String) throws {
            let full = relative.isEmpty ? path : path + "/" + relative
            for name in try FileManager.default.contentsOfDirectory(atPath: full) {
                let child = relative.isEmpty ? name : relative + "/" + name
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: path + "/" + child, isDirectory: &isDirectory)
                let mode = String(try permissions(path + "/" + child), radix: 8)
                if isDirectory.boolValue {
                    entries[child] = "directory \(mode)"
                    try walk(child)
                } else {
                    entries[child] = "file \(mode) \(contents(path + "/" + child)?.hashValue ?? 0)"
                }
            }
        }
        try walk("")
        return entries
    }

    /// The temporary files of `OutputFile` anywhere under `path`.
    private func temporaryFiles(_ path: String) throws -> [String] {
        try snapshot(path).keys.filter { name in
            let last = name.split(separator: "/").last.map(String.init) ?? name
            return last.hasPrefix(".") && last.contains(".mtls-") && last.hasSuffix(".tmp")
        }.sorted()
    }

    /// Runs `body` with `umask` set to `mask`, then restores it.
    private func withUmask<T>(_ mask: mode_t, _ body: () throws -> T) rethrows -> T {
        let old = umask(mask)
        defer { umask(old) }
        return try body()
    }

    /// Runs `body` with the file size limit (RLIMIT_FSIZE) at `bytes`: a write past it fails with
    /// EFBIG, as on a full disk, even for root. SIGXFSZ is ignored meanwhile.
    private func withFileSizeLimit<T>(_ bytes: Int, _ body: () throws -> T) rethrows -> T {
        var old = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &old)
        let handler = signal(SIGXFSZ, SIG_IGN)
        var limited = old
        limited.rlim_cur = rlim_t(bytes)
        setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limited)
        defer {
            setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &old)
            signal(SIGXFSZ, handler)
        }
        return try body()
    }

    /// True when permission bits do not stop this process (root): a read-only directory cannot
    /// make a write fail then.
    private var permissionsAreIgnored: Bool { geteuid() == 0 }

    // MARK: - Mode 0600

    func testEveryKeyAndPKCS12AnyCommandWritesIs0600EvenWithUmaskZero() throws {
        let directory = try TemporaryDirectory(self)
        let p = ["P": "mtls", "KEYPASS": "secret"]
        // (what, command, the secret files it writes, the public files it writes)
        let runs: [(String, [String], [String], [String])] = [
            ("import pem", ["import", alice, "--password", "env:P", "--out-dir", directory.file("pem")], ["pem/key.pem"], ["pem/cert.pem", "pem/chain.pem"]),
            ("import der", ["import", alice, "--password", "env:P", "--out-dir", directory.file("der"), "--to", "der"], ["der/key.der"], ["der/cert.der", "der/chain-1.der"]),
            ("convert key to pem", ["convert", key, "--to", "pem", "--out", directory.file("key.pem")], ["key.pem"], []),
            ("convert key to der", ["convert", key, "--to", "der", "--out", directory.file("key.der")], ["key.der"], []),
            ("convert encrypted key", ["convert", encryptedKey, "--to", "pem", "--password", "env:KEYPASS", "--out", directory.file("rsa.pem")], ["rsa.pem"], []),
            ("export", ["export", "--cert", cert, "--key", key, "--out", directory.file("alice.p12"), "--password", "env:P"], ["alice.p12"], []),
            ("export legacy", ["export", "--cert", cert, "--key", key, "--out", directory.file("legacy.p12"), "--password", "env:P", "--legacy"], ["legacy.p12"], []),
            ("convert certificate", ["convert", cert, "--to", "der", "--out", directory.file("cert.der")], [], ["cert.der"]),
        ]
        for (what, arguments, secrets, publicFiles) in runs {
            let result = withUmask(0) { mtls(arguments, environment: p) }
            XCTAssertExit(result, 0, what)
            for name in secrets { XCTAssertEqual(try permissions(directory.file(name)), 0o600, "\(what): \(name) holds a secret") }
            for name in publicFiles { XCTAssertEqual(try permissions(directory.file(name)), 0o644, "\(what): \(name) is public") }
        }
        XCTAssertEqual(try permissions(directory.file("pem")), 0o700, "the directory import makes for a key is private")
        XCTAssertEqual(try temporaryFiles(directory.path), [], "no temporary file after success")
    }

    func testTheTestPKIOfServeAndDemoWritesEveryKeyAndTheP12As0600EvenWithUmaskZero() throws {
        let directory = try TemporaryDirectory(self)
        let pki = directory.file("pki")
        let (_, created) = try withUmask(0) { try TestPKI.loadOrCreate(in: pki) }
        XCTAssertTrue(created)
        for name in ["ca.key", "server.key", "client.key", "client.p12"] { XCTAssertEqual(try permissions(pki + "/" + name), 0o600, name) }
        for name in ["ca.pem", "server.pem", "client.pem"] { XCTAssertEqual(try permissions(pki + "/" + name), 0o644, name) }
        XCTAssertEqual(try permissions(pki), 0o700)
        XCTAssertEqual(try temporaryFiles(directory.path), [])
    }

    func testForcedOverwriteOfAnOpenFileMakesTheKeyOrPKCS12Mode0600() throws {
        // convert → PEM over a 0644 file is ConvertCommandTests.testForcedKeyOverwriteTightensTheModeTo0600.
        let directory = try TemporaryDirectory(self)
        let p = ["P": "mtls"]
        let runs: [(String, [String], [String])] = [
            ("import pem", ["import", alice, "--password", "env:P", "--out-dir", directory.path, "--force"], ["key.pem", "cert.pem", "chain.pem"]),
            ("import der", ["import", alice, "--password", "env:P", "--out-dir", directory.path, "--to", "der", "--force"], ["key.der"]),
            ("convert key to der", ["convert", key, "--to", "der", "--out", directory.file("out.der"), "--force"], ["out.der"]),
            ("export", ["export", "--cert", cert, "--key", key, "--out", directory.file("alice.p12"), "--password", "env:P", "--force"], ["alice.p12"]),
        ]
        for (what, arguments, existing) in runs {
            for name in existing {
                try directory.write(name, text: "old \(name)\n")
                chmod(directory.file(name), name.hasPrefix("key") || name.hasSuffix(".p12") || name == "out.der" ? 0o666 : 0o644)
            }
            XCTAssertExit(mtls(arguments, environment: p), 0, what)
            let secret = existing[0]
            XCTAssertEqual(try permissions(directory.file(secret)), 0o600, "\(what): \(secret) was 0666 before and holds a secret now")
            XCTAssertNotEqual(contents(directory.file(secret)), Array("old \(secret)\n".utf8), "\(what): overwritten")
        }
        XCTAssertEqual(try temporaryFiles(directory.path), [])
    }

    func testASymlinkAtTheDestinationIsReplacedNotWrittenThrough() throws {
        let directory = try TemporaryDirectory(self)
        let elsewhere = try directory.write("elsewhere.txt", text: "not a key\n")
        chmod(elsewhere, 0o644)
        let out = directory.file("alice.p12")
        try FileManager.default.createSymbolicLink(atPath: out, withDestinationPath: elsewhere)
        XCTAssertExit(mtls(["export", "--cert", cert, "--key", key, "--out", out, "--password", "env:P", "--force"], environment: ["P": "mtls"]), 0)
        XCTAssertEqual(contents(elsewhere), Array("not a key\n".utf8), "the PKCS#12 was not written into the link's target")
        XCTAssertEqual(try permissions(elsewhere), 0o644)
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: out), "the link was replaced by a regular file")
        XCTAssertEqual(try permissions(out), 0o600)
    }

    // MARK: - Nothing left behind on failure

    /// One failure: the command, what to set up first, and what stderr must say.
    private struct Failure {
        var name: String
        var arguments: (TemporaryDirectory) -> [String]
        var setUp: (TemporaryDirectory) throws -> Void = { _ in }
        var fragment: String
        var fileSizeLimit: Int? = nil
    }

    /// Runs each failure in a fresh directory: exit 3, the fragment on stderr, and the directory
    /// exactly as it was (nothing new, no temporary file, what was there untouched).
    private func assertLeavesNothingBehind(_ failures: [Failure], file: StaticString = #filePath, line: UInt = #line) throws {
        for failure in failures {
            let directory = try TemporaryDirectory(self)
            try failure.setUp(directory)
            let before = try snapshot(directory.path)
            let arguments = failure.arguments(directory)
            let result: CLIResult
            if let limit = failure.fileSizeLimit {
                result = withFileSizeLimit(limit) { mtls(arguments, environment: ["P": "mtls", "WRONG": secret, "KEYPASS": "secret"]) }
            } else {
                result = mtls(arguments, environment: ["P": "mtls", "WRONG": secret, "KEYPASS": "secret"])
            }
            XCTAssertExit(result, 3, failure.name, file: file, line: line)
            XCTAssertContains(result.stderr, failure.fragment, failure.name, file: file, line: line)
            XCTAssertEqual(try temporaryFiles(directory.path), [], "\(failure.name): a temporary file was left behind", file: file, line: line)
            XCTAssertEqual(try snapshot(directory.path), before, "\(failure.name): the directory changed", file: file, line: line)
        }
    }

    /// An unwritable destination: a read-only directory, or (as root, whom permission bits do not
    /// stop) a path below a regular file.
    private func unwritable(_ directory: TemporaryDirectory, _ name: String) -> String {
        permissionsAreIgnored ? directory.file("regular-file/\(name)") : directory.file("read-only/\(name)")
    }

    private func makeUnwritable(_ directory: TemporaryDirectory) throws {
        try directory.write("regular-file", text: "x\n")
        try FileManager.default.createDirectory(atPath: directory.file("read-only"), withIntermediateDirectories: false)
        chmod(directory.file("read-only"), 0o555)
        let path = directory.file("read-only")
        addTeardownBlock { chmod(path, 0o755) }
    }

    func testImportLeavesNothingBehindOnAnyFailure() throws {
        let importAlice: (String) -> [String] = { ["import", self.alice, "--password", $0] }
        try assertLeavesNothingBehind([
            Failure(name: "wrong password", arguments: { importAlice("env:WRONG") + ["--out-dir", $0.file("alice")] }, fragment: "password"),
            Failure(
                name: "garbage input", arguments: { ["import", Fixtures.path("bad/garbage.bin"), "--password", "env:P", "--out-dir", $0.file("alice")] },
                fragment: "garbage.bin"),
            Failure(
                name: "key.pem is a directory", arguments: { importAlice("env:P") + ["--out-dir", $0.path, "--force"] },
                setUp: { try FileManager.default.createDirectory(atPath: $0.file("key.pem"), withIntermediateDirectories: false) }, fragment: "is a directory"),
            Failure(
                name: "unwritable directory", arguments: { importAlice("env:P") + ["--out-dir", self.unwritable($0, "alice")] }, setUp: makeUnwritable,
                fragment: "cannot create"),
            // key.pem fits under the limit, cert.pem does not.
            Failure(
                name: "the disk fills up at the second file", arguments: { importAlice("env:P") + ["--out-dir", $0.file("alice")] }, fragment: "File too large",
                fileSizeLimit: 512),
        ])
    }

    func testAFailedForcedImportLeavesTheFilesThatWereThereUntouched() throws {
        let failures = [
            // cert.pem cannot be written: key.pem, written first, must not have replaced the old one.
            Failure(
                name: "cert.pem is a directory", arguments: { ["import", self.alice, "--password", "env:P", "--out-dir", $0.path, "--force"] },
                setUp: { directory in
                    try directory.write("key.pem", text: "the key that was there\n")
                    chmod(directory.file("key.pem"), 0o600)
                    try FileManager.default.createDirectory(atPath: directory.file("cert.pem"), withIntermediateDirectories: false)
                }, fragment: "is a directory"),
            Failure(
                name: "the disk fills up at cert.pem", arguments: { ["import", self.alice, "--password", "env:P", "--out-dir", $0.path, "--force"] },
                setUp: { directory in
                    for name in ["key.pem", "cert.pem", "chain.pem"] { try directory.write(name, text: "old \(name)\n") }
                }, fragment: "File too large", fileSizeLimit: 512),
        ]
        try assertLeavesNothingBehind(failures)
    }

    func testConvertLeavesNothingBehindOnAnyFailure() throws {
        try assertLeavesNothingBehind([
            Failure(
                name: "wrong password", arguments: { ["convert", self.encryptedKey, "--to", "pem", "--password", "env:WRONG", "--out", $0.file("key.pem")] },
                fragment: "password"),
            Failure(name: "garbage input", arguments: { ["convert", Fixtures.path("bad/garbage.bin"), "--to", "pem", "--out", $0.file("key.pem")] }, fragment: "garbage.bin"),
            Failure(
                name: "destination is a directory", arguments: { ["convert", self.key, "--to", "pem", "--out", $0.file("key.pem"), "--force"] },
                setUp: { try FileManager.default.createDirectory(atPath: $0.file("key.pem"), withIntermediateDirectories: false) }, fragment: "is a directory"),
            Failure(
                name: "unwritable directory", arguments: { ["convert", self.key, "--to", "pem", "--out", self.unwritable($0, "key.pem")] }, setUp: makeUnwritable,
                fragment: "cannot write"),
            Failure(
                name: "the disk is full", arguments: { ["convert", self.key, "--to", "pem", "--out", $0.file("key.pem")] }, fragment: "File too large",
                fileSizeLimit: 100),
            Failure(
                name: "the disk is full, forced over a key", arguments: { ["convert", self.key, "--to", "pem", "--out", $0.file("key.pem"), "--force"] },
                setUp: { try $0.write("key.pem", text: "the key that was there\n") }, fragment: "File too large", fileSizeLimit: 100),
        ])
    }

    func testExportLeavesNothingBehindOnAnyFailure() throws {
        let base: (TemporaryDirectory) -> [String] = { _ in ["export", "--cert", self.cert, "--key", self.key, "--password", "env:P"] }
        try assertLeavesNothingBehind([
            Failure(
                name: "wrong key password",
                arguments: {
                    [
                        "export", "--cert", Fixtures.path("client-bob-rsa.pem"), "--key", self.encryptedKey, "--key-password", "env:WRONG", "--password", "env:P", "--out",
                        $0.file("x.p12"),
                    ]
                }, fragment: "password"),
            Failure(
                name: "garbage certificate",
                arguments: { ["export", "--cert", Fixtures.path("bad/garbage.bin"), "--key", self.key, "--password", "env:P", "--out", $0.file("x.p12")] }, fragment: "garbage.bin"),
            Failure(
                name: "destination is a directory", arguments: { base($0) + ["--out", $0.file("x.p12"), "--force"] },
                setUp: { try FileManager.default.createDirectory(atPath: $0.file("x.p12"), withIntermediateDirectories: false) }, fragment: "is a directory"),
            Failure(name: "unwritable directory", arguments: { base($0) + ["--out", self.unwritable($0, "x.p12")] }, setUp: makeUnwritable, fragment: "cannot write"),
            Failure(name: "the disk is full", arguments: { base($0) + ["--out", $0.file("x.p12")] }, fragment: "File too large", fileSizeLimit: 100),
            Failure(
                name: "the disk is full, forced over a PKCS#12", arguments: { base($0) + ["--out", $0.file("x.p12"), "--force"] },
                setUp: { try $0.write("x.p12", text: "the p12 that was there\n") }, fragment: "File too large", fileSizeLimit: 100),
        ])
    }

    // MARK: - Passwords never printed

    /// Every secret form, holding `secret`.
    private func specs(_ test: XCTestCase) throws -> [(String, [String: String], [UInt8])] {
        let directory = try TemporaryDirectory(test)
        let file = try directory.write("password.txt", text: "\(secret)\n")
        let fd = try pipeHolding(secret, test)
        return [
            ("pass:\(secret)", [:], []), ("env:WRONG", ["WRONG": secret], []), ("file:\(file)", [:], []), ("fd:\(fd)", [:], []),
            ("stdin", [:], Array("\(secret)\n".utf8)),
        ]
    }

    private func assertNoSecret(_ result: CLIResult, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotContains(result.stdout, secret, "\(what): stdout", file: file, line: line)
        XCTAssertNotContains(result.stderr, secret, "\(what): stderr", file: file, line: line)
    }

    func testAWrongPasswordInAnyFormIsNeverPrintedByAnyCommandInTextOrJSON() throws {
        let commands: [(String, [String])] = [
            ("import", ["import", alice, "--password"]),
            ("inspect", ["inspect", alice, "--password"]),
            ("verify", ["verify", Fixtures.path("p12/server.p12"), "--anchors", Fixtures.path("root-ca.pem"), "--password"]),
            ("pin", ["pin", Fixtures.path("p12/server.p12"), "--password"]),
            ("convert", ["convert", encryptedKey, "--to", "pem", "--password"]),
            ("export --key-password", ["export", "--cert", cert, "--key", encryptedKey, "--out", "/nonexistent/x.p12", "--password", "env:P", "--key-password"]),
            ("probe --p12", ["probe", "https://127.0.0.1:1/", "--p12", alice, "--password"]),
        ]
        for (name, arguments) in commands {
            for json in [false, true] {
                for (spec, environment, stdin) in try specs(self) {
                    let result = mtls(arguments + [spec] + (json ? ["--json"] : []), environment: environment.merging(["P": "mtls"]) { $1 }, stdin: stdin)
                    let what = "\(name) \(spec)\(json ? " --json" : "")"
                    XCTAssertNotEqual(result.exitCode, 0, "\(what) must fail\n\(result)")
                    assertNoSecret(result, what)
                }
            }
        }
    }

    func testAPasswordTypedWithoutItsFormIsNotRepeatedInTheError() throws {
        for arguments in [
            ["import", alice, "--password", secret],
            ["export", "--cert", cert, "--key", key, "--out", "/nonexistent/x.p12", "--password", secret],
            ["export", "--cert", cert, "--key", encryptedKey, "--out", "/nonexistent/x.p12", "--password", "env:P", "--key-password", secret],
            ["probe", "https://127.0.0.1:1/", "--user", "alice", "--user-password", secret],
            // probe's --key-password was once resolved with try? and a bad form silently ignored.
            ["probe", "https://127.0.0.1:1/", "--cert", cert, "--key", encryptedKey, "--key-password", secret],
        ] {
            for json in [false, true] {
                let result = mtls(arguments + (json ? ["--json"] : []), environment: ["P": "mtls"])
                XCTAssertExit(result, 2, arguments.joined(separator: " "))
                XCTAssertContains(result.stderr, "not a secret specification")
                XCTAssertContains(result.stderr, "pass:TEXT")
                assertNoSecret(result, arguments.joined(separator: " "))
            }
        }
    }

    func testProbeKeyPasswordFromAnUnsetVariableIsAnErrorNotIgnored() throws {
        let result = mtls(["probe", "https://127.0.0.1:1/", "--cert", cert, "--key", encryptedKey, "--key-password", "env:MTLS_NOT_SET_ANYWHERE"])
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, "MTLS_NOT_SET_ANYWHERE")
    }

    func testPasswordsOfOtherFailuresAndOfSuccessesAreNotPrintedEither() throws {
        let directory = try TemporaryDirectory(self)
        let environment = ["NEW": secret, "P": "mtls"]
        let runs: [(String, [String], Int32)] = [
            // The right password, then another failure.
            ("export, destination missing", ["export", "--cert", cert, "--key", key, "--out", directory.file("no/such/x.p12"), "--password", "env:NEW", "--json"], 3),
            ("export, key mismatch", ["export", "--cert", cert, "--key", Fixtures.path("server.key"), "--out", directory.file("x.p12"), "--password", "env:NEW", "--json"], 3),
            ("probe, connection refused", ["probe", "https://127.0.0.1:1/", "--user", "alice", "--user-password", "env:NEW", "-v", "--json"], 4),
            ("probe, connection refused, text", ["probe", "https://127.0.0.1:1/", "--user", "alice", "--user-password", "env:NEW", "-v"], 4),
            // Success.
            ("export", ["export", "--cert", cert, "--key", key, "--out", directory.file("ok.p12"), "--password", "env:NEW", "--json"], 0),
            ("import of it", ["import", directory.file("ok.p12"), "--password", "env:NEW", "--json"], 0),
            ("import of it, text", ["import", directory.file("ok.p12"), "--password", "env:NEW"], 0),
        ]
        for (what, arguments, code) in runs {
            let result = mtls(arguments, environment: environment)
            XCTAssertExit(result, code, what)
            assertNoSecret(result, what)
        }
    }

    func testPassFormWarnsForEverySecretOptionWithoutShowingTheSecret() throws {
        // import's --password is SecretsAndOutputTests.testPassSpecWorksAndWarnsOnStandardErrorWithoutEchoingTheSecret.
        let directory = try TemporaryDirectory(self)
        let runs: [(String, [String])] = [
            ("--password", ["inspect", alice, "--password", "pass:\(secret)"]),
            ("--password", ["verify", Fixtures.path("p12/server.p12"), "--anchors", Fixtures.path("root-ca.pem"), "--password", "pass:\(secret)"]),
            ("--password", ["pin", Fixtures.path("p12/server.p12"), "--password", "pass:\(secret)"]),
            ("--password", ["convert", encryptedKey, "--to", "pem", "--password", "pass:\(secret)"]),
            ("--password", ["export", "--cert", cert, "--key", key, "--out", directory.file("x.p12"), "--password", "pass:\(secret)"]),
            ("--key-password", ["export", "--cert", cert, "--key", encryptedKey, "--out", directory.file("y.p12"), "--password", "env:P", "--key-password", "pass:\(secret)"]),
            ("--password", ["probe", "https://127.0.0.1:1/", "--p12", alice, "--password", "pass:\(secret)"]),
            ("--key-password", ["probe", "https://127.0.0.1:1/", "--cert", cert, "--key", encryptedKey, "--key-password", "pass:\(secret)"]),
            ("--user-password", ["probe", "https://127.0.0.1:1/", "--user", "alice", "--user-password", "pass:\(secret)"]),
        ]
        for (option, arguments) in runs {
            let result = mtls(arguments, environment: ["P": "mtls"])
            let what = arguments.prefix(2).joined(separator: " ") + " " + option
            XCTAssertContains(result.stderr, "warning: \(option) pass:", what)
            XCTAssertContains(result.stderr, "`ps`", what)
            assertNoSecret(result, what)
            XCTAssertNotContains(result.stdout, "warning", "\(what): the warning is not on stdout")
        }
    }

    // MARK: - Wiped after use

    func testTheSecretReaderWipesTheBufferItReadAFileOrDescriptorInto() throws {
        let fd = try pipeHolding("\(secret)\r\nsecond line \(secret)", self)
        var buffer = [UInt8](repeating: 0xEE, count: 256)
        let address = buffer.withUnsafeBufferPointer { $0.baseAddress }
        let read = Secret.firstLine(readingFrom: fd, wiping: &buffer)
        XCTAssertEqual(read.map { text($0.line) }, secret, "the first line, without CR LF")
        XCTAssertEqual(buffer.count, 256)
        XCTAssertEqual(buffer.withUnsafeBufferPointer { $0.baseAddress }, address, "wiped in place, not a copy of it")
        XCTAssertTrue(buffer.allSatisfy { $0 == 0 }, "every byte read, the second line too, is zero after use: \(buffer.prefix(64))")
    }

    func testTheSecretReaderWipesStandardInputBytes() throws {
        var bytes = Array("\(secret)\nmore \(secret)\n".utf8)
        let count = bytes.count
        let address = bytes.withUnsafeBufferPointer { $0.baseAddress }
        XCTAssertEqual(text(Secret.firstLine(wiping: &bytes)), secret)
        XCTAssertEqual(bytes.count, count)
        XCTAssertEqual(bytes.withUnsafeBufferPointer { $0.baseAddress }, address, "wiped in place, not a copy of it")
        XCTAssertTrue(bytes.allSatisfy { $0 == 0 }, "\(bytes)")
    }

    func testTheProcessEnvironmentIsReadByNameAndEnvSecretsGoStraightIntoASecret() throws {
        // Console.standard() no longer copies the whole environment into Strings at start: env:
        // secrets are copied from the environment block into a Secret only.
        setenv("MTLS_TEST_ENV_SECRET", "from-the-environment", 1)
        defer { unsetenv("MTLS_TEST_ENV_SECRET") }
        let environment = Environment.process
        XCTAssertEqual(environment.secret("MTLS_TEST_ENV_SECRET").map(text), "from-the-environment")
        XCTAssertEqual(environment["MTLS_TEST_ENV_SECRET"], "from-the-environment")
        XCTAssertNil(environment.secret("MTLS_TEST_ENV_NOT_SET"))
        XCTAssertNil(environment["MTLS_TEST_ENV_NOT_SET"])
        let merged = environment.merging(["MTLS_TEST_ENV_SECRET": "override", "ONLY_HERE": "1"])
        XCTAssertEqual(merged.secret("MTLS_TEST_ENV_SECRET").map(text), "override", "an override wins over the process")
        XCTAssertEqual(merged["ONLY_HERE"], "1")
        XCTAssertNil(Environment(["A": "b"])["MTLS_TEST_ENV_SECRET"], "a given environment does not read the process's")
    }

    func testTheSecretReaderWipesEvenWhenTheReadFails() throws {
        var buffer = [UInt8](repeating: 0xEE, count: 64)
        XCTAssertNil(Secret.firstLine(readingFrom: -1, wiping: &buffer))
        XCTAssertTrue(buffer.allSatisfy { $0 == 0 })
    }

    func testSecretFormsStillReadTheFirstLineAfterWiping() throws {
        // The file:, fd: and stdin forms go through the wiping reader; each still gives the line.
        let directory = try TemporaryDirectory(self)
        let file = try directory.write("p.txt", text: "mtls\r\nnot this\n")
        let fd = try pipeHolding("mtls", self)
        for (spec, stdin) in [("file:\(file)", [UInt8]()), ("fd:\(fd)", []), ("stdin", Array("mtls\n".utf8))] {
            XCTAssertExit(mtls(["import", alice, "--password", spec], stdin: stdin), 0, spec)
        }
        // An empty line is the empty password; an empty file is no password at all (issue 38).
        let emptyLine = try directory.write("empty-line.txt", text: "\n")
        XCTAssertExit(mtls(["import", Fixtures.path("p12/client-alice-emptypass.p12"), "--password", "file:\(emptyLine)"]), 0, "an empty line is the empty password")
        let empty = try directory.write("empty.txt", text: "")
        let nothing = mtls(["import", Fixtures.path("p12/client-alice-emptypass.p12"), "--password", "file:\(empty)"])
        XCTAssertExit(nothing, 3, "an empty file is no password")
        XCTAssertContains(nothing.stderr, "no password was used")
        let unreadable = mtls(["import", alice, "--password", "file:\(directory.path)"])
        XCTAssertExit(unreadable, 3, "a directory is not a password file")
        XCTAssertContains(unreadable.stderr, "cannot be read")
    }

    /// A secret's bytes as text (tests only: the String is not wiped).
    private func text(_ secret: Secret) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

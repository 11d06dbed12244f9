import Foundation
import XCTest

/// `mtls` leaves OpenSSL's global tables to the operating system when it exits
/// (`OpenSSLInfo.skipCleanupAtExit()` in its `main`): freeing them block by block, each block wiped
/// first, was a twentieth of one `mtls verify` (docs/BENCHMARKS.md). valgrind is the witness: at
/// the end of the built executable, the blocks OpenSSL allocated while initialising are still
/// there, and nothing is lost. `openssl verify`, which keeps OpenSSL's exit handler, is the control
/// that shows the check can tell the two apart.
final class ProcessExitTests: XCTestCase {
    private func valgrind(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
        // A sanitized build (scripts/sanitizers.sh) makes a sanitized `mtls`, which valgrind cannot run.
        for runtime in ["__asan_init", "__tsan_init", "__msan_init"] where dlsym(UnsafeMutableRawPointer(bitPattern: 0), runtime) != nil {
            throw XCTSkip("a sanitizer runtime (\(runtime)) is loaded; this check runs in the normal test run")
        }
        let which = try runProcess("/bin/sh", ["-c", "command -v valgrind"])
        let path = which.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        guard which.status == 0, !path.isEmpty else {
            throw XCTSkip("valgrind is not installed (scripts/install-deps.sh installs it)")
        }
        return try runProcess(path, ["--leak-check=full", "--show-leak-kinds=reachable", "--num-callers=40", executable] + arguments)
    }

    /// The built `mtls` without its DWARF, which valgrind 3.19 cannot read (Swift 6.3 writes
    /// DWARF 5 forms it does not know); the symbol table stays for the stacks.
    private func strippedBinary(in directory: TemporaryDirectory) throws -> String {
        let copy = directory.file("mtls")
        let objcopy = try runProcess("/usr/bin/objcopy", ["--strip-debug", try BuiltBinary.path(), copy])
        XCTAssertEqual(objcopy.status, 0, objcopy.description)
        return copy
    }

    func testOpenSSLTablesAreLeftToTheSystemAtExitAndNothingIsLost() throws {
        let directory = try TemporaryDirectory(self)
        let chain = [Fixtures.path("server.pem"), Fixtures.path("intermediate-ca.pem")]
        let run = try valgrind(
            try strippedBinary(in: directory),
            ["verify"] + chain + ["--anchors", Fixtures.path("root-ca.pem"), "--host", "localhost", "--at", fixedTimeRFC3339])
        XCTAssertEqual(run.status, 0, run.description)
        XCTAssertTrue(run.stdoutText.contains("Verdict: trusted"), run.description)
        XCTAssertTrue(run.stderr.contains("definitely lost: 0 bytes in 0 blocks"), run.stderr)
        // Still reachable: blocks OpenSSL took through the wiping allocator while it initialised.
        let records = run.stderr.components(separatedBy: "are still reachable in loss record")
        XCTAssertTrue(
            records.dropFirst().contains { $0.contains("mtls_wiping_malloc") && $0.contains("OPENSSL_init_crypto") },
            "no block of OpenSSL's initialisation was left at exit:\n\(run.stderr.suffix(4000))")

        let control = try valgrind(
            "/usr/bin/openssl",
            ["verify", "-CAfile", Fixtures.path("root-ca.pem"), "-untrusted", Fixtures.path("intermediate-ca.pem"), "-attime", fixedTime]
                + [Fixtures.path("server.pem")])
        XCTAssertEqual(control.status, 0, control.description)
        XCTAssertTrue(control.stderr.contains("in use at exit: 0 bytes in 0 blocks"), control.stderr)
    }
}

import Foundation
import XCTest

/// The `mtls` executable links FoundationEssentials only, but this test bundle links full Foundation,
/// which quietly supplies what FoundationEssentials lacks (`TimeZone(identifier:)` answered nil
/// without it, and `mtls pin` trapped in the release binary while every in-process test passed).
/// So the built executable itself runs the same commands as the in-process harness, and the two
/// must print the same bytes and exit the same way.
final class FoundationFreeBinaryTests: XCTestCase {
    /// The built `mtls`; its absence fails these tests instead of skipping them, since nothing else
    /// runs the executable without Foundation.
    private func binary() throws -> String {
        do {
            return try BuiltBinary.path()
        } catch {
            XCTFail("\(error)")
            throw error
        }
    }

    func testTheExecutableLinksNeitherFoundationNorICU() throws {
        let ldd = try runProcess("/usr/bin/ldd", [try binary()])
        XCTAssertEqual(ldd.status, 0, ldd.description)
        let libraries = ldd.stdoutText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertFalse(libraries.isEmpty, ldd.description)
        for forbidden in ["libFoundation.so", "libFoundationInternationalization", "_FoundationICU", "libicu"] {
            XCTAssertFalse(libraries.contains { $0.contains(forbidden) }, "\(forbidden) is linked:\n\(ldd.stdoutText)")
        }
    }

    func testCommandsPrintTheSameWithoutFoundationAsInProcess() throws {
        let executable = try binary()
        let directory = try TemporaryDirectory(self)
        let chain = [Fixtures.path("server.pem"), Fixtures.path("intermediate-ca.pem")]
        let anchors = ["--anchors", Fixtures.path("root-ca.pem")]
        var runs: [[String]] = [
            ["verify"] + chain + anchors + ["--host", "localhost", "--at", fixedTimeRFC3339],
            ["verify"] + chain + anchors + ["--host", "localhost", "--at", fixedTime, "--json"],
            ["verify"] + chain + anchors + ["--host", "localhost", "--at", "2040-01-01T00:00:00Z"],
            ["verify", Fixtures.path("server-expired.pem"), Fixtures.path("intermediate-ca.pem")] + anchors + ["--at", fixedTime, "--json"],
            ["inspect", Fixtures.path("server-chain.pem")],
            ["inspect", Fixtures.path("server-chain.pem"), "--json"],
            ["pin", Fixtures.path("server-chain.pem"), "--check", Fixtures.path("server-chain.pem"), "--at", fixedTime],
            ["verify", "--no-such-option"],
        ]
        for format in [
            "spki", "cert", "json", "curl", "hpkp", "trustkit", "trustkit-objc", "trustkit-plist", "android", "android-trustkit", "okhttp", "okhttp-java", "ats", "swift",
        ] {
            runs.append(["pin", Fixtures.path("server-chain.pem"), "--host", "localhost", "--format", format, "--expires", "2030-01-01", "--at", fixedTime])
        }
        let pinFile = directory.file("pins.json")
        runs.append(["pin", Fixtures.path("server-chain.pem"), "--host", "localhost", "--format", "json", "--expires", "2026-06-20", "--at", fixedTime, "--out", pinFile])
        runs.append(["pin", Fixtures.path("server-chain.pem"), "--check", pinFile, "--at", fixedTime])
        runs.append(["pin", Fixtures.path("server-chain.pem"), "--check", pinFile, "--at", fixedTime, "--json"])
        for arguments in runs {
            // A run that writes the pin file writes it twice: in-process first, then alone.
            let writes = arguments.contains("--out")
            if writes { try? FileManager.default.removeItem(atPath: pinFile) }
            let inProcess = mtls(arguments)
            let written = writes ? contents(pinFile) : nil
            if writes { try? FileManager.default.removeItem(atPath: pinFile) }
            let alone = try runProcess(executable, arguments, environment: ["PATH": "/usr/bin:/bin"])
            let shown = arguments.joined(separator: " ")
            XCTAssertEqual(alone.status, inProcess.exitCode, "exit code of mtls \(shown)\n\(alone)")
            XCTAssertEqual(alone.stdoutText, inProcess.stdout, "stdout of mtls \(shown)")
            XCTAssertEqual(alone.stderr, inProcess.stderr, "stderr of mtls \(shown)")
            if let written { XCTAssertEqual(contents(pinFile), written, "the file mtls \(shown) wrote") }
        }
    }

    func testTheDemoPassesWithoutFoundation() throws {
        let result = try runProcess(try binary(), ["demo"], environment: ["PATH": "/usr/bin:/bin"])
        XCTAssertEqual(result.status, 0, result.description)
        XCTAssertFalse(result.stderr.contains("Fatal error"), result.stderr)
    }
}

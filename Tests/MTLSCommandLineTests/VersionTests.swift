import Foundation
import XCTest

@testable import MTLSCommandLine
import MTLSTrust

/// `mtls --version` names the version, the git commit of the build (recorded by BuildInfoPlugin)
/// and the OpenSSL in use.
final class VersionTests: XCTestCase {
    func testTheBuiltBinaryNamesTheCommitOfTheCheckout() throws {
        let git = try runProcess("/usr/bin/env", ["git", "-C", Fixtures.packageRoot.path, "rev-parse", "--short=12", "HEAD"])
        let head = git.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        guard git.status == 0, head.count == 12 else {
            throw XCTSkip("the package is not a git checkout here (\(git.stderr)); the binary then says 'commit unknown'")
        }
        let result = try runProcess(try BuiltBinary.path(), ["--version"])
        XCTAssertEqual(result.status, 0, "\(result)")
        let line = result.stdoutText.trimmingCharacters(in: .newlines)
        // The binary is built from the checkout the tests run in: its HEAD, `-modified` when
        // tracked files differ from it.
        XCTAssertTrue(line.hasPrefix("mtls \(MTLSCommand.version) (commit \(head)"), "expected commit \(head) in: \(line)")
        XCTAssertTrue(line.hasSuffix("\(MTLSTrust.OpenSSLInfo.version))"), line)
    }

    func testWithoutARecordedCommitTheVersionSaysUnknown() {
        XCTAssertEqual(
            MTLSCommand.versionText(commit: nil), "mtls \(MTLSCommand.version) (commit unknown, \(MTLSTrust.OpenSSLInfo.version))")
        XCTAssertEqual(
            MTLSCommand.versionText(commit: "0123456789ab"), "mtls \(MTLSCommand.version) (commit 0123456789ab, \(MTLSTrust.OpenSSLInfo.version))")
    }
}

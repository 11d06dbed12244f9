import Foundation
import MTLSTrust
import XCTest

@testable import MTLSCommandLine

/// Library hints name settings as data; the command line names them as its own options.
final class CommandLineHintTests: XCTestCase {
    func testAHintNamesSettingsByAPIInTheLibraryAndByOptionOnTheCommandLine() {
        let hint: Hint = "pass the intermediate X with \(setting: .intermediates), or its root with \(setting: .anchors)"
        XCTAssertEqual(hint.settings, [.intermediates, .anchors])
        XCTAssertEqual(hint.description, "pass the intermediate X with TrustPolicy.intermediates, or its root with TrustPolicy.anchors")
        XCTAssertEqual(hint.commandLine, "pass the intermediate X with --intermediates, or its root with --anchors")
        XCTAssertEqual(Hint(verbatim: "no setting").commandLine, "no setting")
        XCTAssertTrue(Hint(verbatim: "").isEmpty)
    }

    /// Every option a hint can name exists on some `mtls` command, so no hint sends a user to a
    /// flag that is not there.
    func testEverySettingIsNamedByAnOptionSomeCommandDeclares() {
        var names: Set<String> = []
        func walk(_ spec: CommandSpec) {
            names.formUnion(spec.effectiveOptions.flatMap(\.names))
            spec.subcommands.forEach(walk)
        }
        walk(MTLSCommand.rootSpec)
        for setting in Setting.allCases {
            let options = setting.commandLineName.split(whereSeparator: { " /".contains($0) }).filter { $0.hasPrefix("--") }
            XCTAssertFalse(options.isEmpty, "\(setting)")
            for option in options {
                XCTAssertTrue(names.contains(String(option)), "\(setting) is named \(option), which no command declares")
            }
        }
    }

    func testAnUntrustedChainsHintOnTheCommandLineNamesTheFlags() throws {
        func pem(_ name: String) throws -> Certificate {
            try XCTUnwrap(Certificate.fromPEM(Array(Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("TestCerts/" + name)))).first)
        }
        let policy = TrustPolicy(anchors: [try pem("root-ca.pem")], includesSystemRoots: false, purpose: .server)
        let evaluation = try TrustEvaluator(policy: policy).evaluate(try pem("server.pem"))
        let finding = try XCTUnwrap(evaluation.findings.first { $0.name.hasPrefix("X509_V_ERR_UNABLE_TO_GET_ISSUER") }, "\(evaluation.findings)")
        XCTAssertTrue(finding.hint.commandLine.contains("--intermediates"), finding.hint.commandLine)
        XCTAssertFalse(finding.hint.description.contains("--"), finding.hint.description)
    }
}

import Foundation
import MTLSHTTP
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
        for setting in Setting.trustSettings + Setting.httpSettings {
            XCTAssertNotNil(Setting.commandLineNames[setting], "\(setting.name) has no option in Setting.commandLineNames")
            let options = setting.commandLineName.split(whereSeparator: { " /`".contains($0) }).filter { $0.hasPrefix("--") }
            XCTAssertFalse(options.isEmpty, "\(setting)")
            for option in options {
                XCTAssertTrue(names.contains(String(option)), "\(setting) is named \(option), which no command declares")
            }
        }
    }

    /// Each layer names its own API: a hint from `MTLSTrust` never sends a library user to a type
    /// of `MTLSHTTP` or the test server, which a user of `MTLSTrust` alone does not have.
    func testTrustSettingsNameOnlyTheTrustLibrarysAPI() {
        for setting in Setting.trustSettings {
            for upper in ["HTTPSClient", "TLSClientConfiguration", "LoginOptions", "ClientIdentity", "TestServer", "TCP."] {
                XCTAssertFalse(setting.apiName.contains(upper), "\(setting.name) names \(setting.apiName)")
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

    /// MTLSTrust's and MTLSHTTP's errors name no `mtls` flag: their hints are settings, named by
    /// API for a library user and by option on the command line.
    func testLibraryErrorsCarryHintsAsSettingsAndTheCommandLineRendersTheFlags() throws {
        let p12 = try Fixtures.bytes("p12/server.p12")
        do throws(MTLSTrustError) {
            _ = try PrivateKey(bytes: p12, password: nil)
            XCTFail("a PKCS#12 file read as a private key")
        } catch {
            XCTAssertEqual(error.reason, .wrongObjectKind)
            XCTAssertEqual(error.hint?.settings, [.pkcs12Contents, .pkcs12Identity])
            XCTAssertFalse(error.message.contains("--") || error.message.contains("mtls "), error.message)
            XCTAssertContains(error.hint?.description ?? "", "PKCS12Bundle.identities")
            XCTAssertFalse(error.hint?.description.contains("--") ?? true)
            XCTAssertContains(error.hint?.commandLine ?? "", "--p12")
        }
        let two = try PKCS12Bundle(derBytes: try Fixtures.bytes("p12/two-identities.p12"), password: nil)
        do throws(MTLSTrustError) {
            _ = try ClientIdentity(two, label: "two.p12")
            XCTFail("an identity guessed among two")
        } catch {
            XCTAssertEqual(error.hint?.settings, [.pkcs12IdentitySelection])
            XCTAssertFalse(error.message.contains("--"), error.message)
            XCTAssertContains(error.hint?.description ?? "", "PKCS12Bundle.identities")
            XCTAssertContains(error.hint?.commandLine ?? "", "`mtls import --name` or `--index`")
        }
        // On the command line the same error ends in the flag to use.
        let result = mtls(["probe", "https://127.0.0.1:1/", "--cert", Fixtures.path("server.pem"), "--key", Fixtures.path("p12/server.p12")])
        XCTAssertExit(result, 3)
        XCTAssertContains(result.stderr, "p12/server.p12: it is a PKCS#12 file, not a private key")
        XCTAssertContains(result.stderr, "`mtls import FILE --out-dir DIR`, or give it as the identity with --p12")
    }

    func testAnEKUFindingsHintNamesThePurposeSettingNotAFlag() throws {
        func pem(_ name: String) throws -> Certificate {
            try XCTUnwrap(Certificate.fromPEM(Array(Data(contentsOf: Fixtures.packageRoot.appendingPathComponent("TestCerts/" + name)))).first)
        }
        // A server certificate checked as a client one: its EKU has serverAuth only.
        let policy = TrustPolicy(anchors: [try pem("root-ca.pem")], includesSystemRoots: false, intermediates: [try pem("intermediate-ca.pem")], purpose: .client)
        let evaluation = try TrustEvaluator(policy: policy).evaluate(try pem("server.pem"))
        let finding = try XCTUnwrap(evaluation.findings.first { $0.name == "X509_V_ERR_INVALID_PURPOSE" }, "\(evaluation.findings)")
        XCTAssertTrue(finding.hint.settings.contains(.purpose))
        XCTAssertContains(finding.hint.description, "TrustPolicy.purpose any")
        XCTAssertContains(finding.hint.commandLine, "--purpose any")
    }
}

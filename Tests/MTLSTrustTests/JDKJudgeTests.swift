import Foundation
import XCTest

@testable import MTLSTrust

/// The JDK as judge of the Java verdict: scripts/judges/JdkTrustJudge.java, compiled here with the
/// installed OpenJDK 17 (scripts/install-deps.sh), runs the JDK's own PKIX `X509TrustManager` on each
/// fixture at the fixed time; ``PlatformEvaluator``'s Java verdict must agree fixture by fixture.
final class JDKJudgeTests: XCTestCase {
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    /// The JDK home: `$JAVA_HOME`, else OpenJDK 17 where Debian puts it, else the `javac` on PATH.
    private func jdkHome() throws -> String {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["JAVA_HOME"], !env.isEmpty { candidates.append(env) }
        candidates += ["/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/java-17-openjdk-arm64"]
        if let javac = ExternalTool.find("javac") {
            let resolved = URL(fileURLWithPath: javac).resolvingSymlinksInPath()
            candidates.append(resolved.deletingLastPathComponent().deletingLastPathComponent().path)
        }
        for home in candidates where FileManager.default.isExecutableFile(atPath: home + "/bin/javac") { return home }
        throw XCTSkip("no JDK with javac found (scripts/install-deps.sh installs openjdk-17-jdk-headless)")
    }

    private var packageRoot: URL { TestCertificates.directory.deletingLastPathComponent() }

    /// Compiles the judge into a temporary directory and runs it on `files` (relative to TestCerts/).
    private func judge(home: String, anchors: [String], files: [String], at time: Date) throws -> [String: String] {
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-jdk-judge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temp) }
        let source = packageRoot.appendingPathComponent("scripts/judges/JdkTrustJudge.java").path
        let compiled = try ExternalTool.run(home + "/bin/javac", ["-d", temp.path, source])
        XCTAssertEqual(compiled.status, 0, "javac \(source): \(compiled.combined)")
        var anchorBytes: [UInt8] = []
        for anchor in anchors { anchorBytes += try TestCertificates.bytes(anchor) }
        let anchorFile = temp.appendingPathComponent("anchors.pem")
        try Data(anchorBytes).write(to: anchorFile)
        let paths = files.map { TestCertificates.url($0).path }
        let output = try ExternalTool.run(
            home + "/bin/java", ["-cp", temp.path, "JdkTrustJudge", anchorFile.path, String(Int(time.timeIntervalSince1970))] + paths)
        XCTAssertEqual(output.status, 0, output.combined)
        var verdicts: [String: String] = [:]
        for line in output.text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count >= 2, let index = paths.firstIndex(of: parts[1]) else { continue }
            verdicts[files[index]] = parts[0] + (parts.count > 2 ? " " + parts[2] : "")
        }
        XCTAssertEqual(verdicts.count, files.count, "one line per fixture: \(output.text)")
        return verdicts
    }

    private func ours(_ file: String, anchors: [String], javaHome: String, at time: Date) throws -> PlatformVerdict {
        let certificates = try Certificate.fromPEM(try TestCertificates.bytes(file))
        var roots: [Certificate] = []
        for anchor in anchors { roots += try Certificate.fromPEM(try TestCertificates.bytes(anchor)) }
        let constraints = try XCTUnwrap(JavaAlgorithmConstraints.installed(javaHome: javaHome), "java.security of \(javaHome)")
        // The judge's anchors are a KeyStore of its own, not the JDK's cacerts: private anchors.
        let policy = TrustPolicy(anchors: roots, evaluationTime: time)
        let result = try PlatformEvaluator.evaluate(
            certificates[0], extraIntermediates: Array(certificates.dropFirst()), policy: policy, anchorKind: .privateAnchor,
            javaConstraints: constraints, platforms: [.java])
        return try XCTUnwrap(result.verdicts.first)
    }

    /// Every fixture under TestCerts/platform/, and the main suite's server chains.
    func testTheJDKAgreesWithTheJavaVerdictOnEveryFixture() throws {
        let home = try jdkHome()
        let names = try FileManager.default.contentsOfDirectory(atPath: TestCertificates.url("platform").path)
            .filter { $0.hasSuffix(".pem") && !$0.contains("root-ca") }.sorted()
        XCTAssertGreaterThanOrEqual(names.count, 15, "TestCerts/platform/ is incomplete (run scripts/make-platform-certs.sh)")
        let anchors = ["platform/root-ca.pem", "platform/public-root-ca.pem", "root-ca.pem"]
        let files = names.map { "platform/\($0)" } + ["server-chain.pem", "server-fullchain.pem", "server-rsa2048.pem", "server-p384.pem", "server-cn-only.pem"]
        var agreed: [String] = []
        var disagreed: [String] = []
        for time in [Self.fixedTime, Date(timeIntervalSince1970: 1_893_456_000)] {  // and 2030-01-01, when most have expired
            let jdk = try judge(home: home, anchors: anchors, files: files, at: time)
            for file in files {
                let verdict = try ours(file, anchors: anchors, javaHome: home, at: time)
                let jdkAccepts = jdk[file]?.hasPrefix("ACCEPT") ?? false
                let label = "\(file) at \(RFC3339.string(time))"
                if jdkAccepts == (verdict.outcome == .accepted) {
                    agreed.append(label)
                } else {
                    disagreed.append("\(label): JDK \(jdk[file] ?? "no answer"); mtls \(verdict.outcome.rawValue) \(verdict.failures.map(\.reason))")
                }
            }
        }
        XCTAssertEqual(disagreed, [], "the JDK disagrees on \(disagreed.count) of \(agreed.count + disagreed.count)")
        XCTAssertEqual(agreed.count, 2 * files.count)
        // The judge is a real one: it refuses what the JDK's defaults refuse.
        let jdk = try judge(home: home, anchors: anchors, files: ["platform/md5.pem", "platform/rsa768.pem", "platform/compliant.pem"], at: Self.fixedTime)
        XCTAssertTrue(jdk["platform/md5.pem"]?.contains("MD5withRSA") ?? false, jdk["platform/md5.pem"] ?? "")
        XCTAssertTrue(jdk["platform/rsa768.pem"]?.hasPrefix("REFUSE") ?? false)
        XCTAssertEqual(jdk["platform/compliant.pem"], "ACCEPT")
        print("JDK judge: \(agreed.count) agreed, \(disagreed.count) disagreed, \(files.count) fixtures at 2 times")
    }
}

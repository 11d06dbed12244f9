import Foundation
import XCTest

/// A peer started by `scripts/peers/<script> start [arguments]`, stopped by its recorded PIDs.
/// Exit status 3 from start (a server not installed) skips the test.
final class InteropPeer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    let script: String
    let values: [String: String]

    subscript(key: String) -> String { values[key] ?? "" }
    func port(_ key: String) -> Int { Int(values[key] ?? "") ?? 0 }

    init(_ script: String, _ arguments: [String] = []) throws {
        let path = HTTPFixtures.root.appendingPathComponent("scripts/peers").appendingPathComponent(script).path
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("scripts/peers/\(script) does not exist") }
        let result = Subprocess.run("/bin/bash", [path, "start"] + arguments)
        if result.status == 3 { throw XCTSkip("scripts/peers/\(script): a dependency is missing (run scripts/install-deps.sh)") }
        guard result.status == 0 else {
            throw NSError(domain: "InteropPeer", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: "scripts/peers/\(script) start failed (\(result.status))"])
        }
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        self.script = path
        self.values = values
    }

    func stop() { _ = Subprocess.run("/bin/bash", [script, "stop", "--dir", self["DIR"]]) }
}

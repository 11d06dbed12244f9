import Foundation
import XCTest

/// A peer started by `scripts/peers/<script> start [arguments]`, stopped by its recorded PIDs.
/// Exit status 3 from start (a server not installed) skips the test.
public final class InteropPeer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    public let script: String
    public let values: [String: String]

    public subscript(key: String) -> String { values[key] ?? "" }
    public func port(_ key: String = "PORT") -> Int { Int(values[key] ?? "") ?? 0 }

    public init(_ script: String, _ arguments: [String] = []) throws {
        let path = SupportFixtures.root.appendingPathComponent("scripts/peers").appendingPathComponent(script).path
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

    public func stop() { _ = Subprocess.run("/bin/bash", [script, "stop", "--dir", self["DIR"]]) }
}

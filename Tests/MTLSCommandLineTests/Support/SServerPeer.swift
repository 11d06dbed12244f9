import Foundation
import XCTest

/// One `openssl s_server` on 127.0.0.1 (scripts/peers/s_server.sh, `-www`, no client certificate
/// asked), with the given certificate and extra options; stopped by PID.
final class SServerPeer {
    let port: Int
    private let directory: String
    private let script = Fixtures.packageRoot.appendingPathComponent("scripts/peers/s_server.sh").path

    init(certificate cert: String, key: String, _ extra: [String]) throws {
        // Foundation's Process leaves the parent's pipe descriptors open in the child; s_server
        // would inherit them and keep our stdout pipe open forever. Close all but 0-2 first.
        let closeInherited = "for fd in /proc/$$/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] && eval \"exec $n>&-\"; done; exec /bin/bash \"$0\" \"$@\""
        let result = try runProcess("/bin/bash", ["-c", closeInherited, script, "start", "--no-verify", "-cert", cert, "-key", key] + extra)
        var values: [String: String] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        guard result.status == 0, let port = values["PORT"].flatMap(Int.init), let directory = values["DIR"] else {
            throw XCTSkip("openssl s_server \(extra.joined(separator: " ")) did not start here: \(result.stderr)")
        }
        self.port = port
        self.directory = directory
    }

    /// With a TestCerts/platform/ certificate and its key.
    convenience init(platform certificate: String, _ extra: [String]) throws {
        try self.init(certificate: Fixtures.path("platform/\(certificate).pem"), key: Fixtures.path("platform/\(certificate).key"), extra)
    }

    func stop() { _ = try? runProcess("/bin/bash", [script, "stop", "--dir", directory]) }
}

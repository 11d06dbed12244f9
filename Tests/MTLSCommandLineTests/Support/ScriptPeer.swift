import Foundation
import XCTest

/// A peer written as a script (Python, Node.js) that listens on a free port of 127.0.0.1 and
/// prints the port as its first line. Stopped with SIGKILL: a test process that ignores SIGTERM
/// (the in-process `mtls serve` tests set that up) passes the ignored disposition on to its
/// children, and `terminate()` would then wait forever.
final class ScriptPeer {
    /// The script ran but printed no port: it did not start here.
    struct NotStarted: Error, CustomStringConvertible {
        let output: String
        var description: String { "the peer printed no port: \(output.debugDescription)" }
    }

    let port: Int
    private let process = Process()

    init(_ executable: String, _ arguments: [String]) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line, byte by byte: a read may return before the whole line is written.
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 0x0A { line.append(byte) }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(text) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw NotStarted(output: text)
        }
        self.port = port
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

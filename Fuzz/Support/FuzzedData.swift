// Shared by every fuzz target (compiled into each one by scripts/fuzz.sh).
import Foundation

/// Reads a libFuzzer input as a stream of decisions and values.
struct FuzzedData {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Everything, unread or not.
    var all: [UInt8] { bytes }
    var isEmpty: Bool { offset >= bytes.count }

    /// The next byte (0 once the input is used up).
    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A number in `0..<bound` from the next byte.
    mutating func choice(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(byte()) % bound }

    /// Up to `count` bytes.
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = end }
        return Array(bytes[offset..<end])
    }

    /// The rest of the input.
    mutating func rest() -> [UInt8] { take(bytes.count - offset) }

    /// The rest of the input split at NUL bytes.
    mutating func fields() -> [[UInt8]] { rest().split(separator: 0, omittingEmptySubsequences: false).map(Array.init) }

    /// Bytes as text, the way a server's bytes reach a String (invalid UTF-8 repaired).
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}

/// The entry point's shape: every target defines `fuzzOne` and this wrapper calls it.
@inline(__always)
func runFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int, _ body: (inout FuzzedData) -> Void) -> Int32 {
    guard let data, size > 0 else { return 0 }
    var input = FuzzedData(data, size)
    body(&input)
    return 0
}

/// A property the target checks; on failure, prints why (optimised builds drop `precondition`
/// messages) and aborts, which libFuzzer reports as a crash with the input saved.
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if condition { return }
    FileHandle.standardError.write(Array("fuzz check failed at \(file):\(line): \(message())\n".utf8).withUnsafeBufferPointer { Data(buffer: $0) })
    abort()
}

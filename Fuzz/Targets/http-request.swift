// The request parser of the test server (`mtls serve`), which reads whatever a client sends.
import Foundation
@testable import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let split = Int(input.byte()) + 1
        var parser = HTTPRequestParser(maximumBody: 1 << 16)
        var bytes = input.rest()[...]
        while !bytes.isEmpty {
            let piece = bytes.prefix(split)
            guard let (_, consumed) = try? parser.feed(piece) else { return }
            check(consumed >= 0 && consumed <= piece.count, "consumed \(consumed) of \(piece.count)")
            if parser.isComplete {
                // A pipelined next request starts after what was consumed.
                parser = HTTPRequestParser(maximumBody: 1 << 16)
            }
            bytes = bytes.dropFirst(consumed == 0 ? piece.count : consumed)
        }
        _ = parser.head?.headers.description
    }
}

// gzip/deflate decoding with the body ceiling (decompression bombs), input split into pieces.
import Foundation
@testable import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let coding = ["gzip", "deflate", "x-gzip"][input.choice(3)]
        let split = Int(input.byte()) * 16 + 1
        let limit = 1 << 20
        guard let decompressor = Decompressor(coding: coding, limit: limit) else { return }
        var produced = 0
        var bytes = input.rest()[...]
        while !bytes.isEmpty {
            let piece = Array(bytes.prefix(split))
            bytes = bytes.dropFirst(split)
            guard let output = try? decompressor.decode(piece) else { return }
            produced += output.count
            check(produced <= limit, "decoded \(produced) bytes past the \(limit)-byte limit")
        }
    }
}

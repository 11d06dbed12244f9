// The HTTP/1.1 response parser, fed in pieces the way TLS records arrive, then finished as on EOF.
import Foundation
@testable import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let method = ["GET", "HEAD", "POST", "CONNECT"][input.choice(4)]
        let split = Int(input.byte()) + 1
        HTTPFuzz.parseResponse(input.rest(), method: method, pieceSize: split)
    }
}

// The chunked transfer decoder: the input is the body of a `Transfer-Encoding: chunked` response.
import Foundation
@testable import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let split = Int(input.byte()) + 1
        let head = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        HTTPFuzz.parseResponse(head + input.rest(), method: "GET", pieceSize: split, bodyMustMatchChunks: true)
    }
}

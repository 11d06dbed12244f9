// PKCS#12 without a password (nil: no password, then the empty password, as OpenSSL does).
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        PKCS12Fuzz.read(input.all, password: nil)
    }
}

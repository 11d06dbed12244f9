// PKCS#12 with the fixtures' password: MAC check, decryption (modern and legacy), bags, inspection.
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        PKCS12Fuzz.read(input.all, password: "mtls")
    }
}

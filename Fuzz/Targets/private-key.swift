// Private keys in every encoding (PKCS#1, SEC1, PKCS#8, encrypted PKCS#8, legacy PEM encryption, DER).
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let bytes = input.all
        for password in [nil, "secret"] as [Secret?] {
            guard let key = try? PrivateKey(bytes: bytes, password: password) else { continue }
            _ = key.algorithm.description
            _ = key.publicKey
            _ = key.sourceFormat
            _ = try? key.pkcs8DER()
        }
    }
}

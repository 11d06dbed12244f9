// DER certificates: parsing, every accessor, and a trust evaluation with the certificate as its own anchor.
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let bytes = input.all
        _ = DER.shape(of: bytes)
        if let certificate = try? Certificate(derBytes: bytes) {
            Exercise.certificate(certificate, evaluate: true)
        }
        _ = try? CertificateRevocationList(derBytes: bytes)
        _ = try? CertificateSigningRequest(derBytes: bytes)
        _ = try? PublicKey(spkiDER: bytes)
    }
}

// The format-detecting loader behind every `mtls` command that reads certificates (PEM, DER, PKCS#7, PKCS#12).
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        if let loaded = try? CertificateLoader.certificates(from: input.all, password: "mtls", source: "fuzz") {
            for certificate in loaded.certificates.prefix(8) { Exercise.certificate(certificate) }
        }
    }
}

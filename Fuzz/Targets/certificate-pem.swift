// PEM decoding of certificates, CRLs and CSRs, then every accessor of each certificate found.
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let bytes = input.all
        _ = PEM.looksLikePEM(bytes)
        if let blocks = try? PEM.parse(bytes) {
            for block in blocks {
                _ = block.isTraditionallyEncrypted
                let again = try? PEM.parse(Array(PEM.encode(block.derBytes, label: "CERTIFICATE").utf8))
                check(again?.first?.derBytes == block.derBytes, "PEM encode/parse does not round-trip \(block.derBytes.count) bytes")
            }
        }
        if let certificates = try? Certificate.fromPEM(bytes) {
            for certificate in certificates { Exercise.certificate(certificate) }
        }
        _ = try? CertificateRevocationList.load(bytes)
    }
}

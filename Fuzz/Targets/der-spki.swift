// The hand-written DER walk that finds a certificate's SubjectPublicKeyInfo (used for pins).
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let bytes = input.all
        if let range = DER.subjectPublicKeyInfoRange(inCertificate: bytes) {
            check(range.lowerBound >= 0 && range.upperBound <= bytes.count, "SPKI range \(range) outside \(bytes.count) bytes")
            _ = Array(bytes[range])
        }
        _ = DER.shape(of: bytes)
        // Walk every element DER.element finds, as a generic TLV reader would.
        var offset = 0
        var steps = 0
        while offset < bytes.count, steps < 4096, let element = DER.element(in: bytes, at: offset) {
            check(element.headerStart == offset && element.contentStart <= element.contentEnd && element.contentEnd <= bytes.count, "bad element \(element)")
            offset = element.contentEnd > offset ? element.contentEnd : offset + 1
            steps += 1
        }
    }
}

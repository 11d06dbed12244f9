// The pin-file reader behind `pin --check`, `verify --pins`, `probe --pins` and `PinDocument`: format
// detection, pin lists, JSON, HPKP, property lists, the Android XML reader and the source-code
// literal scanner (TrustKit, OkHttp, Swift).
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        guard let document = try? PinDocument(bytes: input.all, source: "fuzz") else { return }
        check(!document.domains.allSatisfy { $0.pins.isEmpty }, "a document without pins was accepted")
        for domain in document.domains {
            _ = domain.display
            _ = document.domains(for: domain.pattern.isEmpty ? "example.com" : domain.pattern)
        }
        _ = document.evaluate([], host: "example.com")
    }
}

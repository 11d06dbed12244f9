// PKCS#12 with the fixtures' password: MAC check (PKCS#12 MAC and PBMAC1), BER and DER, decryption
// (modern and legacy), bags, identities, inspection. The third-party seeds use other passwords:
// when "mtls" is wrong, theirs are tried, so that mutations of RFC 9579's PBMAC1 file (1234) and of
// BoringSSL's BER files (foo) get past the MAC.
import Foundation
import MTLSTrust

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        PKCS12Fuzz.read(input.all, passwords: ["mtls", "1234", "foo"])
    }
}

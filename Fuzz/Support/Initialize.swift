import MTLSTrust

/// libFuzzer calls this once before the first input: the fuzzed code runs with OpenSSL's frees
/// wiped, as in `mtls`.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    OpenSSLInfo.installWipingAllocator()
    return 0
}

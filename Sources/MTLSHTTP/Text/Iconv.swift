#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system's iconv, one conversion at a time.
enum Iconv {
    enum InvalidPolicy {
        /// Give up (returns nil).
        case fail
        /// Write these bytes in place of each undecodable input byte and go on.
        case replace([UInt8])
        /// At an undecodable sequence (the input from there on, never empty), write what the
        /// rule returns and go on after `skip` bytes (at least one).
        case resynchronize((_ remaining: UnsafeBufferPointer<UInt8>) -> (output: [UInt8], skip: Int))
    }

    static func convert(_ input: [UInt8], from: String, to: String, onInvalid: InvalidPolicy) -> [UInt8]? {
        let descriptor = iconv_open(to, from)
        guard descriptor != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(descriptor) }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 2)
        var chunk = [UInt8](repeating: 0, count: 16384)
        var source = input
        var failed = false
        source.withUnsafeMutableBufferPointer { sourceBuffer in
            var inPointer: UnsafeMutablePointer<CChar>? = sourceBuffer.baseAddress.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: CChar.self) }
            var inLeft = sourceBuffer.count
            var flushed = false
            while true {
                let (result, produced, errorCode): (Int, Int, Int32) = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(chunkBuffer.baseAddress!).assumingMemoryBound(to: CChar.self)
                    var outLeft = chunkBuffer.count
                    let result: Int
                    if inLeft > 0 {
                        result = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    } else {
                        result = iconv(descriptor, nil, nil, &outPointer, &outLeft)  // flush shift state
                    }
                    return (result, chunkBuffer.count - outLeft, result == -1 ? errno : 0)
                }
                output += chunk[0..<produced]
                if result != -1 {
                    if inLeft == 0 {
                        if flushed { break }
                        flushed = true
                    }
                    continue
                }
                switch errorCode {
                case E2BIG:
                    continue
                case EILSEQ, EINVAL:
                    let skip: Int
                    switch onInvalid {
                    case .fail:
                        failed = true
                        return
                    case .replace(let replacement):
                        output += replacement
                        skip = 1
                    case .resynchronize(let rule):
                        guard inLeft > 0, let at = inPointer else { return }
                        let (written, count) = rule(UnsafeBufferPointer(start: UnsafeRawPointer(at).assumingMemoryBound(to: UInt8.self), count: inLeft))
                        output += written
                        skip = max(1, min(count, inLeft))
                    }
                    if inLeft > 0 {
                        inPointer = inPointer.map { $0 + skip }
                        inLeft -= skip
                    }
                    if inLeft == 0 && errorCode == EINVAL { return }
                default:
                    failed = true
                    return
                }
            }
        }
        return failed ? nil : output
    }
}

internal import CZlib

/// Streaming gzip/deflate decoding through zlib, with a ceiling on the decoded size (gzip bombs).
final class Decompressor {
    enum Failure: Error { case corrupt(String), tooLarge(Int) }

    private var stream = z_stream()
    private var initialised = false
    private var finished = false
    private let limit: Int
    private var produced = 0
    private let coding: String
    private var triedRaw = false

    init?(coding: String, limit: Int) {
        let lower = coding.lowercased()
        guard lower == "gzip" || lower == "x-gzip" || lower == "deflate" else { return nil }
        self.coding = lower
        self.limit = limit
        // 15 + 32: zlib or gzip header, detected automatically.
        initialised = inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        if !initialised { return nil }
    }

    deinit { if initialised { inflateEnd(&stream) } }

    func decode(_ input: [UInt8]) throws(Failure) -> [UInt8] {
        if finished || input.isEmpty { return [] }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var failure: Failure? = nil
        var retryRaw = false
        input.withUnsafeBufferPointer { inputBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = UInt32(inputBuffer.count)
            repeat {
                let status = buffer.withUnsafeMutableBufferPointer { outBuffer -> Int32 in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let count = buffer.count - Int(stream.avail_out)
                produced += count
                if produced > limit {
                    failure = .tooLarge(limit)
                    return
                }
                output += buffer[0..<count]
                if status == Z_STREAM_END {
                    finished = true
                    return
                }
                if status == Z_DATA_ERROR && coding == "deflate" && !triedRaw && produced == 0 {
                    retryRaw = true  // "deflate" sent as raw deflate by some servers (old IIS)
                    return
                }
                if status != Z_OK && status != Z_BUF_ERROR {
                    failure = .corrupt(stream.msg.map { String(cString: $0) } ?? "zlib error \(status)")
                    return
                }
                if status == Z_BUF_ERROR && stream.avail_in == 0 { return }
            } while stream.avail_in > 0 || stream.avail_out == 0
        }
        if let failure { throw failure }
        if retryRaw {
            triedRaw = true
            inflateEnd(&stream)
            stream = z_stream()
            initialised = inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
            return try decode(input)
        }
        return output
    }
}

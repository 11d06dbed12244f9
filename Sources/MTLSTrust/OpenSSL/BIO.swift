internal import COpenSSL
internal import COpenSSLShims

/// Helpers for short-lived memory BIOs; each BIO dies in the scope that made it.
enum MemoryBIO {
    /// Runs `body` with a read-only memory BIO over `bytes`.
    static func withReadOnly<T>(_ bytes: [UInt8], _ body: (OpaquePointer) throws -> T) throws(MTLSTrustError) -> T {
        do {
            guard bytes.count <= Int(Int32.max) else {
                throw MTLSTrustError(.malformedInput, "the input is larger than 2 GiB")
            }
            return try bytes.withUnsafeBytes { raw -> T in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
                    throw MTLSTrustError(.internalFailure, "could not allocate a memory BIO")
                }
                defer { BIO_free(bio) }
                return try body(bio)
            }
        } catch let error as MTLSTrustError {
            throw error
        } catch {
            throw MTLSTrustError(.internalFailure, "\(error)")
        }
    }

    /// Runs `body` with a writable memory BIO and returns what it wrote.
    static func collect(_ body: (OpaquePointer) -> Bool) -> [UInt8]? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard body(bio) else { return nil }
        var pointer: UnsafeMutablePointer<CChar>? = nil
        let length = mtls_BIO_get_mem_data(bio, &pointer)
        guard length >= 0, let pointer else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }
}

/// SHA-256 and SHA-1 through OpenSSL's one-shot digest.
enum Digest {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha256()) }
    static func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha1()) }
    static func sha256<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        let buffer = bytes.withContiguousStorageIfAvailable { buffer in
            digestRaw(UnsafeRawBufferPointer(buffer), EVP_sha256())
        }
        return buffer ?? digest(Array(bytes), EVP_sha256())
    }

    private static func digest(_ bytes: [UInt8], _ md: OpaquePointer?) -> [UInt8] {
        bytes.withUnsafeBytes { digestRaw($0, md) }
    }

    private static func digestRaw(_ raw: UnsafeRawBufferPointer, _ md: OpaquePointer?) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { outBuffer in
            EVP_Digest(raw.baseAddress, raw.count, outBuffer.baseAddress, &length, md, nil)
        }
        guard ok == 1 else { return [] }
        return Array(out.prefix(Int(length)))
    }
}

extension String {
    /// Decodes a NUL-terminated C buffer.
    init(cBuffer: [CChar]) {
        let bytes = cBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self = String(decoding: bytes, as: UTF8.self)
    }
}

internal import COpenSSL
import MTLSTrust

/// The hashes that HTTP authentication needs, through OpenSSL's EVP interface (default provider),
/// and MD4 through the legacy provider for NTLM.
package enum AuthHash {
    /// A digest by OpenSSL name (`MD5`, `SHA256`, `SHA512-256`), or nil when OpenSSL lacks it.
    static func digest(_ name: String, _ bytes: [UInt8]) -> [UInt8]? {
        ERR_clear_error()
        guard let md = EVP_MD_fetch(nil, name, nil) else {  // owned; freed below
            ERR_clear_error()
            return nil
        }
        defer { EVP_MD_free(md) }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &length, md, nil) == 1
        }
        guard ok else {
            ERR_clear_error()
            return nil
        }
        return Array(output.prefix(Int(length)))
    }

    package static func md5(_ bytes: [UInt8]) -> [UInt8] { digest("MD5", bytes) ?? [] }

    /// HMAC-MD5 (RFC 2104), as NTLMv2 uses it.
    static func hmacMD5(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var key = key
        if key.count > 64 { key = md5(key) }
        key += [UInt8](repeating: 0, count: 64 - key.count)
        let inner = md5(key.map { $0 ^ 0x36 } + message)
        return md5(key.map { $0 ^ 0x5C } + inner)
    }

    /// MD4 via OpenSSL's legacy provider; nil when that provider is unavailable.
    static func md4(_ bytes: [UInt8]) -> [UInt8]? { LegacyDigest.md4(bytes) }

    /// Cryptographically random bytes.
    static func random(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        if RAND_bytes(&bytes, Int32(count)) != 1 {
            var generator = SystemRandomNumberGenerator()
            for index in bytes.indices { bytes[index] = generator.next() }
        }
        return bytes
    }

    /// Lower-case hex, as Digest and multipart boundaries write it (`[UInt8].hex` of MTLSTrust).
    static func hex(_ bytes: [UInt8]) -> String { bytes.hex }
}

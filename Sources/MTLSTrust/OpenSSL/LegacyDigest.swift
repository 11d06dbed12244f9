internal import COpenSSL

/// Digests that OpenSSL 3 keeps in its `legacy` provider, fetched from the library's own
/// ``LegacyLibraryContext`` (never from the process-wide default context), for the other modules of
/// this package. Not public API.
package enum LegacyDigest {
    /// MD4 of `bytes` (NTLM's NT hash), or nil when the legacy provider cannot be loaded.
    ///
    /// - Warning: MD4 is broken; it is here only because NTLM requires it.
    package static func md4(_ bytes: [UInt8]) -> [UInt8]? {
        guard let context = LegacyLibraryContext.shared.pointer else { return nil }
        ERR_clear_error()
        // EVP_MD_fetch returns a reference we own; freed below.
        guard let md = EVP_MD_fetch(context, "MD4", nil) else {
            ERR_clear_error()
            return nil
        }
        defer { EVP_MD_free(md) }
        guard let digestContext = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(digestContext) }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_DigestInit_ex(digestContext, md, nil) == 1
                && EVP_DigestUpdate(digestContext, input.baseAddress, input.count) == 1
                && EVP_DigestFinal_ex(digestContext, &output, &length) == 1
        }
        guard ok else {
            ERR_clear_error()
            return nil
        }
        return Array(output.prefix(Int(length)))
    }

    /// True when MD4 can be computed (the legacy provider loads).
    package static var md4Available: Bool { md4([]) != nil }
}

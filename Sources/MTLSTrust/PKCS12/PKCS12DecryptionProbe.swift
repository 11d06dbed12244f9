internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PKCS12Bundle {
    /// What decrypting a file's first encrypted item with a password gives.
    enum DecryptionProbe { case decrypts, fails, nothingEncrypted }

    /// Tries the password on the first encrypted item (an encrypted safe, else a shrouded key bag).
    /// Decryption succeeds only when the padding checks out *and* the plaintext parses as DER, which
    /// a wrong password does not produce; so success means the password is right.
    static func probeDecryption(_ p12: OpaquePointer, password: Secret) -> DecryptionProbe {
        defer { OpenSSLErrorQueue.clear() }
        OpenSSLErrorQueue.clear()
        guard let authSafes = PKCS12_unpack_authsafes(p12) else { return .nothingEncrypted }
        defer { mtls_sk_PKCS7_pop_free(authSafes) }
        return password.withCString { pass -> DecryptionProbe in
            let passLength = Int32(strlen(pass))
            for i in 0..<mtls_sk_PKCS7_num(authSafes) {
                guard let p7 = mtls_sk_PKCS7_value(authSafes, i) else { continue }
                if mtls_PKCS7_type_is_encrypted(p7) == 1 {
                    // No content to decrypt (OpenSSL before 3.0.19 dereferences the NULL: CVE-2025-69421).
                    guard mtls_PKCS7_encrypted_content_present(p7) == 1 else { continue }
                    let legacy = PKCS12Inspection.algorithm(mtls_PKCS7_encrypted_algorithm(p7))?.isLegacy ?? false
                    let unpack = { PKCS12_unpack_p7encdata(p7, pass, passLength) }
                    let bags = legacy ? LegacyLibraryContext.shared.withAsThreadDefault(unpack) : unpack()
                    guard let bags else { return .fails }
                    mtls_sk_PKCS12_SAFEBAG_pop_free(bags)
                    return .decrypts
                }
                guard mtls_PKCS7_type_is_data(p7) == 1, let bags = PKCS12_unpack_p7data(p7) else { continue }
                defer { mtls_sk_PKCS12_SAFEBAG_pop_free(bags) }
                for j in 0..<mtls_sk_PKCS12_SAFEBAG_num(bags) {
                    guard let bag = mtls_sk_PKCS12_SAFEBAG_value(bags, j), PKCS12_SAFEBAG_get_nid(bag) == NID_pkcs8ShroudedKeyBag else { continue }
                    let decrypt = { PKCS12_decrypt_skey(bag, pass, passLength) }
                    let p8 = LegacyLibraryContext.shared.isAvailable ? LegacyLibraryContext.shared.withAsThreadDefault(decrypt) : decrypt()
                    guard let p8 else { return .fails }
                    PKCS8_PRIV_KEY_INFO_free(p8)
                    return .decrypts
                }
            }
            return .nothingEncrypted
        }
    }

}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PKCS12Bundle {
    // MARK: Writing

    /// How a new PKCS#12 file is protected.
    public enum Protection: Sendable {
        /// OpenSSL 3's default: AES-256-CBC with PBKDF2/HMAC-SHA-256, SHA-256 MAC.
        case modern
        /// 3DES (pbeWithSHA1And3-KeyTripleDES-CBC) for keys and certificates, SHA-1 MAC: for older
        /// iOS, macOS, Android, Java and Windows importers.
        case legacy3DES
    }

    /// Writes a PKCS#12 file.
    ///
    /// - Parameters:
    ///   - certificate: The leaf certificate.
    ///   - privateKey: Its private key; must match the certificate.
    ///   - chain: Further certificates to include (intermediates, root).
    ///   - password: The password (may be empty).
    ///   - friendlyName: The friendly name shown by importers.
    ///   - protection: ``Protection/modern`` or ``Protection/legacy3DES``.
    ///   - iterations: The key-derivation and MAC iteration count.
    /// - Throws: `.keyMismatch` when the key is not the certificate's; `.invalidArgument` for an
    ///   iteration count below 1 or above 2³¹ − 1.
    public static func export(
        certificate: Certificate, privateKey: PrivateKey, chain: [Certificate] = [], password: Secret,
        friendlyName: String? = nil, protection: Protection = .modern, iterations: Int = 2048
    ) throws(MTLSTrustError) -> [UInt8] {
        guard iterations >= 1, iterations <= Int(Int32.max) else {
            throw MTLSTrustError(.invalidArgument, "the iteration count must be between 1 and \(Int32.max), not \(iterations)")
        }
        guard privateKey.matches(certificate) else {
            throw MTLSTrustError(.keyMismatch, "the private key does not belong to the certificate \(certificate.displayName)")
        }
        OpenSSLErrorQueue.clear()
        guard let stack = mtls_sk_X509_new_null() else { throw MTLSTrustError(.internalFailure, "out of memory") }
        defer { mtls_sk_X509_free(stack) }  // the certificates are borrowed; the Swift values own them
        for extra in chain { _ = mtls_sk_X509_push(stack, extra.reference.pointer) }
        let (keyNID, certNID, digest): (Int32, Int32, OpaquePointer?) =
            switch protection {
            case .modern: (NID_aes_256_cbc, NID_aes_256_cbc, EVP_sha256())
            case .legacy3DES: (NID_pbe_WithSHA1And3_Key_TripleDES_CBC, NID_pbe_WithSHA1And3_Key_TripleDES_CBC, EVP_sha1())
            }
        let p12 = password.withCString { pass in
            PKCS12_create_ex(pass, friendlyName, privateKey.reference.pointer, certificate.reference.pointer, stack, keyNID, certNID, Int32(iterations), -1, 0, nil, nil)
        }
        guard let p12 else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.internalFailure, "OpenSSL could not build the PKCS#12: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        defer { PKCS12_free(p12) }
        let macOK = password.withCString { PKCS12_set_mac(p12, $0, -1, nil, 0, Int32(iterations), digest) }
        guard macOK == 1 else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.internalFailure, "OpenSSL could not add the PKCS#12 MAC: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        guard let der = PKCS12Bundle.reencodedDER(p12) else { throw MTLSTrustError(.internalFailure, "OpenSSL could not encode the PKCS#12") }
        return der
    }
}

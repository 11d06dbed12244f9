internal import COpenSSL
internal import COpenSSLShims

/// A PKCS#10 certificate signing request: read for its subject and public key (a backup pin
/// can be made from the CSR of a key that has no certificate yet).
public struct CertificateSigningRequest: Sendable {
    /// The subject as an RFC 4514 string.
    public let subject: String
    /// The requested public key.
    public let publicKey: PublicKey
    /// True when the request's self-signature verifies.
    public let signatureIsValid: Bool

    /// Parses a DER CSR.
    public init(derBytes: [UInt8]) throws(MTLSTrustError) {
        OpenSSLErrorQueue.clear()
        var parsed: OpaquePointer?
        derBytes.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            parsed = d2i_X509_REQ(nil, &cursor, buffer.count)
        }
        guard let request = parsed else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.malformedInput, "the data is not a certificate signing request: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        defer { X509_REQ_free(request) }
        subject = Certificate.rfc4514(X509_REQ_get_subject_name(request))
        guard let key = X509_REQ_get_pubkey(request) else {  // get_pubkey: a new reference, owned by PublicKey
            throw MTLSTrustError(.malformedInput, "the certificate signing request has no readable public key")
        }
        publicKey = PublicKey(taking: key)
        signatureIsValid = X509_REQ_verify(request, key) == 1
        ERR_clear_error()
    }
}

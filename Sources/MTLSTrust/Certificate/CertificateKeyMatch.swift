internal import COpenSSL

extension PrivateKey {
    /// True when this key is the private half of `certificate`'s public key.
    ///
    /// A DSA certificate may leave its key's domain parameters out and inherit them from its
    /// issuer (RFC 3279 2.3.2; NIST PKITS `DSAParametersInheritedCACert`). OpenSSL cannot decode
    /// such a key on its own, so when it cannot, the certificate matches a key of the same
    /// algorithm whose public value (the subjectPublicKey bits) is the same.
    public func matches(_ certificate: Certificate) -> Bool {
        if let certificateKey = X509_get0_pubkey(certificate.reference.pointer) {
            return EVP_PKEY_eq(certificateKey, reference.pointer) == 1
        }
        ERR_clear_error()  // the failed decode above
        guard let theirs = X509_get_X509_PUBKEY(certificate.reference.pointer) else { return false }
        let spki = PublicKey.encodeSPKI(reference.pointer)
        let ours: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_X509_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let ours else { return false }
        defer { X509_PUBKEY_free(ours) }
        guard let (theirAlgorithm, theirBits) = Self.algorithmAndBits(theirs), let (ourAlgorithm, ourBits) = Self.algorithmAndBits(ours) else { return false }
        return OBJ_cmp(theirAlgorithm, ourAlgorithm) == 0 && theirBits == ourBits
    }

    /// The algorithm OID and the subjectPublicKey bits of an `X509_PUBKEY*` (borrowed).
    private static func algorithmAndBits(_ publicKey: OpaquePointer) -> (OpaquePointer, [UInt8])? {
        var algorithm: OpaquePointer? = nil
        var bytes: UnsafePointer<UInt8>? = nil
        var length: Int32 = 0
        guard X509_PUBKEY_get0_param(&algorithm, &bytes, &length, nil, publicKey) == 1, let algorithm, let bytes, length > 0 else { return nil }
        return (algorithm, Array(UnsafeBufferPointer(start: bytes, count: Int(length))))
    }
}

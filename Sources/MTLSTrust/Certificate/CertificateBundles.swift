internal import COpenSSL
internal import COpenSSLShims

/// Certificates that come in a PKCS#7 (CMS) "certs-only" SignedData: Windows' `.p7b` chain export,
/// and what an authorityInfoAccess caIssuers URL may serve (RFC 5280 4.2.2.1: `.p7c`).
extension Certificate {
    /// The certificates of a DER PKCS#7 SignedData, in the order it lists them (no signer needed:
    /// a certs-only bundle has none).
    public static func fromPKCS7(derBytes: [UInt8]) throws(MTLSTrustError) -> [Certificate] {
        OpenSSLErrorQueue.clear()
        let ders: [[UInt8]]? = derBytes.withUnsafeBufferPointer { buffer -> [[UInt8]]? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let p7 = d2i_PKCS7(nil, &cursor, buffer.count) else { return nil }
            defer { PKCS7_free(p7) }
            guard OBJ_obj2nid(p7.pointee.type) == NID_pkcs7_signed, let signed = p7.pointee.d.sign else { return [] }
            let stack = signed.pointee.cert
            var out: [[UInt8]] = []
            for index in 0..<mtls_sk_X509_num(stack) {
                guard let stack, let x509 = mtls_sk_X509_value(stack, index) else { continue }
                let length = i2d_X509(x509, nil)
                guard length > 0 else { continue }
                var der = [UInt8](repeating: 0, count: Int(length))
                der.withUnsafeMutableBufferPointer { out in
                    var write: UnsafeMutablePointer<UInt8>? = out.baseAddress
                    _ = i2d_X509(x509, &write)
                }
                out.append(der)
            }
            return out
        }
        guard let ders else {
            throw MTLSTrustError(.malformedInput, "it is not a readable PKCS#7 structure", openSSLDetail: OpenSSLErrorQueue.drain().map(\.raw))
        }
        guard !ders.isEmpty else { throw MTLSTrustError(.wrongObjectKind, "the PKCS#7 structure holds no certificate") }
        var certificates: [Certificate] = []
        for der in ders { certificates.append(try Certificate(derBytes: der)) }
        return certificates
    }

    /// The `http://` locations of the authorityInfoAccess caIssuers entries: where the issuer's
    /// certificate is published. iOS, macOS and Chrome fetch it when a server leaves its
    /// intermediate out; Android and Java do not.
    public var caIssuersURLs: [String] {
        guard let raw = CertificateFacts(self).extension(CertificateFacts.OID.authorityInfoAccess),
            let entries = CertificateFacts.accessDescriptions(raw.value)
        else { return [] }
        return entries.compactMap { entry in
            guard entry.method == CertificateFacts.OID.caIssuers, entry.location.isHTTPURI, case .uri(let bytes) = entry.location else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

internal import COpenSSL

/// The trust settings of OpenSSL's `TRUSTED CERTIFICATE` form: the purposes (extended key usage
/// OIDs) a certificate is trusted and rejected for as an anchor, as `openssl x509 -trustout
/// -addtrust/-addreject` writes them and as distribution bundles carry them (p11-kit's
/// `ca-bundle.trust.crt` marks a CA trusted for e-mail only, or rejected outright).
///
/// An anchor with trust settings is used as OpenSSL uses it: a purpose in ``rejected`` (or
/// anyExtendedKeyUsage there) refuses the chain (`X509_V_ERR_CERT_REJECTED`); otherwise a purpose
/// in ``trusted`` (or anyExtendedKeyUsage there) is trusted, and any other is not
/// (`X509_V_ERR_CERT_UNTRUSTED`). A plain `CERTIFICATE` has none and is an anchor for every purpose.
public struct CertificateTrustSettings: Sendable, Hashable {
    /// Dotted OIDs of the purposes the certificate is trusted for.
    public var trusted: [String]
    /// Dotted OIDs of the purposes it is rejected for.
    public var rejected: [String]
    /// The alias (`openssl x509 -setalias`), if any.
    public var alias: String?

    /// The purposes' names (`serverAuth`, `emailProtection`, or the dotted OID).
    public static func name(of oid: String) -> String { CertificateFacts.purposeName(oid) }

    /// Reads the `X509_CERT_AUX` that follows the certificate: `SEQUENCE { trust SEQUENCE OF OID
    /// OPTIONAL, reject [0] IMPLICIT SEQUENCE OF OID OPTIONAL, alias UTF8String OPTIONAL, keyid
    /// OCTET STRING OPTIONAL, other [1] OPTIONAL }`. Nil when it is not that.
    init?(auxiliaryDER bytes: ArraySlice<UInt8>) {
        let start = bytes.startIndex
        guard let outer = DER.element(in: bytes, at: start), outer.tag == 0x30, outer.end == bytes.endIndex else { return nil }
        func oids(_ element: DER.Element) -> [String]? {
            var result: [String] = []
            var cursor = element.contentStart
            while cursor < element.contentEnd {
                guard let oid = DER.element(in: bytes, at: cursor, limit: element.contentEnd), oid.tag == 0x06, oid.contentEnd > oid.contentStart else { return nil }
                result.append(CertificateFacts.dotted(bytes[oid.contentStart..<oid.contentEnd]))
                cursor = oid.end
            }
            return result
        }
        var trusted: [String] = []
        var rejected: [String] = []
        var alias: String?
        var cursor = outer.contentStart
        while cursor < outer.contentEnd {
            guard let field = DER.element(in: bytes, at: cursor, limit: outer.contentEnd) else { return nil }
            switch field.tag {
            case 0x30:
                guard let list = oids(field) else { return nil }
                trusted = list
            case 0xA0:
                guard let list = oids(field) else { return nil }
                rejected = list
            case 0x0C: alias = String(decoding: bytes[field.contentStart..<field.contentEnd], as: UTF8.self)
            default: break  // keyid, other
            }
            cursor = field.end
        }
        self.init(trusted: trusted, rejected: rejected, alias: alias)
    }

    /// Creates trust settings.
    public init(trusted: [String], rejected: [String], alias: String? = nil) {
        self.trusted = trusted
        self.rejected = rejected
        self.alias = alias
    }
}

extension Certificate {
    /// Reads OpenSSL's `TRUSTED CERTIFICATE` DER: the certificate, then its trust settings. The
    /// `X509` keeps them (`d2i_X509_AUX`), so that `X509_verify_cert` applies them to the anchor.
    init(trustedCertificateDER bytes: [UInt8]) throws(MTLSTrustError) {
        guard let element = DER.element(in: bytes, at: 0) else { throw MTLSTrustError(.malformedInput, "not DER") }
        // Read on its own first, with the checks every certificate gets (trailing bytes, times);
        // then again with its settings, which only d2i_X509_AUX attaches to an X509.
        let certificate = try Certificate(derBytes: Array(bytes[0..<element.end]))
        guard element.end < bytes.count else {
            self = certificate
            return
        }
        guard let settings = CertificateTrustSettings(auxiliaryDER: bytes[element.end...]) else {
            throw MTLSTrustError(.malformedInput, "the trust settings after the certificate are not OpenSSL's X509_CERT_AUX")
        }
        OpenSSLErrorQueue.clear()
        var consumed = 0
        let parsed = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            let x509 = d2i_X509_AUX(nil, &cursor, buffer.count)
            if let cursor { consumed = cursor - base }
            return x509
        }
        guard let parsed, consumed == bytes.count else {
            if let parsed { X509_free(parsed) }
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.malformedInput, "OpenSSL does not read its trust settings: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        self.init(taking: parsed, derBytes: certificate.derBytes)
        self.trustSettings = settings
    }
}

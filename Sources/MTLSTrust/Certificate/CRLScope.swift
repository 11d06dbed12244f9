internal import COpenSSL
internal import COpenSSLShims

/// What a CRL's issuingDistributionPoint extension (RFC 5280 5.2.5) says the CRL covers, read once
/// with the CRL: the kinds of certificate, the reasons, whether it is indirect and the distribution
/// points it is for. A CRL without the extension has no scope (it covers everything its issuer
/// issued), so ``CertificateRevocationList``'s `scope` is nil then.
struct CRLScope: Sendable, Equatable {
    var onlyCACertificates = false
    var onlyUserCertificates = false
    var onlyAttributeCertificates = false
    var onlySomeReasons = false
    /// indirectCRL: it may list certificates of issuers other than its own.
    var indirect = false
    /// The URIs of its distributionPoint fullName; empty when it names none (then it is for any).
    var distributionPoints: [String] = []

    /// The scope of the parsed CRL `crl`, nil when it has no issuingDistributionPoint or OpenSSL
    /// cannot decode it (as OpenSSL's own CRL checks take it).
    init?(_ crl: OpaquePointer) {
        guard let value = X509_CRL_get_ext_d2i(crl, NID_issuing_distribution_point, nil, nil) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        let point = value.assumingMemoryBound(to: ISSUING_DIST_POINT.self)
        defer { ISSUING_DIST_POINT_free(point) }
        onlyCACertificates = point.pointee.onlyCA != 0
        onlyUserCertificates = point.pointee.onlyuser != 0
        onlyAttributeCertificates = point.pointee.onlyattr != 0
        onlySomeReasons = point.pointee.onlysomereasons != nil
        indirect = point.pointee.indirectCRL != 0
        distributionPoints = Self.distributionPointURIs(crl)
    }

    /// True when the CRL is for one of `urls` (or names no distribution point, so for any).
    func coversAny(of urls: [String]) -> Bool {
        distributionPoints.isEmpty || distributionPoints.contains { urls.contains($0) }
    }

    /// The URIs of the distributionPoint fullName in the extension (the DER walk, as for
    /// certificates' distribution points).
    private static func distributionPointURIs(_ crl: OpaquePointer) -> [String] {
        guard let value = extensionValue(crl, NID_issuing_distribution_point), let fields = CertificateFacts.sequence(value), let point = fields.first(where: { $0.tag == 0xA0 }),
            let full = DER.element(in: value, at: point.contentStart, limit: point.contentEnd), full.tag == 0xA0
        else { return [] }
        return CertificateFacts.generalNames(value, from: full.contentStart, to: full.contentEnd).compactMap { general in
            guard case .uri(let bytes) = general else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The DER value of the parsed CRL's extension `nid`, if present.
    static func extensionValue(_ crl: OpaquePointer, _ nid: Int32) -> [UInt8]? {
        let index = X509_CRL_get_ext_by_NID(crl, nid, -1)
        guard index >= 0, let ext = X509_CRL_get_ext(crl, index), let data = X509_EXTENSION_get_data(ext) else { return nil }
        return Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(data), count: Int(ASN1_STRING_length(data))))
    }
}

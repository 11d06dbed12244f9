internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate revocation list (X.509 CRL).
public struct CertificateRevocationList: Sendable {
    let reference: CRLReference
    /// The DER encoding.
    public let derBytes: [UInt8]
    /// What its issuingDistributionPoint says it covers, read once with the CRL; nil without one.
    let scope: CRLScope?

    /// Parses one DER CRL.
    public init(derBytes: [UInt8]) throws(MTLSTrustError) {
        OpenSSLErrorQueue.clear()
        var parsed: OpaquePointer?
        derBytes.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            parsed = d2i_X509_CRL(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.malformedInput, "the data is not a CRL: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        self.reference = CRLReference(taking: parsed)
        self.derBytes = derBytes
        self.scope = CRLScope(parsed)
        // A time OpenSSL cannot read would be taken as 1970: a CRL as old as that, or one due
        // then. Nothing can judge whether such a CRL is current, so it is refused, as a
        // certificate with such a validity date is.
        for (field, time) in [("thisUpdate", X509_CRL_get0_lastUpdate(parsed)), ("nextUpdate", X509_CRL_get0_nextUpdate(parsed))] {
            guard let time else { continue }
            var parts = tm()
            if ASN1_TIME_to_tm(time, &parts) != 1 {
                throw MTLSTrustError(
                    .malformedInput,
                    "its \(field) is not a valid time, so whether the CRL is current cannot be judged: get a fresh CRL from its issuer")
            }
        }
    }

    /// Parses every CRL in a PEM bundle or one DER CRL.
    public static func load(_ bytes: [UInt8]) throws(MTLSTrustError) -> [CertificateRevocationList] {
        if bytes.isEmpty { throw MTLSTrustError(.emptyInput, "the file is empty") }
        if PEM.looksLikePEM(bytes) {
            let blocks = try PEM.parse(bytes).filter { $0.label == "X509 CRL" }
            if blocks.isEmpty { throw MTLSTrustError(.wrongObjectKind, "it holds no `X509 CRL` PEM block") }
            var result: [CertificateRevocationList] = []
            for (index, block) in blocks.enumerated() {
                do throws(MTLSTrustError) {
                    result.append(try CertificateRevocationList(derBytes: block.derBytes))
                } catch {
                    throw MTLSTrustError(.malformedInput, "CRL \(index + 1) does not parse: \(error.message)")
                }
            }
            return result
        }
        return [try CertificateRevocationList(derBytes: bytes)]
    }

    /// The issuer as an RFC 4514 string.
    public var issuer: String { Certificate.rfc4514(X509_CRL_get_issuer(reference.pointer)) }
    /// When this CRL was issued.
    public var lastUpdate: Date { Certificate.date(X509_CRL_get0_lastUpdate(reference.pointer)) }
    /// The serial numbers of the revoked certificates, in the CRL's order, in upper-case hex as
    /// ``Certificate/serialNumberHex`` gives them.
    public var revokedSerialNumbers: [String] {
        guard let entries = X509_CRL_get_REVOKED(reference.pointer) else { return [] }
        return (0..<mtls_sk_X509_REVOKED_num(entries)).compactMap { index in
            guard let entry = mtls_sk_X509_REVOKED_value(entries, index), let serial = X509_REVOKED_get0_serialNumber(entry),
                let number = ASN1_INTEGER_to_BN(serial, nil)
            else { return nil }
            defer { BN_free(number) }
            guard let hex = BN_bn2hex(number) else { return nil }
            defer { mtls_OPENSSL_free(hex) }
            return String(cString: hex)
        }
    }

    /// When the next CRL is due, if stated.
    public var nextUpdate: Date? { X509_CRL_get0_nextUpdate(reference.pointer).map { Certificate.date($0) } }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Certificate {
    // MARK: Extensions

    /// Subject alternative names, in certificate order.
    public var subjectAlternativeNames: [SubjectAlternativeName] {
        guard let raw = X509_get_ext_d2i(reference.pointer, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { mtls_GENERAL_NAMES_free(names) }
        var result: [SubjectAlternativeName] = []
        for i in 0..<mtls_sk_GENERAL_NAME_num(names) {
            guard let name = mtls_sk_GENERAL_NAME_value(names, i) else { continue }
            let type = name.pointee.type
            // dNSName, rfc822Name and URI are IA5Strings: their bytes as they stand (UTF-8 where a
            // issuer put UTF-8 there, as OpenSSL prints them), not read as Latin-1.
            switch type {
            case GEN_DNS:
                result.append(.dns(Certificate.ia5Text(name.pointee.d.dNSName)))
            case GEN_EMAIL:
                result.append(.email(Certificate.ia5Text(name.pointee.d.rfc822Name)))
            case GEN_URI:
                result.append(.uri(Certificate.ia5Text(name.pointee.d.uniformResourceIdentifier)))
            case GEN_IPADD:
                result.append(.ip(Certificate.asn1StringBytes(name.pointee.d.iPAddress)))
            case GEN_DIRNAME:
                result.append(.directoryName(Certificate.rfc4514(name.pointee.d.directoryName)))
            case GEN_OTHERNAME:
                guard let other = name.pointee.d.otherName, let typeID = other.pointee.type_id else {
                    result.append(.other(Int(type)))
                    continue
                }
                result.append(.otherName(type: Certificate.objectName(typeID), value: Certificate.stringValue(other.pointee.value)))
            case GEN_RID:
                guard let oid = name.pointee.d.registeredID else {
                    result.append(.other(Int(type)))
                    continue
                }
                result.append(.registeredID(Certificate.dottedOID(oid)))
            default:
                result.append(.other(Int(type)))
            }
        }
        return result
    }

    /// DNS names among the subject alternative names.
    public var dnsNames: [String] { subjectAlternativeNames.compactMap { if case .dns(let n) = $0 { n } else { nil } } }

    /// The subject public key.
    public var publicKey: PublicKey {
        // get0: borrowed from the certificate; PublicKey takes its own reference.
        guard let key = X509_get0_pubkey(reference.pointer) else { return PublicKey(unparsedSPKI: subjectPublicKeyInfoDER) }
        // The SPKI as the certificate carries it (found by a DER walk), not re-encoded from the key.
        if let range = DER.subjectPublicKeyInfoRange(inCertificate: derBytes) { return PublicKey(borrowing: key, spkiDER: Array(derBytes[range])) }
        return PublicKey(borrowing: key)
    }

    /// The algorithm and size of the subject's key, read from the key OpenSSL decoded with the
    /// certificate (no SPKI re-encoding, unlike `publicKey.algorithm`).
    public var keyAlgorithm: KeyAlgorithm {
        if reference.decodedPointer == nil, let algorithm = reference.layout?.keyAlgorithm(derBytes) { return algorithm }
        guard let key = X509_get0_pubkey(reference.pointer) else {
            // A key OpenSSL cannot decode (GOST, an unknown OID): named by its algorithm OID.
            OpenSSLErrorQueue.clear()
            return .other(keyAlgorithmName, bits: 0)
        }
        return KeyAlgorithm.of(key)
    }

    /// The DER SubjectPublicKeyInfo, found by walking the certificate's DER (no key decoding).
    public var subjectPublicKeyInfoDER: [UInt8] {
        if let range = DER.subjectPublicKeyInfoRange(inCertificate: derBytes) { return Array(derBytes[range]) }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(reference.pointer), &out)
        guard length > 0, let out else { return [] }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The name of the subjectPublicKeyInfo's algorithm OID as OpenSSL prints it (its long name,
    /// or the dotted OID).
    var keyAlgorithmName: String {
        guard let publicKey = X509_get_X509_PUBKEY(reference.pointer) else { return "unknown" }
        var object: OpaquePointer? = nil
        guard X509_PUBKEY_get0_param(&object, nil, nil, nil, publicKey) == 1, let object else { return "unknown" }
        return Certificate.longName(object)
    }

    /// The signature algorithm's name (`ecdsa-with-SHA256`, `sha256WithRSAEncryption`, `ED25519`),
    /// or its dotted OID when OpenSSL has no name for it: the algorithm of the certificate's outer
    /// signatureAlgorithm, which is what the signature was made with (a TBSCertificate naming
    /// another one makes the certificate fail verification).
    public var signatureAlgorithm: String {
        var algorithm: UnsafePointer<X509_ALGOR>? = nil
        X509_get0_signature(nil, &algorithm, reference.pointer)
        var object: OpaquePointer? = nil
        guard let algorithm else { return "unknown" }
        X509_ALGOR_get0(&object, nil, nil, algorithm)
        guard let object else { return "unknown" }
        return Certificate.longName(object)
    }

    /// An OID's long name (`sha256WithRSAEncryption`), or the dotted OID when OpenSSL has none.
    static func longName(_ object: OpaquePointer) -> String {
        let nid = OBJ_obj2nid(object)
        if nid != NID_undef, let name = OBJ_nid2ln(nid) { return String(cString: name) }
        return dottedOID(object)
    }

    /// What is wrong with the certificate that reading it does not refuse, one sentence each: a
    /// signature algorithm other than the one its TBSCertificate names, an extension OpenSSL knows
    /// but cannot decode (which the properties above then leave out, as if it were absent), an
    /// extendedKeyUsage that lists no purpose, and an extension that appears more than once
    /// (RFC 5280 §4.2 allows one; OpenSSL then reads none of them). Empty for a sound certificate.
    public var problems: [String] {
        let x509 = reference.pointer
        var problems: [String] = []
        var outer: UnsafePointer<X509_ALGOR>? = nil
        X509_get0_signature(nil, &outer, x509)
        if let outer, let inner = X509_get0_tbs_sigalg(x509), X509_ALGOR_cmp(outer, inner) != 0 {
            var object: OpaquePointer? = nil
            X509_ALGOR_get0(&object, nil, nil, inner)
            let innerName = object.map(Certificate.longName) ?? "unknown"
            problems.append(
                "its signature algorithm (\(signatureAlgorithm)) is not the one its TBSCertificate names (\(innerName)), so the signature cannot verify (RFC 5280 §4.1.1.2)"
            )
        }
        var counts: [String: Int] = [:]
        var order: [String] = []
        for index in 0..<X509_get_ext_count(x509) {
            guard let ext = X509_get_ext(x509, index), let object = X509_EXTENSION_get_object(ext) else { continue }
            let name = Certificate.objectName(object)
            if counts[name] == nil { order.append(name) }
            counts[name, default: 0] += 1
            if mtls_X509_EXTENSION_decodes(ext) == 0 {
                problems.append("the \(name) extension could not be decoded, so what it says is not shown")
            }
        }
        for name in order where counts[name, default: 0] > 1 {
            problems.append("the \(name) extension appears \(counts[name, default: 0]) times (RFC 5280 allows one), so none of them is read")
        }
        if counts["extendedKeyUsage"] == 1, extendedKeyUsage?.isEmpty == true {
            problems.append("the extendedKeyUsage extension lists no purpose (RFC 5280 requires at least one)")
        }
        return problems
    }

    /// Key usage bits, or nil when the extension is absent.
    public var keyUsage: KeyUsage? {
        if reference.decodedPointer == nil, let leaf = reference.layout?.plainLeaf { return leaf.keyUsage }
        let flags = X509_get_extension_flags(reference.pointer)
        guard flags & UInt32(EXFLAG_KUSAGE) != 0 else { return nil }
        return KeyUsage(rawValue: X509_get_key_usage(reference.pointer))
    }

    /// Extended key usage purposes (short names such as `serverAuth`, or dotted OIDs), or nil when absent.
    public var extendedKeyUsage: [String]? {
        guard let raw = X509_get_ext_d2i(reference.pointer, NID_ext_key_usage, nil, nil) else { return nil }
        let eku = OpaquePointer(raw)
        defer { mtls_EXTENDED_KEY_USAGE_free(eku) }
        var result: [String] = []
        for i in 0..<mtls_sk_ASN1_OBJECT_num(eku) {
            guard let object = mtls_sk_ASN1_OBJECT_value(eku, i) else { continue }
            result.append(Certificate.objectName(object))
        }
        return result
    }

    static func objectName(_ object: OpaquePointer) -> String {
        let nid = OBJ_obj2nid(object)
        if nid != NID_undef, let sn = OBJ_nid2sn(nid) { return String(cString: sn) }
        var buffer = [CChar](repeating: 0, count: 128)
        _ = mtls_OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        return String(cBuffer: buffer)
    }

    /// Basic constraints: whether this is a CA certificate, and its path length limit.
    public var basicConstraints: BasicConstraints? {
        let flags = X509_get_extension_flags(reference.pointer)
        guard flags & UInt32(EXFLAG_BCONS) != 0 else { return nil }
        let isCA = flags & UInt32(EXFLAG_CA) != 0
        let pathLength = X509_get_pathlen(reference.pointer)
        return BasicConstraints(isCA: isCA, pathLengthConstraint: pathLength >= 0 ? Int(pathLength) : nil)
    }

    /// True when subject and issuer are equal and the certificate's own key verifies its signature.
    ///
    /// Key usage does not matter here: a self-signed leaf whose key usage lacks `keyCertSign` (the
    /// usual development certificate) is still self-signed.
    public var isSelfSigned: Bool {
        // X509_check_issued would also demand keyCertSign of the "issuer"; X509_self_signed checks
        // names and AKID, then the signature.
        let result = X509_self_signed(reference.pointer, 1) == 1
        OpenSSLErrorQueue.clear()
        return result
    }

    /// The version (1, 2 or 3).
    public var version: Int { Int(X509_get_version(reference.pointer)) + 1 }

}

/// The basic constraints extension.
public struct BasicConstraints: Sendable, Hashable {
    public var isCA: Bool
    public var pathLengthConstraint: Int?
}

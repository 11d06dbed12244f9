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

/// An X.509 certificate: an immutable value backed by one OpenSSL `X509` object — decoded from DER
/// only when first needed, for DER in the common strict form (see `CertificateLayout`).
///
/// Create one from DER (``init(derBytes:)``), from PEM (``fromPEM(_:)``), or from any file's bytes with
/// the format detected from content (``CertificateLoader``).
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    let reference: X509Reference
    /// The DER encoding, as `openssl x509 -outform DER` writes it.
    public let derBytes: [UInt8]
    /// The purposes the certificate was given as trusted or rejected for, when it was read from
    /// OpenSSL's `TRUSTED CERTIFICATE` form; nil otherwise. As an anchor it is then trusted only
    /// for what these allow (see ``CertificateTrustSettings``).
    public internal(set) var trustSettings: CertificateTrustSettings?

    /// Parses one DER certificate.
    ///
    /// - Throws: ``MTLSTrustError`` `.emptyInput` for no bytes; `.wrongObjectKind` when the DER is
    ///   another kind of object (a key, a PKCS#12 file, a CRL); `.malformedInput` when the bytes are
    ///   not a certificate, or carry trailing data.
    public init(derBytes: [UInt8]) throws(MTLSTrustError) {
        if derBytes.isEmpty { throw MTLSTrustError(.emptyInput, "the input is empty") }
        // DER in the strict subset is decoded only when its `X509` is first needed (X509Reference).
        if let layout = CertificateLayout(derBytes) {
            self.init(reference: X509Reference(deferring: derBytes, layout: layout), derBytes: derBytes)
            return
        }
        OpenSSLErrorQueue.clear()
        var parsed: OpaquePointer?
        var consumed = 0
        derBytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var cursor: UnsafePointer<UInt8>? = base
            parsed = d2i_X509(nil, &cursor, buffer.count)
            if let cursor { consumed = cursor - base }
        }
        guard let parsed else {
            let errors = OpenSSLErrorQueue.drain()
            if let kind = Certificate.otherObjectKind(derBytes) {
                throw MTLSTrustError(.wrongObjectKind, "it holds \(kind), not a certificate", openSSLDetail: errors.map(\.raw))
            }
            throw MTLSTrustError(
                .malformedInput, "the data is not a DER certificate: \(OpenSSLErrorQueue.describe(errors))",
                openSSLDetail: errors.map(\.raw))
        }
        if consumed != derBytes.count {
            X509_free(parsed)
            throw MTLSTrustError(.malformedInput, "the DER certificate is followed by \(derBytes.count - consumed) unexpected bytes")
        }
        // `d2i_X509` takes any bytes as a UTCTime or GeneralizedTime; a time that does not read as
        // one would make notBefore/notAfter 1970 (and a validity check meaningless).
        if let problem = Certificate.unreadableValidityTime(parsed) {
            X509_free(parsed)
            throw MTLSTrustError(.malformedInput, problem)
        }
        // `i2d_X509` of a certificate just parsed writes the TBSCertificate back verbatim (OpenSSL
        // keeps its encoding) and re-encodes only the outer SEQUENCE, the signature algorithm and
        // the signature. When those are already in their one DER form, the re-encoding is the input
        // itself: keep it and save the `i2d_X509` (a fifth of a leaf's verification).
        if CertificateSummaryReader.reencodesVerbatim(derBytes) {
            self.init(taking: parsed, derBytes: derBytes)
            return
        }
        self.init(taking: parsed)
    }

    /// Why notBefore or notAfter of a parsed certificate is not a time, or nil when both are.
    static func unreadableValidityTime(_ x509: OpaquePointer) -> String? {
        for (field, time) in [("notBefore", X509_get0_notBefore(x509)), ("notAfter", X509_get0_notAfter(x509))] {
            var parts = tm()
            guard let time, ASN1_TIME_to_tm(time, &parts) != 1 else { continue }
            OpenSSLErrorQueue.clear()
            let kind = ASN1_STRING_type(time) == V_ASN1_GENERALIZEDTIME ? "GeneralizedTime" : "UTCTime"
            let text = DisplayText.quoted(String(decoding: asn1StringBytes(time), as: UTF8.self))
            return "its \(field) \(kind) \(text) is not a valid time, so its validity period cannot be read; "
                + "the certificate has to be reissued with RFC 5280 times (UTCTime YYMMDDHHMMSSZ, GeneralizedTime YYYYMMDDHHMMSSZ)"
        }
        return nil
    }

    /// The kind of a well-formed DER object that is not a certificate, for `.wrongObjectKind` errors.
    private static func otherObjectKind(_ der: [UInt8]) -> String? {
        switch DER.shape(of: der) {
        case .privateKey: "a private key"
        case .encryptedPrivateKey: "an encrypted private key"
        case .publicKey: "a public key"
        case .pkcs12: "a PKCS#12 file"
        case .crl: "a certificate revocation list"
        case .pkcs7: "a PKCS#7 certificate bundle (read it as a file of certificates)"
        case .certificate, .unknown: nil
        }
    }

    private init(reference: X509Reference, derBytes: [UInt8]) {
        self.reference = reference
        self.derBytes = derBytes
    }

    /// Wraps an `X509*` whose reference the caller hands over.
    init(taking pointer: OpaquePointer) {
        self.reference = X509Reference(taking: pointer)
        self.derBytes = Certificate.encodeDER(pointer)
    }

    /// Wraps an `X509*` whose reference the caller hands over, with its DER already known.
    init(taking pointer: OpaquePointer, derBytes: [UInt8]) {
        self.reference = X509Reference(taking: pointer)
        self.derBytes = derBytes
    }

    /// Wraps a borrowed `X509*`, taking a reference of its own.
    init(borrowing pointer: OpaquePointer) {
        self.reference = X509Reference(borrowing: pointer)
        self.derBytes = Certificate.encodeDER(pointer)
    }

    private static func encodeDER(_ pointer: OpaquePointer) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(pointer, &out)
        guard length > 0, let out else { return [] }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// Parses every `CERTIFICATE` block of a PEM text (other blocks and text between them are ignored).
    ///
    /// - Throws: `.emptyInput` when there is nothing but white space; `.malformedInput` for damaged
    ///   blocks or text without any PEM block; `.wrongObjectKind` when there are PEM blocks but none
    ///   is a certificate.
    public static func fromPEM(_ bytes: [UInt8]) throws(MTLSTrustError) -> [Certificate] {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            throw MTLSTrustError(.emptyInput, "the input is empty")
        }
        let blocks = try PEM.parse(bytes)
        var certificates: [Certificate] = []
        for (index, block) in blocks.enumerated() where ["CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE", "PKCS7", "CMS"].contains(block.label) {
            do throws(MTLSTrustError) {
                if block.label == "PKCS7" || block.label == "CMS" {
                    // A `.p7b` chain in PEM (`openssl crl2pkcs7`, Windows' Base64 export).
                    certificates += try Certificate.fromPKCS7(derBytes: block.derBytes)
                } else if block.label == "TRUSTED CERTIFICATE" {
                    certificates.append(try Certificate(trustedCertificateDER: block.derBytes))
                } else {
                    certificates.append(try Certificate(derBytes: block.derBytes))
                }
            } catch {
                throw MTLSTrustError(
                    .malformedInput, "PEM block \(index + 1) (\(block.label)) does not hold a valid certificate: \(error.message)", openSSLDetail: error.openSSLDetail)
            }
        }
        if certificates.isEmpty {
            if blocks.isEmpty { throw MTLSTrustError(.malformedInput, "no PEM block was found") }
            let labels = Set(blocks.map(\.label)).sorted().joined(separator: ", ")
            throw MTLSTrustError(.wrongObjectKind, "it holds \(labels), not a certificate")
        }
        return certificates
    }

    /// The PEM encoding, byte-identical to `openssl x509 -outform PEM`.
    public var pemString: String { PEM.encode(derBytes, label: "CERTIFICATE") }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derBytes == rhs.derBytes }
    /// Hashes the length and the last 64 bytes, which are the signature: as good as random, and
    /// equal certificates have equal ones. Hashing every byte of the DER was 3 % of a verification,
    /// whose chain building looks certificates up in sets.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derBytes.count)
        derBytes.withUnsafeBytes { raw in
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw[max(0, raw.count - 64)...]))
        }
    }

    public var description: String { subject }

    // MARK: Names

    /// The subject as an RFC 4514 string (`CN=localhost,O=mtls test,C=US`).
    public var subject: String {
        if reference.decodedPointer == nil, let text = reference.layout?.subjectText(derBytes) { return text }
        return Certificate.rfc4514(X509_get_subject_name(reference.pointer))
    }
    /// The issuer as an RFC 4514 string.
    public var issuer: String { Certificate.rfc4514(X509_get_issuer_name(reference.pointer)) }
    /// The subject's common name, when there is one.
    public var commonName: String? {
        if reference.decodedPointer == nil, let name = reference.layout?.commonName(derBytes) { return name }
        return Certificate.commonName(of: X509_get_subject_name(reference.pointer))
    }

    /// A short label for messages: the CN when present, else the whole subject.
    public var displayName: String {
        if let cn = commonName, !cn.isEmpty { return "CN=\(cn)" }
        let s = subject
        return s.isEmpty ? "(empty subject, serial \(serialNumberHex))" : s
    }

    static func rfc4514(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        let flags = UInt(mtls_XN_FLAG_RFC2253()) & ~UInt(ASN1_STRFLGS_ESC_MSB)
        let bytes = MemoryBIO.collect { bio in X509_NAME_print_ex(bio, name, 0, flags) >= 0 }
        return bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    static func commonName(of name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
            let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        return asn1StringUTF8(data)
    }

    static func asn1StringUTF8(_ string: UnsafePointer<ASN1_STRING>?) -> String? {
        guard let string else { return nil }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = ASN1_STRING_to_UTF8(&out, string)
        guard length >= 0, let out else { return nil }
        defer { mtls_OPENSSL_free(out) }
        return String(decoding: UnsafeBufferPointer(start: out, count: Int(length)), as: UTF8.self)
    }

    /// The bytes of an IA5String as text: ASCII as it is, other bytes read as UTF-8 (what OpenSSL
    /// prints; invalid sequences become U+FFFD).
    static func ia5Text(_ string: UnsafePointer<ASN1_STRING>?) -> String {
        String(decoding: asn1StringBytes(string), as: UTF8.self)
    }

    /// The text of an ASN1_TYPE that holds a string (otherName values), or nil for other types.
    static func stringValue(_ value: UnsafePointer<ASN1_TYPE>?) -> String? {
        guard let value else { return nil }
        switch ASN1_TYPE_get(value) {
        case V_ASN1_UTF8STRING, V_ASN1_PRINTABLESTRING, V_ASN1_BMPSTRING, V_ASN1_UNIVERSALSTRING, V_ASN1_T61STRING:
            return asn1StringUTF8(value.pointee.value.asn1_string)
        case V_ASN1_IA5STRING, V_ASN1_VISIBLESTRING:
            return ia5Text(value.pointee.value.asn1_string)
        default:
            return nil
        }
    }

    static func dottedOID(_ object: OpaquePointer) -> String { OpenSSLObjects.dottedOID(object) }

    static func asn1StringBytes(_ string: UnsafePointer<ASN1_STRING>?) -> [UInt8] {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }

    // MARK: Serial and validity

    /// The serial number in upper-case hex, as `openssl x509 -serial` prints it.
    public var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(reference.pointer), let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { mtls_OPENSSL_free(hex) }
        return String(cString: hex)
    }

    /// The start of the validity period.
    public var notBefore: Date {
        if reference.decodedPointer == nil, let layout = reference.layout { return Date(timeIntervalSince1970: TimeInterval(layout.notBefore)) }
        return Certificate.date(X509_get0_notBefore(reference.pointer))
    }
    /// The end of the validity period.
    public var notAfter: Date {
        if reference.decodedPointer == nil, let layout = reference.layout { return Date(timeIntervalSince1970: TimeInterval(layout.notAfter)) }
        return Certificate.date(X509_get0_notAfter(reference.pointer))
    }

    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        guard let time else { return Date(timeIntervalSince1970: 0) }
        var tm = tm()
        guard ASN1_TIME_to_tm(time, &tm) == 1 else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&tm)))
    }

    /// True when `date` lies within the validity period (inclusive).
    public func isValid(at date: Date) -> Bool { date >= notBefore && date <= notAfter }

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

    // MARK: Fingerprints

    /// SHA-256 of the DER certificate.
    public var sha256Fingerprint: [UInt8] { Digest.sha256(derBytes) }
    /// SHA-1 of the DER certificate (shown by Windows and Keychain as the "thumbprint").
    public var sha1Fingerprint: [UInt8] { Digest.sha1(derBytes) }
    /// SHA-256 of the DER SubjectPublicKeyInfo: the value of `sha256/…` pins.
    public var spkiSHA256: [UInt8] { Digest.sha256(subjectPublicKeyInfoDER) }
    /// The SPKI pin in the `sha256/BASE64` form used by OkHttp, TrustKit, Android and curl.
    public var spkiPin: String { "sha256/" + Data(spkiSHA256).base64EncodedString() }
}

/// One subject alternative name.
public enum SubjectAlternativeName: Sendable, Hashable, CustomStringConvertible {
    case dns(String)
    case ip([UInt8])
    case email(String)
    case uri(String)
    case directoryName(String)
    /// An otherName: its type (a short name such as `msUPN`, or a dotted OID) and its value when
    /// that is a string.
    case otherName(type: String, value: String?)
    /// A registeredID: the dotted OID.
    case registeredID(String)
    /// A name of a kind not read here (x400Address, ediPartyName): the GeneralName tag number.
    case other(Int)

    public var description: String {
        switch self {
        case .dns(let name): "DNS:\(name)"
        case .ip(let bytes): "IP:\(IPAddress.format(bytes))"
        case .email(let address): "email:\(address)"
        case .uri(let uri): "URI:\(uri)"
        case .directoryName(let name): "DirName:\(name)"
        case .otherName(let type, let value): "othername:\(type):\(value ?? "<unsupported>")"
        case .registeredID(let oid): "RID:\(oid)"
        case .other(let type):
            switch Int32(type) {
            case GEN_X400: "X400Name:<unsupported>"
            case GEN_EDIPARTY: "EdiPartyName:<unsupported>"
            default: "GeneralName[\(type)]:<unsupported>"
            }
        }
    }
}

/// Key usage bits as OpenSSL reports them (`KU_*`).
public struct KeyUsage: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let digitalSignature = KeyUsage(rawValue: 0x0080)
    public static let nonRepudiation = KeyUsage(rawValue: 0x0040)
    public static let keyEncipherment = KeyUsage(rawValue: 0x0020)
    public static let dataEncipherment = KeyUsage(rawValue: 0x0010)
    public static let keyAgreement = KeyUsage(rawValue: 0x0008)
    public static let keyCertSign = KeyUsage(rawValue: 0x0004)
    public static let cRLSign = KeyUsage(rawValue: 0x0002)
    public static let encipherOnly = KeyUsage(rawValue: 0x0001)
    public static let decipherOnly = KeyUsage(rawValue: 0x8000)

    static let names: [(KeyUsage, String)] = [
        (.digitalSignature, "digitalSignature"), (.nonRepudiation, "nonRepudiation"),
        (.keyEncipherment, "keyEncipherment"), (.dataEncipherment, "dataEncipherment"),
        (.keyAgreement, "keyAgreement"), (.keyCertSign, "keyCertSign"), (.cRLSign, "cRLSign"),
        (.encipherOnly, "encipherOnly"), (.decipherOnly, "decipherOnly"),
    ]
    /// The names of the bits that are set.
    public var names: [String] { KeyUsage.names.filter { contains($0.0) }.map(\.1) }
    public var description: String { names.joined(separator: ", ") }
}

/// The basic constraints extension.
public struct BasicConstraints: Sendable, Hashable {
    public var isCA: Bool
    public var pathLengthConstraint: Int?
}

/// IP address helpers.
public enum IPAddress {
    /// Formats 4 or 16 bytes as dotted-quad or RFC 5952 text.
    public static func format(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        if bytes.count == 16 {
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            if inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil { return String(cBuffer: buffer) }
        }
        return bytes.map { String(cFormat: "%02X", $0) }.joined(separator: ":")
    }

    /// Parses an IPv4 or IPv6 literal (brackets allowed) to its bytes, or nil when it is not one.
    public static func parse(_ text: String) -> [UInt8]? {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}

extension Array where Element == UInt8 {
    /// Colon-separated upper-case hex, as `openssl x509 -fingerprint` prints it.
    public var colonHex: String { hexDigits(Array("0123456789ABCDEF".utf8), separator: UInt8(ascii: ":")) }
    /// Lower-case hex without separators.
    public var hex: String { hexDigits(Array("0123456789abcdef".utf8), separator: nil) }

    private func hexDigits(_ digits: [UInt8], separator: UInt8?) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(count * 3)
        for (index, byte) in enumerated() {
            if let separator, index > 0 { out.append(separator) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

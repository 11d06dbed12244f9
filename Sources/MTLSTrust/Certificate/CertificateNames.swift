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

}

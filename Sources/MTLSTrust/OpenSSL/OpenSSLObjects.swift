internal import COpenSSL
internal import COpenSSLShims

/// Text of OpenSSL's ASN.1 objects, for every layer above.
enum OpenSSLObjects {
    /// The dotted form of an `ASN1_OBJECT*` (`1.3.6.1.5.5.7.3.1`), never its name.
    static func dottedOID(_ object: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        _ = mtls_OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        return String(cBuffer: buffer)
    }
}

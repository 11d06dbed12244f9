internal import COpenSSL

extension CertificateFacts {
    /// Where these facts differ from OpenSSL's decode of the same certificate: empty when the walk
    /// (``CertificateStructure``) and `d2i_X509` read the same version, serial, names, validity
    /// times, TBS signature algorithm and extensions. The proof that the two readers agree, run by
    /// the tests over every fixture and by the `trust-fast-path` fuzz target over every input
    /// `d2i_X509` accepts. A certificate the walk declines (BER that OpenSSL tolerates, such as a
    /// constructed OCTET STRING) is not a disagreement: its facts are unreadable and the policies
    /// that need them stay silent; callers check ``isReadable`` first.
    func differences(from x509: OpaquePointer) -> [String] {
        guard isReadable else { return ["the walk declined a certificate OpenSSL decoded"] }
        var found: [String] = []
        func compare<T: Equatable>(_ field: String, _ ours: T, _ openssl: T) {
            if ours != openssl { found.append("\(field): walk \(ours), OpenSSL \(openssl)") }
        }
        compare("version", version, Int(X509_get_version(x509)))
        compare("serial", [0x02] + CertificateFacts.length(serial.count) + serial, CertificateFacts.encoded { i2d_ASN1_INTEGER(X509_get0_serialNumber(x509), $0) })
        compare("issuer", issuerDER, CertificateFacts.encoded { i2d_X509_NAME(X509_get_issuer_name(x509), $0) })
        compare("subject", subjectDER, CertificateFacts.encoded { i2d_X509_NAME(X509_get_subject_name(x509), $0) })
        for (field, ours, time) in [("notBefore", notBefore, X509_get0_notBefore(x509)), ("notAfter", notAfter, X509_get0_notAfter(x509))] {
            compare("\(field) type", Int32(ours.tag), time.map { ASN1_STRING_type($0) } ?? -1)
            compare(field, Array(ours.text.utf8), Certificate.asn1StringBytes(time))
        }
        var algorithmObject: OpaquePointer?
        var parameterType: Int32 = 0
        var parameter: UnsafeRawPointer?
        X509_ALGOR_get0(&algorithmObject, &parameterType, &parameter, X509_get0_tbs_sigalg(x509))
        compare("TBS signature algorithm", signatureAlgorithm.oid, algorithmObject.map(OpenSSLObjects.dottedOID) ?? "")
        compare("extension count", extensions.count, Int(X509_get_ext_count(x509)))
        for (index, ext) in extensions.enumerated() where index < Int(X509_get_ext_count(x509)) {
            guard let theirs = X509_get_ext(x509, Int32(index)) else { continue }
            compare("extension \(index) OID", ext.oid, X509_EXTENSION_get_object(theirs).map(OpenSSLObjects.dottedOID) ?? "")
            compare("extension \(index) critical", ext.critical, X509_EXTENSION_get_critical(theirs) != 0)
            compare("extension \(index) value", ext.value, Certificate.asn1StringBytes(X509_EXTENSION_get_data(theirs)))
        }
        return found
    }

    private static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var octets: [UInt8] = []
        var rest = count
        while rest > 0 {
            octets.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    /// The bytes an OpenSSL `i2d_…` function writes.
    private static func encoded(_ write: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8] {
        let length = write(nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = write(&cursor)
        }
        return bytes
    }
}

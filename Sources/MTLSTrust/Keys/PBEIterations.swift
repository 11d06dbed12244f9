internal import COpenSSL
internal import COpenSSLShims

/// The one bound on password-based key derivation and MAC work, for every structure that names
/// its own iteration count: PKCS#12's classic MAC, PBES1 and PBES2/PBKDF2 (in PKCS#12 safes and
/// shrouded key bags, and in encrypted PKCS#8 keys) and PBMAC1. Here, in Keys, so that both
/// `PrivateKey` and the PKCS#12 reader above it use the same bound.
enum PBEIterations {
    /// Writers use 1 to 2,048 (OpenSSL), 10,000 (NSS), 2,000 (Windows) and at most a few hundred
    /// thousand when asked; a count above this would hold a reader for minutes or hours (2³¹ − 1
    /// SHA-1 rounds), so it is refused as damaged before any derivation runs.
    static let maximum = 10_000_000

    /// Refuses a count above ``maximum`` (or one too large for a C `long`, which OpenSSL reports
    /// as −1), naming the count, what asked for it and the container (`the file`, `the key`).
    static func check(_ count: Int?, of what: String, in container: String) throws(MTLSTrustError) {
        guard let count, count < 0 || count > maximum else { return }
        let shown = count < 0 ? "a negative or out-of-range number of" : "\(count)"
        throw MTLSTrustError(
            .corruptInput,
            "\(container) is damaged or hostile: \(what) asks for \(shown) iterations, above the \(maximum) mtls accepts (real files use at most a few hundred thousand); nothing was derived"
        )
    }

    /// The iteration count a PBES1 (PKCS#5 v1.5, PKCS#12 PBE) or PBES2/PBKDF2 AlgorithmIdentifier
    /// asks for; nil when it names none that can be read.
    static func count(_ algor: UnsafePointer<X509_ALGOR>?) -> Int? {
        guard let algor else { return nil }
        var object: OpaquePointer? = nil
        var type: Int32 = 0
        var value: UnsafeRawPointer? = nil
        X509_ALGOR_get0(&object, &type, &value, algor)
        guard let object, type == V_ASN1_SEQUENCE, let value else { return nil }
        let parameters = bytes(value.assumingMemoryBound(to: ASN1_STRING.self))
        return parameters.withUnsafeBufferPointer { buffer -> Int? in
            var cursor = buffer.baseAddress
            if OBJ_obj2nid(object) != NID_pbes2 {
                guard let pbe = d2i_PBEPARAM(nil, &cursor, buffer.count) else { return nil }
                defer { PBEPARAM_free(pbe) }
                return Int(ASN1_INTEGER_get(pbe.pointee.iter))
            }
            guard let pbe2 = d2i_PBE2PARAM(nil, &cursor, buffer.count) else { return nil }
            defer { PBE2PARAM_free(pbe2) }
            guard let keyFunction = pbe2.pointee.keyfunc else { return nil }
            var kdf: OpaquePointer? = nil
            var kdfType: Int32 = 0
            var kdfValue: UnsafeRawPointer? = nil
            X509_ALGOR_get0(&kdf, &kdfType, &kdfValue, keyFunction)
            guard let kdf, OBJ_obj2nid(kdf) == NID_id_pbkdf2, kdfType == V_ASN1_SEQUENCE, let kdfValue else { return nil }
            let kdfBytes = bytes(kdfValue.assumingMemoryBound(to: ASN1_STRING.self))
            return kdfBytes.withUnsafeBufferPointer { kdfBuffer -> Int? in
                var kdfCursor = kdfBuffer.baseAddress
                guard let params = d2i_PBKDF2PARAM(nil, &kdfCursor, kdfBuffer.count) else { return nil }
                defer { PBKDF2PARAM_free(params) }
                return Int(ASN1_INTEGER_get(params.pointee.iter))
            }
        }
    }

    /// The long name of an AlgorithmIdentifier's OID (`PBES2`, `pbeWithSHA1And3-KeyTripleDES-CBC`).
    static func name(_ algor: UnsafePointer<X509_ALGOR>?) -> String {
        guard let algor else { return "unknown" }
        var object: OpaquePointer? = nil
        var type: Int32 = 0
        var value: UnsafeRawPointer? = nil
        X509_ALGOR_get0(&object, &type, &value, algor)
        guard let object, let long = OBJ_nid2ln(OBJ_obj2nid(object)) else { return "unknown" }
        return String(cString: long)
    }

    private static func bytes(_ string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
        guard let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }
}

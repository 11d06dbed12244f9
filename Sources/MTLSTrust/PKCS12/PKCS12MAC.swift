internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The file's integrity: the classic PKCS#12 MAC or PBMAC1, and the iteration counts checked before
// any derivation.

extension PKCS12Bundle {
    /// The file's MAC: the PKCS#12 MAC (OpenSSL verifies it) or PBMAC1 (verified here).
    struct MACCheck {
        var summary: PKCS12Inspection.MAC
        var p12: OpaquePointer
        var pbmac1: PBMAC1?
        var content: [UInt8] = []
        var expected: [UInt8] = []
        /// True when the MAC's digest is only in OpenSSL's legacy provider (MD4).
        var needsLegacy = false

        init(_ p12: OpaquePointer, reencoded: [UInt8]?) throws(MTLSTrustError) {
            self.p12 = p12
            var macOctets: UnsafePointer<ASN1_OCTET_STRING>? = nil
            var macAlgorithm: UnsafePointer<X509_ALGOR>? = nil
            var salt: UnsafePointer<ASN1_OCTET_STRING>? = nil
            var iterations: UnsafePointer<ASN1_INTEGER>? = nil
            PKCS12_get0_mac(&macOctets, &macAlgorithm, &salt, &iterations, p12)
            var digestName = "unknown"
            var digestNID = NID_undef
            var parameters: [UInt8]? = nil
            if let macAlgorithm {
                var object: OpaquePointer? = nil
                var type: Int32 = 0
                var value: UnsafeRawPointer? = nil
                X509_ALGOR_get0(&object, &type, &value, macAlgorithm)
                if let object {
                    digestNID = OBJ_obj2nid(object)
                    digestName = Certificate.objectName(object).lowercased().replacingAll("-", with: "")
                    if type == V_ASN1_SEQUENCE, let value {
                        parameters = Certificate.asn1StringBytes(value.assumingMemoryBound(to: ASN1_STRING.self))
                    }
                }
            }
            if digestNID == NID_pbmac1 {
                let pbmac1 = try PBMAC1(parameters: parameters ?? [])
                guard let content = reencoded.flatMap(PKCS12Bundle.authSafeContent) else {
                    throw MTLSTrustError(.corruptInput, "the file is damaged: the content its PBMAC1 integrity check covers could not be found")
                }
                self.pbmac1 = pbmac1
                self.content = content
                self.expected = Certificate.asn1StringBytes(macOctets)
                summary = PKCS12Inspection.MAC(digest: pbmac1.name, iterations: pbmac1.iterations, saltLength: pbmac1.salt.count)
                return
            }
            summary = PKCS12Inspection.MAC(
                digest: digestName, iterations: iterations.map { Int(ASN1_INTEGER_get($0)) } ?? 1,
                saltLength: Certificate.asn1StringBytes(salt).count)
            try PKCS12Inspection.checkIterations(summary.iterations, of: "its integrity check (\(digestName) MAC)")
            if digestNID == NID_undef || EVP_get_digestbyname(OBJ_nid2sn(digestNID)) == nil {
                throw MTLSTrustError(.unsupportedAlgorithm, "its integrity check uses a digest this OpenSSL cannot compute (\(digestName))")
            }
            if let fetched = EVP_MD_fetch(nil, OBJ_nid2sn(digestNID), nil) {
                EVP_MD_free(fetched)
            } else if LegacyLibraryContext.shared.isAvailable {
                needsLegacy = true
            }
            OpenSSLErrorQueue.clear()
        }

        /// True when the MAC matches the password (nil: no password at all, not even empty).
        func matches(_ password: Secret?) -> Bool {
            if let pbmac1 { return pbmac1.verify(password: password, content: content, expected: expected) }
            let verify = { () -> Bool in
                guard let password else { return PKCS12_verify_mac(self.p12, nil, 0) == 1 }
                return password.withCString { PKCS12_verify_mac(self.p12, $0, -1) == 1 }
            }
            // A MAC over MD4 (or another digest only the legacy provider has) is computed there.
            return needsLegacy ? LegacyLibraryContext.shared.withAsThreadDefault(verify) : verify()
        }
    }

    static func verifyMAC(_ p12: OpaquePointer, _ password: Secret) -> Bool {
        password.withCString { PKCS12_verify_mac(p12, $0, -1) == 1 }
    }

    /// Checks the iteration count of every encryption visible without the password (encrypted
    /// safes, shrouded key bags in plain safes, nested to the depth the reader follows); those
    /// inside an encrypted safe are checked by ``SafeReader`` before each is decrypted.
    static func checkIterationCounts(_ p12: OpaquePointer) throws(MTLSTrustError) {
        OpenSSLErrorQueue.clear()
        // Contents that do not unpack are reported by the steps that need them.
        guard let authSafes = PKCS12_unpack_authsafes(p12) else {
            OpenSSLErrorQueue.clear()
            return
        }
        defer { mtls_sk_PKCS7_pop_free(authSafes) }
        for i in 0..<mtls_sk_PKCS7_num(authSafes) {
            guard let p7 = mtls_sk_PKCS7_value(authSafes, i) else { continue }
            if mtls_PKCS7_type_is_encrypted(p7) == 1 {
                let algorithm = PKCS12Inspection.algorithm(mtls_PKCS7_encrypted_algorithm(p7))
                try PKCS12Inspection.checkIterations(algorithm?.iterations, of: "its encrypted safe (\(algorithm?.name ?? "unknown"))")
            } else if mtls_PKCS7_type_is_data(p7) == 1, let bags = PKCS12_unpack_p7data(p7) {
                defer { mtls_sk_PKCS12_SAFEBAG_pop_free(bags) }
                try checkIterationCounts(bags: bags, depth: 0)
            }
        }
        OpenSSLErrorQueue.clear()
    }

    static func checkIterationCounts(bags: OpaquePointer, depth: Int) throws(MTLSTrustError) {
        for j in 0..<mtls_sk_PKCS12_SAFEBAG_num(bags) {
            guard let bag = mtls_sk_PKCS12_SAFEBAG_value(bags, j) else { continue }
            let nid = PKCS12_SAFEBAG_get_nid(bag)
            if nid == NID_pkcs8ShroudedKeyBag, let sig = PKCS12_SAFEBAG_get0_pkcs8(bag) {
                var algor: UnsafePointer<X509_ALGOR>? = nil
                var digest: UnsafePointer<ASN1_OCTET_STRING>? = nil
                X509_SIG_get0(sig, &algor, &digest)
                let algorithm = PKCS12Inspection.algorithm(algor)
                try PKCS12Inspection.checkIterations(algorithm?.iterations, of: "the private key bag's encryption (\(algorithm?.name ?? "unknown"))")
            } else if nid == NID_safeContentsBag, depth < 8, let nested = PKCS12_SAFEBAG_get0_safes(bag) {
                try checkIterationCounts(bags: nested, depth: depth + 1)
            }
        }
    }

}

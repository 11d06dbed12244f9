internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PKCS12Bundle {
    /// Walks the safes and bags.
    struct SafeReader {
        var password: Secret?
        var macPresent: Bool
        var certificates: [Entry] = []
        var keys: [(key: PrivateKey, friendlyName: String?, localKeyID: String?)] = []
        var safes: [PKCS12Inspection.Safe] = []
        /// True once a PBES2 item opened only with the password as a BMPString.
        var usedBMPPassword = false
        /// The password as typed, when the MAC matched another form of it.
        var typedPassword: Secret? = nil

        init(password: Secret?, macPresent: Bool) {
            self.password = password
            self.macPresent = macPresent
        }

        mutating func read(_ authSafes: OpaquePointer) throws(MTLSTrustError) {
            for i in 0..<mtls_sk_PKCS7_num(authSafes) {
                guard let p7 = mtls_sk_PKCS7_value(authSafes, i) else { continue }
                OpenSSLErrorQueue.clear()
                var bags: OpaquePointer?
                var encryption: PKCS12Inspection.Algorithm? = nil
                if mtls_PKCS7_type_is_data(p7) == 1 {
                    bags = PKCS12_unpack_p7data(p7)
                } else if mtls_PKCS7_type_is_encrypted(p7) == 1 {
                    encryption = PKCS12Inspection.algorithm(mtls_PKCS7_encrypted_algorithm(p7))
                    guard mtls_PKCS7_encrypted_content_present(p7) == 1 else {
                        throw MTLSTrustError(
                            .corruptInput,
                            "the file is damaged: its encrypted safe\(encryption.map { " (\($0.name))" } ?? "") has no encrypted content (the OCTET STRING is absent)")
                    }
                    bags = decrypting(encryption) { PKCS12_unpack_p7encdata(p7, $0, $1) }
                } else {
                    // envelopedData (RFC 7292's public-key privacy mode) needs the recipient's
                    // private key, not a password; other content types are not PKCS#12 safes.
                    let kind: PKCS12Inspection.Bag.Kind = mtls_PKCS7_type_nid(p7) == NID_pkcs7_enveloped ? .enveloped : .other
                    safes.append(PKCS12Inspection.Safe(encryption: nil, bags: [PKCS12Inspection.Bag(kind: kind)]))
                    continue
                }
                guard let bags else {
                    throw failure(what: "an encrypted safe\(encryption.map { " (\($0.name))" } ?? "")", encryption)
                }
                defer { mtls_sk_PKCS12_SAFEBAG_pop_free(bags) }
                var bagInfos: [PKCS12Inspection.Bag] = []
                try readBags(bags, into: &bagInfos, depth: 0)
                safes.append(PKCS12Inspection.Safe(encryption: encryption, bags: bagInfos))
            }
        }

        /// Reads a SafeContents; a safeContentsBag's bags are read as if they stood in its place
        /// (its own entry is listed first), to a depth that no real file reaches.
        private mutating func readBags(_ bags: OpaquePointer, into infos: inout [PKCS12Inspection.Bag], depth: Int) throws(MTLSTrustError) {
            for j in 0..<mtls_sk_PKCS12_SAFEBAG_num(bags) {
                guard let bag = mtls_sk_PKCS12_SAFEBAG_value(bags, j) else { continue }
                infos.append(try readBag(bag))
                if PKCS12_SAFEBAG_get_nid(bag) == NID_safeContentsBag, let nested = PKCS12_SAFEBAG_get0_safes(bag) {
                    guard depth < 8 else { throw MTLSTrustError(.corruptInput, "the file is damaged: its safe contents nest more than 8 levels deep") }
                    try readBags(nested, into: &infos, depth: depth + 1)
                }
            }
        }

        private func withPassword<T>(_ body: (UnsafePointer<CChar>?, Int32) -> T) -> T {
            guard let password else { return body(nil, 0) }
            return password.withCString { body($0, Int32(strlen($0))) }
        }

        /// Decrypts with the password as PBES2 wants it (UTF-8); when that fails under PBES2, once
        /// more with the password as a BMPString (UTF-16BE, with and without its two-byte
        /// terminator), which NSS 3.21 to 3.30 fed to PBKDF2 (Firefox exports of those years).
        private mutating func decrypting<T>(_ algorithm: PKCS12Inspection.Algorithm?, _ body: (UnsafePointer<CChar>?, Int32) -> T?) -> T? {
            if let result = withPassword(body) { return result }
            if let typedPassword, let result = SafeReader.withBytes(typedPassword, body) {
                OpenSSLErrorQueue.clear()
                return result
            }
            // PKCS#12's own PBE schemes take a BMPString by definition; PBES1 and PBES2 take bytes.
            guard let password = typedPassword ?? password, let algorithm, !algorithm.isPKCS12PBE else { return nil }
            for terminated in [true, false] {
                let bmp = SafeReader.bmpString(password, terminated: terminated)
                if let result = SafeReader.withBytes(bmp, body) {
                    OpenSSLErrorQueue.clear()
                    usedBMPPassword = true
                    return result
                }
            }
            return nil
        }

        /// Calls `body` with the secret's bytes and their count (not up to a NUL: a BMPString has them).
        static func withBytes<T>(_ secret: Secret, _ body: (UnsafePointer<CChar>?, Int32) -> T?) -> T? {
            secret.withUnsafeBytes { bytes in
                bytes.baseAddress.flatMap { base in
                    base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { body($0, Int32(bytes.count)) }
                }
            }
        }

        /// The UTF-8 password as UTF-16BE, optionally with a terminating U+0000, made without an
        /// intermediate String (a Secret's bytes are wiped; a String's are not).
        static func bmpString(_ password: Secret, terminated: Bool) -> Secret {
            var units: [UInt8] = []
            // Every UTF-8 byte gives at most two UTF-16 bytes: no reallocation leaves a copy behind.
            units.reserveCapacity(password.count * 2 + 2)
            password.withUnsafeBytes { bytes in
                var iterator = bytes.makeIterator()
                var decoder = UTF8()
                decoding: while true {
                    switch decoder.decode(&iterator) {
                    case .scalarValue(let scalar):
                        for unit in scalar.utf16 {
                            units.append(UInt8(unit >> 8))
                            units.append(UInt8(unit & 0xFF))
                        }
                    case .emptyInput: break decoding
                    case .error: units.append(contentsOf: [0xFF, 0xFD])
                    }
                }
            }
            if terminated { units.append(contentsOf: [0, 0]) }
            return Secret(wiping: &units)
        }

        private func failure(what: String, _ algorithm: PKCS12Inspection.Algorithm? = nil) -> MTLSTrustError {
            let errors = OpenSSLErrorQueue.drain()
            if let problem = algorithm?.problem {
                return MTLSTrustError(.unsupportedAlgorithm, "\(what) cannot be decrypted: its encryption \(problem), which OpenSSL refuses", openSSLDetail: errors.map(\.raw))
            }
            if OpenSSLErrorQueue.namesUnavailableAlgorithm(errors) {
                return MTLSTrustError(.unsupportedAlgorithm, "\(what) uses an algorithm this OpenSSL cannot use", openSSLDetail: errors.map(\.raw))
            }
            if macPresent {
                return MTLSTrustError(
                    .corruptInput,
                    "\(what) could not be decrypted with the password that opens the file's integrity check: the file is damaged (or that part is encrypted under another password)",
                    openSSLDetail: errors.map(\.raw))
            }
            return MTLSTrustError(.wrongPassword, "\(what) could not be decrypted: wrong password, or a damaged file", openSSLDetail: errors.map(\.raw))
        }

        /// The bag's friendlyName attribute, decoded here from its BMPString (UTF-16BE): OpenSSL
        /// 3.0's `PKCS12_get_friendlyname` returns NULL for any name with a non-ASCII character.
        static func friendlyName(of bag: OpaquePointer) -> String? {
            guard let attribute = PKCS12_SAFEBAG_get0_attr(bag, NID_friendlyName) else { return nil }
            switch attribute.pointee.type {
            case V_ASN1_BMPSTRING:
                let bytes = Certificate.asn1StringBytes(attribute.pointee.value.bmpstring)
                guard bytes.count % 2 == 0 else { return nil }
                var units = stride(from: 0, to: bytes.count, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
                while units.last == 0 { units.removeLast() }  // some writers add a terminating NUL
                return String(decoding: units, as: UTF16.self)
            case V_ASN1_UTF8STRING:
                return String(decoding: Certificate.asn1StringBytes(attribute.pointee.value.utf8string), as: UTF8.self)
            default:
                return nil
            }
        }

        /// What a bag is, for messages: `a certificate bag`, `a key bag` …
        static func bagName(_ bag: OpaquePointer) -> String {
            switch PKCS12_SAFEBAG_get_nid(bag) {
            case NID_certBag: "a certificate bag"
            case NID_keyBag: "a key bag"
            case NID_pkcs8ShroudedKeyBag: "a shrouded key bag"
            case NID_crlBag: "a CRL bag"
            case NID_secretBag: "a secret bag"
            case NID_safeContentsBag: "a safe contents bag"
            default: "a bag"
            }
        }

        /// Refuses a bag whose friendlyName is not a string or whose localKeyId is not an OCTET
        /// STRING (PKCS #9): such a value is damage or a crafted file (CVE-2026-22795), and OpenSSL
        /// 3.4+ and pyca refuse the file too. A friendlyName in UTF8String is read like a BMPString.
        static func checkAttributeTypes(_ bag: OpaquePointer) throws(MTLSTrustError) {
            let rules: [(nid: Int32, name: String, allowed: [Int32], expected: String)] = [
                (NID_friendlyName, "friendlyName", [V_ASN1_BMPSTRING, V_ASN1_UTF8STRING], "a BMPString"),
                (NID_localKeyID, "localKeyId", [V_ASN1_OCTET_STRING], "an OCTET STRING"),
            ]
            for rule in rules {
                guard let attribute = PKCS12_SAFEBAG_get0_attr(bag, rule.nid), !rule.allowed.contains(attribute.pointee.type) else { continue }
                let type = attribute.pointee.type
                let found = type == V_ASN1_BOOLEAN ? "a BOOLEAN" : (ASN1_tag2str(type).map { "ASN.1 type \(String(cString: $0))" } ?? "ASN.1 type \(type)")
                throw MTLSTrustError(.corruptInput, "the file is damaged: the \(rule.name) attribute of \(bagName(bag)) is \(found), not \(rule.expected) (PKCS #9)")
            }
        }

        /// The key of a PKCS #8 structure; one OpenSSL cannot decode (GOST without its engine …)
        /// is refused naming its algorithm.
        static func privateKey(_ p8: OpaquePointer) throws(MTLSTrustError) -> PrivateKey {
            OpenSSLErrorQueue.clear()
            guard let key = EVP_PKCS82PKEY(p8) else {
                let errors = OpenSSLErrorQueue.drain()
                var object: OpaquePointer? = nil
                _ = PKCS8_pkey_get0(&object, nil, nil, nil, p8)
                guard let object else {
                    throw MTLSTrustError(.unsupportedAlgorithm, "the private key's type is not supported: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
                }
                throw MTLSTrustError(
                    .unsupportedAlgorithm, "the private key's algorithm (\(Certificate.objectName(object))) is not one this OpenSSL can use", openSSLDetail: errors.map(\.raw))
            }
            return PrivateKey(taking: key, format: .pkcs12)
        }

        private mutating func readBag(_ bag: OpaquePointer) throws(MTLSTrustError) -> PKCS12Inspection.Bag {
            try SafeReader.checkAttributeTypes(bag)
            let friendlyName = SafeReader.friendlyName(of: bag)
            var localKeyID: String? = nil
            if let attribute = PKCS12_SAFEBAG_get0_attr(bag, NID_localKeyID), attribute.pointee.type == V_ASN1_OCTET_STRING {
                localKeyID = Certificate.asn1StringBytes(attribute.pointee.value.octet_string).hex
            }
            switch PKCS12_SAFEBAG_get_nid(bag) {
            case NID_certBag:
                guard let x509 = PKCS12_SAFEBAG_get1_cert(bag) else {
                    return PKCS12Inspection.Bag(kind: .certificate, friendlyName: friendlyName, localKeyID: localKeyID)
                }
                let certificate = Certificate(taking: x509)
                certificates.append(Entry(certificate: certificate, friendlyName: friendlyName, localKeyID: localKeyID))
                return PKCS12Inspection.Bag(kind: .certificate, friendlyName: friendlyName, localKeyID: localKeyID, subject: certificate.subject)
            case NID_keyBag:
                // An unencrypted key that OpenSSL cannot decode is refused, as a shrouded one is:
                // reading the file without it would hand over a certificate with no key.
                if let p8 = PKCS12_SAFEBAG_get0_p8inf(bag) {
                    keys.append((try SafeReader.privateKey(p8), friendlyName, localKeyID))
                }
                return PKCS12Inspection.Bag(kind: .key, friendlyName: friendlyName, localKeyID: localKeyID)
            case NID_pkcs8ShroudedKeyBag:
                var algorithm: PKCS12Inspection.Algorithm? = nil
                if let sig = PKCS12_SAFEBAG_get0_pkcs8(bag) {
                    var algor: UnsafePointer<X509_ALGOR>? = nil
                    var digest: UnsafePointer<ASN1_OCTET_STRING>? = nil
                    X509_SIG_get0(sig, &algor, &digest)
                    algorithm = PKCS12Inspection.algorithm(algor)
                }
                try PKCS12Inspection.checkIterations(algorithm?.iterations, of: "the private key bag's encryption (\(algorithm?.name ?? "unknown"))")
                OpenSSLErrorQueue.clear()
                guard let p8 = decrypting(algorithm, { PKCS12_decrypt_skey(bag, $0, $1) }) else {
                    throw failure(what: "the private key bag\(algorithm.map { " (\($0.name))" } ?? "")", algorithm)
                }
                defer { PKCS8_PRIV_KEY_INFO_free(p8) }
                keys.append((try SafeReader.privateKey(p8), friendlyName, localKeyID))
                return PKCS12Inspection.Bag(kind: .shroudedKey, algorithm: algorithm, friendlyName: friendlyName, localKeyID: localKeyID)
            case NID_crlBag: return PKCS12Inspection.Bag(kind: .crl, friendlyName: friendlyName, localKeyID: localKeyID)
            case NID_secretBag: return PKCS12Inspection.Bag(kind: .secret, friendlyName: friendlyName, localKeyID: localKeyID)
            case NID_safeContentsBag: return PKCS12Inspection.Bag(kind: .nested, friendlyName: friendlyName, localKeyID: localKeyID)
            default: return PKCS12Inspection.Bag(kind: .other, friendlyName: friendlyName, localKeyID: localKeyID)
            }
        }
    }

}

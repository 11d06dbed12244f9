internal import COpenSSL
internal import COpenSSLShims

/// What a PKCS#12 file is made of: its MAC, its safes and bags, and the algorithms of each.
public struct PKCS12Inspection: Sendable {
    /// The integrity MAC.
    public struct MAC: Sendable, Equatable {
        /// The MAC's digest (`sha1`, `sha256` …).
        public var digest: String
        /// The key-derivation iteration count.
        public var iterations: Int
        /// The salt length in bytes.
        public var saltLength: Int
    }

    /// One algorithm used to encrypt a safe or a key bag.
    public struct Algorithm: Sendable, Equatable, CustomStringConvertible {
        /// A readable name: `PBES2 (PBKDF2 hmacWithSHA256, AES-256-CBC)`, `pbeWithSHA1And40BitRC2-CBC`.
        public var name: String
        /// The iteration count of its key derivation, when known.
        public var iterations: Int?
        /// True when OpenSSL 3 needs its `legacy` provider for it (RC2, RC4, single DES …).
        public var isLegacy: Bool
        /// True for the PKCS#12 (v1) PBE schemes that older importers expect (3DES, RC2).
        public var isPKCS12PBE: Bool
        /// Why the parameters cannot be used as written, when they cannot: a PBKDF2 key length
        /// that is not the cipher's (NSS 3.29.5 asked for 32 bytes for AES-128-CBC).
        public var problem: String? = nil

        public var description: String {
            iterations.map { "\(name), \($0) iterations" } ?? name
        }
    }

    /// One bag inside a safe.
    public struct Bag: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case certificate, key
            case shroudedKey = "shrouded key"
            case crl, secret, nested
            /// A safe encrypted to a recipient's public key (PKCS #7 envelopedData): it needs that
            /// recipient's private key, not a password, and is not read.
            case enveloped
            case other
        }
        public var kind: Kind
        /// For shrouded keys: how the key is encrypted.
        public var algorithm: Algorithm?
        public var friendlyName: String?
        /// The `localKeyId` attribute in hex.
        public var localKeyID: String?
        /// For certificates: the subject.
        public var subject: String?
    }

    /// One AuthenticatedSafe entry.
    public struct Safe: Sendable, Equatable {
        /// Nil for an unencrypted safe.
        public var encryption: Algorithm?
        /// The bags, when they could be read (an encrypted safe needs the password).
        public var bags: [Bag]
    }

    /// The MAC, or nil for a file without integrity protection.
    public var mac: MAC?
    /// The safes, in file order.
    public var safes: [Safe]
    /// True when PBES2 decryption needed the password as a BMPString (UTF-16BE), as NSS 3.21 to
    /// 3.30 wrote it, rather than UTF-8: only NSS and this tool read such a file.
    public var pbes2PasswordIsBMPString = false

    /// Every encryption algorithm in the file.
    public var algorithms: [Algorithm] {
        safes.compactMap(\.encryption) + safes.flatMap { $0.bags.compactMap(\.algorithm) }
    }

    /// True when nothing in the file depends on a password: no MAC and nothing encrypted. Such a
    /// file opens with any password (as in OpenSSL and pyca), so a wrong one cannot be told. A
    /// safe encrypted to a public key (envelopedData) is protected, though not by a password.
    public var isUnprotected: Bool { mac == nil && algorithms.isEmpty && !safes.contains { $0.bags.contains { $0.kind == .enveloped } } }

    /// True when OpenSSL 3 can read the file only with its legacy provider.
    public var usesLegacyAlgorithms: Bool { algorithms.contains { $0.isLegacy } }

    /// Who can import this file.
    public struct Compatibility: Sendable, Equatable {
        /// OpenSSL 3 with its default providers (curl, nginx, Python …).
        public var openSSL3: Bool
        /// OpenSSL 3 with the legacy provider (`openssl pkcs12 -legacy`, this tool).
        public var openSSL3WithLegacy: Bool
        /// Older importers — macOS Keychain and iOS before 2023, Android before 12, Java 8,
        /// Windows before 10 1709 / Server 2019 — which need PKCS#12 3DES/RC2 and a SHA-1 MAC.
        public var olderImporters: Bool
    }

    /// Which importers can read this file.
    public var compatibility: Compatibility {
        let all = algorithms
        let macOK = mac.map { $0.digest == "sha1" } ?? true
        return Compatibility(
            openSSL3: !usesLegacyAlgorithms && !pbes2PasswordIsBMPString,
            openSSL3WithLegacy: !pbes2PasswordIsBMPString,
            olderImporters: macOK && all.allSatisfy { $0.isPKCS12PBE })
    }

    // MARK: Reading algorithm identifiers

    private static let legacyNIDs: Set<Int32> = [
        NID_pbe_WithSHA1And40BitRC2_CBC, NID_pbe_WithSHA1And128BitRC2_CBC, NID_pbe_WithSHA1And128BitRC4,
        NID_pbe_WithSHA1And40BitRC4, NID_pbeWithMD5AndDES_CBC, NID_pbeWithSHA1AndDES_CBC, NID_pbeWithMD2AndDES_CBC,
        NID_pbeWithMD5AndRC2_CBC, NID_pbeWithSHA1AndRC2_CBC, NID_pbeWithMD2AndRC2_CBC,
        NID_des_cbc, NID_rc2_cbc, NID_rc2_40_cbc, NID_rc2_64_cbc, NID_rc4, NID_bf_cbc, NID_cast5_cbc, NID_idea_cbc, NID_seed_cbc,
    ]

    private static let pkcs12PBENIDs: Set<Int32> = [
        NID_pbe_WithSHA1And3_Key_TripleDES_CBC, NID_pbe_WithSHA1And2_Key_TripleDES_CBC,
        NID_pbe_WithSHA1And40BitRC2_CBC, NID_pbe_WithSHA1And128BitRC2_CBC,
        NID_pbe_WithSHA1And128BitRC4, NID_pbe_WithSHA1And40BitRC4,
    ]

    /// The most iterations any key derivation or MAC of a PKCS#12 file (or an encrypted PKCS#8
    /// key) may ask for: classic MAC, PBES1, PBES2/PBKDF2 and PBMAC1 alike. Writers use 1 to 2,048
    /// (OpenSSL), 10,000 (NSS), 2,000 (Windows) and at most a few hundred thousand when asked; a
    /// count above this bound would hold a reader for minutes or hours (2³¹ − 1 SHA-1 rounds), so
    /// it is refused as damaged before any derivation runs.
    public static let maximumIterations = PBEIterations.maximum

    /// Refuses an iteration count above ``maximumIterations``, naming the count and what asked for it.
    static func checkIterations(_ count: Int?, of what: String) throws(MTLSTrustError) {
        try PBEIterations.check(count, of: what, in: "the file")
    }

    static func algorithm(_ algor: UnsafePointer<X509_ALGOR>?) -> Algorithm? {
        guard let algor else { return nil }
        var object: OpaquePointer? = nil
        var parameterType: Int32 = 0
        var parameter: UnsafeRawPointer? = nil
        X509_ALGOR_get0(&object, &parameterType, &parameter, algor)
        guard let object else { return nil }
        let nid = OBJ_obj2nid(object)
        if nid == NID_pbes2 {
            return pbes2(parameterType: parameterType, parameter: parameter)
        }
        var iterations: Int? = nil
        if parameterType == V_ASN1_SEQUENCE, let parameter {
            let sequence = parameter.assumingMemoryBound(to: ASN1_STRING.self)
            let der = Certificate.asn1StringBytes(sequence)
            der.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                if let pbe = d2i_PBEPARAM(nil, &cursor, buffer.count) {
                    iterations = Int(ASN1_INTEGER_get(pbe.pointee.iter))
                    PBEPARAM_free(pbe)
                }
            }
        }
        // The long name, as `openssl pkcs12 -info` prints it (`pbeWithSHA1And40BitRC2-CBC`, not `PBE-SHA1-RC2-40`).
        let name = nid != NID_undef ? OBJ_nid2ln(nid).map { String(cString: $0) } : nil
        return Algorithm(
            name: name ?? Certificate.objectName(object), iterations: iterations,
            isLegacy: legacyNIDs.contains(nid), isPKCS12PBE: pkcs12PBENIDs.contains(nid))
    }

    private static func pbes2(parameterType: Int32, parameter: UnsafeRawPointer?) -> Algorithm {
        var name = "PBES2"
        var iterations: Int? = nil
        var legacy = false
        var keyLength: Int? = nil
        var problem: String? = nil
        if parameterType == V_ASN1_SEQUENCE, let parameter {
            let der = Certificate.asn1StringBytes(parameter.assumingMemoryBound(to: ASN1_STRING.self))
            der.withUnsafeBufferPointer { buffer in
                var cursor = buffer.baseAddress
                guard let pbe2 = d2i_PBE2PARAM(nil, &cursor, buffer.count) else { return }
                defer { PBE2PARAM_free(pbe2) }
                var kdf = "unknown KDF"
                var cipher = "unknown cipher"
                if let keyFunction = pbe2.pointee.keyfunc {
                    var object: OpaquePointer? = nil
                    var type: Int32 = 0
                    var value: UnsafeRawPointer? = nil
                    X509_ALGOR_get0(&object, &type, &value, keyFunction)
                    if let object, OBJ_obj2nid(object) == NID_id_pbkdf2 {
                        var prf = "hmacWithSHA1"
                        if type == V_ASN1_SEQUENCE, let value {
                            let kdfDER = Certificate.asn1StringBytes(value.assumingMemoryBound(to: ASN1_STRING.self))
                            kdfDER.withUnsafeBufferPointer { kdfBuffer in
                                var kdfCursor = kdfBuffer.baseAddress
                                guard let params = d2i_PBKDF2PARAM(nil, &kdfCursor, kdfBuffer.count) else { return }
                                defer { PBKDF2PARAM_free(params) }
                                iterations = Int(ASN1_INTEGER_get(params.pointee.iter))
                                if let length = params.pointee.keylength { keyLength = Int(ASN1_INTEGER_get(length)) }
                                if let prfAlgorithm = params.pointee.prf {
                                    var prfObject: OpaquePointer? = nil
                                    var prfType: Int32 = 0
                                    var prfValue: UnsafeRawPointer? = nil
                                    X509_ALGOR_get0(&prfObject, &prfType, &prfValue, prfAlgorithm)
                                    if let prfObject { prf = Certificate.objectName(prfObject) }
                                }
                            }
                        }
                        kdf = "PBKDF2 \(prf)"
                    } else if let object {
                        kdf = Certificate.objectName(object)
                    }
                }
                if let encryption = pbe2.pointee.encryption {
                    var object: OpaquePointer? = nil
                    var type: Int32 = 0
                    var value: UnsafeRawPointer? = nil
                    X509_ALGOR_get0(&object, &type, &value, encryption)
                    if let object {
                        let nid = OBJ_obj2nid(object)
                        legacy = legacyNIDs.contains(nid)
                        cipher = nid != NID_undef ? String(cString: OBJ_nid2sn(nid)!).uppercased() : Certificate.objectName(object)
                        if let keyLength, let evp = EVP_get_cipherbyname(OBJ_nid2sn(nid)), case let needed = Int(EVP_CIPHER_get_key_length(evp)), needed > 0,
                            needed != keyLength, EVP_CIPHER_get_flags(evp) & UInt(EVP_CIPH_VARIABLE_LENGTH) == 0
                        {
                            problem = "asks PBKDF2 for a \(keyLength)-byte key for \(cipher), whose key is \(needed) bytes (NSS 3.29.5 wrote such files)"
                        }
                    }
                }
                name = "PBES2 (\(kdf), \(cipher))"
            }
        }
        return Algorithm(name: name, iterations: iterations, isLegacy: legacy, isPKCS12PBE: false, problem: problem)
    }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The contents of a PKCS#12 (`.p12`, `.pfx`) file: its identities (private keys, each with its
/// certificate when the file holds it), the other certificates, and how the file is protected.
///
/// One reader for every command and for library users: DER and BER (indefinite lengths, as NSS and
/// Chrome write), every encryption OpenSSL reads with its legacy provider, the SHA-1/SHA-2 MAC and
/// PBMAC1 (RFC 9579), files without a MAC, no password and the empty password, UTF-8 passwords.
public struct PKCS12Bundle: Sendable {
    /// A certificate with the attributes it carried in its bag.
    public struct Entry: Sendable {
        public var certificate: Certificate
        public var friendlyName: String?
        public var localKeyID: String?
    }

    /// One private key of the file, with the certificate that holds its public key when there is one.
    public struct Identity: Sendable {
        /// The certificate whose public key matches the key (nil in a key-only file).
        public var certificate: Entry?
        /// The private key.
        public var privateKey: PrivateKey
        /// The key bag's friendly name, else the certificate's.
        public var friendlyName: String?
        /// The key bag's `localKeyId` in hex.
        public var localKeyID: String?
    }

    /// Every private key of the file, in file order, each with its certificate.
    public var identities: [Identity]
    /// Every certificate, in file order, each once.
    public var certificates: [Entry]
    /// The first identity's certificate.
    public var leaf: Entry?
    /// The first identity's private key, when the file holds one.
    public var privateKey: PrivateKey?
    /// The certificates that are no identity's certificate (CAs, and every certificate of a
    /// certificate-only file), in file order.
    public var chain: [Entry]
    /// The friendly name of the first key bag, when present.
    public var keyFriendlyName: String?
    /// How many repeated certificates and keys were left out (files exported with a chain file
    /// that repeats the leaf hold it twice).
    public var duplicatesRemoved: Int
    /// How the file is made.
    public var inspection: PKCS12Inspection
    /// True when reading needed OpenSSL's legacy provider.
    public var neededLegacyProvider: Bool

    /// Every certificate: the first identity's first, then the others in file order.
    public var allCertificates: [Certificate] {
        let first = leaf?.certificate
        return (first.map { [$0] } ?? []) + certificates.map(\.certificate).filter { $0 != first }
    }

    /// Reads a PKCS#12 file.
    ///
    /// Modern (AES-256/PBKDF2) and legacy (RC2-40, 3DES, SHA-1 MAC) files are read alike: when the file
    /// needs RC2, RC4 or DES, OpenSSL's legacy provider is loaded into this library's own context.
    ///
    /// - Parameters:
    ///   - derBytes: The file's bytes (DER or BER).
    ///   - password: The password; nil tries no password and the empty password, as OpenSSL does.
    /// - Throws: ``MTLSTrustError`` with `.wrongPassword`, `.passwordRequired`,
    ///   `.unsupportedAlgorithm`, `.corruptInput` (damaged: a MAC that fails although the password
    ///   decrypts the contents, PBMAC1 parameters that are invalid, a structure that does not parse),
    ///   `.truncatedInput` (the file ends before its structure does) or `.wrongObjectKind` /
    ///   `.malformedInput` (not a PKCS#12 file).
    public init(derBytes: [UInt8], password: Secret?) throws(MTLSTrustError) {
        if derBytes.isEmpty { throw MTLSTrustError(.emptyInput, "the file is empty") }
        _ = PKCS12Bundle.pbkdf2PRFsRegistered
        OpenSSLErrorQueue.clear()
        var parsed: OpaquePointer?
        derBytes.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            parsed = d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 = parsed else {
            throw PKCS12Bundle.parseFailure(derBytes, errors: OpenSSLErrorQueue.drain())
        }
        defer { PKCS12_free(p12) }
        // OpenSSL's DER re-encoding of what it parsed (a BER original's pieces come out joined):
        // where the version and the content a PBMAC1 covers are read.
        let reencoded = PKCS12Bundle.reencodedDER(p12)
        // RFC 7292: `version INTEGER {v3(3)}`. OpenSSL 3.0's parser takes any number; a file of
        // another version was not written by a PKCS#12 writer (or was altered), so it is refused.
        if let version = reencoded.flatMap(PKCS12Bundle.pfxVersion), version != 3 {
            throw MTLSTrustError(.corruptInput, "the file is damaged: it says PFX version \(version), and PKCS#12 files (RFC 7292) are version 3")
        }

        // 0. Every iteration count is bounded before any key derivation runs: a 2 KB file must not
        // cost minutes, even to `inspect` without a password.
        try PKCS12Bundle.checkIterationCounts(p12)

        // 1. The MAC tells a wrong password apart from damage.
        var mac: PKCS12Inspection.MAC? = nil
        var effectivePassword = password
        if PKCS12_mac_present(p12) == 1 {
            let check = try MACCheck(p12, reencoded: reencoded)
            mac = check.summary
            OpenSSLErrorQueue.clear()
            if let password {
                if !check.matches(password) {
                    let errors = OpenSSLErrorQueue.drain()
                    if OpenSSLErrorQueue.namesUnavailableAlgorithm(errors) {
                        throw MTLSTrustError(.unsupportedAlgorithm, "its integrity check uses an algorithm this OpenSSL cannot use", openSSLDetail: errors.map(\.raw))
                    }
                    if password.isEmpty, check.matches(nil) {
                        // A file made with no password at all can't be opened with "", and vice versa.
                        effectivePassword = nil
                    } else if let latin1 = PKCS12Bundle.latin1AsUTF8(password), check.matches(latin1) {
                        // Files made by OpenSSL before 1.1.0 turned each byte of a non-ASCII password
                        // into one character; `openssl pkcs12` retries the same way.
                        effectivePassword = latin1
                    } else {
                        // A failed MAC alone cannot tell a wrong password from a damaged file. If the
                        // password decrypts the encrypted contents, it is right and the file is damaged.
                        switch PKCS12Bundle.probeDecryption(p12, password: password) {
                        case .decrypts:
                            throw MTLSTrustError(
                                .corruptInput,
                                "the file is damaged: its integrity check (MAC) fails although the password decrypts its contents",
                                openSSLDetail: errors.map(\.raw))
                        case .fails:
                            throw MTLSTrustError(.wrongPassword, "the password is wrong (the file's integrity check does not match it)", openSSLDetail: errors.map(\.raw))
                        case .nothingEncrypted:
                            throw MTLSTrustError(
                                .wrongPassword,
                                "the file's integrity check (MAC) does not match the password: wrong password, or a damaged file",
                                openSSLDetail: errors.map(\.raw))
                        }
                    }
                }
            } else {
                if check.matches(nil) {
                    effectivePassword = nil
                } else if check.matches(Secret(bytes: [])) {
                    effectivePassword = Secret(bytes: [])
                } else {
                    OpenSSLErrorQueue.clear()
                    throw MTLSTrustError(.passwordRequired, "the file is password-protected: give its password")
                }
            }
        }

        // 2. The safes: the algorithms visible without the password decide whether `legacy` is needed.
        OpenSSLErrorQueue.clear()
        guard let authSafes = PKCS12_unpack_authsafes(p12) else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.corruptInput, "the file is damaged: its contents could not be unpacked (\(OpenSSLErrorQueue.describe(errors)))", openSSLDetail: errors.map(\.raw))
        }
        defer { mtls_sk_PKCS7_pop_free(authSafes) }
        var needsLegacy = false
        for i in 0..<mtls_sk_PKCS7_num(authSafes) {
            guard let p7 = mtls_sk_PKCS7_value(authSafes, i), mtls_PKCS7_type_is_encrypted(p7) == 1 else { continue }
            if let algorithm = PKCS12Inspection.algorithm(mtls_PKCS7_encrypted_algorithm(p7)), algorithm.isLegacy {
                needsLegacy = true
            }
        }
        if needsLegacy && !LegacyLibraryContext.shared.isAvailable {
            throw MTLSTrustError(.unsupportedAlgorithm, "the file uses legacy algorithms (RC2/RC4/DES) and this OpenSSL has no legacy provider module (ossl-modules/legacy.so)")
        }

        // When the MAC took the password in another form (OpenSSL before 1.1.0: each byte one
        // character), PBES2 still took it as typed: the typed password is the second try.
        let typed = effectivePassword === password ? nil : password
        var outcome = PKCS12Bundle.attempt(authSafes, password: effectivePassword, typed: typed, macPresent: mac != nil, legacy: needsLegacy)
        if !needsLegacy, case .failure(let error) = outcome, error.reason == .unsupportedAlgorithm, LegacyLibraryContext.shared.isAvailable {
            needsLegacy = true
            outcome = PKCS12Bundle.attempt(authSafes, password: effectivePassword, typed: typed, macPresent: mac != nil, legacy: true)
        }
        // Without a MAC, only decryption shows whether a password is needed: as with the MAC, no
        // password means "no password, then the empty one"; if neither decrypts, one is required.
        if mac == nil, password == nil, case .failure(let error) = outcome, error.reason == .wrongPassword {
            outcome = PKCS12Bundle.attempt(authSafes, password: Secret(bytes: []), macPresent: false, legacy: needsLegacy)
            if case .failure(let retryError) = outcome, retryError.reason == .wrongPassword {
                throw MTLSTrustError(.passwordRequired, "the file's contents are encrypted: give its password", openSSLDetail: retryError.openSSLDetail)
            }
        }
        let reader = try outcome.get()

        // 3. Each key with its certificate (by key match, then by localKeyId); repeats left out once.
        var duplicates = 0
        var certificates: [Entry] = []
        for entry in reader.certificates {
            if certificates.contains(where: { $0.certificate == entry.certificate }) {
                duplicates += 1
            } else {
                certificates.append(entry)
            }
        }
        var identities: [Identity] = []
        for key in reader.keys {
            if identities.contains(where: { $0.privateKey.isSameKey(as: key.key) }) {
                duplicates += 1
                continue
            }
            let matching = certificates.filter { key.key.matches($0.certificate) }
            let certificate =
                matching.first { key.localKeyID != nil && $0.localKeyID == key.localKeyID } ?? matching.first
            identities.append(Identity(certificate: certificate, privateKey: key.key, friendlyName: key.friendlyName ?? certificate?.friendlyName, localKeyID: key.localKeyID))
        }
        let identityCertificates = identities.compactMap(\.certificate?.certificate)
        self.identities = identities
        self.certificates = certificates
        self.leaf = identities.first?.certificate
        self.privateKey = identities.first?.privateKey
        self.keyFriendlyName = reader.keys.first?.friendlyName
        self.chain = certificates.filter { !identityCertificates.contains($0.certificate) }
        self.duplicatesRemoved = duplicates
        self.inspection = PKCS12Inspection(mac: mac, safes: reader.safes)
        self.inspection.pbes2PasswordIsBMPString = reader.usedBMPPassword
        self.neededLegacyProvider = needsLegacy
    }

    /// The identity a user picked: by friendly name (exact), or by 1-based index in file order.
    ///
    /// - Throws: `.invalidArgument` naming the identities there are, when none matches.
    public func identity(named name: String? = nil, index: Int? = nil) throws(MTLSTrustError) -> Identity {
        let listing = identities.enumerated().map { "\($0.offset + 1): \($0.element.friendlyName.map { DisplayText.quoted($0) } ?? "(no name)")" }.joined(separator: ", ")
        if let index {
            guard index >= 1, index <= identities.count else {
                throw MTLSTrustError(
                    .invalidArgument,
                    "it holds \(identities.count) identit\(identities.count == 1 ? "y" : "ies")\(listing.isEmpty ? "" : " (\(listing))"), so there is no identity \(index)")
            }
            return identities[index - 1]
        }
        if let name {
            let found = identities.filter { $0.friendlyName == name }
            guard let first = found.first else {
                throw MTLSTrustError(.invalidArgument, "no identity is named \(DisplayText.quoted(name)); it holds \(listing.isEmpty ? "no private key" : listing)")
            }
            guard found.count == 1 else {
                throw MTLSTrustError(.invalidArgument, "\(found.count) identities are named \(DisplayText.quoted(name)) (\(listing)): pick one by index")
            }
            return first
        }
        guard let first = identities.first else { throw MTLSTrustError(.wrongObjectKind, "it holds no private key") }
        return first
    }

    /// Why `d2i_PKCS12` refused the bytes: not a PKCS#12 file at all, truncated, or damaged.
    static func parseFailure(_ bytes: [UInt8], errors: [OpenSSLErrorEntry]) -> MTLSTrustError {
        guard DER.looksLikePKCS12(bytes) else {
            if let java = DER.javaKeyStoreRefusal(bytes) { return MTLSTrustError(.wrongObjectKind, java) }
            let shape = DER.shape(of: bytes)
            if shape == .certificate || shape == .privateKey || shape == .encryptedPrivateKey || PEM.looksLikePEM(bytes) {
                return MTLSTrustError(.wrongObjectKind, "it is not a PKCS#12 file (it looks like a \(PEM.looksLikePEM(bytes) ? "PEM file" : "DER \(shape)"))")
            }
            return MTLSTrustError(.malformedInput, "it is not a PKCS#12 file: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        if BERScan.endsEarly(bytes) {
            return MTLSTrustError(
                .truncatedInput, "the PKCS#12 file is truncated: its \(bytes.count) bytes end before its structure does (an incomplete download or copy?)",
                openSSLDetail: errors.map(\.raw))
        }
        return MTLSTrustError(.corruptInput, "the PKCS#12 file is damaged: its structure does not parse (\(OpenSSLErrorQueue.describe(errors)))", openSSLDetail: errors.map(\.raw))
    }

    /// The password with each byte taken as one Latin-1 character, re-encoded as UTF-8: what
    /// OpenSSL before 1.1.0 used for a non-ASCII password. Nil for an ASCII password.
    static func latin1AsUTF8(_ password: Secret) -> Secret? {
        guard password.contains(where: { $0 >= 0x80 }) else { return nil }
        return password.withUnsafeBytes { bytes in
            var converted: [UInt8] = []
            converted.reserveCapacity(bytes.count * 2)
            for byte in bytes {
                if byte < 0x80 {
                    converted.append(byte)
                } else {
                    converted.append(0xC0 | byte >> 6)
                    converted.append(0x80 | byte & 0x3F)
                }
            }
            return Secret(wiping: &converted)
        }
    }

    /// The file's MAC: the PKCS#12 MAC (OpenSSL verifies it) or PBMAC1 (verified here).
    private struct MACCheck {
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

    /// PBKDF2 pseudo-random functions that OpenSSL 3.0's PBE table lacks (3.2 added them): HMAC
    /// with SHA-3 and with SHA-512/224 and /256. Without them a PBES2 file that uses one is "an
    /// algorithm this OpenSSL cannot use", though the digests are there. Added once, before any read.
    static let pbkdf2PRFsRegistered: Void = {
        let prfs: [(hmac: Int32, digest: Int32)] = [
            (NID_hmac_sha3_224, NID_sha3_224), (NID_hmac_sha3_256, NID_sha3_256), (NID_hmac_sha3_384, NID_sha3_384),
            (NID_hmac_sha3_512, NID_sha3_512), (NID_hmacWithSHA512_224, NID_sha512_224), (NID_hmacWithSHA512_256, NID_sha512_256),
        ]
        for prf in prfs where EVP_PBE_find(EVP_PBE_TYPE_PRF, prf.hmac, nil, nil, nil) == 0 {
            _ = EVP_PBE_alg_add_type(EVP_PBE_TYPE_PRF, prf.hmac, -1, prf.digest, nil)
        }
        OpenSSLErrorQueue.clear()
    }()

    /// `i2d_PKCS12` of a parsed file, or nil when OpenSSL cannot encode it.
    static func reencodedDER(_ p12: OpaquePointer) -> [UInt8]? {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PKCS12(p12, &out)
        guard length > 0, let out else { return nil }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The PFX's version number (nil when the INTEGER is longer than 7 bytes).
    static func pfxVersion(_ der: [UInt8]) -> Int? {
        guard let pfx = DER.element(in: der, at: 0), pfx.tag == 0x30,
            let version = DER.element(in: der, at: pfx.contentStart, limit: pfx.contentEnd), version.tag == 0x02,
            (1...7).contains(version.contentEnd - version.contentStart)
        else { return nil }
        let bytes = der[version.contentStart..<version.contentEnd]
        let magnitude = bytes.reduce(0) { $0 << 8 | Int($1) }
        return bytes.first! & 0x80 == 0 ? magnitude : magnitude - (1 << (8 * bytes.count))
    }

    /// The bytes the MAC covers: the content of the authSafe's `data` OCTET STRING.
    static func authSafeContent(_ der: [UInt8]) -> [UInt8]? {
        guard let pfx = DER.element(in: der, at: 0), pfx.tag == 0x30,
            let version = DER.element(in: der, at: pfx.contentStart, limit: pfx.contentEnd), version.tag == 0x02,
            let contentInfo = DER.element(in: der, at: version.end, limit: pfx.contentEnd), contentInfo.tag == 0x30,
            let type = DER.element(in: der, at: contentInfo.contentStart, limit: contentInfo.contentEnd), type.tag == 0x06,
            let explicit = DER.element(in: der, at: type.end, limit: contentInfo.contentEnd), explicit.tag == 0xA0,
            let octets = DER.element(in: der, at: explicit.contentStart, limit: explicit.contentEnd), octets.tag == 0x04
        else { return nil }
        return Array(der[octets.contentStart..<octets.contentEnd])
    }

    private static func attempt(_ authSafes: OpaquePointer, password: Secret?, typed: Secret? = nil, macPresent: Bool, legacy: Bool) -> Result<SafeReader, MTLSTrustError> {
        let body = { () -> Result<SafeReader, MTLSTrustError> in
            var reader = SafeReader(password: password, macPresent: macPresent)
            reader.typedPassword = typed
            do throws(MTLSTrustError) {
                try reader.read(authSafes)
            } catch {
                return .failure(error)
            }
            return .success(reader)
        }
        return legacy ? LegacyLibraryContext.shared.withAsThreadDefault(body) : body()
    }

    private static func verifyMAC(_ p12: OpaquePointer, _ password: Secret) -> Bool {
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

    private static func checkIterationCounts(bags: OpaquePointer, depth: Int) throws(MTLSTrustError) {
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

    /// What decrypting a file's first encrypted item with a password gives.
    enum DecryptionProbe { case decrypts, fails, nothingEncrypted }

    /// Tries the password on the first encrypted item (an encrypted safe, else a shrouded key bag).
    /// Decryption succeeds only when the padding checks out *and* the plaintext parses as DER, which
    /// a wrong password does not produce; so success means the password is right.
    static func probeDecryption(_ p12: OpaquePointer, password: Secret) -> DecryptionProbe {
        defer { OpenSSLErrorQueue.clear() }
        OpenSSLErrorQueue.clear()
        guard let authSafes = PKCS12_unpack_authsafes(p12) else { return .nothingEncrypted }
        defer { mtls_sk_PKCS7_pop_free(authSafes) }
        return password.withCString { pass -> DecryptionProbe in
            let passLength = Int32(strlen(pass))
            for i in 0..<mtls_sk_PKCS7_num(authSafes) {
                guard let p7 = mtls_sk_PKCS7_value(authSafes, i) else { continue }
                if mtls_PKCS7_type_is_encrypted(p7) == 1 {
                    // No content to decrypt (OpenSSL before 3.0.19 dereferences the NULL: CVE-2025-69421).
                    guard mtls_PKCS7_encrypted_content_present(p7) == 1 else { continue }
                    let legacy = PKCS12Inspection.algorithm(mtls_PKCS7_encrypted_algorithm(p7))?.isLegacy ?? false
                    let unpack = { PKCS12_unpack_p7encdata(p7, pass, passLength) }
                    let bags = legacy ? LegacyLibraryContext.shared.withAsThreadDefault(unpack) : unpack()
                    guard let bags else { return .fails }
                    mtls_sk_PKCS12_SAFEBAG_pop_free(bags)
                    return .decrypts
                }
                guard mtls_PKCS7_type_is_data(p7) == 1, let bags = PKCS12_unpack_p7data(p7) else { continue }
                defer { mtls_sk_PKCS12_SAFEBAG_pop_free(bags) }
                for j in 0..<mtls_sk_PKCS12_SAFEBAG_num(bags) {
                    guard let bag = mtls_sk_PKCS12_SAFEBAG_value(bags, j), PKCS12_SAFEBAG_get_nid(bag) == NID_pkcs8ShroudedKeyBag else { continue }
                    let decrypt = { PKCS12_decrypt_skey(bag, pass, passLength) }
                    let p8 = LegacyLibraryContext.shared.isAvailable ? LegacyLibraryContext.shared.withAsThreadDefault(decrypt) : decrypt()
                    guard let p8 else { return .fails }
                    PKCS8_PRIV_KEY_INFO_free(p8)
                    return .decrypts
                }
            }
            return .nothingEncrypted
        }
    }

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

    // MARK: Writing

    /// How a new PKCS#12 file is protected.
    public enum Protection: Sendable {
        /// OpenSSL 3's default: AES-256-CBC with PBKDF2/HMAC-SHA-256, SHA-256 MAC.
        case modern
        /// 3DES (pbeWithSHA1And3-KeyTripleDES-CBC) for keys and certificates, SHA-1 MAC: for older
        /// iOS, macOS, Android, Java and Windows importers.
        case legacy3DES
    }

    /// Writes a PKCS#12 file.
    ///
    /// - Parameters:
    ///   - certificate: The leaf certificate.
    ///   - privateKey: Its private key; must match the certificate.
    ///   - chain: Further certificates to include (intermediates, root).
    ///   - password: The password (may be empty).
    ///   - friendlyName: The friendly name shown by importers.
    ///   - protection: ``Protection/modern`` or ``Protection/legacy3DES``.
    ///   - iterations: The key-derivation and MAC iteration count.
    /// - Throws: `.keyMismatch` when the key is not the certificate's; `.invalidArgument` for an
    ///   iteration count below 1 or above 2³¹ − 1.
    public static func export(
        certificate: Certificate, privateKey: PrivateKey, chain: [Certificate] = [], password: Secret,
        friendlyName: String? = nil, protection: Protection = .modern, iterations: Int = 2048
    ) throws(MTLSTrustError) -> [UInt8] {
        guard iterations >= 1, iterations <= Int(Int32.max) else {
            throw MTLSTrustError(.invalidArgument, "the iteration count must be between 1 and \(Int32.max), not \(iterations)")
        }
        guard privateKey.matches(certificate) else {
            throw MTLSTrustError(.keyMismatch, "the private key does not belong to the certificate \(certificate.displayName)")
        }
        OpenSSLErrorQueue.clear()
        guard let stack = mtls_sk_X509_new_null() else { throw MTLSTrustError(.internalFailure, "out of memory") }
        defer { mtls_sk_X509_free(stack) }  // the certificates are borrowed; the Swift values own them
        for extra in chain { _ = mtls_sk_X509_push(stack, extra.reference.pointer) }
        let (keyNID, certNID, digest): (Int32, Int32, OpaquePointer?) =
            switch protection {
            case .modern: (NID_aes_256_cbc, NID_aes_256_cbc, EVP_sha256())
            case .legacy3DES: (NID_pbe_WithSHA1And3_Key_TripleDES_CBC, NID_pbe_WithSHA1And3_Key_TripleDES_CBC, EVP_sha1())
            }
        let p12 = password.withCString { pass in
            PKCS12_create_ex(pass, friendlyName, privateKey.reference.pointer, certificate.reference.pointer, stack, keyNID, certNID, Int32(iterations), -1, 0, nil, nil)
        }
        guard let p12 else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.internalFailure, "OpenSSL could not build the PKCS#12: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        defer { PKCS12_free(p12) }
        let macOK = password.withCString { PKCS12_set_mac(p12, $0, -1, nil, 0, Int32(iterations), digest) }
        guard macOK == 1 else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.internalFailure, "OpenSSL could not add the PKCS#12 MAC: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        guard let der = PKCS12Bundle.reencodedDER(p12) else { throw MTLSTrustError(.internalFailure, "OpenSSL could not encode the PKCS#12") }
        return der
    }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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

    static func attempt(_ authSafes: OpaquePointer, password: Secret?, typed: Secret? = nil, macPresent: Bool, legacy: Bool) -> Result<SafeReader, MTLSTrustError> {
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

}

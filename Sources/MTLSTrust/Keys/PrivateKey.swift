internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A private key (RSA, ECDSA, Ed25519 …) loaded from PEM or DER, plain or encrypted.
///
/// - Warning: The key material lives in OpenSSL memory for as long as the value exists. Write it
///   out only with ``pkcs8PEM(password:)`` into files created with mode 0600.
public struct PrivateKey: Sendable {
    let reference: EVPKeyReference

    /// The encoding the key was read from.
    public enum SourceFormat: String, Sendable {
        case pkcs1 = "PKCS#1"
        case sec1 = "SEC1"
        case pkcs8 = "PKCS#8"
        case encryptedPKCS8 = "encrypted PKCS#8"
        case traditionalEncrypted = "traditional encrypted PEM"
        case pkcs12 = "PKCS#12"
        case unknown = "unknown"
    }

    /// The encoding the key was read from.
    public let sourceFormat: SourceFormat

    init(taking key: OpaquePointer, format: SourceFormat) {
        self.reference = EVPKeyReference(taking: key)
        self.sourceFormat = format
    }

    /// Loads a private key from PEM or DER bytes, detected from content.
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - password: The password of an encrypted key; nil when none was given.
    /// - Throws: ``MTLSTrustError`` with `.passwordRequired`, `.wrongPassword`, `.wrongObjectKind`
    ///   (a certificate where a key is expected), `.malformedInput` or `.unsupportedAlgorithm`.
    public init(bytes: [UInt8], password: Secret? = nil) throws(MTLSTrustError) {
        if bytes.isEmpty { throw MTLSTrustError(.emptyInput, "the file is empty") }
        if PEM.looksLikePEM(bytes) {
            // First the key block where it stands in `bytes`, handed to OpenSSL as it is: the PEM
            // parser below would copy the key's text into Strings, which cannot be wiped.
            if let (key, format) = try PrivateKey.decodeInPlace(bytes, password: password) {
                self.init(taking: key, format: format)
                return
            }
            let blocks = try PEM.parse(bytes)
            guard let block = blocks.first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
                if blocks.isEmpty { throw MTLSTrustError(.malformedInput, "no complete PEM block was found") }
                let labels = Set(blocks.map(\.label)).sorted().joined(separator: ", ")
                throw MTLSTrustError(.wrongObjectKind, "it holds \(labels), not a private key")
            }
            let format = PrivateKey.pemFormat(label: block.label, traditionallyEncrypted: block.isTraditionallyEncrypted)
            let encrypted = format == .encryptedPKCS8 || format == .traditionalEncrypted
            if encrypted && password == nil {
                throw MTLSTrustError(.passwordRequired, "the private key is encrypted (\(format.rawValue)): give its password")
            }
            let key = try PrivateKey.decode(Array(block.text.utf8), inputType: "PEM", password: encrypted ? password : nil, encrypted: encrypted)
            self.init(taking: key, format: format)
            return
        }
        switch DER.shape(of: bytes) {
        case .certificate: throw MTLSTrustError(.wrongObjectKind, "it holds a certificate, not a private key")
        case .pkcs12:
            throw MTLSTrustError(
                .wrongObjectKind, "it is a PKCS#12 file, not a private key",
                hint: "read its key and certificates with \(setting: .pkcs12Contents), or give it as the identity with \(setting: .pkcs12Identity)")
        case .publicKey: throw MTLSTrustError(.wrongObjectKind, "it holds a public key, not a private key")
        case .encryptedPrivateKey:
            guard let password else { throw MTLSTrustError(.passwordRequired, "the private key is encrypted (encrypted PKCS#8 DER): give its password") }
            self.init(taking: try PrivateKey.decode(bytes, inputType: "DER", password: password, encrypted: true), format: .encryptedPKCS8)
        case .privateKey:
            let key = try PrivateKey.decode(bytes, inputType: "DER", password: nil, encrypted: false)
            self.init(taking: key, format: PrivateKey.derFormat(bytes))
        default:
            throw MTLSTrustError(.malformedInput, "it is neither a PEM nor a DER private key")
        }
    }

    /// The format a PEM label (and its encryption headers) names.
    private static func pemFormat(label: String, traditionallyEncrypted: Bool) -> SourceFormat {
        switch label {
        case "RSA PRIVATE KEY": traditionallyEncrypted ? .traditionalEncrypted : .pkcs1
        case "EC PRIVATE KEY": traditionallyEncrypted ? .traditionalEncrypted : .sec1
        case "ENCRYPTED PRIVATE KEY": .encryptedPKCS8
        case "PRIVATE KEY": .pkcs8
        default: traditionallyEncrypted ? .traditionalEncrypted : .unknown
        }
    }

    /// Decodes the first private key block of `bytes` from where it stands, without copying its
    /// text. Nil when there is none, or when OpenSSL cannot read the block as it stands (indented
    /// lines, say): the PEM parser's normalised copy is tried then, and reports what is wrong.
    private static func decodeInPlace(_ bytes: [UInt8], password: Secret?) throws(MTLSTrustError) -> (OpaquePointer, SourceFormat)? {
        guard let block = PEM.blockLocations(in: bytes).first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else { return nil }
        let format = pemFormat(label: block.label, traditionallyEncrypted: block.isTraditionallyEncrypted)
        let encrypted = format == .encryptedPKCS8 || format == .traditionalEncrypted
        if encrypted && password == nil {
            throw MTLSTrustError(.passwordRequired, "the private key is encrypted (\(format.rawValue)): give its password")
        }
        let result: Result<OpaquePointer, MTLSTrustError> = bytes.withUnsafeBufferPointer { raw in
            do throws(MTLSTrustError) {
                return .success(try decode(UnsafeBufferPointer(rebasing: raw[block.range]), inputType: "PEM", password: encrypted ? password : nil, encrypted: encrypted))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let key): return (key, format)
        case .failure(let error) where error.reason == .malformedInput: return nil
        case .failure(let error): throw error
        }
    }

    private static func derFormat(_ bytes: [UInt8]) -> SourceFormat {
        guard let outer = DER.element(in: bytes, at: 0), let version = DER.element(in: bytes, at: outer.contentStart),
            let second = DER.element(in: bytes, at: version.end)
        else { return .unknown }
        if second.tag == 0x30 { return .pkcs8 }
        if second.tag == 0x04 { return .sec1 }
        if second.tag == 0x02 { return .pkcs1 }
        return .unknown
    }

    private static func decode(_ bytes: [UInt8], inputType: String, password: Secret?, encrypted: Bool) throws(MTLSTrustError) -> OpaquePointer {
        let result: Result<OpaquePointer, MTLSTrustError> = bytes.withUnsafeBufferPointer { raw in
            do throws(MTLSTrustError) {
                return .success(try decode(raw, inputType: inputType, password: password, encrypted: encrypted))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, inputType: String, password: Secret?, encrypted: Bool) throws(MTLSTrustError) -> OpaquePointer {
        // OSSL_DECODER_CTX keeps the input-type pointer without copying it, so the C string must
        // outlive the whole decode, not just the constructor call.
        let attempt = { () -> Result<OpaquePointer, MTLSTrustError> in
            inputType.withCString { inputTypeC in
                do throws(MTLSTrustError) {
                    return .success(try decode(bytes, inputType: inputTypeC, password: password, encrypted: encrypted))
                } catch {
                    return .failure(error)
                }
            }
        }
        if encrypted { try checkIterationCount(bytes, pem: inputType == "PEM") }
        let result = attempt()
        // Keys encrypted with RC2, RC4 or single DES (old `openssl pkcs8 -v1`, `DEK-Info: DES-CBC`)
        // need OpenSSL's legacy provider: retry with this library's own legacy context as the
        // thread default (the PEM decryption path fetches its cipher from the default context).
        if encrypted, case .failure(let error) = result, error.reason == .unsupportedAlgorithm, LegacyLibraryContext.shared.isAvailable {
            return try LegacyLibraryContext.shared.withAsThreadDefault(attempt).get()
        }
        return try result.get()
    }

    /// An encrypted PKCS#8 key's PBES1/PBES2 iteration count, bounded as PKCS#12's are
    /// (``PBEIterations``) before OpenSSL derives anything: a small key file
    /// must not hold a reader for minutes. Keys in another form (traditional PEM encryption uses
    /// one round) and structures OpenSSL reads no algorithm from are left to the decoder.
    private static func checkIterationCount(_ bytes: UnsafeBufferPointer<UInt8>, pem: Bool) throws(MTLSTrustError) {
        guard bytes.count > 0, bytes.count <= Int(Int32.max) else { return }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        var sig: OpaquePointer? = nil
        if pem {
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return }
            defer { BIO_free(bio) }
            sig = PEM_read_bio_PKCS8(bio, nil, nil, nil)
        } else {
            var cursor = bytes.baseAddress
            sig = d2i_X509_SIG(nil, &cursor, bytes.count)
        }
        guard let sig else { return }
        defer { X509_SIG_free(sig) }
        var algor: UnsafePointer<X509_ALGOR>? = nil
        var digest: UnsafePointer<ASN1_OCTET_STRING>? = nil
        X509_SIG_get0(sig, &algor, &digest)
        try PBEIterations.check(PBEIterations.count(algor), of: "its encryption (\(PBEIterations.name(algor)))", in: "the key")
    }

    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, inputType: UnsafePointer<CChar>, password: Secret?, encrypted: Bool) throws(MTLSTrustError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        var key: OpaquePointer? = nil
        guard let decoder = OSSL_DECODER_CTX_new_for_pkey(&key, inputType, nil, nil, mtls_EVP_PKEY_KEYPAIR(), nil, nil) else {
            throw MTLSTrustError(.internalFailure, "OpenSSL could not create a key decoder")
        }
        defer { OSSL_DECODER_CTX_free(decoder) }
        if let password {
            // OpenSSL copies the passphrase and frees its copy with OPENSSL_clear_free.
            _ = password.withUnsafeBytes { OSSL_DECODER_CTX_set_passphrase(decoder, $0.baseAddress, $0.count) }
        } else {
            // An empty passphrase stops OpenSSL from prompting on the terminal.
            _ = OSSL_DECODER_CTX_set_passphrase(decoder, "", 0)
        }
        var cursor = bytes.baseAddress
        var remaining = bytes.count
        let ok = OSSL_DECODER_from_data(decoder, &cursor, &remaining)
        let errors = OpenSSLErrorQueue.drain()
        if ok == 1, let key {
            if let inconsistent = pairwiseFailure(key) {
                EVP_PKEY_free(key)
                throw inconsistent
            }
            return key
        }
        if let key { EVP_PKEY_free(key) }
        if encrypted {
            if let damaged = damagedEncryption(errors) { throw damaged }
            if OpenSSLErrorQueue.namesUnavailableAlgorithm(errors) {
                let named = errors.lazy.compactMap { algorithmNamed(in: $0.data) }.first.map { " (\($0))" } ?? ""
                throw MTLSTrustError(
                    .unsupportedAlgorithm,
                    "the private key is encrypted with an algorithm this OpenSSL cannot use\(named): decrypt it where it was made and "
                        + "encrypt it again with AES (`openssl pkcs8 -topk8 -v2 aes-256-cbc`)", openSSLDetail: errors.map(\.raw))
            }
            throw MTLSTrustError(.wrongPassword, "the password does not decrypt the private key (wrong password?)", openSSLDetail: errors.map(\.raw))
        }
        throw undecodable(bytes, isPEM: String(cString: inputType) == "PEM", errors: errors)
    }

    /// OpenSSL's pairwise check: the public key stored with the private value must be the one it
    /// gives, and the value must be in range. OpenSSL's decoders read a key whose halves disagree
    /// (a DSA key with y = 1, an EC scalar longer than the group order): it then signs with one
    /// half while certificates carry the other, and `pkcs8DER` writes a different key than was
    /// read, or fails. EC and DSA only: one scalar multiplication or exponentiation. OpenSSL's
    /// RSA check costs milliseconds per key on every identity load, and its RSA private operation
    /// already checks a CRT result against the public exponent. Nil when the key passes.
    private static func pairwiseFailure(_ key: OpaquePointer) -> MTLSTrustError? {
        let type = EVP_PKEY_get_base_id(key)
        guard type == EVP_PKEY_EC || type == EVP_PKEY_DSA else { return nil }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        OpenSSLErrorQueue.clear()
        let result = EVP_PKEY_pairwise_check(context)
        let errors = OpenSSLErrorQueue.drain()
        // 1: consistent; -2: this provider has no check for the key.
        guard result == 0 || result == -1 else { return nil }
        return MTLSTrustError(
            .corruptInput,
            "the \(KeyAlgorithm.of(key).typeName) private key is inconsistent: its public key is not the one its private value gives, "
                + "so what it signs would not verify: the file is damaged or was made by a faulty tool; export the key again or make a new one",
            openSSLDetail: errors.map(\.raw))
    }

    /// The failures of an encrypted key that no password can get past: a damaged `Proc-Type` /
    /// `DEK-Info` header, or encryption parameters OpenSSL refuses (zero PBKDF2 iterations, an RC2
    /// key length it has no cipher for). Reported as a wrong password they would send the user
    /// looking for another password. Nil for everything else.
    private static func damagedEncryption(_ errors: [OpenSSLErrorEntry]) -> MTLSTrustError? {
        // The PEM library's "bad decrypt" is a wrong password; these are about the header.
        let headerReasons: Set<String> = ["bad iv chars", "not dek info", "unsupported encryption", "not proc type", "not encrypted", "short header"]
        if let header = errors.first(where: { $0.libraryCode == ERR_LIB_PEM && headerReasons.contains($0.reason) }) {
            return MTLSTrustError(
                .malformedInput,
                "the key's PEM encryption header (Proc-Type / DEK-Info) does not name a cipher and IV OpenSSL can use (\(header.reason)), "
                    + "so no password can decrypt it: export the key again from where it came from", openSSLDetail: errors.map(\.raw))
        }
        let parameterReasons: Set<String> = ["cipher parameter error", "invalid iteration count", "invalid salt length", "invalid key length"]
        if let parameter = errors.first(where: { ($0.libraryCode == ERR_LIB_PROV || $0.libraryCode == ERR_LIB_EVP) && parameterReasons.contains($0.reason) }) {
            return MTLSTrustError(
                .malformedInput,
                "the key's encryption parameters are invalid (\(parameter.reason)), so no password can decrypt it: export the key again, "
                    + "encrypted with AES and PBKDF2 (`openssl pkcs8 -topk8 -v2 aes-256-cbc`)", openSSLDetail: errors.map(\.raw))
        }
        return nil
    }

    /// The algorithm an error's data names: `Algorithm (RC2-CBC : 4)` of a failed fetch, or
    /// `TYPE=1.2.3` of an unknown PBE scheme; nil when it names none.
    static func algorithmNamed(in data: String) -> String? {
        if let start = data.firstRange(of: "Algorithm (") {
            let rest = data[start.upperBound...]
            guard let end = rest.firstRange(of: " : ") ?? rest.firstRange(of: ")") else { return nil }
            return String(rest[..<end.lowerBound])
        }
        if let start = data.firstRange(of: "TYPE=") { return String(data[start.upperBound...]) }
        return nil
    }

    /// Key algorithms OpenSSL before 3.5 has no name for, so that the message names them.
    private static let postQuantumAlgorithms = [
        "2.16.840.1.101.3.4.3.17": "ML-DSA-44", "2.16.840.1.101.3.4.3.18": "ML-DSA-65", "2.16.840.1.101.3.4.3.19": "ML-DSA-87",
        "2.16.840.1.101.3.4.4.1": "ML-KEM-512", "2.16.840.1.101.3.4.4.2": "ML-KEM-768", "2.16.840.1.101.3.4.4.3": "ML-KEM-1024",
    ]

    /// Why OpenSSL could not decode an unencrypted key, in words: an algorithm it has no decoder
    /// for (ML-DSA before OpenSSL 3.5, an OID no one knows), or a key of an algorithm it knows whose
    /// contents are wrong. OpenSSL's own answer to both is the same "unsupported".
    private static func undecodable(_ bytes: UnsafeBufferPointer<UInt8>, isPEM: Bool, errors: [OpenSSLErrorEntry]) -> MTLSTrustError {
        let detail = errors.map(\.raw)
        var der: [UInt8]
        var label: String? = nil
        if isPEM {
            var text = Array(bytes)
            defer { Secret.wipe(&text) }
            guard let block = (try? PEM.parse(text))?.first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else {
                return MTLSTrustError(.malformedInput, "the private key could not be decoded: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: detail)
            }
            der = block.derBytes
            label = block.label
        } else {
            der = Array(bytes)
        }
        defer { Secret.wipe(&der) }
        let format = label.map { pemFormat(label: $0, traditionallyEncrypted: false) } ?? derFormat(der)
        // The reason of the first error that is not the decoder's catch-all "unsupported".
        let cause = errors.first { $0.libraryCode != ERR_LIB_OSSL_DECODER && $0.libraryCode != ERR_LIB_OSSL_STORE && !$0.reason.isEmpty }
        let wellFormed = DER.element(in: der, at: 0).map { $0.tag == 0x30 && $0.end == der.count } ?? false
        let because = wellFormed ? cause.map { " (\(OpenSSLErrorQueue.describe([$0])))" } ?? "" : " (its contents are not one well-formed DER SEQUENCE)"
        let again = "the file is damaged or was written by a tool that got the format wrong: export the key again"
        if format == .pkcs8, let algorithm = pkcs8Algorithm(der) {
            if !algorithm.known {
                return MTLSTrustError(
                    .unsupportedAlgorithm,
                    "the private key's algorithm, \(algorithm.name), is not one \(OpenSSLInfo.version.split(separator: " ").prefix(2).joined(separator: " ")) can read: use an RSA, "
                        + "EC or Ed25519 key, or an OpenSSL that supports it", openSSLDetail: detail)
            }
            return MTLSTrustError(.malformedInput, "the PKCS#8 private key (\(algorithm.name)) is malformed\(because): \(again)", openSSLDetail: detail)
        }
        let kind: String =
            switch label {
            case "RSA PRIVATE KEY": "PKCS#1 RSA private key"
            case "EC PRIVATE KEY": "SEC1 EC private key"
            case "DSA PRIVATE KEY": "DSA private key"
            default: format == .unknown ? "private key" : "\(format.rawValue) private key"
            }
        return MTLSTrustError(.malformedInput, "the \(kind) is malformed\(because): \(again)", openSSLDetail: detail)
    }

    /// The algorithm a PKCS#8 PrivateKeyInfo names, by OpenSSL's name for it (or its dotted OID),
    /// and whether any loaded provider has a key manager for it.
    private static func pkcs8Algorithm(_ der: [UInt8]) -> (name: String, known: Bool)? {
        guard let outer = DER.element(in: der, at: 0), outer.tag == 0x30,
            let version = DER.element(in: der, at: outer.contentStart, limit: outer.end), version.tag == 0x02,
            let identifier = DER.element(in: der, at: version.end, limit: outer.end), identifier.tag == 0x30,
            let oid = DER.element(in: der, at: identifier.contentStart, limit: identifier.end), oid.tag == 0x06
        else { return nil }
        let encoded = Array(der[oid.headerStart..<oid.end])
        let object: OpaquePointer? = encoded.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ASN1_OBJECT(nil, &cursor, buffer.count)
        }
        guard let object else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let nid = OBJ_obj2nid(object)
        let dotted = OpenSSLObjects.dottedOID(object)
        guard nid != NID_undef, let shortName = OBJ_nid2sn(nid) else { return (postQuantumAlgorithms[dotted].map { "\($0) (\(dotted))" } ?? dotted, false) }
        let name = OBJ_nid2ln(nid).map { String(cString: $0) } ?? String(cString: shortName)
        guard let manager = EVP_KEYMGMT_fetch(nil, shortName, nil) else { return ("\(name) (\(dotted))", false) }
        EVP_KEYMGMT_free(manager)
        return (name, true)
    }

    /// The algorithm, size and curve.
    public var algorithm: KeyAlgorithm { KeyAlgorithm.of(reference.pointer) }

    /// The matching public key.
    public var publicKey: PublicKey {
        // Parse the SPKI back into a key of its own, so that `algorithm` works on the result.
        let spki = PublicKey.encodeSPKI(reference.pointer)
        return (try? PublicKey(spkiDER: spki)) ?? PublicKey(unparsedSPKI: spki)
    }

    /// True when `other` is the same key pair (the same public key and parameters), compared by
    /// OpenSSL's key manager without encoding either key.
    package func isSameKey(as other: PrivateKey) -> Bool {
        EVP_PKEY_eq(reference.pointer, other.reference.pointer) == 1
    }

    /// The key as PEM: unencrypted PKCS#8 (`PRIVATE KEY`), or encrypted PKCS#8 with AES-256-CBC and
    /// PBKDF2 when a password is given.
    public func pkcs8PEM(password: Secret? = nil) throws(MTLSTrustError) -> [UInt8] {
        try encode(format: "PEM", password: password)
    }

    /// The key as PKCS#8 DER (unencrypted, or encrypted when a password is given).
    public func pkcs8DER(password: Secret? = nil) throws(MTLSTrustError) -> [UInt8] {
        try encode(format: "DER", password: password)
    }

    private func encode(format: String, password: Secret?) throws(MTLSTrustError) -> [UInt8] {
        // OSSL_ENCODER_CTX keeps the output type and structure pointers without copying them: keep
        // the C strings alive until the encoder is freed.
        let result: Result<[UInt8], MTLSTrustError> = format.withCString { formatC in
            "PrivateKeyInfo".withCString { structureC in
                do throws(MTLSTrustError) {
                    return .success(try encode(format: format, formatC: formatC, structureC: structureC, password: password))
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }

    private func encode(format: String, formatC: UnsafePointer<CChar>, structureC: UnsafePointer<CChar>, password: Secret?) throws(MTLSTrustError) -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard let encoder = OSSL_ENCODER_CTX_new_for_pkey(reference.pointer, mtls_EVP_PKEY_KEYPAIR(), formatC, structureC, nil) else {
            throw MTLSTrustError(.internalFailure, "OpenSSL has no PKCS#8 \(format) encoder for this key")
        }
        defer { OSSL_ENCODER_CTX_free(encoder) }
        if let password {
            _ = OSSL_ENCODER_CTX_set_cipher(encoder, "AES-256-CBC", nil)
            _ = password.withUnsafeBytes { OSSL_ENCODER_CTX_set_passphrase(encoder, $0.baseAddress, $0.count) }
        }
        var data: UnsafeMutablePointer<UInt8>? = nil
        var length = 0
        guard OSSL_ENCODER_to_data(encoder, &data, &length) == 1, let data else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.internalFailure, "the key could not be encoded: \(OpenSSLErrorQueue.describe(errors))")
        }
        defer {
            OPENSSL_cleanse(data, length)
            mtls_OPENSSL_free(data)
        }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }
}

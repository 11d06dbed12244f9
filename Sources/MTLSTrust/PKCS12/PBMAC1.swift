internal import COpenSSL

/// PBMAC1 (RFC 9579), the PKCS#12 MAC that OpenSSL 3.4 and JDK 24 can write: an HMAC whose key
/// comes from PBKDF2 over the UTF-8 password, instead of the PKCS#12 key derivation. OpenSSL 3.0
/// cannot verify it, so the parameters are read here and the MAC is computed with OpenSSL's
/// PBKDF2 and HMAC.
struct PBMAC1: Sendable, Equatable {
    /// PBKDF2's salt.
    var salt: [UInt8]
    /// PBKDF2's iteration count.
    var iterations: Int
    /// The HMAC key length in bytes (PBKDF2's output).
    var keyLength: Int
    /// PBKDF2's pseudo-random function, as an OpenSSL digest name (`SHA256`).
    var prfDigest: String
    /// The MAC's HMAC digest, as an OpenSSL digest name.
    var hmacDigest: String

    /// The shortest HMAC key accepted: shorter keys weaken the integrity check below SHA-1's, and
    /// a writer that chose one has made a file that is damaged or crafted (CVE-2026-34181: a
    /// 1-byte key lets an attacker forge the MAC without the password).
    static let minimumKeyLength = 20
    /// The longest HMAC key accepted: the largest digest output (SHA-512's 64 bytes). No writer
    /// derives more than its HMAC's output; OpenSSL 3.4 and later refuse longer keys alike.
    static let maximumKeyLength = 64
    /// Iteration counts above this are refused as damaged: they would hold a reader for hours.
    static let maximumIterations = PKCS12Inspection.maximumIterations

    /// The DER of `1.2.840.113549.1.5.14` (id-PBMAC1), without tag and length.
    static let oid: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0E]
    private static let pbkdf2OID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C]
    /// hmacWithSHA* (1.2.840.113549.2.N) by their last arc.
    private static let hmacDigests: [UInt8: String] = [7: "SHA1", 8: "SHA224", 9: "SHA256", 10: "SHA384", 11: "SHA512", 12: "SHA512-224", 13: "SHA512-256"]
    private static let hmacPrefix: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02]

    /// Reads `PBMAC1-params` (the DER of the SEQUENCE).
    ///
    /// - Throws: `.corruptInput` when the parameters are malformed, lack the key length RFC 9579
    ///   requires, or ask for a key shorter than ``minimumKeyLength``; `.unsupportedAlgorithm` for
    ///   a key derivation other than PBKDF2 or an HMAC digest OpenSSL does not know.
    init(parameters der: [UInt8]) throws(MTLSTrustError) {
        func damaged(_ why: String) -> MTLSTrustError {
            MTLSTrustError(.corruptInput, "the file is damaged: its PBMAC1 integrity check \(why)")
        }
        guard let params = DER.element(in: der, at: 0), params.tag == 0x30,
            let kdf = DER.element(in: der, at: params.contentStart, limit: params.contentEnd), kdf.tag == 0x30,
            let mac = DER.element(in: der, at: kdf.end, limit: params.contentEnd), mac.tag == 0x30,
            let kdfOID = DER.element(in: der, at: kdf.contentStart, limit: kdf.contentEnd), kdfOID.tag == 0x06
        else { throw damaged("has malformed parameters") }
        guard Array(der[kdfOID.contentStart..<kdfOID.contentEnd]) == PBMAC1.pbkdf2OID else {
            throw MTLSTrustError(.unsupportedAlgorithm, "its PBMAC1 integrity check uses a key derivation other than PBKDF2, which this tool cannot compute")
        }
        guard let kdfParams = DER.element(in: der, at: kdfOID.end, limit: kdf.contentEnd), kdfParams.tag == 0x30,
            let salt = DER.element(in: der, at: kdfParams.contentStart, limit: kdfParams.contentEnd)
        else { throw damaged("has malformed PBKDF2 parameters") }
        // PBKDF2-params { salt CHOICE { specified OCTET STRING, otherSource AlgorithmIdentifier },
        // iterationCount, keyLength OPTIONAL, prf DEFAULT hmacWithSHA1 }; RFC 9579 uses `specified`.
        guard salt.tag == 0x04 else {
            throw damaged("has no OCTET STRING salt: its PBKDF2 parameters start with \(PBMAC1.tagName(salt.tag)) (the salt is missing or of another type)")
        }
        guard let count = DER.element(in: der, at: salt.end, limit: kdfParams.contentEnd), count.tag == 0x02 else {
            throw damaged("has malformed PBKDF2 parameters (no iteration count after the salt)")
        }
        // Checked before any derivation: the count is named, so a hostile file is recognisable.
        let counted = PBMAC1.integer(der, count)
        guard let iterations = counted, iterations >= 1, iterations <= PBMAC1.maximumIterations else {
            throw damaged("has an iteration count (\(counted.map { String($0) } ?? "too large to read")) outside 1…\(PBMAC1.maximumIterations)")
        }
        var cursor = count.end
        var keyLength: Int? = nil
        var prf = "SHA1"  // PBKDF2-params' DEFAULT algid-hmacWithSHA1
        while cursor < kdfParams.contentEnd {
            guard let item = DER.element(in: der, at: cursor, limit: kdfParams.contentEnd) else { throw damaged("has malformed PBKDF2 parameters") }
            if item.tag == 0x02, keyLength == nil {
                keyLength = try PBMAC1.keyLength(der, item, damaged: damaged)
            } else if item.tag == 0x30 {
                prf = try PBMAC1.hmacDigest(der, item, role: "PBKDF2 function")
            } else {
                throw damaged("has malformed PBKDF2 parameters")
            }
            cursor = item.end
        }
        // RFC 9579 section 5: the key length must be present (its test vector A.6 lacks it and is invalid).
        guard let keyLength else { throw damaged("lacks the key length RFC 9579 requires") }
        self.salt = Array(der[salt.contentStart..<salt.contentEnd])
        self.iterations = iterations
        self.keyLength = keyLength
        self.prfDigest = prf
        self.hmacDigest = try PBMAC1.hmacDigest(der, mac, role: "MAC")
    }

    /// The HMAC key length: a DER INTEGER of \(minimumKeyLength)…\(maximumKeyLength), each other
    /// value refused with what it is (zero, negative, too large to be a length, out of range).
    private static func keyLength(_ der: [UInt8], _ element: DER.Element, damaged: (String) -> MTLSTrustError) throws(MTLSTrustError) -> Int {
        let bytes = Array(der[element.contentStart..<element.contentEnd])
        guard let first = bytes.first else { throw damaged("has an empty key length INTEGER") }
        if first & 0x80 != 0 { throw damaged("has a negative key length") }
        let significant = bytes.drop { $0 == 0 }
        guard significant.count <= 4 else { throw damaged("has a key length too large to be a byte count (a \(bytes.count)-byte INTEGER)") }
        let length = significant.reduce(0) { $0 << 8 | Int($1) }
        guard length >= minimumKeyLength, length <= maximumKeyLength else {
            throw damaged("uses a \(length)-byte key; PBMAC1 HMAC keys are \(minimumKeyLength) to \(maximumKeyLength) bytes")
        }
        return length
    }

    /// `an INTEGER`, `a SEQUENCE` …: what a DER tag is, for messages.
    static func tagName(_ tag: UInt8) -> String {
        switch tag {
        case 0x01: "a BOOLEAN"
        case 0x02: "an INTEGER"
        case 0x03: "a BIT STRING"
        case 0x05: "a NULL"
        case 0x06: "an OBJECT IDENTIFIER"
        case 0x0C: "a UTF8String"
        case 0x30: "a SEQUENCE"
        case 0x31: "a SET"
        default: "a value of tag 0x\(String(tag, radix: 16))"
        }
    }

    private static func integer(_ der: [UInt8], _ element: DER.Element) -> Int? {
        let bytes = der[element.contentStart..<element.contentEnd]
        guard !bytes.isEmpty, bytes.count <= 4, bytes.first! & 0x80 == 0 else { return nil }
        return bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    private static func hmacDigest(_ der: [UInt8], _ algorithm: DER.Element, role: String) throws(MTLSTrustError) -> String {
        guard let oid = DER.element(in: der, at: algorithm.contentStart, limit: algorithm.contentEnd), oid.tag == 0x06 else {
            throw MTLSTrustError(.corruptInput, "the file is damaged: its PBMAC1 \(role) is malformed")
        }
        let arcs = Array(der[oid.contentStart..<oid.contentEnd])
        guard arcs.count == hmacPrefix.count + 1, Array(arcs.prefix(hmacPrefix.count)) == hmacPrefix, let name = hmacDigests[arcs.last!],
            EVP_get_digestbyname(name) != nil
        else {
            throw MTLSTrustError(
                .unsupportedAlgorithm, "its PBMAC1 \(role) is not an HMAC this OpenSSL can compute (OID \(arcs.map { String($0, radix: 16) }.joined(separator: " ")))")
        }
        return name
    }

    /// A readable name: `PBMAC1 (HMAC-SHA256, PBKDF2 HMAC-SHA256)`.
    var name: String { "PBMAC1 (HMAC-\(hmacDigest), PBKDF2 HMAC-\(prfDigest))" }

    /// True when `expected` is the HMAC of `content` under the key PBKDF2 derives from `password`
    /// (UTF-8; no password and the empty password are the same here).
    func verify(password: Secret?, content: [UInt8], expected: [UInt8]) -> Bool {
        guard let prf = EVP_get_digestbyname(prfDigest), let digest = EVP_get_digestbyname(hmacDigest) else { return false }
        var key = [UInt8](repeating: 0, count: keyLength)
        defer { Secret.wipe(&key) }
        let derived = (password ?? Secret(bytes: [])).withUnsafeBytes { pass in
            salt.withUnsafeBufferPointer { saltBuffer in
                PKCS5_PBKDF2_HMAC(
                    pass.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, Int32(pass.count),
                    saltBuffer.baseAddress, Int32(saltBuffer.count), Int32(iterations), prf, Int32(keyLength), &key)
            }
        }
        guard derived == 1 else { return false }
        var mac = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var macLength: UInt32 = 0
        guard HMAC(digest, key, Int32(keyLength), content, content.count, &mac, &macLength) != nil else { return false }
        guard Int(macLength) == expected.count else { return false }
        return CRYPTO_memcmp(mac, expected, expected.count) == 0
    }
}

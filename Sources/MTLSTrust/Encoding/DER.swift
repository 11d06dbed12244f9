/// A minimal DER reader: enough to find the SubjectPublicKeyInfo inside a certificate without a full
/// X.509 parse, and to tell a certificate from a PKCS#12 or a key by shape.
public enum DER {
    /// One element's tag and where its content lies in the input.
    public struct Element: Sendable, Equatable {
        public var tag: UInt8
        public var headerStart: Int
        public var contentStart: Int
        public var contentEnd: Int
        /// The end of the whole element.
        public var end: Int { contentEnd }
    }

    /// Reads the element that starts at `offset`, or nil if the bytes there are not well-formed DER
    /// (long-form lengths up to four bytes; indefinite lengths are refused).
    public static func element<C: RandomAccessCollection>(in bytes: C, at offset: Int, limit: Int? = nil) -> Element?
    where C.Element == UInt8, C.Index == Int {
        let end = limit ?? bytes.endIndex
        guard offset + 2 <= end else { return nil }
        let tag = bytes[offset]
        if tag & 0x1F == 0x1F { return nil }  // high tag numbers do not occur where we look
        let first = bytes[offset + 1]
        var length = 0
        var cursor = offset + 2
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 4, cursor + count <= end else { return nil }
            for _ in 0..<count {
                length = (length << 8) | Int(bytes[cursor])
                cursor += 1
            }
            if length < 0x80 || bytes[offset + 2] == 0 { return nil }  // not minimal
        }
        guard length <= end - cursor else { return nil }
        return Element(tag: tag, headerStart: offset, contentStart: cursor, contentEnd: cursor + length)
    }

    /// The length of the outer header when the bytes start like a PFX: `SEQUENCE` (definite or
    /// indefinite length), then `INTEGER 3` (or another version from 2 to 127), then a `SEQUENCE` (the authSafe ContentInfo). Only
    /// the header is read, so a truncated file still matches.
    public static func pkcs12HeaderLength<C: RandomAccessCollection>(_ bytes: C) -> Int? where C.Element == UInt8, C.Index == Int {
        let start = bytes.startIndex
        guard bytes.count >= 6, bytes[start] == 0x30 else { return nil }
        let first = bytes[start + 1]
        var header = 2
        if first > 0x80 {
            let count = Int(first & 0x7F)
            guard count <= 4 else { return nil }
            header += count
        }
        guard bytes.count >= header + 3 else { return nil }
        let version = start + header
        // Version 3 is the only PKCS#12 version; 2…127 are taken as a PFX too, so that the reader
        // refuses them by their version. 0 and 1 start PKCS #8 and other private keys.
        guard bytes[version] == 0x02 && bytes[version + 1] == 0x01 && (2...0x7F).contains(bytes[version + 2]) else { return nil }
        // The ContentInfo's SEQUENCE follows, unless the file ends right after the version.
        return bytes.count == header + 3 || bytes[version + 3] == 0x30 ? header : nil
    }

    /// "a Java KeyStore (JKS)" or "a Java JCEKS keystore" when the bytes start with that format's
    /// magic number (0xFEEDFEED, 0xCECECECE): Java's own formats, which keytool converts to PKCS#12.
    public static func javaKeyStoreName(_ bytes: [UInt8]) -> String? {
        switch Array(bytes.prefix(4)) {
        case [0xFE, 0xED, 0xFE, 0xED]: "a Java KeyStore (JKS)"
        case [0xCE, 0xCE, 0xCE, 0xCE]: "a Java JCEKS keystore"
        default: nil
        }
    }

    /// The sentence for a Java keystore given where a certificate, key or PKCS#12 is read.
    public static func javaKeyStoreRefusal(_ bytes: [UInt8]) -> String? {
        javaKeyStoreName(bytes).map {
            "it is \($0), not a PKCS#12 file: convert it with `keytool -importkeystore -srckeystore FILE -destkeystore FILE.p12 -deststoretype PKCS12`"
        }
    }

    /// True when the bytes start like a PKCS#12 file (DER or BER, complete or not).
    public static func looksLikePKCS12(_ bytes: [UInt8]) -> Bool { pkcs12HeaderLength(bytes) != nil }

    /// What a DER blob looks like, judged from its outer structure only.
    public enum Shape: Sendable, Equatable {
        case certificate, pkcs12, privateKey, encryptedPrivateKey, publicKey, crl
        /// A PKCS#7 (CMS) SignedData: a `.p7b`/`.p7c` certificate bundle.
        case pkcs7
        case unknown
    }

    /// `OBJECT IDENTIFIER 1.2.840.113549.1.7.2` (signedData), as a ContentInfo starts with it.
    private static let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]

    /// A ContentInfo of type signedData: `SEQUENCE` (definite or, in BER, indefinite length) whose
    /// first element is the signedData OID.
    static func looksLikePKCS7(_ der: [UInt8]) -> Bool {
        guard der.count > 2 + signedDataOID.count, der[0] == 0x30 else { return false }
        var start = 2
        if der[1] & 0x80 != 0, der[1] != 0x80 { start = 2 + Int(der[1] & 0x7F) }
        guard start + signedDataOID.count <= der.count else { return false }
        return Array(der[start..<(start + signedDataOID.count)]) == signedDataOID
    }

    /// Guesses the kind of a DER object from its outer structure.
    ///
    /// A PKCS#12 file is recognised by its first bytes alone (`SEQUENCE`, `INTEGER 3`, `SEQUENCE`),
    /// so BER with indefinite lengths (NSS and Chrome write `30 80`) and truncated files are
    /// still `.pkcs12`, and the PKCS#12 reader says what is wrong with them.
    public static func shape(of der: [UInt8]) -> Shape {
        if looksLikePKCS12(der) { return .pkcs12 }
        if looksLikePKCS7(der) { return .pkcs7 }
        guard let outer = element(in: der, at: 0), outer.tag == 0x30,
            let first = element(in: der, at: outer.contentStart, limit: outer.contentEnd)
        else { return .unknown }
        if first.tag == 0x02 {
            // PFX: INTEGER 3, ContentInfo; PKCS#8: INTEGER 0, AlgorithmIdentifier, OCTET STRING;
            // PKCS#1 RSA: INTEGER 0, INTEGER n, ...; SEC1: INTEGER 1, OCTET STRING.
            let version = first.contentEnd - first.contentStart == 1 ? der[first.contentStart] : 0xFF
            if version == 3 { return .pkcs12 }
            // A PFX of another version (damaged or crafted) still holds a PKCS #7 ContentInfo
            // (pkcs7-data or -signedData) where a private key has its AlgorithmIdentifier.
            let pkcs7: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07]
            if let contentInfo = element(in: der, at: first.end, limit: outer.contentEnd), contentInfo.tag == 0x30,
                let type = element(in: der, at: contentInfo.contentStart, limit: contentInfo.contentEnd), type.tag == 0x06,
                type.contentEnd - type.contentStart == pkcs7.count + 1, Array(der[type.contentStart..<type.contentStart + pkcs7.count]) == pkcs7
            {
                return .pkcs12
            }
            return .privateKey
        }
        if first.tag == 0x30 {
            guard let second = element(in: der, at: first.end, limit: outer.contentEnd) else { return .unknown }
            if second.tag == 0x03 { return .publicKey }  // SPKI: AlgorithmIdentifier, BIT STRING
            if second.tag == 0x04 { return .encryptedPrivateKey }  // EncryptedPrivateKeyInfo
            if second.tag == 0x30 {
                // Certificate: tbs, sigAlg, signature; CRL: tbsCertList, ...
                // tbsCertificate starts with [0] version or INTEGER serial; tbsCertList with INTEGER version or sigAlg SEQUENCE.
                if let inner = element(in: der, at: first.contentStart, limit: first.contentEnd) {
                    if inner.tag == 0xA0 { return .certificate }
                    if inner.tag == 0x02 {
                        // v1 certificate (serial, sigAlg, issuer, validity …), v2 CRL (version INTEGER 1,
                        // sigAlg, issuer, then a time) or PKCS#10 request (version, subject, SPKI, [0]).
                        if let afterVersion = element(in: der, at: inner.end, limit: first.contentEnd),
                            afterVersion.tag == 0x30,
                            let third = element(in: der, at: afterVersion.end, limit: first.contentEnd), third.tag == 0x30,
                            let fourth = element(in: der, at: third.end, limit: first.contentEnd)
                        {
                            if fourth.tag == 0x17 || fourth.tag == 0x18 { return .crl }
                            if fourth.tag == 0xA0 { return .unknown }  // a certificate signing request
                        }
                        return .certificate
                    }
                    if inner.tag == 0x30 { return .crl }
                }
            }
        }
        return .unknown
    }
}

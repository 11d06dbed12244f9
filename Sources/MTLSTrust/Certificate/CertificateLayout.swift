internal import COpenSSL
internal import COpenSSLShims

/// Where the parts of a DER certificate lie (``CertificateStructure``), for certificates in the
/// strict subset that lets `d2i_X509` wait.
///
/// OpenSSL 3.0's `d2i_X509` decodes the public key through the provider decoders (a new
/// `OSSL_DECODER_CTX` per certificate), about half of what verifying a leaf costs. A certificate
/// whose DER this walk accepts is kept undecoded (``X509Reference``) until something needs its
/// `X509`, and the trust fast path checks such a leaf on these ranges alone.
///
/// The walk accepts only a subset for which `d2i_X509` certainly succeeds and `i2d_X509` gives the
/// input back (the subset ``CertificateSummaryReader`` reads: v3, DER lengths, minimal INTEGERs,
/// valid OIDs, canonical UTCTime/GeneralizedTime `…Z`, names that are plain or accepted by OpenSSL's
/// own `d2i_X509_NAME`, extensions present). The `certificate-der` and `trust-fast-path` fuzz targets
/// check that claim on every input the walk accepts.
struct CertificateLayout: Sendable {
    /// The TBSCertificate element, header included: the signed bytes.
    let tbs: Range<Int>
    /// The outer signature AlgorithmIdentifier element.
    let signatureAlgorithm: Range<Int>
    /// True when the TBSCertificate's signature AlgorithmIdentifier is byte for byte the outer one.
    let signatureAlgorithmsAgree: Bool
    /// The signature: the BIT STRING's bytes after its unused-bits octet.
    let signature: Range<Int>
    /// The issuer and subject Name elements.
    let issuerName: StrictDER.Element
    let subjectName: StrictDER.Element
    var issuer: Range<Int> { issuerName.header..<issuerName.end }
    var subject: Range<Int> { subjectName.header..<subjectName.end }
    /// The subject's attributes when every one is plain (``StrictDER/plainName(_:_:)``), else nil.
    let subjectEntries: [StrictDER.NameEntry]?
    /// The validity, in seconds since 1970.
    let notBefore: Int
    let notAfter: Int
    /// The SubjectPublicKeyInfo element.
    let subjectPublicKeyInfo: Range<Int>
    /// Every extension: its OID, criticality and value (the OCTET STRING element), in DER order.
    let extensions: [Extension]
    /// The leaf profile the trust fast path can check without OpenSSL, or nil.
    let plainLeaf: PlainLeaf?

    struct Extension: Sendable {
        var oid: StrictDER.Element
        var critical: Bool
        var value: StrictDER.Element
    }

    /// A leaf in the one form the trust fast path checks on the DER: every extension one of
    /// basicConstraints (`cA` absent), keyUsage, extKeyUsage, subjectAltName (DNS, IP, e-mail, URI),
    /// subjectKeyIdentifier and authorityKeyIdentifier (a keyIdentifier alone), each once and in its
    /// DER form, the key identifiers not critical; an RSA (2048–8192 bits) or named P-256/P-384/P-521
    /// key; an ECDSA or PKCS#1 v1.5 signature with SHA-256/384/512; a plain subject.
    struct PlainLeaf: Sendable {
        enum Key: Sendable {
            case rsa(bits: Int)
            /// The curve's NID and the uncompressed point's bytes (validated where used).
            case ec(curveNID: Int32, point: Range<Int>)
        }
        var key: Key
        /// The signature's digest name for `EVP_DigestVerifyInit_ex`, and the key type that signs.
        var signatureDigest: String
        var signatureKeyType: Int32
        /// keyUsage bits as OpenSSL's `X509_get_key_usage`, nil when there is no keyUsage.
        var keyUsage: KeyUsage?
        /// The extKeyUsage OIDs' content bytes, nil when there is no extKeyUsage.
        var extendedKeyUsage: [Range<Int>]?
        /// True when there is a subjectAltName (never empty here).
        var hasSubjectAltName = false
        /// The dNSName and iPAddress entries' contents.
        var dnsNames: [Range<Int>] = []
        var ipAddresses: [Range<Int>] = []
        /// The authorityKeyIdentifier's keyIdentifier, nil when there is none.
        var authorityKeyID: Range<Int>?
    }

    init?(_ der: [UInt8]) {
        guard
            let parsed = der.withUnsafeBufferPointer({ buffer -> CertificateLayout? in
                guard let base = buffer.baseAddress else { return nil }
                return CertificateLayout(base, count: buffer.count)
            })
        else { return nil }
        self = parsed
    }

    /// - Parameter readsLeafProfile: false leaves ``plainLeaf`` nil (for readers that never check
    ///   trust, such as the pin path's summaries).
    init?(_ p: UnsafePointer<UInt8>, count: Int, readsLeafProfile: Bool = true) {
        typealias D = StrictDER
        guard let walk = CertificateStructure(p, count: count),
            D.validAlgorithm(p, walk.envelope.signatureAlgorithm), D.validBitString(p, walk.envelope.signature),
            let version = walk.version, version.length == 3,
            p[version.start] == 0x02, p[version.start + 1] == 0x01, p[version.start + 2] == 0x02,
            D.validInteger(p, walk.serial), D.validAlgorithm(p, walk.innerAlgorithm),
            let notBefore = D.time(p, walk.notBefore), let notAfter = D.time(p, walk.notAfter),
            let keyAlgorithm = D.element(p, walk.subjectPublicKeyInfo.start, walk.subjectPublicKeyInfo.end), D.validAlgorithm(p, keyAlgorithm),
            let key = D.element(p, keyAlgorithm.end, walk.subjectPublicKeyInfo.end), D.validBitString(p, key), key.end == walk.subjectPublicKeyInfo.end,
            !walk.hasUniqueIdentifiers, let extensionList = walk.extensionList, extensionList.length > 0
        else { return nil }
        // Every extension's OID valid; criticality only in its DER form (TRUE, since FALSE is the default).
        var list: [Extension] = []
        list.reserveCapacity(walk.extensions.count)
        for ext in walk.extensions {
            guard D.validOID(p, ext.oid) else { return nil }
            if let critical = ext.critical {
                guard critical.length == 1, p[critical.start] == 0xFF else { return nil }
            }
            list.append(Extension(oid: ext.oid, critical: ext.critical != nil, value: ext.value))
        }
        let (tbs, signatureAlgorithm, signature, issuer, subject, innerAlgorithm, spki) = (
            walk.tbs, walk.envelope.signatureAlgorithm, walk.envelope.signature, walk.issuer, walk.subject, walk.innerAlgorithm,
            walk.subjectPublicKeyInfo
        )
        // Names: plain ones need no OpenSSL; any other must be accepted by `d2i_X509_NAME`, as
        // `d2i_X509` needs (it canonicalises every name).
        let subjectEntries = D.plainName(p, subject)
        for (name, plain) in [(subject, subjectEntries != nil), (issuer, D.plainName(p, issuer) != nil)] where !plain {
            guard let parsed = D.name(p, name) else { return nil }
            X509_NAME_free(parsed)
        }
        self.tbs = tbs.header..<tbs.end
        self.signatureAlgorithm = signatureAlgorithm.header..<signatureAlgorithm.end
        self.signatureAlgorithmsAgree =
            innerAlgorithm.end - innerAlgorithm.header == signatureAlgorithm.end - signatureAlgorithm.header
            && memcmp(p + innerAlgorithm.header, p + signatureAlgorithm.header, innerAlgorithm.end - innerAlgorithm.header) == 0
        self.signature = (signature.start + 1)..<signature.end
        self.issuerName = issuer
        self.subjectName = subject
        self.extensions = list
        self.subjectEntries = subjectEntries
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.subjectPublicKeyInfo = spki.header..<spki.end
        self.plainLeaf =
            !readsLeafProfile || subjectEntries == nil || !signatureAlgorithmsAgree
            ? nil : CertificateLayout.plainLeaf(p, signatureAlgorithm: signatureAlgorithm, keyAlgorithm: keyAlgorithm, key: key, extensions: list)
    }

    // MARK: The plain leaf profile

    private static func oidIs(_ p: UnsafePointer<UInt8>, _ e: StrictDER.Element, _ bytes: [UInt8]) -> Bool {
        e.length == bytes.count && memcmp(p + e.start, bytes, bytes.count) == 0
    }

    private static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    private static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    /// Named curves: OID content, NID, size of a coordinate in bytes.
    private static let curves: [([UInt8], Int32, Int)] = [
        ([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07], NID_X9_62_prime256v1, 32),
        ([0x2B, 0x81, 0x04, 0x00, 0x22], NID_secp384r1, 48),
        ([0x2B, 0x81, 0x04, 0x00, 0x23], NID_secp521r1, 66),
    ]
    /// Signature algorithms: OID content, digest, signing key type, NULL parameters (RSA) or none (ECDSA).
    private static let signatureAlgorithms: [([UInt8], String, Int32, Bool)] = [
        ([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02], "SHA256", EVP_PKEY_EC, false),
        ([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x03], "SHA384", EVP_PKEY_EC, false),
        ([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x04], "SHA512", EVP_PKEY_EC, false),
        ([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B], "SHA256", EVP_PKEY_RSA, true),
        ([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0C], "SHA384", EVP_PKEY_RSA, true),
        ([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0D], "SHA512", EVP_PKEY_RSA, true),
    ]

    /// The element after the OID of an AlgorithmIdentifier, or nil when there are no parameters.
    private static func parameters(_ p: UnsafePointer<UInt8>, _ algorithm: StrictDER.Element, oid: StrictDER.Element) -> StrictDER.Element? {
        oid.end == algorithm.end ? nil : StrictDER.element(p, oid.end, algorithm.end)
    }

    private static func plainLeaf(
        _ p: UnsafePointer<UInt8>, signatureAlgorithm: StrictDER.Element, keyAlgorithm: StrictDER.Element, key: StrictDER.Element,
        extensions: [Extension]
    ) -> PlainLeaf? {
        typealias D = StrictDER
        // The signature algorithm.
        guard let signatureOID = D.element(p, signatureAlgorithm.start, signatureAlgorithm.end),
            let (_, digest, signer, nullParameters) = signatureAlgorithms.first(where: { oidIs(p, signatureOID, $0.0) })
        else { return nil }
        let signatureParameters = parameters(p, signatureAlgorithm, oid: signatureOID)
        if nullParameters {
            guard let signatureParameters, signatureParameters.tag == 0x05, signatureParameters.length == 0 else { return nil }
        } else {
            guard signatureParameters == nil else { return nil }
        }
        // The key.
        guard let keyOID = D.element(p, keyAlgorithm.start, keyAlgorithm.end), let keyParameters = parameters(p, keyAlgorithm, oid: keyOID) else { return nil }
        let leafKey: PlainLeaf.Key
        if oidIs(p, keyOID, rsaEncryption) {
            // RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }, after the
            // BIT STRING's unused-bits octet.
            guard keyParameters.tag == 0x05, keyParameters.length == 0,
                let sequence = D.element(p, key.start + 1, key.end), sequence.tag == 0x30, sequence.end == key.end,
                let modulus = D.element(p, sequence.start, sequence.end), D.validInteger(p, modulus),
                let exponent = D.element(p, modulus.end, sequence.end), exponent.end == sequence.end, D.validInteger(p, exponent),
                exponent.length <= 4, p[exponent.end - 1] & 1 == 1, exponent.length > 1 || p[exponent.start] >= 3
            else { return nil }
            var first = modulus.start
            if p[first] == 0 { first += 1 }
            guard first < modulus.end else { return nil }
            let bits = (modulus.end - first - 1) * 8 + (8 - p[first].leadingZeroBitCount)
            guard bits >= 2048, bits <= 8192 else { return nil }
            leafKey = .rsa(bits: bits)
        } else if oidIs(p, keyOID, ecPublicKey) {
            guard keyParameters.tag == 0x06, let curve = curves.first(where: { oidIs(p, keyParameters, $0.0) }),
                key.length == 2 + 2 * curve.2, p[key.start + 1] == 0x04
            else { return nil }
            leafKey = .ec(curveNID: curve.1, point: (key.start + 1)..<key.end)
        } else {
            return nil
        }
        var leaf = PlainLeaf(key: leafKey, signatureDigest: digest, signatureKeyType: signer)
        // The extensions: each known, once, in DER.
        var seen = Set<UInt8>()
        for ext in extensions {
            guard ext.oid.length == 3, p[ext.oid.start] == 0x55, p[ext.oid.start + 1] == 0x1D else { return nil }
            let kind = p[ext.oid.start + 2]
            guard seen.insert(kind).inserted, let inner = D.element(p, ext.value.start, ext.value.end), inner.end == ext.value.end else { return nil }
            switch kind {
            case 0x13:  // basicConstraints: SEQUENCE {} (cA FALSE, no path length)
                guard inner.tag == 0x30, inner.length == 0 else { return nil }
            case 0x0F:  // keyUsage: BIT STRING, one or two octets, DER (no trailing zero bits)
                guard inner.tag == 0x03, inner.length == 2 || inner.length == 3 else { return nil }
                let unused = p[inner.start]
                let last = p[inner.end - 1]
                guard unused <= 7, last != 0, last & ((1 << unused) - 1) == 0, last.trailingZeroBitCount == Int(unused) else { return nil }
                var bits = UInt32(p[inner.start + 1])
                if inner.length == 3 { bits |= UInt32(p[inner.start + 2]) << 8 }
                leaf.keyUsage = KeyUsage(rawValue: bits)
            case 0x25:  // extKeyUsage: SEQUENCE SIZE (1..MAX) OF OBJECT IDENTIFIER
                guard inner.tag == 0x30, inner.length > 0 else { return nil }
                var purposes: [Range<Int>] = []
                var position = inner.start
                while position < inner.end {
                    guard let oid = D.element(p, position, inner.end), D.validOID(p, oid) else { return nil }
                    purposes.append(oid.start..<oid.end)
                    position = oid.end
                }
                leaf.extendedKeyUsage = purposes
            case 0x11:  // subjectAltName: SEQUENCE SIZE (1..MAX) OF GeneralName
                guard inner.tag == 0x30, inner.length > 0 else { return nil }
                var position = inner.start
                while position < inner.end {
                    guard let name = D.element(p, position, inner.end) else { return nil }
                    switch name.tag {
                    case 0x82, 0x81, 0x86:  // dNSName, rfc822Name, URI: IA5String, printable ASCII
                        guard name.length > 0 else { return nil }
                        for i in name.start..<name.end where p[i] < 0x21 || p[i] > 0x7E { return nil }
                        if name.tag == 0x82 { leaf.dnsNames.append(name.start..<name.end) }
                    case 0x87:  // iPAddress
                        guard name.length == 4 || name.length == 16 else { return nil }
                        leaf.ipAddresses.append(name.start..<name.end)
                    default:
                        return nil
                    }
                    position = name.end
                }
                leaf.hasSubjectAltName = true
            case 0x0E:  // subjectKeyIdentifier: OCTET STRING, not critical
                guard !ext.critical, inner.tag == 0x04, inner.length > 0 else { return nil }
            case 0x23:  // authorityKeyIdentifier: SEQUENCE { [0] keyIdentifier }, not critical
                guard !ext.critical, inner.tag == 0x30, let keyID = D.element(p, inner.start, inner.end), keyID.tag == 0x80,
                    keyID.end == inner.end, keyID.length > 0
                else { return nil }
                leaf.authorityKeyID = keyID.start..<keyID.end
            default:
                return nil
            }
        }
        return leaf
    }

    // MARK: What Certificate reads without decoding

    /// The subject as ``Certificate/subject`` prints it (plain subjects only).
    func subjectText(_ der: [UInt8]) -> String? {
        guard let subjectEntries else { return nil }
        return der.withUnsafeBufferPointer { StrictDER.rfc4514($0.baseAddress!, subjectEntries) }
    }

    /// The first CN, as ``Certificate/commonName`` gives it (plain subjects only; nil inside the
    /// optional when there is no CN).
    func commonName(_ der: [UInt8]) -> String?? {
        guard let subjectEntries else { return nil }
        guard let entry = subjectEntries.first(where: { $0.type == "CN" }) else { return .some(nil) }
        return .some(String(decoding: der[entry.start..<entry.end], as: UTF8.self))
    }

    /// The key algorithm as ``Certificate/keyAlgorithm`` gives it, for a plain leaf whose key
    /// OpenSSL would decode (an EC point must be on its curve), else nil.
    func keyAlgorithm(_ der: [UInt8]) -> KeyAlgorithm? {
        guard let plainLeaf else { return nil }
        switch plainLeaf.key {
        case .rsa(let bits):
            return .rsa(bits: bits)
        case .ec(let nid, let point):
            guard CertificateLayout.validPoint(der, point, curveNID: nid) else { return nil }
            switch nid {
            case NID_X9_62_prime256v1: return .ec(curve: KeyAlgorithm.curveDisplayName("prime256v1"), bits: 256)
            case NID_secp384r1: return .ec(curve: KeyAlgorithm.curveDisplayName("secp384r1"), bits: 384)
            default: return .ec(curve: KeyAlgorithm.curveDisplayName("secp521r1"), bits: 521)
            }
        }
    }

    private struct Groups: @unchecked Sendable {
        // @unchecked Sendable: built once and only read (`EC_POINT_oct2point` takes a const group,
        // as every EVP_PKEY shared between threads does).
        let byNID: [Int32: OpaquePointer]
    }
    private static let groups = Groups(
        byNID: Dictionary(uniqueKeysWithValues: curves.compactMap { curve in EC_GROUP_new_by_curve_name(curve.1).map { (curve.1, $0) } }))

    /// True when the point decodes on its curve: what OpenSSL's decoder checks of an EC key.
    static func validPoint(_ der: [UInt8], _ range: Range<Int>, curveNID: Int32) -> Bool {
        guard let group = groups.byNID[curveNID], let point = EC_POINT_new(group) else { return false }
        defer { EC_POINT_free(point) }
        let ok = der.withUnsafeBufferPointer { EC_POINT_oct2point(group, point, $0.baseAddress! + range.lowerBound, range.count, nil) == 1 }
        if !ok { ERR_clear_error() }
        return ok
    }
}

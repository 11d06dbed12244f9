/// The one walk of a DER certificate (RFC 5280 §4.1): where each field lies.
///
/// Every reader of certificate facts beside OpenSSL's `d2i_X509` starts here, so that they cannot
/// disagree about which bytes are the issuer, the validity or an extension:
/// - ``CertificateLayout`` checks the strict subset for which `d2i_X509` can wait;
/// - ``CertificateFacts`` decodes the values the Swift policies judge;
/// - ``CertificateSummaryReader`` reads a pin's summary (through the layout);
/// - ``DER/subjectPublicKeyInfoRange(inCertificate:)`` and
///   ``CertificateSummaryReader/reencodesVerbatim(_:)`` need only a field or the envelope.
///
/// The walk checks DER lengths (definite, minimal), the tags and the nesting of the fields, and that
/// nothing follows the last field at any level. It does not judge values (OIDs, integers, times,
/// names, booleans): each reader checks what it reads, to its own strictness.
struct CertificateStructure: Sendable {
    typealias Element = StrictDER.Element

    /// `Extension ::= SEQUENCE { extnID OBJECT IDENTIFIER, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }`
    struct Extension: Sendable {
        var oid: Element
        /// The BOOLEAN element when it is written out (its value is the reader's to judge).
        var critical: Element?
        /// The OCTET STRING element.
        var value: Element
    }

    /// `Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }`.
    struct Envelope: Sendable {
        var certificate: Element
        var tbs: Element
        var signatureAlgorithm: Element
        var signature: Element
    }

    let envelope: Envelope
    /// The `[0] EXPLICIT` element around the version INTEGER; nil for a v1 certificate.
    let version: Element?
    let serial: Element
    /// The TBSCertificate's signature AlgorithmIdentifier.
    let innerAlgorithm: Element
    let issuer: Element
    let validity: Element
    let notBefore: Element
    let notAfter: Element
    let subject: Element
    let subjectPublicKeyInfo: Element
    /// True when issuerUniqueID or subjectUniqueID (`[1]`, `[2]`) is present.
    let hasUniqueIdentifiers: Bool
    /// The SEQUENCE inside `[3] EXPLICIT`; nil when there are no extensions.
    let extensionList: Element?
    let extensions: [Extension]

    var tbs: Element { envelope.tbs }

    /// The outer SEQUENCE and its three fields, filling the input exactly.
    static func envelope(_ p: UnsafePointer<UInt8>, count: Int) -> Envelope? {
        typealias D = StrictDER
        guard let outer = D.element(p, 0, count), outer.tag == 0x30, outer.end == count,
            let tbs = D.element(p, outer.start, outer.end), tbs.tag == 0x30,
            let algorithm = D.element(p, tbs.end, outer.end), algorithm.tag == 0x30,
            let signature = D.element(p, algorithm.end, outer.end), signature.tag == 0x03, signature.end == outer.end
        else { return nil }
        return Envelope(certificate: outer, tbs: tbs, signatureAlgorithm: algorithm, signature: signature)
    }

    init?(_ p: UnsafePointer<UInt8>, count: Int) {
        typealias D = StrictDER
        guard let envelope = CertificateStructure.envelope(p, count: count) else { return nil }
        let tbs = envelope.tbs
        var cursor = tbs.start
        func next() -> Element? {
            guard cursor < tbs.end, let element = D.element(p, cursor, tbs.end) else { return nil }
            cursor = element.end
            return element
        }
        guard var first = next() else { return nil }
        var version: Element?
        if first.tag == 0xA0 {
            version = first
            guard let following = next() else { return nil }
            first = following
        }
        guard first.tag == 0x02, let algorithm = next(), algorithm.tag == 0x30, let issuer = next(), issuer.tag == 0x30,
            let validity = next(), validity.tag == 0x30,
            let notBefore = D.element(p, validity.start, validity.end),
            let notAfter = D.element(p, notBefore.end, validity.end), notAfter.end == validity.end,
            let subject = next(), subject.tag == 0x30, let spki = next(), spki.tag == 0x30
        else { return nil }
        // Optional fields, each at most once and in order: [1] issuerUniqueID, [2] subjectUniqueID,
        // [3] extensions.
        var uniqueIdentifiers = false
        var extensionList: Element?
        var extensions: [Extension] = []
        var lastTag: UInt8 = 0
        while let optional = next() {
            guard [0x81, 0x82, 0xA3].contains(optional.tag), optional.tag & 0x1F > lastTag & 0x1F else { return nil }
            lastTag = optional.tag
            guard optional.tag == 0xA3 else {
                uniqueIdentifiers = true
                continue
            }
            guard let list = D.element(p, optional.start, optional.end), list.tag == 0x30, list.end == optional.end else { return nil }
            var position = list.start
            while position < list.end {
                guard let entry = D.element(p, position, list.end), entry.tag == 0x30,
                    let oid = D.element(p, entry.start, entry.end), oid.tag == 0x06,
                    var value = D.element(p, oid.end, entry.end)
                else { return nil }
                var critical: Element?
                if value.tag == 0x01 {
                    critical = value
                    guard let following = D.element(p, value.end, entry.end) else { return nil }
                    value = following
                }
                guard value.tag == 0x04, value.end == entry.end else { return nil }
                extensions.append(Extension(oid: oid, critical: critical, value: value))
                position = entry.end
            }
            extensionList = list
        }
        guard cursor == tbs.end else { return nil }
        self.envelope = envelope
        self.version = version
        self.serial = first
        self.innerAlgorithm = algorithm
        self.issuer = issuer
        self.validity = validity
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.subject = subject
        self.subjectPublicKeyInfo = spki
        self.hasUniqueIdentifiers = uniqueIdentifiers
        self.extensionList = extensionList
        self.extensions = extensions
    }

    /// Walks `der` and hands the walk to `body` with the bytes it points into.
    static func walk<Result>(_ der: [UInt8], _ body: (UnsafePointer<UInt8>, CertificateStructure) -> Result?) -> Result? {
        der.withUnsafeBufferPointer { buffer in
            guard let p = buffer.baseAddress, let structure = CertificateStructure(p, count: buffer.count) else { return nil }
            return body(p, structure)
        }
    }
}

extension DER {
    /// The byte range of the SubjectPublicKeyInfo (header included) in a DER certificate, or nil when
    /// the bytes are not one certificate.
    public static func subjectPublicKeyInfoRange(inCertificate der: [UInt8]) -> Range<Int>? {
        CertificateStructure.walk(der) { _, structure in structure.subjectPublicKeyInfo.header..<structure.subjectPublicKeyInfo.end }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The parts of a certificate the Swift policies judge, read from the one walk of its DER
/// (``CertificateStructure``).
///
/// OpenSSL has already parsed and checked the certificate; this reader only gathers what OpenSSL
/// does not expose plainly (extension criticality, the raw SAN and name-constraint entries, an
/// authority key identifier without its key identifier, the serial's octets). A structure it cannot
/// read leaves ``isReadable`` false and the policies that need it stay silent.
struct CertificateFacts: Sendable {
    /// One extension: its OID in dotted form, criticality and the content of its OCTET STRING.
    struct Extension: Sendable {
        var oid: String
        var critical: Bool
        var value: [UInt8]
    }

    /// One GeneralName (RFC 5280 4.2.1.6) with the raw octets of its value.
    enum GeneralName: Sendable, Equatable {
        case otherName
        case email([UInt8])
        case dns([UInt8])
        case directoryName([UInt8])
        case uri([UInt8])
        case ip([UInt8])
        case registeredID
        case unknown(UInt8)

        /// The dNSName as text (IA5String, so ASCII when well formed).
        var dnsText: String? {
            if case .dns(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
            return nil
        }
        var ipBytes: [UInt8]? {
            if case .ip(let bytes) = self { return bytes }
            return nil
        }
    }

    /// Name constraints: nil subtrees are absent (not empty).
    struct NameConstraints: Sendable {
        var permitted: [GeneralName]?
        var excluded: [GeneralName]?
    }

    enum OID {
        static let subjectAltName = "2.5.29.17"
        static let basicConstraints = "2.5.29.19"
        static let nameConstraints = "2.5.29.30"
        static let policyConstraints = "2.5.29.36"
        static let authorityKeyIdentifier = "2.5.29.35"
        static let extendedKeyUsage = "2.5.29.37"
        static let anyExtendedKeyUsage = "2.5.29.37.0"
        static let serverAuth = "1.3.6.1.5.5.7.3.1"
        static let clientAuth = "1.3.6.1.5.5.7.3.2"
        static let subjectKeyIdentifier = "2.5.29.14"
        static let keyUsage = "2.5.29.15"
        static let authorityInfoAccess = "1.3.6.1.5.5.7.1.1"
        static let crlDistributionPoints = "2.5.29.31"
        static let certificatePolicies = "2.5.29.32"
        static let anyPolicy = "2.5.29.32.0"
        static let policyMappings = "2.5.29.33"
        static let inhibitAnyPolicy = "2.5.29.54"
        static let ocsp = "1.3.6.1.5.5.7.48.1"
        static let caIssuers = "1.3.6.1.5.5.7.48.2"
        static let cpsQualifier = "1.3.6.1.5.5.7.2.1"
        static let userNoticeQualifier = "1.3.6.1.5.5.7.2.2"
    }

    /// False when the DER could not be walked (OpenSSL accepted it, so the policies stay silent).
    var isReadable = false
    /// The version field: 0 for v1 (absent), 2 for v3.
    var version = 0
    /// The content octets of the serial number INTEGER.
    var serial: [UInt8] = []
    /// True when the subject is an empty SEQUENCE.
    var subjectIsEmpty = false
    var extensions: [Extension] = []
    /// The DER of the issuer and subject Names (tag and length included), compared byte for byte.
    var issuerDER: [UInt8] = []
    var subjectDER: [UInt8] = []
    /// notBefore and notAfter: the tag (0x17 UTCTime, 0x18 GeneralizedTime) and the text.
    var notBefore: (tag: UInt8, text: String) = (0, "")
    var notAfter: (tag: UInt8, text: String) = (0, "")
    /// The TBS signature AlgorithmIdentifier: OID and the DER of its parameters (empty when absent).
    var signatureAlgorithm: (oid: String, parameters: [UInt8]) = ("", [])

    init(_ certificate: Certificate) { self.init(der: certificate.derBytes) }

    init(der: [UInt8]) {
        if let facts = CertificateStructure.walk(der, CertificateFacts.init) { self = facts }
    }

    private init(_ p: UnsafePointer<UInt8>, _ walk: CertificateStructure) {
        func bytes(_ range: Range<Int>) -> [UInt8] { Array(UnsafeBufferPointer(start: p + range.lowerBound, count: range.count)) }
        func content(_ element: StrictDER.Element) -> [UInt8] { bytes(element.start..<element.end) }
        if let wrapper = walk.version, let integer = StrictDER.element(p, wrapper.start, wrapper.end), integer.tag == 0x02, integer.length == 1 {
            version = Int(Int8(bitPattern: p[integer.start]))  // an INTEGER is signed, as OpenSSL reads it
        }
        serial = content(walk.serial)
        subjectIsEmpty = walk.subject.length == 0
        issuerDER = bytes(walk.issuer.header..<walk.issuer.end)
        subjectDER = bytes(walk.subject.header..<walk.subject.end)
        let algorithm = walk.innerAlgorithm
        if let oid = StrictDER.element(p, algorithm.start, algorithm.end), oid.tag == 0x06 {
            signatureAlgorithm = (CertificateFacts.dotted(content(oid)), bytes(oid.end..<algorithm.end))
        }
        notBefore = (walk.notBefore.tag, String(decoding: content(walk.notBefore), as: UTF8.self))
        notAfter = (walk.notAfter.tag, String(decoding: content(walk.notAfter), as: UTF8.self))
        // Criticality as OpenSSL reads a BOOLEAN (any non-zero octet is TRUE); a DER FALSE written
        // out is the rule catalogue's to report, not a reason to stop reading.
        extensions = walk.extensions.map { ext in
            Extension(
                oid: CertificateFacts.dotted(content(ext.oid)), critical: ext.critical.map { $0.length > 0 && p[$0.start] != 0 } ?? false,
                value: content(ext.value))
        }
        isReadable = true
    }

    /// The extension with this OID, if present.
    func `extension`(_ oid: String) -> Extension? { extensions.first { $0.oid == oid } }

    // MARK: Decoded extensions

    /// The subjectAltName entries, or nil when the extension is absent or unreadable.
    var subjectAlternativeNames: [GeneralName]? {
        guard let value = `extension`(OID.subjectAltName)?.value,
            let sequence = DER.element(in: value, at: 0), sequence.tag == 0x30
        else { return nil }
        return CertificateFacts.generalNames(value, from: sequence.contentStart, to: sequence.contentEnd)
    }

    /// The name constraints, or nil when absent or unreadable.
    var nameConstraints: NameConstraints? {
        guard let value = `extension`(OID.nameConstraints)?.value,
            let sequence = DER.element(in: value, at: 0), sequence.tag == 0x30
        else { return nil }
        var result = NameConstraints()
        var position = sequence.contentStart
        while position < sequence.contentEnd, let part = DER.element(in: value, at: position, limit: sequence.contentEnd) {
            position = part.end
            var names: [GeneralName] = []
            var inner = part.contentStart
            while inner < part.contentEnd, let subtree = DER.element(in: value, at: inner, limit: part.contentEnd), subtree.tag == 0x30 {
                inner = subtree.end
                if let base = DER.element(in: value, at: subtree.contentStart, limit: subtree.contentEnd) {
                    names.append(CertificateFacts.generalName(value, base))
                }
            }
            if part.tag == 0xA0 { result.permitted = names }
            if part.tag == 0xA1 { result.excluded = names }
        }
        return result
    }

    /// True when an authorityKeyIdentifier is present and carries a keyIdentifier; nil when absent.
    var authorityKeyIdentifierHasKeyID: Bool? {
        guard let value = `extension`(OID.authorityKeyIdentifier)?.value else { return nil }
        guard let sequence = DER.element(in: value, at: 0), sequence.tag == 0x30 else { return false }
        guard let first = DER.element(in: value, at: sequence.contentStart, limit: sequence.contentEnd) else { return false }
        return first.tag == 0x80 && first.contentEnd > first.contentStart
    }

    /// The extended key usage OIDs, or nil when absent.
    var extendedKeyUsage: [String]? {
        guard let value = `extension`(OID.extendedKeyUsage)?.value else { return nil }
        guard let sequence = DER.element(in: value, at: 0), sequence.tag == 0x30 else { return [] }
        var result: [String] = []
        var position = sequence.contentStart
        while position < sequence.contentEnd, let oid = DER.element(in: value, at: position, limit: sequence.contentEnd) {
            position = oid.end
            if oid.tag == 0x06 { result.append(CertificateFacts.dotted(value[oid.contentStart..<oid.contentEnd])) }
        }
        return result
    }

    /// The elements of a SEQUENCE that is the whole of `bytes`, or nil when `bytes` is not exactly
    /// one SEQUENCE (trailing data included) or an element cannot be read.
    static func sequence(_ bytes: [UInt8]) -> [DER.Element]? {
        guard let outer = DER.element(in: bytes, at: 0), outer.tag == 0x30, outer.end == bytes.count else { return nil }
        return elements(bytes, from: outer.contentStart, to: outer.contentEnd)
    }

    /// The elements between `start` and `end`, or nil when they do not fill the range exactly.
    static func elements(_ bytes: [UInt8], from start: Int, to end: Int) -> [DER.Element]? {
        var result: [DER.Element] = []
        var position = start
        while position < end {
            guard let element = DER.element(in: bytes, at: position, limit: end) else { return nil }
            result.append(element)
            position = element.end
        }
        return result
    }

    /// The authorityKeyIdentifier's fields by tag ([0] keyIdentifier, [1] authorityCertIssuer,
    /// [2] authorityCertSerialNumber), or nil when absent or unreadable.
    var authorityKeyIdentifierFields: [UInt8: [UInt8]]? {
        guard let value = `extension`(OID.authorityKeyIdentifier)?.value, let fields = CertificateFacts.sequence(value) else { return nil }
        var result: [UInt8: [UInt8]] = [:]
        for field in fields { result[field.tag] = Array(value[field.contentStart..<field.contentEnd]) }
        return result
    }

    /// The subjectKeyIdentifier's octets, or nil when absent or unreadable.
    var subjectKeyIdentifier: [UInt8]? {
        guard let value = `extension`(OID.subjectKeyIdentifier)?.value, let octets = DER.element(in: value, at: 0), octets.tag == 0x04 else { return nil }
        return Array(value[octets.contentStart..<octets.contentEnd])
    }

    /// True when basicConstraints says cA TRUE.
    var isCA: Bool {
        guard let value = `extension`(OID.basicConstraints)?.value,
            let sequence = DER.element(in: value, at: 0), sequence.tag == 0x30,
            let first = DER.element(in: value, at: sequence.contentStart, limit: sequence.contentEnd), first.tag == 0x01
        else { return false }
        return first.contentEnd > first.contentStart && value[first.contentStart] != 0
    }

    // MARK: DER helpers

    static func generalNames(_ bytes: [UInt8], from start: Int, to end: Int) -> [GeneralName] {
        var names: [GeneralName] = []
        var position = start
        while position < end, let element = DER.element(in: bytes, at: position, limit: end) {
            position = element.end
            names.append(generalName(bytes, element))
        }
        return names
    }

    static func generalName(_ bytes: [UInt8], _ element: DER.Element) -> GeneralName {
        let content = Array(bytes[element.contentStart..<element.contentEnd])
        switch element.tag {
        case 0xA0: return .otherName
        case 0x81: return .email(content)
        case 0x82: return .dns(content)
        case 0xA4: return .directoryName(content)
        case 0x86: return .uri(content)
        case 0x87: return .ip(content)
        case 0x88: return .registeredID
        default: return .unknown(element.tag)
        }
    }

    /// True for an object identifier in dotted form: two or more arcs of decimal digits, the
    /// first 0, 1 or 2, no leading zeros (`2.16.840.1.101.3.2.1.48.1`).
    static func isDottedOID(_ text: String) -> Bool {
        let arcs = text.split(separator: ".", omittingEmptySubsequences: false)
        guard arcs.count >= 2, ["0", "1", "2"].contains(arcs[0]) else { return false }
        return arcs.allSatisfy { arc in !arc.isEmpty && arc.count <= 20 && arc.allSatisfy(\.isASCII) && arc.allSatisfy(\.isNumber) && (arc == "0" || !arc.hasPrefix("0")) }
    }

    /// Dotted text of an OBJECT IDENTIFIER's content octets, with arcs of any size as OpenSSL prints
    /// them: an arc past 64 bits must not wrap around into the arc of another OID.
    static func dotted<C: Collection>(_ content: C) -> String where C.Element == UInt8 {
        var text = ""
        var value: UInt64 = 0
        for byte in content {
            guard value >> 56 == 0 else { return dottedLongArcs(content) }
            value = (value << 7) | UInt64(byte & 0x7F)
            if byte & 0x80 != 0 { continue }
            if text.isEmpty {
                let head = min(value / 40, 2)
                text = "\(head).\(value - head * 40)"
            } else {
                text += ".\(value)"
            }
            value = 0
        }
        return text
    }

    private static func dottedLongArcs<C: Collection>(_ content: C) -> String where C.Element == UInt8 {
        var arcs: [String] = []
        var value = DecimalArc()
        for byte in content {
            value.shiftIn(byte & 0x7F)
            if byte & 0x80 != 0 { continue }
            if arcs.isEmpty {
                let head = value.firstArc
                arcs.append(String(head))
                value.subtract(UInt32(head) * 40)
            }
            arcs.append(value.text)
            value = DecimalArc()
        }
        return arcs.joined(separator: ".")
    }

    /// A non-negative integer in base 10⁹ limbs (least significant first), for OID arcs.
    private struct DecimalArc {
        private static let base: UInt64 = 1_000_000_000
        private var limbs: [UInt64] = [0]

        /// value = value × 128 + digit
        mutating func shiftIn(_ digit: UInt8) {
            var carry = UInt64(digit)
            for index in limbs.indices {
                let product = limbs[index] * 128 + carry
                limbs[index] = product % Self.base
                carry = product / Self.base
            }
            if carry > 0 { limbs.append(carry) }
        }

        /// The first arc of the first subidentifier (X.690 8.19.4): 0, 1 or 2.
        var firstArc: Int {
            guard limbs.count == 1 else { return 2 }
            return Int(min(limbs[0] / 40, 2))
        }

        /// value -= amount (amount ≤ value).
        mutating func subtract(_ amount: UInt32) {
            var borrow = UInt64(amount)
            for index in limbs.indices where borrow > 0 {
                if limbs[index] >= borrow {
                    limbs[index] -= borrow
                    borrow = 0
                } else {
                    limbs[index] = limbs[index] + Self.base - borrow
                    borrow = 1
                }
            }
            while limbs.count > 1 && limbs.last == 0 { limbs.removeLast() }
        }

        var text: String {
            var result = String(limbs[limbs.count - 1])
            for limb in limbs.dropLast().reversed() {
                let digits = String(limb)
                result += String(repeating: "0", count: 9 - digits.count) + digits
            }
            return result
        }
    }

    /// authorityInfoAccess (RFC 5280 4.2.2.1): the (method OID, location) pairs, or nil when the syntax is wrong or the list is empty.
    static func accessDescriptions(_ value: [UInt8]) -> [(method: String, location: GeneralName)]? {
        guard let entries = sequence(value), !entries.isEmpty else { return nil }
        var result: [(String, GeneralName)] = []
        for entry in entries {
            guard entry.tag == 0x30, let parts = elements(value, from: entry.contentStart, to: entry.contentEnd), parts.count == 2,
                parts[0].tag == 0x06
            else { return nil }
            let name = generalName(value, parts[1])
            if case .unknown = name { return nil }
            result.append((dotted(value[parts[0].contentStart..<parts[0].contentEnd]), name))
        }
        return result
    }

    /// cRLDistributionPoints (RFC 5280 4.2.1.13): each point's fields by tag ([0] distributionPoint, [1] reasons, [2] cRLIssuer), or nil.
    static func distributionPoints(_ value: [UInt8]) -> [[UInt8: DER.Element]]? {
        guard let entries = sequence(value), !entries.isEmpty else { return nil }
        var result: [[UInt8: DER.Element]] = []
        for entry in entries {
            guard entry.tag == 0x30, let fields = elements(value, from: entry.contentStart, to: entry.contentEnd) else { return nil }
            var byTag: [UInt8: DER.Element] = [:]
            for field in fields {
                guard [0xA0, 0x81, 0xA2].contains(field.tag), byTag[field.tag] == nil else { return nil }
                byTag[field.tag] = field
            }
            guard byTag[0xA0] != nil || byTag[0xA2] != nil else { return nil }
            result.append(byTag)
        }
        return result
    }

}

extension CertificateFacts.GeneralName {
    /// True for an `http://` URI (BR 7.1.2.7.7, 7.1.2.11.2: plain HTTP, so that fetching
    /// revocation data or an issuer needs no trust decision of its own).
    var isHTTPURI: Bool {
        guard case .uri(let bytes) = self else { return false }
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        return text.hasPrefix("http://") && text.count > "http://".count && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

extension CertificateFacts {
    /// The RFC 5280 4.2.1.12 name of an extKeyUsage purpose (`serverAuth` …), or its dotted OID.
    static func purposeName(_ oid: String) -> String {
        switch oid {
        case OID.serverAuth: "serverAuth"
        case OID.clientAuth: "clientAuth"
        case "1.3.6.1.5.5.7.3.3": "codeSigning"
        case "1.3.6.1.5.5.7.3.4": "emailProtection"
        case "1.3.6.1.5.5.7.3.8": "timeStamping"
        case "1.3.6.1.5.5.7.3.9": "OCSPSigning"
        case OID.anyExtendedKeyUsage: "anyExtendedKeyUsage"
        default: oid
        }
    }
}

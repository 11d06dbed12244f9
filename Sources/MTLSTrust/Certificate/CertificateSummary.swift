internal import COpenSSL
internal import COpenSSLShims
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What pin lists show of a certificate — the SPKI digest, subject, expiry, CA flag — read by a
/// strict DER walk instead of OpenSSL's X.509 parse.
///
/// OpenSSL 3.0 decodes the public key of every certificate it parses (`d2i_X509` runs the provider
/// decoders, most of the cost of a parse), which a pin never needs. ``CertificateSummaryReader`` walks
/// the DER itself and accepts only a strict subset: DER-encoded X.509 v3 certificates whose every
/// field it checks the way `d2i_X509` does (INTEGER padding, OBJECT IDENTIFIER encoding, BIT STRING
/// unused bits, BOOLEAN length, canonical UTCTime/GeneralizedTime, names through OpenSSL's own
/// `d2i_X509_NAME`). Anything outside that subset gives nil, and the caller takes the full parse,
/// so results (and error messages) never differ from ``Certificate``'s.
public struct CertificateSummary: Sendable, Equatable {
    /// SHA-256 of the DER SubjectPublicKeyInfo (``Certificate/spkiSHA256``).
    public var spkiSHA256: [UInt8]
    /// The subject as an RFC 4514 string, byte for byte ``Certificate/subject``.
    public var subject: String
    /// The end of the validity period (``Certificate/notAfter``).
    public var notAfter: Date
    /// The cA flag of the basicConstraints extension (false without one): what
    /// `certificate.basicConstraints?.isCA ?? false` gives. The path length is not read, since
    /// OpenSSL reports it only for certificates whose other extensions are all valid.
    public var isCA: Bool
    /// False when the certificate certainly is not self-signed (``Certificate/isSelfSigned`` is
    /// false): its authority key identifier differs from its subject key identifier, or its issuer
    /// name differs from its subject name as OpenSSL compares names (`X509_NAME_cmp`). True means
    /// that only the full parse, which checks the signature, can tell.
    public var mayBeSelfSigned: Bool
}

/// Reads ``CertificateSummary`` values from certificate files without `d2i_X509`.
public enum CertificateSummaryReader {
    /// The summary of one DER certificate, or nil when the DER is outside the strict subset (the
    /// caller then parses it with ``Certificate/init(derBytes:)``, which also gives the errors).
    public static func summary(ofDER der: [UInt8]) -> CertificateSummary? {
        der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            return summary(base, count: buffer.count)
        }
    }

    /// The summaries of every certificate in a file's bytes, in file order: PEM whose blocks are all
    /// `CERTIFICATE` (text outside the blocks allowed), or one DER certificate. Nil for anything
    /// else — other PEM labels, PEM headers, blank lines inside a block, non-canonical base64,
    /// PKCS#12, keys — and whenever any certificate is outside the strict subset.
    public static func summaries(ofFile bytes: [UInt8]) -> [CertificateSummary]? {
        if PEM.looksLikePEM(bytes) {
            guard let blocks = strictPEMCertificates(bytes), !blocks.isEmpty else { return nil }
            var result: [CertificateSummary] = []
            result.reserveCapacity(blocks.count)
            for block in blocks {
                guard let one = summary(ofDER: block) else { return nil }
                result.append(one)
            }
            return result
        }
        guard DER.shape(of: bytes) == .certificate, let one = summary(ofDER: bytes) else { return nil }
        return [one]
    }

    /// The DER of every certificate in a file's bytes when the file is plain PEM (all blocks
    /// `CERTIFICATE`, as ``summaries(ofFile:)`` accepts) or looks like one DER certificate; nil
    /// otherwise. The DER is exactly what ``Certificate/fromPEM(_:)`` decodes from such a file, so
    /// `Certificate(derBytes:)` of each gives the same certificates, without the general PEM reader.
    public static func certificateDERs(ofFile bytes: [UInt8]) -> [[UInt8]]? {
        if PEM.looksLikePEM(bytes) {
            guard let blocks = strictPEMCertificates(bytes), !blocks.isEmpty else { return nil }
            return blocks
        }
        return DER.shape(of: bytes) == .certificate ? [bytes] : nil
    }

    // MARK: PEM, strictly

    /// The DER of every `CERTIFICATE` block, or nil when the text is not in the plain form OpenSSL
    /// writes (see ``summaries(ofFile:)``).
    static func strictPEMCertificates(_ bytes: [UInt8]) -> [[UInt8]]? {
        let begin = Array("-----BEGIN CERTIFICATE-----".utf8)
        let end = Array("-----END CERTIFICATE-----".utf8)
        func isLine(_ line: UnsafeBufferPointer<UInt8>, _ marker: [UInt8]) -> Bool {
            line.count == marker.count && marker.withUnsafeBufferPointer { memcmp($0.baseAddress!, line.baseAddress!, line.count) == 0 }
        }
        // Pointers and memchr: the scan touches every character of every file `mtls pin` reads.
        return bytes.withUnsafeBufferPointer { buffer -> [[UInt8]]? in
            guard let p = buffer.baseAddress else { return nil }
            let n = buffer.count
            var blocks: [[UInt8]] = []
            var body: [UInt8] = []
            var inside = false
            var lineStart = 0
            while lineStart < n {
                let newline = memchr(p + lineStart, 0x0A, n - lineStart)
                let lineEnd = newline.map { UnsafeRawPointer($0) - UnsafeRawPointer(p) } ?? n
                var contentEnd = lineEnd
                if contentEnd > lineStart && p[contentEnd - 1] == 0x0D { contentEnd -= 1 }
                let line = UnsafeBufferPointer(start: p + lineStart, count: contentEnd - lineStart)
                if inside {
                    if isLine(line, end) {
                        guard let der = decodeBase64(body) else { return nil }
                        blocks.append(der)
                        body.removeAll(keepingCapacity: true)
                        inside = false
                    } else {
                        // Every character is checked once, by decodeBase64 at the END line.
                        guard !line.isEmpty else { return nil }
                        body.append(contentsOf: line)
                    }
                } else if isLine(line, begin) {
                    inside = true
                } else if containsDashes(line) {
                    return nil  // another label, or a marker the plain form does not have
                }
                lineStart = lineEnd + 1
            }
            return inside ? nil : blocks
        }
    }

    private static func containsDashes(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        var run = 0
        for byte in line {
            run = byte == 0x2D ? run + 1 : 0
            if run == 5 { return true }
        }
        return false
    }

    private static let base64Value: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// Canonical base64 only: a multiple of four characters, `=` only as the final padding, and
    /// zero padding bits.
    static func decodeBase64(_ text: [UInt8]) -> [UInt8]? {
        let count = text.count
        guard count > 0, count % 4 == 0 else { return nil }
        var padding = 0
        if text[count - 1] == 0x3D { padding += 1 }
        if text[count - 2] == 0x3D { padding += 1 }
        // Pointers, not subscripts: a certificate is a thousand characters, and a checked subscript
        // and the table's lazy-initialisation check per character were most of its cost.
        var valid = true
        let out = base64Value.withUnsafeBufferPointer { values in
            text.withUnsafeBufferPointer { input in
                [UInt8](unsafeUninitializedCapacity: count / 4 * 3) { output, written in
                    let table = values.baseAddress!
                    let source = input.baseAddress!
                    let target = output.baseAddress!
                    var index = 0
                    var end = 0
                    while index < count - 4 {
                        let a = table[Int(source[index])]
                        let b = table[Int(source[index + 1])]
                        let c = table[Int(source[index + 2])]
                        let d = table[Int(source[index + 3])]
                        guard a | b | c | d < 64 else {
                            valid = false
                            break
                        }
                        let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        target[end] = UInt8(word >> 16)
                        target[end + 1] = UInt8((word >> 8) & 0xFF)
                        target[end + 2] = UInt8(word & 0xFF)
                        end += 3
                        index += 4
                    }
                    // The last quantum, where `=` may stand for the last one or two characters.
                    if valid {
                        let a = table[Int(source[index])]
                        let b = table[Int(source[index + 1])]
                        let c = padding == 2 ? 0 : table[Int(source[index + 2])]
                        let d = padding >= 1 ? 0 : table[Int(source[index + 3])]
                        let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        if a | b | c | d >= 64 || (padding == 2 && word & 0xFFFF != 0) || (padding == 1 && word & 0xFF != 0) {
                            valid = false
                        } else {
                            target[end] = UInt8(word >> 16)
                            if padding < 2 { target[end + 1] = UInt8((word >> 8) & 0xFF) }
                            if padding == 0 { target[end + 2] = UInt8(word & 0xFF) }
                            end += 3 - padding
                        }
                    }
                    written = valid ? end : 0
                }
            }
        }
        return valid ? out : nil
    }

    /// True when `i2d_X509` of the certificate `d2i_X509` parses from `der` gives `der` back:
    /// OpenSSL keeps the TBSCertificate's encoding and re-encodes the rest, so the outer SEQUENCE
    /// (definite, minimal length, nothing after it), the signature AlgorithmIdentifier (an OID with
    /// no, NULL, OID or SEQUENCE parameters) and the signature BIT STRING (no unused bits) must be
    /// in their one DER form. Checked against `i2d_X509` by `mtls-bench fuzz` and the
    /// `trust-fast-path` fuzz target. Only meaningful for bytes `d2i_X509` accepted whole.
    static func reencodesVerbatim(_ der: [UInt8]) -> Bool {
        der.withUnsafeBufferPointer { buffer in
            guard let p = buffer.baseAddress else { return false }
            guard let envelope = CertificateStructure.envelope(p, count: buffer.count) else { return false }
            return StrictDER.validAlgorithm(p, envelope.signatureAlgorithm) && StrictDER.validBitString(p, envelope.signature)
        }
    }

    private static func summary(_ p: UnsafePointer<UInt8>, count: Int) -> CertificateSummary? {
        // The strict walk of the whole certificate: the same one that lets `Certificate` defer
        // `d2i_X509`.
        guard let layout = CertificateLayout(p, count: count, readsLeafProfile: false) else { return nil }
        var constraints: BasicConstraints? = nil
        // Key identifiers: (start, end) of the one subjectKeyIdentifier and of the keyIdentifier of
        // the one authorityKeyIdentifier, in the plain forms only (nil when absent, repeated or other).
        var subjectKeyID: (Int, Int)? = nil
        var authorityKeyID: (Int, Int)? = nil
        var subjectKeyIDs = 0
        var authorityKeyIDs = 0
        for ext in layout.extensions {
            let (oid, value) = (ext.oid, ext.value)
            guard oid.length == 3 && p[oid.start] == 0x55 && p[oid.start + 1] == 0x1D else { continue }
            switch p[oid.start + 2] {
            case 0x13:  // basicConstraints
                guard constraints == nil, let parsed = StrictDER.basicConstraints(p, value) else { return nil }  // repeated: OpenSSL decides
                constraints = parsed
            case 0x0E:  // subjectKeyIdentifier ::= OCTET STRING
                subjectKeyIDs += 1
                if let inner = StrictDER.element(p, value.start, value.end), inner.tag == 0x04, inner.end == value.end { subjectKeyID = (inner.start, inner.end) }
            case 0x23:  // authorityKeyIdentifier ::= SEQUENCE { [0] keyIdentifier, ... }
                authorityKeyIDs += 1
                if let sequence = StrictDER.element(p, value.start, value.end), sequence.tag == 0x30, sequence.end == value.end,
                    let keyID = StrictDER.element(p, sequence.start, sequence.end), keyID.tag == 0x80, keyID.end == sequence.end
                {
                    authorityKeyID = (keyID.start, keyID.end)
                }
            default: break
            }
        }
        // Self-signed needs the AKID to match the SKID (X509_check_akid) and the names to match.
        var mayBeSelfSigned = true
        if subjectKeyIDs == 1, authorityKeyIDs == 1, let s = subjectKeyID, let a = authorityKeyID,
            s.1 - s.0 != a.1 - a.0 || memcmp(p + s.0, p + a.0, s.1 - s.0) != 0
        {
            mayBeSelfSigned = false
        }
        // Names: plain ones are checked and printed here; any other goes through OpenSSL's own
        // decoder and printer. When the key identifiers cannot tell, OpenSSL compares the names.
        let plainSubject = layout.subjectEntries
        let plainIssuer = plainSubject == nil ? nil : StrictDER.plainName(p, layout.issuerName)
        let subjectText: String
        if let plainSubject, plainIssuer != nil, !mayBeSelfSigned {
            subjectText = StrictDER.rfc4514(p, plainSubject)
        } else {
            guard let subjectName = StrictDER.name(p, layout.subjectName) else { return nil }
            defer { X509_NAME_free(subjectName) }
            guard let issuerName = StrictDER.name(p, layout.issuerName) else { return nil }
            defer { X509_NAME_free(issuerName) }
            if mayBeSelfSigned { mayBeSelfSigned = X509_NAME_cmp(subjectName, issuerName) == 0 }
            subjectText = Certificate.rfc4514(subjectName)
        }
        let spki = layout.subjectPublicKeyInfo
        return CertificateSummary(
            spkiSHA256: sha256(p + spki.lowerBound, spki.count), subject: subjectText,
            notAfter: Date(timeIntervalSince1970: TimeInterval(layout.notAfter)), isCA: constraints?.isCA ?? false, mayBeSelfSigned: mayBeSelfSigned)
    }

    private struct FetchedDigest: @unchecked Sendable {
        // @unchecked Sendable: an immutable, reference-counted EVP_MD that OpenSSL allows to share.
        let md: OpaquePointer?
    }
    private static let sha256Digest = FetchedDigest(md: EVP_MD_fetch(nil, "SHA256", nil))

    private static func sha256(_ p: UnsafePointer<UInt8>, _ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { buffer, initialized in
            var length: UInt32 = 0
            let ok = EVP_Digest(p, count, buffer.baseAddress, &length, sha256Digest.md ?? EVP_sha256(), nil)
            initialized = ok == 1 ? Int(length) : 0
        }
    }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An X.509 certificate: an immutable value backed by one OpenSSL `X509` object — decoded from DER
/// only when first needed, for DER in the common strict form (see `CertificateLayout`).
///
/// Create one from DER (``init(derBytes:)``), from PEM (``fromPEM(_:)``), or from any file's bytes with
/// the format detected from content (``CertificateLoader``).
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    let reference: X509Reference
    /// The DER encoding, as `openssl x509 -outform DER` writes it.
    public let derBytes: [UInt8]
    /// The purposes the certificate was given as trusted or rejected for, when it was read from
    /// OpenSSL's `TRUSTED CERTIFICATE` form; nil otherwise. As an anchor it is then trusted only
    /// for what these allow (see ``CertificateTrustSettings``).
    public internal(set) var trustSettings: CertificateTrustSettings?

    /// Parses one DER certificate.
    ///
    /// - Throws: ``MTLSTrustError`` `.emptyInput` for no bytes; `.wrongObjectKind` when the DER is
    ///   another kind of object (a key, a PKCS#12 file, a CRL); `.malformedInput` when the bytes are
    ///   not a certificate, or carry trailing data.
    public init(derBytes: [UInt8]) throws(MTLSTrustError) {
        if derBytes.isEmpty { throw MTLSTrustError(.emptyInput, "the input is empty") }
        // DER in the strict subset is decoded only when its `X509` is first needed (X509Reference).
        if let layout = CertificateLayout(derBytes) {
            self.init(reference: X509Reference(deferring: derBytes, layout: layout), derBytes: derBytes)
            return
        }
        OpenSSLErrorQueue.clear()
        var parsed: OpaquePointer?
        var consumed = 0
        derBytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var cursor: UnsafePointer<UInt8>? = base
            parsed = d2i_X509(nil, &cursor, buffer.count)
            if let cursor { consumed = cursor - base }
        }
        guard let parsed else {
            let errors = OpenSSLErrorQueue.drain()
            if let kind = Certificate.otherObjectKind(derBytes) {
                throw MTLSTrustError(.wrongObjectKind, "it holds \(kind), not a certificate", openSSLDetail: errors.map(\.raw))
            }
            throw MTLSTrustError(
                .malformedInput, "the data is not a DER certificate: \(OpenSSLErrorQueue.describe(errors))",
                openSSLDetail: errors.map(\.raw))
        }
        if consumed != derBytes.count {
            X509_free(parsed)
            throw MTLSTrustError(.malformedInput, "the DER certificate is followed by \(derBytes.count - consumed) unexpected bytes")
        }
        // `d2i_X509` takes any bytes as a UTCTime or GeneralizedTime; a time that does not read as
        // one would make notBefore/notAfter 1970 (and a validity check meaningless).
        if let problem = Certificate.unreadableValidityTime(parsed) {
            X509_free(parsed)
            throw MTLSTrustError(.malformedInput, problem)
        }
        // `i2d_X509` of a certificate just parsed writes the TBSCertificate back verbatim (OpenSSL
        // keeps its encoding) and re-encodes only the outer SEQUENCE, the signature algorithm and
        // the signature. When those are already in their one DER form, the re-encoding is the input
        // itself: keep it and save the `i2d_X509` (a fifth of a leaf's verification).
        if CertificateSummaryReader.reencodesVerbatim(derBytes) {
            self.init(taking: parsed, derBytes: derBytes)
            return
        }
        self.init(taking: parsed)
    }

    /// Why notBefore or notAfter of a parsed certificate is not a time, or nil when both are.
    static func unreadableValidityTime(_ x509: OpaquePointer) -> String? {
        for (field, time) in [("notBefore", X509_get0_notBefore(x509)), ("notAfter", X509_get0_notAfter(x509))] {
            var parts = tm()
            guard let time, ASN1_TIME_to_tm(time, &parts) != 1 else { continue }
            OpenSSLErrorQueue.clear()
            let kind = ASN1_STRING_type(time) == V_ASN1_GENERALIZEDTIME ? "GeneralizedTime" : "UTCTime"
            let text = DisplayText.quoted(String(decoding: asn1StringBytes(time), as: UTF8.self))
            return "its \(field) \(kind) \(text) is not a valid time, so its validity period cannot be read; "
                + "the certificate has to be reissued with RFC 5280 times (UTCTime YYMMDDHHMMSSZ, GeneralizedTime YYYYMMDDHHMMSSZ)"
        }
        return nil
    }

    /// The kind of a well-formed DER object that is not a certificate, for `.wrongObjectKind` errors.
    private static func otherObjectKind(_ der: [UInt8]) -> String? {
        switch DER.shape(of: der) {
        case .privateKey: "a private key"
        case .encryptedPrivateKey: "an encrypted private key"
        case .publicKey: "a public key"
        case .pkcs12: "a PKCS#12 file"
        case .crl: "a certificate revocation list"
        case .pkcs7: "a PKCS#7 certificate bundle (read it as a file of certificates)"
        case .certificate, .unknown: nil
        }
    }

    private init(reference: X509Reference, derBytes: [UInt8]) {
        self.reference = reference
        self.derBytes = derBytes
    }

    /// Wraps an `X509*` whose reference the caller hands over.
    init(taking pointer: OpaquePointer) {
        self.reference = X509Reference(taking: pointer)
        self.derBytes = Certificate.encodeDER(pointer)
    }

    /// Wraps an `X509*` whose reference the caller hands over, with its DER already known.
    init(taking pointer: OpaquePointer, derBytes: [UInt8]) {
        self.reference = X509Reference(taking: pointer)
        self.derBytes = derBytes
    }

    /// Wraps a borrowed `X509*`, taking a reference of its own.
    init(borrowing pointer: OpaquePointer) {
        self.reference = X509Reference(borrowing: pointer)
        self.derBytes = Certificate.encodeDER(pointer)
    }

    private static func encodeDER(_ pointer: OpaquePointer) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(pointer, &out)
        guard length > 0, let out else { return [] }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// Parses every `CERTIFICATE` block of a PEM text (other blocks and text between them are ignored).
    ///
    /// - Throws: `.emptyInput` when there is nothing but white space; `.malformedInput` for damaged
    ///   blocks or text without any PEM block; `.wrongObjectKind` when there are PEM blocks but none
    ///   is a certificate.
    public static func fromPEM(_ bytes: [UInt8]) throws(MTLSTrustError) -> [Certificate] {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            throw MTLSTrustError(.emptyInput, "the input is empty")
        }
        let blocks = try PEM.parse(bytes)
        var certificates: [Certificate] = []
        for (index, block) in blocks.enumerated() where ["CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE", "PKCS7", "CMS"].contains(block.label) {
            do throws(MTLSTrustError) {
                if block.label == "PKCS7" || block.label == "CMS" {
                    // A `.p7b` chain in PEM (`openssl crl2pkcs7`, Windows' Base64 export).
                    certificates += try Certificate.fromPKCS7(derBytes: block.derBytes)
                } else if block.label == "TRUSTED CERTIFICATE" {
                    certificates.append(try Certificate(trustedCertificateDER: block.derBytes))
                } else {
                    certificates.append(try Certificate(derBytes: block.derBytes))
                }
            } catch {
                throw MTLSTrustError(
                    .malformedInput, "PEM block \(index + 1) (\(block.label)) does not hold a valid certificate: \(error.message)", openSSLDetail: error.openSSLDetail)
            }
        }
        if certificates.isEmpty {
            if blocks.isEmpty { throw MTLSTrustError(.malformedInput, "no PEM block was found") }
            let labels = Set(blocks.map(\.label)).sorted().joined(separator: ", ")
            throw MTLSTrustError(.wrongObjectKind, "it holds \(labels), not a certificate")
        }
        return certificates
    }

    /// The PEM encoding, byte-identical to `openssl x509 -outform PEM`.
    public var pemString: String { PEM.encode(derBytes, label: "CERTIFICATE") }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derBytes == rhs.derBytes }
    /// Hashes the length and the last 64 bytes, which are the signature: as good as random, and
    /// equal certificates have equal ones. Hashing every byte of the DER was 3 % of a verification,
    /// whose chain building looks certificates up in sets.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derBytes.count)
        derBytes.withUnsafeBytes { raw in
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw[max(0, raw.count - 64)...]))
        }
    }

    public var description: String { subject }

    // MARK: Fingerprints

    /// SHA-256 of the DER certificate.
    public var sha256Fingerprint: [UInt8] { Digest.sha256(derBytes) }
    /// SHA-1 of the DER certificate (shown by Windows and Keychain as the "thumbprint").
    public var sha1Fingerprint: [UInt8] { Digest.sha1(derBytes) }
    /// SHA-256 of the DER SubjectPublicKeyInfo: the value of `sha256/…` pins.
    public var spkiSHA256: [UInt8] { Digest.sha256(subjectPublicKeyInfoDER) }
    /// The SPKI pin in the `sha256/BASE64` form used by OkHttp, TrustKit, Android and curl.
    public var spkiPin: String { "sha256/" + Data(spkiSHA256).base64EncodedString() }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The kind of a key, with its size or curve.
public enum KeyAlgorithm: Sendable, Hashable, CustomStringConvertible {
    case rsa(bits: Int)
    /// An RSA key restricted to RSASSA-PSS signatures (SubjectPublicKeyInfo `id-RSASSA-PSS`): it
    /// cannot make PKCS#1 v1.5 signatures nor decrypt, so TLS 1.2 peers that only offer
    /// `rsa_pkcs1_*` cannot use it. The size rules for RSA keys apply to it.
    case rsaPSS(bits: Int)
    case ec(curve: String, bits: Int)
    case ed25519
    case ed448
    case dsa(bits: Int)
    case other(String, bits: Int)

    public var description: String {
        switch self {
        case .rsa(let bits): "RSA \(bits)"
        case .rsaPSS(let bits): "RSA-PSS \(bits)"
        case .ec(let curve, _): "ECDSA \(KeyAlgorithm.curveDisplayName(curve))"
        case .ed25519: "Ed25519"
        case .ed448: "Ed448"
        case .dsa(let bits): "DSA \(bits)"
        case .other(let name, let bits): bits > 0 ? "\(name) \(bits)" : name
        }
    }

    /// The key size in bits (the curve's size for EC; 256 for Ed25519).
    public var bits: Int {
        switch self {
        case .rsa(let bits), .rsaPSS(let bits), .ec(_, let bits), .dsa(let bits), .other(_, let bits): bits
        case .ed25519: 256
        case .ed448: 456
        }
    }

    /// A short type name: `RSA`, `EC`, `Ed25519` …
    public var typeName: String {
        switch self {
        case .rsa: "RSA"
        case .rsaPSS: "RSA-PSS"
        case .ec: "EC"
        case .ed25519: "Ed25519"
        case .ed448: "Ed448"
        case .dsa: "DSA"
        case .other(let name, _): name
        }
    }

    /// The curve of an EC key whose explicit parameters are not a curve OpenSSL knows by name.
    public static let explicitCurve = "explicit parameters"

    /// The size of an RSA key, with or without the RSASSA-PSS restriction; nil for other keys.
    package var rsaBits: Int? {
        switch self {
        case .rsa(let bits), .rsaPSS(let bits): bits
        default: nil
        }
    }

    static func curveDisplayName(_ curve: String) -> String {
        switch curve {
        case "prime256v1", "P-256": "P-256"
        case "secp384r1", "P-384": "P-384"
        case "secp521r1", "P-521": "P-521"
        default: curve
        }
    }

    static func of(_ key: OpaquePointer) -> KeyAlgorithm {
        let bits = Int(mtls_EVP_PKEY_get_bits(key))
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return .rsa(bits: bits)
        case EVP_PKEY_RSA_PSS: return .rsaPSS(bits: bits)
        case EVP_PKEY_EC:
            var buffer = [CChar](repeating: 0, count: 80)
            var length = 0
            if EVP_PKEY_get_utf8_string_param(key, "group", &buffer, buffer.count, &length) == 1 {
                return .ec(curve: KeyAlgorithm.curveDisplayName(String(cBuffer: buffer)), bits: bits)
            }
            // OpenSSL names explicit parameters when they equal a curve it knows; others have no
            // name, and saying so is more use than "unknown" to someone choosing a new key.
            length = 0
            if EVP_PKEY_get_utf8_string_param(key, "encoding", &buffer, buffer.count, &length) == 1, String(cBuffer: buffer) == "explicit" {
                return .ec(curve: KeyAlgorithm.explicitCurve, bits: bits)
            }
            return .ec(curve: "unknown curve", bits: bits)
        case EVP_PKEY_ED25519: return .ed25519
        case EVP_PKEY_ED448: return .ed448
        case EVP_PKEY_DSA: return .dsa(bits: bits)
        default:
            if let name = EVP_PKEY_get0_type_name(key) { return .other(String(cString: name), bits: bits) }
            return .other("unknown", bits: bits)
        }
    }
}

/// A public key: the SubjectPublicKeyInfo of a certificate, a CSR or a PEM public key file.
public struct PublicKey: Sendable, Hashable {
    let reference: EVPKeyReference?
    /// The DER SubjectPublicKeyInfo.
    public let spkiDER: [UInt8]

    init(borrowing key: OpaquePointer) {
        self.reference = EVPKeyReference(borrowing: key)
        self.spkiDER = PublicKey.encodeSPKI(key)
    }

    /// Wraps a borrowed key whose DER SubjectPublicKeyInfo the caller already has (a certificate's
    /// own bytes), so that the key is not re-encoded.
    init(borrowing key: OpaquePointer, spkiDER: [UInt8]) {
        self.reference = EVPKeyReference(borrowing: key)
        self.spkiDER = spkiDER
    }

    init(taking key: OpaquePointer) {
        self.reference = EVPKeyReference(taking: key)
        self.spkiDER = PublicKey.encodeSPKI(key)
    }

    init(unparsedSPKI: [UInt8]) {
        self.reference = nil
        self.spkiDER = unparsedSPKI
    }

    /// Parses a DER SubjectPublicKeyInfo.
    public init(spkiDER: [UInt8]) throws(MTLSTrustError) {
        OpenSSLErrorQueue.clear()
        var key: OpaquePointer?
        spkiDER.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            key = d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else {
            let errors = OpenSSLErrorQueue.drain()
            throw MTLSTrustError(.malformedInput, "the data is not a DER public key: \(OpenSSLErrorQueue.describe(errors))", openSSLDetail: errors.map(\.raw))
        }
        self.init(taking: key)
    }

    /// Parses a PKCS#1 `RSAPublicKey` (PEM `RSA PUBLIC KEY`, as `openssl rsa -RSAPublicKey_out` and
    /// `ssh-keygen -e -m PEM` write it), by wrapping it in the SubjectPublicKeyInfo that pins and
    /// certificates carry (rsaEncryption, NULL parameters).
    public init(pkcs1RSAPublicKeyDER der: [UInt8]) throws(MTLSTrustError) {
        guard let element = DER.element(in: der, at: 0), element.tag == 0x30, element.end == der.count else {
            throw MTLSTrustError(.malformedInput, "the data is not a DER RSAPublicKey (PKCS#1)")
        }
        func encoded(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
            var length: [UInt8] = []
            var count = content.count
            if count < 0x80 {
                length = [UInt8(count)]
            } else {
                while count > 0 {
                    length.insert(UInt8(count & 0xFF), at: 0)
                    count >>= 8
                }
                length.insert(0x80 | UInt8(length.count), at: 0)
            }
            return [tag] + length + content
        }
        // rsaEncryption 1.2.840.113549.1.1.1, NULL
        let algorithm = encoded(0x30, [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00])
        let spki = encoded(0x30, algorithm + encoded(0x03, [0x00] + der))
        do throws(MTLSTrustError) { try self.init(spkiDER: spki) } catch {
            throw MTLSTrustError(.malformedInput, "the data is not a DER RSAPublicKey (PKCS#1): \(error.message)", openSSLDetail: error.openSSLDetail)
        }
    }

    static func encodeSPKI(_ key: OpaquePointer) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PUBKEY(key, &out)
        guard length > 0, let out else { return [] }
        defer { mtls_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.spkiDER == rhs.spkiDER }
    public func hash(into hasher: inout Hasher) { hasher.combine(spkiDER) }

    /// The algorithm, size and curve.
    public var algorithm: KeyAlgorithm {
        guard let reference else { return .other("unparsed", bits: 0) }
        return KeyAlgorithm.of(reference.pointer)
    }

    /// SHA-256 of the SPKI.
    public var spkiSHA256: [UInt8] { Digest.sha256(spkiDER) }
    /// `sha256/BASE64` pin of the SPKI.
    public var spkiPin: String { "sha256/" + Data(spkiSHA256).base64EncodedString() }

    /// The PEM `PUBLIC KEY` encoding.
    public var pemString: String { PEM.encode(spkiDER, label: "PUBLIC KEY") }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One pin: the SHA-256 of a certificate's SubjectPublicKeyInfo (the common `sha256/…` pin) or of
/// the whole DER certificate; or, read from OkHttp code, the SHA-1 of the SubjectPublicKeyInfo.
public struct Pin: Sendable, Hashable, CustomStringConvertible {
    /// What the digest covers.
    public enum Kind: String, Sendable, Hashable {
        /// SHA-256 of the DER SubjectPublicKeyInfo (TrustKit, OkHttp, Android, `curl --pinnedpubkey`).
        case publicKey = "spki"
        /// SHA-256 of the whole DER certificate (AFNetworking/Alamofire certificate pinning).
        case certificate = "cert"
        /// SHA-1 of the DER SubjectPublicKeyInfo: OkHttp's `sha1/` pins, which OkHttp still
        /// enforces beside `sha256/` ones. Read from pin files so that a check sees what OkHttp
        /// sees; `mtls pin` never writes them.
        case publicKeySHA1 = "spki-sha1"
    }

    /// What the digest covers.
    public var kind: Kind
    /// The digest: 32 bytes (SHA-256), 20 for ``Kind/publicKeySHA1``.
    public var digest: [UInt8]

    /// Creates a pin from a digest.
    public init(kind: Kind, digest: [UInt8]) {
        self.kind = kind
        self.digest = digest
    }

    /// The SPKI pin of a certificate.
    public static func publicKey(of certificate: Certificate) -> Pin { Pin(kind: .publicKey, digest: certificate.spkiSHA256) }
    /// The SPKI pin of a public key (a backup key not yet in a certificate).
    public static func publicKey(of key: PublicKey) -> Pin { Pin(kind: .publicKey, digest: key.spkiSHA256) }
    /// The whole-certificate pin.
    public static func certificate(_ certificate: Certificate) -> Pin { Pin(kind: .certificate, digest: certificate.sha256Fingerprint) }

    /// The base64 digest.
    public var base64: String { Data(digest).base64EncodedString() }

    /// `sha256/BASE64` for SPKI pins, `cert-sha256/BASE64` for certificate pins, `sha1/BASE64` for OkHttp's SHA-1 ones.
    public var description: String {
        switch kind {
        case .publicKey: "sha256/\(base64)"
        case .certificate: "cert-sha256/\(base64)"
        case .publicKeySHA1: "sha1/\(base64)"
        }
    }

    /// Parses `sha256/BASE64` (SPKI), `sha256//BASE64` (curl), `pin-sha256="BASE64"` (HPKP),
    /// `cert-sha256/BASE64` or `cert-sha256:HEX` (whole certificate), or a bare base64 SPKI digest.
    public init(parsing text: String) throws(MTLSTrustError) {
        guard let pin = PinText.parse(text) else {
            throw MTLSTrustError(
                .invalidArgument,
                "\(DisplayText.quoted(text)) is not a SHA-256 pin: expected sha256/ followed by 44 base64 characters (or cert-sha256/… for a whole-certificate pin)")
        }
        self = pin
    }

    /// True when `certificate` has this pin.
    public func matches(_ certificate: Certificate) -> Bool {
        switch kind {
        case .publicKey: certificate.spkiSHA256 == digest
        case .certificate: certificate.sha256Fingerprint == digest
        case .publicKeySHA1: Digest.sha1(certificate.subjectPublicKeyInfoDER) == digest
        }
    }
}

/// A set of pins with an optional expiry, in the manner of TrustKit and Android's `<pin-set>`.
public struct PinSet: Sendable, Equatable {
    /// How a chain matches.
    public enum Scope: String, Sendable {
        /// Any certificate of the validated chain (TrustKit, OkHttp, Android).
        case anyCertificateInChain = "chain"
        /// Only the leaf (curl `--pinnedpubkey`).
        case leafOnly = "leaf"
    }

    /// The pins; a chain matches when one of them does.
    public var pins: [Pin]
    /// After this date the pin set is no longer enforced (TrustKit `kTSKExpirationDate`).
    public var expiration: Date?
    /// Which certificates of the chain may match.
    public var scope: Scope

    /// Creates a pin set.
    public init(pins: [Pin], expiration: Date? = nil, scope: Scope = .anyCertificateInChain) {
        self.pins = pins
        self.expiration = expiration
        self.scope = scope
    }

    /// The outcome of checking a chain.
    public struct Match: Sendable {
        /// The pins found in the chain, with the depth of the certificate that has each.
        public var matched: [(pin: Pin, depth: Int)]
        /// The pins the chain presents (one SPKI pin per certificate, in chain order).
        public var presented: [Pin]
        /// True when the set is expired at the evaluation time and so not enforced.
        public var expired: Bool
        /// The whole-certificate pins of the chain, in chain order.
        public var presentedCertificatePins: [Pin] = []
        /// The pins of the set, for reports.
        public var expected: [Pin] = []
        /// True when at least one pin matched, or the set has expired.
        public var isSatisfied: Bool { expired || !matched.isEmpty }

        /// The presented pins of the kinds the set holds: SPKI pins, certificate pins, or both.
        public var presentedComparable: [Pin] {
            let kinds = Set(expected.map(\.kind))
            var result: [Pin] = []
            if kinds.isEmpty || kinds.contains(.publicKey) { result += presented }
            if kinds.contains(.certificate) { result += presentedCertificatePins }
            return result
        }

        /// One line for a mismatch: `expected one of …; presented …` (empty when satisfied).
        public var mismatchDescription: String {
            guard !isSatisfied else { return "" }
            return
                "no pin matched: expected one of \(expected.map(\.description).joined(separator: ", ")); presented \(presentedComparable.map(\.description).joined(separator: ", "))"
        }
    }

    /// Checks a chain (leaf first).
    public func check(_ chain: [Certificate], at time: Date = Date()) -> Match {
        let candidates = scope == .leafOnly ? Array(chain.prefix(1)) : chain
        var matched: [(Pin, Int)] = []
        for (depth, certificate) in candidates.enumerated() {
            for pin in pins where pin.matches(certificate) { matched.append((pin, depth)) }
        }
        let presented = chain.map { Pin.publicKey(of: $0) }
        let expired = expiration.map { time > $0 } ?? false
        return Match(
            matched: matched, presented: presented, expired: expired,
            presentedCertificatePins: chain.map { Pin.certificate($0) }, expected: pins)
    }

    /// Reads a pin file of any format `mtls pin` writes (``PinDocument/init(bytes:source:)``) as one
    /// set: its pins and expiry. A file that pins several hosts differently is refused: read it as a
    /// ``PinDocument`` to keep its per-host requirements.
    public static func parse(_ bytes: [UInt8], source: String) throws(MTLSTrustError) -> PinSet {
        let document = try PinDocument(bytes: bytes, source: source)
        guard document.domains.count == 1, let domain = document.domains.first else {
            throw MTLSTrustError(
                .malformedInput, "\(source) pins \(document.domains.count) hosts (\(document.domains.map(\.display).joined(separator: "; "))): read it as a PinDocument",
                source: source)
        }
        let scope: Scope = domain.requirements.allSatisfy { $0.scope == .leaf } ? .leafOnly : .anyCertificateInChain
        return PinSet(pins: domain.pins, expiration: domain.expirationDay.map(PinDates.endOfDay), scope: scope)
    }

    public static func == (lhs: PinSet, rhs: PinSet) -> Bool {
        lhs.pins == rhs.pins && lhs.expiration == rhs.expiration && lhs.scope == rhs.scope
    }
}

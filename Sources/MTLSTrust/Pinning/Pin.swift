import Foundation

/// One pin: the SHA-256 of a certificate's SubjectPublicKeyInfo (the common `sha256/…` pin) or of
/// the whole DER certificate.
public struct Pin: Sendable, Hashable, CustomStringConvertible {
    /// What the digest covers.
    public enum Kind: String, Sendable, Hashable {
        /// SHA-256 of the DER SubjectPublicKeyInfo (TrustKit, OkHttp, Android, `curl --pinnedpubkey`).
        case publicKey = "spki"
        /// SHA-256 of the whole DER certificate (AFNetworking/Alamofire certificate pinning).
        case certificate = "cert"
    }

    /// What the digest covers.
    public var kind: Kind
    /// The 32-byte digest.
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

    /// `sha256/BASE64` for SPKI pins, `cert-sha256/BASE64` for certificate pins.
    public var description: String { kind == .publicKey ? "sha256/\(base64)" : "cert-sha256/\(base64)" }

    /// Parses `sha256/BASE64` (SPKI), `sha256//BASE64` (curl), `pin-sha256="BASE64"` (HPKP),
    /// `cert-sha256/BASE64` or `cert-sha256:HEX` (whole certificate), or a bare base64 SPKI digest.
    public init(parsing text: String) throws(MTLSTrustError) {
        var spec = text.trimmingCharacters(in: .whitespaces)
        var kind = Kind.publicKey
        if spec.hasPrefix("pin-sha256=") {
            spec = String(spec.dropFirst("pin-sha256=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"';"))
        } else if spec.lowercased().hasPrefix("cert-sha256") {
            kind = .certificate
            var rest = Substring(spec.dropFirst("cert-sha256".count))
            if rest.hasPrefix(":") || rest.hasPrefix("/") { rest = rest.dropFirst() }
            spec = String(rest)
        } else if spec.lowercased().hasPrefix("sha256") {
            // `sha256/B64` (OkHttp) or `sha256//B64` (curl); base64 itself may begin with '/'.
            var rest = Substring(spec.dropFirst("sha256".count))
            if rest.hasPrefix(":") {
                rest = rest.dropFirst()
            } else if rest.hasPrefix("//") && rest.count == 46 {
                rest = rest.dropFirst(2)
            } else if rest.hasPrefix("/") {
                rest = rest.dropFirst()
            }
            spec = String(rest)
        }
        let hex = spec.replacingOccurrences(of: ":", with: "")
        if hex.count == 64, hex.allSatisfy(\.isHexDigit) {
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
                index = next
            }
            self.init(kind: kind, digest: bytes)
            return
        }
        guard let data = Data(base64Encoded: spec), data.count == 32 else {
            throw MTLSTrustError(
                .invalidArgument, "'\(text)' is not a SHA-256 pin: expected sha256/ followed by 44 base64 characters (or cert-sha256/… for a whole-certificate pin)")
        }
        self.init(kind: kind, digest: [UInt8](data))
    }

    /// True when `certificate` has this pin.
    public func matches(_ certificate: Certificate) -> Bool {
        switch kind {
        case .publicKey: certificate.spkiSHA256 == digest
        case .certificate: certificate.sha256Fingerprint == digest
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

    /// Reads a pin file: one pin a line (`#` comments, blank lines ignored; an `expires YYYY-MM-DD`
    /// line sets the expiry), or a JSON object with a `pins` array (and optional `expires`).
    public static func parse(_ bytes: [UInt8], source: String) throws(MTLSTrustError) -> PinSet {
        let text = String(decoding: bytes, as: UTF8.self)
        var pins: [Pin] = []
        var expiration: Date? = nil
        if text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
                throw MTLSTrustError(.malformedInput, "\(source): not valid JSON", source: source)
            }
            let entries = (object["pins"] as? [Any]) ?? []
            for entry in entries {
                if let string = entry as? String {
                    pins.append(try Pin(parsing: string))
                } else if let dict = entry as? [String: Any], let string = (dict["pin"] ?? dict["spki"]) as? String {
                    pins.append(try Pin(parsing: string))
                }
            }
            if let expires = object["expires"] as? String { expiration = parseDate(expires) }
        } else {
            for rawLine in text.split(whereSeparator: \.isNewline) {
                let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
                if line.isEmpty { continue }
                if line.lowercased().hasPrefix("expires") {
                    expiration = parseDate(String(line.dropFirst(7)).trimmingCharacters(in: CharacterSet(charactersIn: " :=")))
                    continue
                }
                do throws(MTLSTrustError) {
                    pins.append(try Pin(parsing: line))
                } catch {
                    throw MTLSTrustError(.malformedInput, "\(source): \(error.message)", source: source)
                }
            }
        }
        if pins.isEmpty { throw MTLSTrustError(.malformedInput, "\(source) holds no pin", source: source) }
        return PinSet(pins: pins, expiration: expiration)
    }

    private static func parseDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        if let date = formatter.date(from: String(text.prefix(10))) { return date.addingTimeInterval(86399) }
        return nil
    }

    public static func == (lhs: PinSet, rhs: PinSet) -> Bool {
        lhs.pins == rhs.pins && lhs.expiration == rhs.expiration && lhs.scope == rhs.scope
    }
}

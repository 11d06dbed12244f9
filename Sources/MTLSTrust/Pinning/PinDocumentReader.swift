#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PinDocument {
    /// Reads a pin set back from the bytes of a file in any format `mtls pin --format` writes,
    /// detected from the content: pin lists, JSON, curl, HPKP, TrustKit (Swift, Objective-C,
    /// Info.plist), Android and TrustKit-Android XML, OkHttp (Kotlin, Java), ATS, the Swift source,
    /// and PEM/DER certificates (whole-certificate pins).
    ///
    /// - Parameters:
    ///   - bytes: The file's content.
    ///   - source: The file's name, for messages.
    /// - Throws: `MTLSTrustError` `.malformedInput` naming the file and what in it is not a pin set;
    ///   also when it holds no pin at all.
    public init(bytes: [UInt8], source: String) throws(MTLSTrustError) {
        guard !bytes.isEmpty else { throw MTLSTrustError(.emptyInput, "\(source) is empty: it holds no pin", source: source) }
        let document: PinDocument
        do throws(PinDocumentReader.ReadError) {
            document = try PinDocumentReader.parse(bytes, name: source)
        } catch {
            throw MTLSTrustError(.malformedInput, "\(source): \(error.message)", source: source)
        }
        if document.domains.allSatisfy({ $0.pins.isEmpty }) {
            throw MTLSTrustError(.malformedInput, "\(source) holds no pin (read as \(document.format))", source: source)
        }
        self = document
    }

    /// Reads a pin file, or a directory of `.cer`/`.der`/`.crt`/`.pem` certificates (as bundled for
    /// Alamofire and AFNetworking: whole-certificate pins).
    ///
    /// - Throws: `MTLSTrustError`: `.unreadableFile` for the file, `.malformedInput` for its content.
    public init(contentsOf path: String) throws(MTLSTrustError) {
        #if canImport(FoundationEssentials)
            var isDirectory = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        #else
            var flag: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &flag)
            let isDirectory = flag.boolValue
        #endif
        if exists, isDirectory {
            self = try PinDocumentReader.certificateDirectory(path)
            return
        }
        try self.init(bytes: try CertificateLoader.readFile(path), source: path)
    }
}

/// The readers of each format, chosen by what the content looks like.
enum PinDocumentReader {
    struct ReadError: Error {
        var message: String
    }

    /// Detects the format and reads the pins.
    static func parse(_ bytes: [UInt8], name: String) throws(ReadError) -> PinDocument {
        if bytes.starts(with: Array("bplist".utf8)) { return try plist(bytes) }
        if bytes.first == 0x30, DER.shape(of: bytes) == .certificate { return try certificates(bytes, name: name) }
        let text = String(decoding: bytes, as: UTF8.self)
        let trimmed = text.trimmingWhitespaceAndNewlines()
        if trimmed.contains("<plist") { return try plist(bytes) }
        if trimmed.contains("<network-security-config") { return try android(text) }
        if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") { return try json(bytes) }
        if trimmed.contains("-----BEGIN CERTIFICATE-----") { return try certificates(bytes, name: name) }
        let tokens = CodeLiteralScanner.substitutingConstants(CodeLiteralScanner.tokens(text))
        if text.contains("CertificatePinner") || text.contains(".add(\"") { return try okhttp(tokens) }
        if text.contains("TSKPinnedDomains") || text.contains("TSKPublicKeyHashes") { return try trustKitCode(tokens) }
        if text.contains("static let spkiSHA256") || text.contains("Pin(pin: ") { return try swiftSource(text) }
        if text.lowercased().contains("pin-sha256=") { return try hpkp(text) }
        return try lines(text)
    }

    // MARK: - Formats

    /// `sha256/…` lines (spki and cert lists), with `expires` and `# host:` lines; or curl's
    /// `sha256//A;sha256//B` (leaf only).
    static func lines(_ text: String) throws(ReadError) -> PinDocument {
        let content = text.split(whereSeparator: \.isNewline).map { String($0) }
        let meaningful = content.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        if meaningful.count == 1, let line = meaningful.first, line.contains("sha256//"), !line.contains(" ") {
            let tokens = line.split(separator: ";").map { String($0) }
            var pins: [Pin] = []
            for token in tokens {
                let body = token.dropFirst("sha256//".count)
                guard token.hasPrefix("sha256//"), let digest = PinText.digest(String(body)) else {
                    // A one-line spki list whose digest starts with '/' ("sha256//j4i…") is not curl's.
                    if tokens.count == 1, let pin = PinText.parse(token) {
                        return PinDocument(
                            format: "SPKI pin list", domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [PinRequirement(scope: .chain, pins: [pin])])])
                    }
                    throw ReadError(message: "\(DisplayText.quoted(token)) is not a curl pin (sha256// followed by 44 base64 characters)")
                }
                pins.append(Pin(kind: .publicKey, digest: digest))
            }
            return PinDocument(
                format: "curl --pinnedpubkey",
                domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [PinRequirement(scope: .leaf, pins: pins, name: "curl (leaf only)")])])
        }
        var pins: [Pin] = []
        var expires: Date?
        var hosts: [(String, Bool)] = []
        for raw in content {
            let line = raw.trimmingWhitespace()
            if line.hasPrefix("#") {
                let comment = line.dropFirst().trimmingWhitespace()
                if comment.lowercased().hasPrefix("host:") {
                    let value = comment.dropFirst(5).trimmingWhitespace()
                    let subdomains = value.hasSuffix(" and its subdomains")
                    hosts.append((subdomains ? String(value.dropLast(" and its subdomains".count)) : value, subdomains))
                }
                continue
            }
            let body = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingWhitespace() } ?? ""
            if body.isEmpty { continue }
            if body.lowercased().hasPrefix("expires") {
                let value = body.dropFirst(7).trimming(charactersIn: " :=\t")
                guard let day = PinDates.day(String(value.prefix(10))) else {
                    throw ReadError(message: "\(DisplayText.quoted(body)) is not an expiry: expected expires YYYY-MM-DD")
                }
                expires = day
                continue
            }
            let first = body.split(separator: " ").first.map(String.init) ?? body
            guard let pin = PinText.parse(first) else {
                throw ReadError(
                    message: "\(DisplayText.quoted(first)) is not a SHA-256 pin: expected sha256/ followed by 44 base64 characters (or cert-sha256/… for a whole-certificate pin)")
            }
            pins.append(pin)
        }
        let requirement = PinRequirement(scope: .chain, pins: pins)
        let format = pins.allSatisfy { $0.kind == .certificate } && !pins.isEmpty ? "certificate pin list" : "SPKI pin list"
        if hosts.isEmpty {
            return PinDocument(format: format, domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [requirement], expirationDay: expires)])
        }
        return PinDocument(
            format: format,
            domains: hosts.map {
                $0.0.hasPrefix("*.")
                    ? PinDomain(pattern: $0.0, matching: .okhttp, requirements: [requirement], expirationDay: expires)
                    : PinDomain(pattern: $0.0, includesSubdomains: $0.1, matching: .domain, requirements: [requirement], expirationDay: expires)
            })
    }

    /// Our JSON (`hosts`, `includeSubdomains`, `expires`, `pins`), or any object with a `pins` array
    /// of strings or `{"pin": …}` objects.
    static func json(_ bytes: [UInt8]) throws(ReadError) -> PinDocument {
        guard let object = try? JSONDecoder().decode(DecodedTree.self, from: Data(bytes)).value, !DecodedTree.isFragment(object) else {
            throw ReadError(message: "not valid JSON")
        }
        let dictionary: [String: Any]
        if let array = object as? [Any] {
            dictionary = ["pins": array]
        } else if let value = object as? [String: Any] {
            dictionary = value
        } else {
            throw ReadError(message: "the JSON is neither an object nor an array")
        }
        var pins: [Pin] = []
        for entry in (dictionary["pins"] as? [Any]) ?? [] {
            let text = (entry as? String) ?? ((entry as? [String: Any]).flatMap { ($0["pin"] ?? $0["spki"] ?? $0["sha256"]) as? String })
            guard let text else { continue }
            guard let pin = PinText.parse(text) else { throw ReadError(message: "\(DisplayText.quoted(text)) is not a SHA-256 pin") }
            pins.append(pin)
        }
        var expires: Date?
        if let text = dictionary["expires"] as? String {
            guard let day = PinDates.day(String(text.prefix(10))) else { throw ReadError(message: "\"expires\": \(DisplayText.quoted(text)) is not a YYYY-MM-DD date") }
            expires = day
        }
        let hosts = (dictionary["hosts"] as? [String]) ?? []
        let subdomains = DecodedTree.flag(dictionary["includeSubdomains"]) ?? false
        let requirement = PinRequirement(scope: .chain, pins: pins)
        if hosts.isEmpty {
            return PinDocument(format: "JSON pin set", domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [requirement], expirationDay: expires)])
        }
        return PinDocument(
            format: "JSON pin set",
            domains: hosts.map { host in
                host.hasPrefix("*.")
                    ? PinDomain(pattern: host, matching: .okhttp, requirements: [requirement], expirationDay: expires)
                    : PinDomain(pattern: host, includesSubdomains: subdomains, matching: .domain, requirements: [requirement], expirationDay: expires)
            })
    }

    /// `Public-Key-Pins[-Report-Only]: pin-sha256="…"; max-age=…; includeSubDomains`.
    static func hpkp(_ text: String) throws(ReadError) -> PinDocument {
        var pins: [Pin] = []
        for part in text.split(whereSeparator: { $0 == ";" || $0 == "\n" }) {
            var directive = part.trimmingWhitespace()
            if let colon = directive.rangeIgnoringASCIICase(of: "Public-Key-Pins"), let separator = directive[colon.upperBound...].firstIndex(of: ":") {
                directive = directive[directive.index(after: separator)...].trimmingWhitespace()
            }
            if directive.lowercased().hasPrefix("pin-sha256") {
                guard let pin = PinText.parse(directive) else {
                    throw ReadError(message: "\(DisplayText.quoted(directive)) is not a pin-sha256 directive with a 44-character base64 digest")
                }
                pins.append(pin)
            }
        }
        let reportOnly = text.lowercased().contains("public-key-pins-report-only")
        return PinDocument(
            format: "HPKP header",
            domains: [
                PinDomain(
                    pattern: "", includesSubdomains: text.lowercased().contains("includesubdomains"), matching: .anyHost, requirements: [PinRequirement(scope: .chain, pins: pins)],
                    enforced: !reportOnly)
            ])
    }

    /// Info.plist: TrustKit's `TSKConfiguration` and/or ATS `NSPinnedDomains`.
    static func plist(_ bytes: [UInt8]) throws(ReadError) -> PinDocument {
        let root: Any
        do {
            root = try PropertyListDecoder().decode(DecodedTree.self, from: Data(bytes)).value
        } catch {
            throw ReadError(message: "not a valid property list (\(DecodedTree.reason(error)))")
        }
        guard let top = root as? [String: Any] else { throw ReadError(message: "the property list's root is not a dictionary") }
        var domains: [PinDomain] = []
        var formats: [String] = []
        let trustKit = (top["TSKConfiguration"] as? [String: Any]) ?? (top["TSKPinnedDomains"] != nil ? top : nil)
        if let trustKit, let pinned = trustKit["TSKPinnedDomains"] as? [String: Any] {
            formats.append("TrustKit (Info.plist)")
            for (host, value) in pinned.sorted(by: { $0.key < $1.key }) {
                guard let config = value as? [String: Any] else { continue }
                domains.append(
                    try trustKitDomain(
                        host: host, hashes: (config["TSKPublicKeyHashes"] as? [String]) ?? [], includeSubdomains: DecodedTree.flag(config["TSKIncludeSubdomains"]),
                        expiration: config["TSKExpirationDate"] as? String, enforce: DecodedTree.flag(config["TSKEnforcePinning"]),
                        excludedFromParent: DecodedTree.flag(config["TSKExcludeSubdomainFromParentPolicy"])))
            }
        }
        let ats = ((top["NSAppTransportSecurity"] as? [String: Any])?["NSPinnedDomains"] as? [String: Any]) ?? (top["NSPinnedDomains"] as? [String: Any])
        if let ats {
            formats.append("App Transport Security NSPinnedDomains")
            for (host, value) in ats.sorted(by: { $0.key < $1.key }) {
                guard let config = value as? [String: Any] else { continue }
                var requirements: [PinRequirement] = []
                for (key, scope) in [("NSPinnedCAIdentities", PinRequirement.Scope.ca), ("NSPinnedLeafIdentities", .leaf)] {
                    guard let identities = config[key] as? [[String: Any]] else { continue }
                    var pins: [Pin] = []
                    for identity in identities {
                        guard let text = identity["SPKI-SHA256-BASE64"] as? String else { continue }
                        guard let digest = PinText.digest(text) else { throw ReadError(message: "\(host) \(key): \(DisplayText.quoted(text)) is not a base64 SHA-256 digest") }
                        pins.append(Pin(kind: .publicKey, digest: digest))
                    }
                    requirements.append(PinRequirement(scope: scope, pins: pins, name: key))
                }
                domains.append(
                    PinDomain(pattern: host, includesSubdomains: DecodedTree.flag(config["NSIncludesSubdomains"]) ?? false, matching: .domain, requirements: requirements))
            }
        }
        guard !formats.isEmpty else { throw ReadError(message: "the property list has neither TSKConfiguration (TrustKit) nor NSAppTransportSecurity/NSPinnedDomains (ATS)") }
        return PinDocument(format: formats.joined(separator: " + "), domains: domains)
    }

    static func trustKitDomain(
        host: String, hashes: [String], includeSubdomains: Bool?, expiration: String?, enforce: Bool?, excludedFromParent: Bool?
    ) throws(ReadError) -> PinDomain {
        // TrustKit refuses a pinned domain without hashes unless it only opts out of its parent's policy.
        if hashes.isEmpty, excludedFromParent != true {
            throw ReadError(message: "\(host) has no TSKPublicKeyHashes and is not marked TSKExcludeSubdomainFromParentPolicy (TrustKit refuses such a domain)")
        }
        var pins: [Pin] = []
        for hash in hashes {
            guard let digest = PinText.digest(hash) ?? PinText.parse(hash)?.digest else {
                throw ReadError(message: "\(host): \(DisplayText.quoted(hash)) is not a base64 SHA-256 digest")
            }
            pins.append(Pin(kind: .publicKey, digest: digest))
        }
        var day: Date?
        if let expiration {
            guard let parsed = PinDates.day(expiration) else { throw ReadError(message: "\(host): the expiration date \(DisplayText.quoted(expiration)) is not yyyy-MM-dd") }
            day = parsed
        }
        return PinDomain(
            pattern: host, includesSubdomains: includeSubdomains ?? false, matching: .domain, requirements: [PinRequirement(scope: .chain, pins: pins)], expirationDay: day,
            enforced: enforce ?? true)
    }

    /// PEM or DER certificates given as the pin file: whole-certificate pins (Alamofire's
    /// `PinnedCertificatesTrustEvaluator`).
    static func certificates(_ bytes: [UInt8], name: String) throws(ReadError) -> PinDocument {
        let certificates: [Certificate]
        do throws(MTLSTrustError) { certificates = try CertificateLoader.certificates(from: bytes, source: name).certificates } catch {
            throw ReadError(message: error.message)
        }
        return PinDocument(
            format: "pinned certificates",
            domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [PinRequirement(scope: .chain, pins: certificates.map { .certificate($0) })])])
    }

    /// A directory of `.cer`/`.der`/`.crt` files, as bundled for Alamofire/AFNetworking.
    static func certificateDirectory(_ path: String) throws(MTLSTrustError) -> PinDocument {
        let pins = try CertificateLoader.certificates(inDirectory: path).map { Pin.certificate($0) }
        return PinDocument(format: "bundled certificates (.cer)", domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [PinRequirement(scope: .chain, pins: pins)])])
    }

    /// The first capture group of every match, scalar by scalar as ICU's regular expressions match.
    static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? Regex(pattern).matchingSemantics(.unicodeScalar) else { return [] }
        return text.matches(of: regex).compactMap { match in
            guard match.output.count > 1, let range = match.output[1].range else { return nil }
            return String(text[range])
        }
    }
}

/// A JSON or property-list document as untyped values — `[String: Any]`, `[Any]`, `String`, `Bool`,
/// `Int`, `Double`, `Date`, `Data` — the shapes `JSONSerialization` and `PropertyListSerialization`
/// give, decoded by the Codable decoders that FoundationEssentials has.
private struct DecodedTree: Decodable {
    let value: Any

    init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var items: [Any] = []
            while !list.isAtEnd { items.append(try list.decode(DecodedTree.self).value) }
            value = items
        } else if let object = try? decoder.container(keyedBy: Key.self) {
            var entries: [String: Any] = [:]
            for key in object.allKeys { entries[key.stringValue] = try object.decode(DecodedTree.self, forKey: key).value }
            value = entries
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                value = Optional<Any>.none as Any
            } else if let bool = try? single.decode(Bool.self) {
                value = bool
            } else if let int = try? single.decode(Int.self) {
                value = int
            } else if let double = try? single.decode(Double.self) {
                value = double
            } else if let string = try? single.decode(String.self) {
                value = string
            } else if let date = try? single.decode(Date.self) {
                value = date
            } else {
                value = try single.decode(Data.self)
            }
        }
    }

    /// A boolean: `true`/`<true/>`, or the integers 1 and 0, which Foundation's serializers gave as
    /// an `NSNumber` that reads as a `Bool` (plists written by hand or by scripts use them).
    static func flag(_ value: Any?) -> Bool? {
        if let bool = value as? Bool { return bool }
        switch value as? Int {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }

    /// JSONSerialization reads only an object or an array at the top without `.fragmentsAllowed`.
    static func isFragment(_ value: Any) -> Bool { !(value is [Any]) && !(value is [String: Any]) }

    /// The decoder's explanation, without the coding path.
    static func reason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error { return context.debugDescription }
        return "\(error)"
    }

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

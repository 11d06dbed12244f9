#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Pin sets read from an app's own sources: TrustKit dictionaries in Swift or Objective-C, OkHttp's
/// `CertificatePinner` in Kotlin or Java, the Swift source `mtls pin --format swift` writes, and
/// Android's network security config (and TrustKit-Android's) XML.
extension PinDocumentReader {
    /// TrustKit configuration dictionaries in Swift or Objective-C.
    static func trustKitCode(_ tokens: [CodeLiteralScanner.Token]) throws(ReadError) -> PinDocument {
        guard let pinned = CodeLiteralScanner.value(after: "TSKPinnedDomains", in: tokens), case .dictionary(let pairs) = pinned else {
            throw ReadError(message: "found no kTSKPinnedDomains dictionary")
        }
        var domains: [PinDomain] = []
        for (key, config) in pairs {
            guard let host = key.keyName else { continue }
            if case .array(let hashes)? = config["TSKPublicKeyHashes"] {
                let names = hashes.compactMap { hash -> String? in
                    if case .identifier(let name) = hash { return name }
                    return nil
                }
                if !names.isEmpty {
                    throw ReadError(
                        message: "\(host): TSKPublicKeyHashes names \(names.joined(separator: ", ")), which are not string constants of this file, so the pins are unknown: "
                            + "write them as literals, or check a file that `mtls pin --format trustkit` wrote")
                }
            }
            domains.append(
                try trustKitDomain(
                    host: host, hashes: config["TSKPublicKeyHashes"]?.strings ?? [], includeSubdomains: config["TSKIncludeSubdomains"]?.boolValue,
                    expiration: config["TSKExpirationDate"]?.strings.first, enforce: config["TSKEnforcePinning"]?.boolValue,
                    excludedFromParent: config["TSKExcludeSubdomainFromParentPolicy"]?.boolValue))
        }
        return PinDocument(format: "TrustKit configuration", domains: domains)
    }

    /// OkHttp `.add("pattern", "sha256/…", …)` calls, Kotlin or Java, with string constants of the
    /// file resolved. A call of a `CertificatePinner.Builder()` chain, or one that names a pin, whose
    /// pattern or pins are expressions the reader cannot evaluate is refused rather than left out:
    /// left out, its host would read as not pinned.
    static func okhttp(_ tokens: [CodeLiteralScanner.Token]) throws(ReadError) -> PinDocument {
        var order: [String] = []
        var byPattern: [String: [Pin]] = [:]
        for call in CodeLiteralScanner.addCalls(in: tokens) {
            let namesPin = call.arguments.contains {
                if case .string(let text) = $0 { return text.hasPrefix("sha256/") || text.hasPrefix("sha1/") }
                return false
            }
            guard call.inPinnerChain || namesPin, call.arguments.count >= 2 else { continue }
            var texts: [String] = []
            for argument in call.arguments {
                switch argument {
                case .string(let text): texts.append(text)
                case .unresolved(let expression):
                    throw ReadError(
                        message:
                            ".add(\(call.arguments.map(\.sourceText).joined(separator: ", "))): \(DisplayText.quoted(expression)) is not a string literal or a string constant of this file, "
                            + "so its pattern or pin is unknown: check a file that `mtls pin --format okhttp` wrote, or write the pins as literals")
                }
            }
            let pattern = texts[0]
            for text in texts.dropFirst() {
                guard text.hasPrefix("sha256/") || text.hasPrefix("sha1/") else {
                    throw ReadError(message: "\(DisplayText.quoted(text)): OkHttp pins start with sha256/ (or sha1/)")
                }
                let pin: Pin
                if text.hasPrefix("sha1/") {
                    // OkHttp 3, 4 and 5 accept sha1/ pins beside sha256/ ones.
                    let encoded = String(text.dropFirst("sha1/".count))
                    guard encoded.count == 28, let bytes = Data(base64Encoded: encoded), bytes.count == 20 else {
                        throw ReadError(message: "\(DisplayText.quoted(text)) is not sha1/ followed by 28 base64 characters")
                    }
                    pin = Pin(kind: .publicKeySHA1, digest: Array(bytes))
                } else {
                    guard let digest = PinText.digest(String(text.dropFirst("sha256/".count))) else {
                        throw ReadError(message: "\(DisplayText.quoted(text)) is not sha256/ followed by 44 base64 characters")
                    }
                    pin = Pin(kind: .publicKey, digest: digest)
                }
                if byPattern[pattern] == nil { order.append(pattern) }
                byPattern[pattern, default: []].append(pin)
            }
        }
        guard !order.isEmpty else { throw ReadError(message: "found no CertificatePinner.Builder().add(pattern, \"sha256/…\") call") }
        return PinDocument(
            format: "OkHttp CertificatePinner",
            domains: order.map { PinDomain(pattern: $0.lowercased(), matching: .okhttp, requirements: [PinRequirement(scope: .chain, pins: byPattern[$0] ?? [])]) })
    }

    /// The Swift source of `--format swift`.
    static func swiftSource(_ text: String) throws(ReadError) -> PinDocument {
        var pins: [Pin] = []
        for match in matches(#"Pin\(pin: "([^"]+)""#, in: text) {
            guard let pin = PinText.parse(match) else { throw ReadError(message: "\(DisplayText.quoted(match)) is not a SHA-256 pin") }
            pins.append(pin)
        }
        if pins.isEmpty {
            for match in matches(#"spkiSHA256: Set<String> = \[([^\]]*)\]"#, in: text) {
                for digest in matches(#""([^"]+)""#, in: match) { if let bytes = PinText.digest(digest) { pins.append(Pin(kind: .publicKey, digest: bytes)) } }
            }
        }
        let hosts = matches(#"static let hosts: \[String\] = \[([^\]]*)\]"#, in: text).flatMap { matches(#""([^"]+)""#, in: $0) }
        let subdomains = text.contains("static let includesSubdomains = true")
        var expires: Date?
        if let text = matches(#"static let expires: String\? = "([^"]+)""#, in: text).first {
            guard let day = PinDates.day(text) else { throw ReadError(message: "expires \(DisplayText.quoted(text)) is not YYYY-MM-DD") }
            expires = day
        }
        let requirement = PinRequirement(scope: .chain, pins: pins)
        if hosts.isEmpty {
            return PinDocument(format: "Swift pin-set source", domains: [PinDomain(pattern: "", matching: .anyHost, requirements: [requirement], expirationDay: expires)])
        }
        return PinDocument(
            format: "Swift pin-set source",
            domains: hosts.map { PinDomain(pattern: $0, includesSubdomains: subdomains, matching: .domain, requirements: [requirement], expirationDay: expires) })
    }

    /// What a nested Android domain-config takes from its parent unless it sets it itself.
    private struct AndroidInherited {
        var pins: [Pin] = []
        var expiration: Date?
        var enforced = true
    }

    /// Android network security config, with or without TrustKit-Android's `<trustkit-config>`.
    static func android(_ text: String) throws(ReadError) -> PinDocument {
        let root: MiniXMLElement
        do throws(MiniXML.ParseError) { root = try MiniXML.parse(text) } catch { throw ReadError(message: "not well-formed XML: \(error.message)") }
        var domains: [PinDomain] = []
        var sawTrustKit = false
        // A nested domain-config inherits what it does not set from its parent, the pin-set (with
        // its expiration) among them; a config with no pin-set of its own or inherited leaves its
        // domains unpinned, even below a parent domain that includes subdomains: Android takes the
        // most specific domain's config.
        func collect(_ config: MiniXMLElement, _ parent: AndroidInherited) throws(ReadError) {
            var effective = parent
            if let pinSet = config.children(named: "pin-set").first {
                var pins: [Pin] = []
                for pin in pinSet.children(named: "pin") {
                    guard (pin.attributes["digest"] ?? "SHA-256").uppercased() == "SHA-256" else { continue }
                    let value = pin.text.trimmingWhitespaceAndNewlines()
                    guard let digest = PinText.digest(value) else { throw ReadError(message: "<pin>\(value)</pin> is not a base64 SHA-256 digest") }
                    pins.append(Pin(kind: .publicKey, digest: digest))
                }
                var expiration: Date?
                if let text = pinSet.attributes["expiration"] {
                    guard let day = PinDates.day(text) else { throw ReadError(message: "<pin-set expiration=\(DisplayText.quoted(text))> is not yyyy-MM-dd") }
                    expiration = day
                }
                effective.pins = pins
                effective.expiration = expiration
            }
            if let trustKit = config.children(named: "trustkit-config").first {
                sawTrustKit = true
                effective.enforced = (trustKit.attributes["enforcePinning"] ?? "false").lowercased() == "true"
            }
            for domain in config.children(named: "domain") {
                let name = domain.text.trimmingWhitespaceAndNewlines().lowercased()
                domains.append(
                    PinDomain(
                        pattern: name, includesSubdomains: domain.attributes["includeSubdomains"]?.lowercased() == "true", matching: .domain,
                        requirements: effective.pins.isEmpty ? [] : [PinRequirement(scope: .chain, pins: effective.pins)],
                        expirationDay: effective.pins.isEmpty ? nil : effective.expiration, enforced: effective.enforced))
            }
            for nested in config.children(named: "domain-config") { try collect(nested, effective) }
        }
        guard root.name == "network-security-config" else { throw ReadError(message: "the root element is <\(root.name)>, not <network-security-config>") }
        for config in root.children(named: "domain-config") { try collect(config, AndroidInherited()) }
        return PinDocument(format: sawTrustKit ? "TrustKit-Android configuration" : "Android network security config", domains: domains)
    }
}

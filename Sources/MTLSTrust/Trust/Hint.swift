/// A setting of the library that a caller can change to get past a failure. Hints name settings
/// structurally (``Hint``): a library user reads ``apiName`` (`TrustPolicy.anchors`), the `mtls`
/// command line reads the flag that sets it (`--anchors`), and neither layer's words leak into
/// the other.
public struct Setting: Sendable, Hashable, CustomStringConvertible {
    /// The setting's stable name (`anchors`), the key a front end maps to its own words.
    public let name: String
    /// Where a library user changes it (`TrustPolicy.anchors`).
    public let apiName: String

    /// A setting of a layer of its own: each module declares the settings its hints name, with
    /// that module's API names, as static members of an extension.
    public init(name: String, apiName: String) {
        self.name = name
        self.apiName = apiName
    }

    public var description: String { apiName }
    public static func == (lhs: Setting, rhs: Setting) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The settings `MTLSTrust`'s hints name.
    public static let trustSettings: [Setting] = [
        .anchors, .systemRoots, .intermediates, .evaluationTime, .hostnameCheck, .maximumDepth, .crls, .revocation, .requiredKeyUsage, .profile, .purpose, .pkcs12Identity,
        .pkcs12Contents,
    ]

    /// Certificates trusted as anchors.
    public static let anchors = Setting(name: "anchors", apiName: "TrustPolicy.anchors")
    /// The system's trust store, next to the anchors.
    public static let systemRoots = Setting(name: "systemRoots", apiName: "TrustPolicy.includesSystemRoots")
    /// Untrusted intermediates for path building.
    public static let intermediates = Setting(name: "intermediates", apiName: "TrustPolicy.intermediates")
    /// The time the chain is evaluated at.
    public static let evaluationTime = Setting(name: "evaluationTime", apiName: "TrustPolicy.evaluationTime")
    /// Whether the leaf must carry the host name.
    public static let hostnameCheck = Setting(name: "hostnameCheck", apiName: "TrustPolicy.hostname (nil skips the host check)")
    /// The longest chain accepted.
    public static let maximumDepth = Setting(name: "maximumDepth", apiName: "TrustPolicy.maximumDepth")
    /// CRLs checked for revocation.
    public static let crls = Setting(name: "crls", apiName: "TrustPolicy.crls")
    /// The revocation check over the network (hard or soft fail).
    public static let revocation = Setting(name: "revocation", apiName: "TrustPolicy.revocation")
    /// Key usages the leaf must allow.
    public static let requiredKeyUsage = Setting(name: "requiredKeyUsage", apiName: "TrustPolicy.requiredKeyUsage")
    /// The rule profile (RFC 5280 alone, or with the CA/Browser Forum rules).
    public static let profile = Setting(name: "profile", apiName: "TrustPolicy.profile")
    /// What the leaf must be good for (server, client, any).
    public static let purpose = Setting(name: "purpose", apiName: "TrustPolicy.purpose")
    /// The client certificate and key, given as a PKCS#12 file.
    public static let pkcs12Identity = Setting(name: "pkcs12Identity", apiName: "PKCS12Bundle.identities")
    /// Reading a PKCS#12 file's certificates and keys out of it.
    public static let pkcs12Contents = Setting(name: "pkcs12Contents", apiName: "PKCS12Bundle")
}

/// What to do about a failure: a sentence whose settings are kept as ``Setting`` values, so each
/// layer names them its own way. Written as an interpolated literal:
/// `"pass the CA that issued it with \(setting: .anchors)"`.
public struct Hint: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// A run of text or a setting.
    public enum Part: Sendable, Hashable {
        case text(String)
        case setting(Setting)
    }

    /// The sentence, in order.
    public private(set) var parts: [Part]

    /// A hint of plain text, naming no setting.
    public init(verbatim text: String) { parts = text.isEmpty ? [] : [.text(text)] }

    public init(stringLiteral value: String) { self.init(verbatim: value) }

    public init(stringInterpolation: StringInterpolation) { parts = stringInterpolation.parts }

    /// The settings the hint asks the caller to change, in order of appearance.
    public var settings: [Setting] {
        parts.compactMap {
            if case .setting(let setting) = $0 { return setting }
            return nil
        }
    }

    public var isEmpty: Bool { parts.isEmpty }

    /// The sentence with each setting named by `name`.
    public func rendered(naming name: (Setting) -> String) -> String {
        parts.map {
            switch $0 {
            case .text(let text): text
            case .setting(let setting): name(setting)
            }
        }.joined()
    }

    /// The sentence for a library user: settings by their API names.
    public var description: String { rendered { $0.apiName } }

    public struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            guard !literal.isEmpty else { return }
            if case .text(let previous) = parts.last {
                parts[parts.count - 1] = .text(previous + literal)
            } else {
                parts.append(.text(literal))
            }
        }

        /// A setting, named by each layer its own way.
        public mutating func appendInterpolation(setting: Setting) { parts.append(.setting(setting)) }

        public mutating func appendInterpolation(_ value: some CustomStringConvertible) { appendLiteral(value.description) }

        public mutating func appendInterpolation(_ value: String) { appendLiteral(value) }

        /// Another hint, its settings kept.
        public mutating func appendInterpolation(_ hint: Hint) {
            for part in hint.parts {
                switch part {
                case .text(let text): appendLiteral(text)
                case .setting(let setting): parts.append(.setting(setting))
                }
            }
        }
    }
}

/// A setting of the library that a caller can change to get past a failure. Hints name settings
/// structurally (``Hint``): a library user reads ``apiName`` (`TrustPolicy.anchors`), the `mtls`
/// command line reads the flag that sets it (`--anchors`), and neither layer's words leak into
/// the other.
public enum Setting: String, Sendable, Hashable, CaseIterable {
    /// Certificates trusted as anchors.
    case anchors
    /// The system's trust store, next to the anchors.
    case systemRoots
    /// Untrusted intermediates for path building.
    case intermediates
    /// The time the chain is evaluated at.
    case evaluationTime
    /// Whether the leaf must carry the host name.
    case hostnameCheck
    /// The longest chain accepted.
    case maximumDepth
    /// CRLs checked for revocation.
    case crls
    /// The revocation check over the network (hard or soft fail).
    case revocation
    /// Key usages the leaf must allow.
    case requiredKeyUsage
    /// The rule profile (RFC 5280 alone, or with the CA/Browser Forum rules).
    case profile
    /// What the leaf must be good for (server, client, any).
    case purpose
    /// How long a connection may take.
    case timeout
    /// The newest TLS version offered.
    case maximumTLSVersion
    /// The oldest TLS version accepted.
    case minimumTLSVersion
    /// The client certificate and key.
    case clientIdentity
    /// The client certificate and key, given as a PKCS#12 file.
    case pkcs12Identity
    /// Reading a PKCS#12 file's certificates and keys out of it.
    case pkcs12Contents
    /// One identity of a PKCS#12 file that holds several, by friendly name or position.
    case pkcs12IdentitySelection
    /// Renegotiation with servers that lack RFC 5746.
    case legacyRenegotiation
    /// Where connections for a host go instead of its DNS address.
    case connectTo
    /// The port a server listens on.
    case listeningPort
    /// Origins that may receive credentials.
    case authOrigins
    /// How many redirects a login follows.
    case maximumRedirects
    /// Where a response body goes instead of memory.
    case bodyDestination

    /// Where a library user changes it.
    public var apiName: String {
        switch self {
        case .anchors: "TrustPolicy.anchors"
        case .systemRoots: "TrustPolicy.includesSystemRoots"
        case .intermediates: "TrustPolicy.intermediates"
        case .evaluationTime: "TrustPolicy.evaluationTime"
        case .hostnameCheck: "TLSClientConfiguration.validatesHostname"
        case .maximumDepth: "TrustPolicy.maximumDepth"
        case .crls: "TrustPolicy.crls"
        case .revocation: "TrustPolicy.revocation"
        case .requiredKeyUsage: "TrustPolicy.requiredKeyUsage"
        case .profile: "TrustPolicy.profile"
        case .purpose: "TrustPolicy.purpose"
        case .timeout: "TLSClientConfiguration.timeouts"
        case .maximumTLSVersion: "TLSClientConfiguration.maximumVersion"
        case .minimumTLSVersion: "TLSClientConfiguration.minimumVersion"
        case .clientIdentity: "TLSClientConfiguration.identities"
        case .pkcs12Identity: "ClientIdentity.pkcs12"
        case .pkcs12Contents: "PKCS12Bundle"
        case .pkcs12IdentitySelection: "PKCS12Bundle.identities"
        case .legacyRenegotiation: "TLSClientConfiguration.allowsLegacyRenegotiation"
        case .connectTo: "HTTPSClient.connectTo"
        case .listeningPort: "TestServer's port"
        case .authOrigins: "LoginOptions.authOrigins"
        case .maximumRedirects: "LoginOptions.maximumRedirects"
        case .bodyDestination: "a body sink"
        }
    }
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

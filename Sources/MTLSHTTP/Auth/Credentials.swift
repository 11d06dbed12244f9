import Foundation

/// A user name and password for HTTP authentication.
///
/// - Warning: The password is held in memory as a `String` for the session's lifetime.
public struct Credentials: Sendable {
    /// The user name (UTF-8). For NTLM it may be written `DOMAIN\user` or `user@domain`.
    public var user: String
    /// The password (UTF-8).
    public var password: String
    /// The NTLM domain; nil takes it from ``user`` when written `DOMAIN\user`, else empty.
    public var domain: String?

    /// Creates credentials.
    public init(user: String, password: String, domain: String? = nil) {
        self.user = user
        self.password = password
        self.domain = domain
    }

    /// The user and domain for NTLM: `DOMAIN\user` splits at the backslash; `user@domain` is passed
    /// whole as the user name with an empty domain, as Windows does for UPNs.
    var ntlmUserAndDomain: (user: String, domain: String) {
        if let domain { return (user, domain) }
        if let slash = user.firstIndex(of: "\\") {
            return (String(user[user.index(after: slash)...]), String(user[..<slash]))
        }
        return (user, "")
    }
}

/// An HTTP authentication scheme this library can answer.
public enum AuthScheme: String, Sendable, CaseIterable, Comparable {
    /// RFC 7617: the password is sent (base64, not encrypted) in every request.
    case basic
    /// RFC 7616: a hash of the password, bound to a server nonce.
    case digest
    /// NTLMv2 (MS-NLMP) over one kept-alive connection, as IIS Windows authentication uses.
    case ntlm

    /// The order in which schemes are preferred when a server offers several (strongest first).
    var preference: Int {
        switch self {
        case .digest: 0
        case .ntlm: 1
        case .basic: 2
        }
    }

    /// Digest before NTLM before Basic.
    public static func < (lhs: AuthScheme, rhs: AuthScheme) -> Bool { lhs.preference < rhs.preference }

    /// The scheme of a challenge, when it is one we answer. `Negotiate` is answered with NTLM tokens
    /// (IIS accepts raw NTLM inside Negotiate).
    init?(challenge: AuthChallenge) {
        switch challenge.normalizedScheme {
        case "basic": self = .basic
        case "digest": self = .digest
        case "ntlm": self = .ntlm
        default: return nil
        }
    }

    /// `Basic`, `Digest`, `NTLM`.
    public var displayName: String {
        switch self {
        case .basic: "Basic"
        case .digest: "Digest"
        case .ntlm: "NTLM"
        }
    }
}

/// HTTP Basic authentication (RFC 7617), always with UTF-8 (`charset="UTF-8"`).
public enum BasicAuth {
    /// The `Authorization` value `Basic base64(user:password)`.
    ///
    /// - Throws: ``HTTPSError`` (`.auth`) when the user name contains a colon or a control
    ///   character, which Basic cannot carry.
    /// - Warning: Basic sends the password itself; only use it over TLS to a trusted server.
    public static func authorization(user: String, password: String, host: String = "") throws(HTTPSError) -> String {
        guard !user.contains(":") else {
            throw HTTPSError(.auth, host: host, "the user name '\(user)' contains a colon, which Basic authentication cannot carry")
        }
        guard !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw HTTPSError(.auth, host: host, "the user name or password contains a control character, which Basic authentication cannot carry")
        }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

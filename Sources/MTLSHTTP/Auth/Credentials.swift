#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// A user name and password for HTTP authentication.
///
/// The password is a ``Secret``: its bytes are wiped when the last copy of the credentials goes.
/// What is derived from it per request is not: Basic's `Authorization` header (the password in
/// base64), Digest's HA1 and NTLM's response are ordinary values of that request.
public struct Credentials: Sendable {
    /// The user name (UTF-8). For NTLM it may be written `DOMAIN\user` or `user@domain`.
    public var user: String
    /// The password (UTF-8).
    public var password: Secret
    /// The NTLM domain; nil takes it from ``user`` when written `DOMAIN\user`, else empty.
    public var domain: String?

    /// Creates credentials.
    public init(user: String, password: Secret, domain: String? = nil) {
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
    /// SPNEGO with Kerberos (RFC 4559) through the system GSSAPI, as IIS Windows authentication
    /// prefers it; used only when ``LoginOptions/kerberos`` names a credential source.
    case negotiate

    /// The order in which schemes are preferred when a server offers several (strongest first).
    var preference: Int {
        switch self {
        case .negotiate: 0
        case .digest: 1
        case .ntlm: 2
        case .basic: 3
        }
    }

    /// Negotiate (Kerberos) before Digest before NTLM before Basic.
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

    /// `Basic`, `Digest`, `NTLM`, `Negotiate`.
    public var displayName: String {
        switch self {
        case .basic: "Basic"
        case .digest: "Digest"
        case .ntlm: "NTLM"
        case .negotiate: "Negotiate"
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
    public static func authorization(user: String, password: Secret, host: String = "") throws(HTTPSError) -> String {
        guard !user.contains(":") else {
            throw HTTPSError(.auth, host: host, "the user name '\(user)' contains a colon, which Basic authentication cannot carry")
        }
        let control = { (byte: UInt8) in byte < 0x20 || byte == 0x7F }
        guard !user.utf8.contains(where: control), !password.contains(where: control) else {
            throw HTTPSError(.auth, host: host, "the user name or password contains a control character, which Basic authentication cannot carry")
        }
        // user:password is assembled in a Secret (wiped), and encoded straight from it.
        return password.joined(after: Array("\(user):".utf8)).withUnsafeBytes { "Basic " + base64($0) }
    }

    /// Standard base64 with padding, read from `bytes` without copying them.
    static func base64(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        let length = (bytes.count + 2) / 3 * 4
        return String(unsafeUninitializedCapacity: length) { output in
            var out = 0
            var index = 0
            while index < bytes.count {
                let b0 = UInt32(bytes[index])
                let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
                let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
                let group = b0 << 16 | b1 << 8 | b2
                output[out] = alphabet[Int(group >> 18 & 63)]
                output[out + 1] = alphabet[Int(group >> 12 & 63)]
                output[out + 2] = index + 1 < bytes.count ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "=")
                output[out + 3] = index + 2 < bytes.count ? alphabet[Int(group & 63)] : UInt8(ascii: "=")
                out += 4
                index += 3
            }
            return length
        }
    }
}

extension Credentials {
    /// Whether a Kerberos principal (`alice@REALM`) is this user (`alice`, `alice@realm`, `REALM\\alice`).
    func isUser(ofPrincipal principal: String?) -> Bool {
        guard let principal else { return false }
        let name = principal.split(separator: "@").first.map { String($0).lowercased() } ?? ""
        let user = ntlmUserAndDomain.user.split(separator: "@").first.map { String($0).lowercased() } ?? ""
        return name == user
    }
}

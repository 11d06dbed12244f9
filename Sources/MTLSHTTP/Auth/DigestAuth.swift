#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// HTTP Digest authentication (RFC 7616): MD5, MD5-sess, SHA-256, SHA-256-sess, SHA-512-256(-sess),
/// qop `auth` and `auth-int`, nonce counting, `userhash`, and RFC 2069 servers without qop.
///
/// One value answers one protection space: it keeps the server's nonce and counts its uses, so
/// follow-up requests can be answered without a new challenge.
public struct DigestAuthenticator: Sendable {
    /// A Digest hash algorithm.
    public enum Algorithm: String, Sendable, CaseIterable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"
        case sha512_256 = "SHA-512-256"
        case sha512_256Session = "SHA-512-256-sess"

        /// Parses an `algorithm=` value (case-insensitive); nil for unknown algorithms.
        public init?(token: String) {
            guard let match = Algorithm.allCases.first(where: { $0.rawValue.lowercased() == token.lowercased() }) else { return nil }
            self = match
        }

        var isSession: Bool { rawValue.hasSuffix("-sess") }
        var openSSLName: String {
            switch self {
            case .md5, .md5Session: "MD5"
            case .sha256, .sha256Session: "SHA256"
            case .sha512_256, .sha512_256Session: "SHA512-256"
            }
        }
        /// Strength for choosing among several challenges (higher is better).
        var strength: Int {
            switch self {
            case .md5, .md5Session: 1
            case .sha256, .sha256Session: 2
            case .sha512_256, .sha512_256Session: 3
            }
        }
    }

    /// The quality of protection chosen.
    public enum QualityOfProtection: String, Sendable {
        case auth
        case authInt = "auth-int"
    }

    /// The realm.
    public let realm: String
    /// The server's nonce.
    public private(set) var nonce: String
    /// The opaque value, echoed back unchanged.
    public let opaque: String?
    /// The algorithm.
    public let algorithm: Algorithm
    /// The qop chosen from the server's list; nil for RFC 2069 servers that sent none.
    public let qop: QualityOfProtection?
    /// True when the server asked for a hashed user name (`userhash=true`).
    public let userhash: Bool
    /// The `domain` list: URIs of the protection space (absolute or absolute paths).
    public let domain: [String]
    /// How many requests this nonce has answered (the next `nc` is this plus one).
    public private(set) var nonceCount: UInt32 = 0
    /// The client nonce; fixed for the session algorithms, fresh per request otherwise.
    public private(set) var clientNonce: String?
    private var sessionHA1: String?
    private let echoesAlgorithm: Bool

    /// Builds an authenticator from a `Digest` challenge.
    ///
    /// - Throws: ``HTTPSError`` (`.auth`) when the challenge lacks a nonce, or names an algorithm
    ///   or qop this library does not support.
    public init(challenge: AuthChallenge, host: String = "") throws(HTTPSError) {
        guard challenge.normalizedScheme == "digest" else {
            throw HTTPSError(.auth, host: host, "the challenge \(challenge) is not a Digest challenge")
        }
        guard let nonce = challenge["nonce"], !nonce.isEmpty else {
            throw HTTPSError(.auth, host: host, "the Digest challenge has no nonce")
        }
        let algorithmToken = challenge["algorithm"]
        guard let algorithm = Algorithm(token: algorithmToken ?? "MD5") else {
            throw HTTPSError(.auth, host: host, "the Digest algorithm '\(algorithmToken ?? "")' is not supported (MD5, SHA-256 and SHA-512-256, with or without -sess, are)")
        }
        var qop: QualityOfProtection? = nil
        if let offered = challenge["qop"] {
            let options = offered.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }
            if options.contains("auth") {
                qop = .auth
            } else if options.contains("auth-int") {
                qop = .authInt
            } else {
                throw HTTPSError(.auth, host: host, "the Digest challenge offers qop=\(DisplayText.quoted(offered)), and none of it is supported (auth, auth-int)")
            }
        }
        self.realm = challenge.realm ?? ""
        self.nonce = nonce
        self.opaque = challenge["opaque"]
        self.algorithm = algorithm
        self.qop = qop
        self.userhash = challenge["userhash"]?.lowercased() == "true"
        self.domain = (challenge["domain"] ?? "").split(separator: " ").map(String.init)
        self.echoesAlgorithm = algorithmToken != nil
    }

    /// Builds an authenticator from known parameters (for tests and vectors).
    public init(realm: String, nonce: String, opaque: String? = nil, algorithm: Algorithm = .md5, qop: QualityOfProtection? = .auth, userhash: Bool = false) {
        self.realm = realm
        self.nonce = nonce
        self.opaque = opaque
        self.algorithm = algorithm
        self.qop = qop
        self.userhash = userhash
        self.domain = []
        self.echoesAlgorithm = true
    }

    /// True when the challenge says the nonce expired but the credentials were right (`stale=true`).
    public static func isStale(_ challenge: AuthChallenge) -> Bool { challenge["stale"]?.lowercased() == "true" }

    /// Chooses the Digest challenge to answer among several: the strongest supported algorithm.
    public static func preferred(_ challenges: [AuthChallenge]) -> AuthChallenge? {
        challenges.filter { $0.normalizedScheme == "digest" }
            .compactMap { challenge -> (AuthChallenge, Int)? in
                guard let algorithm = Algorithm(token: challenge["algorithm"] ?? "MD5") else { return nil }
                return (challenge, algorithm.strength)
            }
            .max { $0.1 < $1.1 }?.0
    }

    /// Takes a new nonce (after `stale=true`, or `nextnonce`), restarting the count.
    public mutating func renew(nonce: String) {
        self.nonce = nonce
        nonceCount = 0
        clientNonce = nil
        sessionHA1 = nil
    }

    private func hash(_ text: String) -> String { hash(Array(text.utf8)) }
    private func hash(_ bytes: [UInt8]) -> String { AuthHash.hex(AuthHash.digest(algorithm.openSSLName, bytes) ?? []) }

    /// The `Authorization` value for one request, counting one use of the nonce.
    ///
    /// - Parameters:
    ///   - credentials: The user and password (UTF-8).
    ///   - method: The request method.
    ///   - uri: The request target as sent (path and query).
    ///   - body: The body, hashed for `auth-int`.
    ///   - clientNonce: A fixed client nonce (test vectors); nil draws 16 random bytes.
    public mutating func authorization(credentials: Credentials, method: String, uri: String, body: [UInt8] = [], clientNonce fixedClientNonce: String? = nil) -> String {
        nonceCount &+= 1
        let nc = String(repeating: "0", count: max(0, 8 - String(nonceCount, radix: 16).count)) + String(nonceCount, radix: 16)
        let cnonce: String
        if let fixedClientNonce {
            cnonce = fixedClientNonce
        } else if algorithm.isSession, let existing = clientNonce {
            cnonce = existing
        } else {
            cnonce = AuthHash.hex(AuthHash.random(16))
        }
        clientNonce = cnonce
        // user:realm:password is assembled in a Secret (wiped) and hashed from a wiped copy.
        var ha1 = credentials.password.joined(after: Array("\(credentials.user):\(realm):".utf8)).withTemporaryArray { hash($0) }
        if algorithm.isSession {
            if let sessionHA1, fixedClientNonce == nil {
                ha1 = sessionHA1
            } else {
                ha1 = hash("\(ha1):\(nonce):\(cnonce)")
                sessionHA1 = ha1
            }
        }
        let ha2 = qop == .authInt ? hash("\(method):\(uri):\(hash(body))") : hash("\(method):\(uri)")
        let response: String
        if let qop {
            response = hash("\(ha1):\(nonce):\(nc):\(cnonce):\(qop.rawValue):\(ha2)")
        } else {
            response = hash("\(ha1):\(nonce):\(ha2)")
        }
        var parts: [String] = []
        if userhash {
            parts.append("username=\"\(hash("\(credentials.user):\(realm)"))\"")
        } else if credentials.user.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
            parts.append("username=\(Self.quoted(credentials.user))")
        } else {
            parts.append("username*=UTF-8''\(FormURLEncoding.percentEncode(credentials.user, spaceAsPlus: false))")
        }
        parts.append("realm=\(Self.quoted(realm))")
        parts.append("uri=\(Self.quoted(uri))")
        if echoesAlgorithm || algorithm != .md5 { parts.append("algorithm=\(algorithm.rawValue)") }
        parts.append("nonce=\(Self.quoted(nonce))")
        if let qop {
            parts.append("nc=\(nc)")
            parts.append("cnonce=\(Self.quoted(cnonce))")
            parts.append("qop=\(qop.rawValue)")
        }
        parts.append("response=\"\(response)\"")
        if let opaque { parts.append("opaque=\(Self.quoted(opaque))") }
        if userhash { parts.append("userhash=true") }
        return "Digest " + parts.joined(separator: ", ")
    }

    /// True when `url` lies in this protection space (its `domain` list, or the whole origin when
    /// the server sent none).
    func covers(_ url: HTTPSURL, challengedAt origin: HTTPSURL) -> Bool {
        guard url.origin == origin.origin else { return false }
        if domain.isEmpty { return true }
        return domain.contains { entry in
            guard let resolved = try? origin.resolving(entry), resolved.origin == url.origin else { return false }
            return url.path.hasPrefix(resolved.path)
        }
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
    }
}

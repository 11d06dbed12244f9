internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust
import Synchronization
import Dispatch
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One path's settings, mirroring IIS "SSL Settings" and authentication.
public struct PathRule: Sendable {
    /// IIS "Client certificates": Ignore / Accept / Require.
    public enum ClientCertificate: String, Sendable, CaseIterable { case ignore, accept, require }
    /// HTTP authentication on the path.
    public enum Authentication: String, Sendable, CaseIterable { case none, basic, digest }
    /// What the path answers once admitted.
    public enum Handler: Sendable {
        case page(String)
        case echoCertificate
        case shiftJIS
        case redirect(String)
        /// A page whose `<meta http-equiv="refresh">` sends a browser on to the target at once,
        /// as single sign-on pages do ("signing you in…").
        case refresh(String)
        case cookie
    }

    /// A path prefix; the longest matching prefix wins.
    public var path: String
    public var clientCertificate: ClientCertificate
    public var authentication: Authentication
    public var handler: Handler

    public init(path: String, clientCertificate: ClientCertificate = .ignore, authentication: Authentication = .none, handler: Handler = .page("OK")) {
        self.path = path
        self.clientCertificate = clientCertificate
        self.authentication = authentication
        self.handler = handler
    }

    /// The layout of `mtls serve` without a config file (CLI.md).
    public static let defaults: [PathRule] = [
        PathRule(path: "/", handler: .page("mtls serve: this path needs no client certificate.")),
        PathRule(path: "/secure", clientCertificate: .require, handler: .echoCertificate),
        PathRule(path: "/optional", clientCertificate: .accept, handler: .echoCertificate),
        PathRule(path: "/basic", authentication: .basic, handler: .page("Basic authentication succeeded.")),
        PathRule(path: "/digest", authentication: .digest, handler: .page("Digest authentication succeeded.")),
        PathRule(path: "/echo-cert", clientCertificate: .accept, handler: .echoCertificate),
        PathRule(path: "/sjis", handler: .shiftJIS),
        PathRule(path: "/redirect", handler: .redirect("/")),
        PathRule(path: "/refresh", handler: .refresh("/")),
        PathRule(path: "/cookie", handler: .cookie),
    ]

    /// Parses a config file: one rule a line, `PATH key=value ...` with keys `cert` (ignore, accept,
    /// require), `auth` (none, basic, digest) and `handler` (page, echo-cert, sjis, redirect:TARGET,
    /// refresh:TARGET, cookie); `#` starts a comment.
    public static func parse(_ text: String) throws(TestServerConfigurationError) -> [PathRule] {
        var rules: [PathRule] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?.trimmingWhitespace() ?? ""
            if line.isEmpty { continue }
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let path = words.first, path.hasPrefix("/") else {
                throw TestServerConfigurationError(line: number + 1, "a rule starts with a path beginning with '/'")
            }
            var rule = PathRule(path: path, handler: .page("OK: \(path)"))
            for word in words.dropFirst() {
                let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw TestServerConfigurationError(line: number + 1, "'\(word)' is not key=value") }
                switch parts[0] {
                case "cert":
                    guard let value = ClientCertificate(rawValue: parts[1]) else {
                        throw TestServerConfigurationError(line: number + 1, "cert must be ignore, accept or require")
                    }
                    rule.clientCertificate = value
                case "auth":
                    guard let value = Authentication(rawValue: parts[1]) else {
                        throw TestServerConfigurationError(line: number + 1, "auth must be none, basic or digest")
                    }
                    rule.authentication = value
                case "handler":
                    switch parts[1] {
                    case "page": rule.handler = .page("OK: \(path)")
                    case "echo-cert": rule.handler = .echoCertificate
                    case "sjis": rule.handler = .shiftJIS
                    case "cookie": rule.handler = .cookie
                    case let value where value.hasPrefix("redirect:"): rule.handler = .redirect(String(value.dropFirst(9)))
                    case let value where value.hasPrefix("refresh:"): rule.handler = .refresh(String(value.dropFirst(8)))
                    default: throw TestServerConfigurationError(line: number + 1, "unknown handler '\(parts[1])'")
                    }
                default:
                    throw TestServerConfigurationError(line: number + 1, "unknown key '\(parts[0])' (use cert, auth, handler)")
                }
            }
            rules.append(rule)
        }
        return rules
    }
}

/// A configuration of the test server that cannot be used: which line of the rules, and why.
public struct TestServerConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The line of the rules text (1-based).
    public var line: Int
    /// What is wrong with it.
    public var message: String

    public init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}

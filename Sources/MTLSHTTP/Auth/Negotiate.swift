internal import CGSSAPI
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// Where the Kerberos credentials of a `Negotiate` login come from.
public enum KerberosCredentialSource: Sendable, Equatable {
    /// The credentials cache of a `kinit` (as `curl --negotiate -u :`): nil is `KRB5CCNAME` or
    /// the system default; else a cache name such as `FILE:/tmp/krb5cc_1000`.
    case credentialsCache(String? = nil)
    /// A ticket obtained without `kinit` from ``LoginOptions/credentials`` (user principal and
    /// password, `gss_acquire_cred_with_password`); it lives in memory only, never in a cache.
    case password
    /// Whatever can be had, in the order of Windows' Negotiate provider (`--auth any`): the
    /// credentials cache (nil: `KRB5CCNAME` or the default) when it holds a ticket — of
    /// ``LoginOptions/credentials``' user when they are given — else, with credentials, a ticket
    /// from their password. When neither works the login falls back to NTLM (with credentials) or
    /// leaves the 401 as the answer, and ``NegotiateOutcome/fallback`` says why.
    case automatic(String? = nil)
}

/// SPNEGO with Kerberos (RFC 4559 `Negotiate`) through the system's GSSAPI, MIT krb5's
/// `libgssapi_krb5` loaded when first needed: one security context, from the first token to the
/// check of the server's last one (mutual authentication).
///
/// One owner: the context and credential handles are released when the instance goes.
public final class NegotiateContext: @unchecked Sendable {
    // @unchecked Sendable: used by one login flow at a time (LoginSession serialises flows).
    private var credential: OpaquePointer?
    private var context: OpaquePointer?
    /// The service principal, `HTTP/<host>`.
    public let servicePrincipal: String
    /// The user principal of the credential, once acquired.
    public private(set) var clientPrincipal: String?
    /// True once GSSAPI says the context is established (the server's last token checked).
    public private(set) var isEstablished = false
    /// True when the server proved its identity (mutual authentication was granted).
    public private(set) var mutualAuthenticated = false
    /// Where the ticket came from: the credentials cache, or the password (``KerberosCredentialSource/automatic(_:)`` resolves to one).
    public private(set) var usedSource: KerberosCredentialSource = .credentialsCache()

    /// Whether MIT krb5's GSSAPI can be loaded; nil when it can, else why not.
    public static var libraryFailure: String? { mtls_gss_load().map { String(cString: $0) } }

    /// Acquires initiator credentials for `HTTP/<host>`.
    ///
    /// - Parameters:
    ///   - host: The host name of the URL (no port): the SPN is `HTTP/<host>`, as typed
    ///     (no DNS canonicalisation is done here; krb5.conf's own settings apply).
    ///   - source: The credentials cache, or a password.
    ///   - credentials: The user principal and password for ``KerberosCredentialSource/password``.
    /// - Throws: ``KerberosFailure`` naming the cause.
    public init(host: String, source: KerberosCredentialSource, credentials: Credentials? = nil) throws(KerberosFailure) {
        servicePrincipal = "HTTP/\(host)"
        switch source {
        case .credentialsCache(let name):
            try acquire(cache: name)
        case .password:
            guard let credentials else {
                throw KerberosFailure(
                    reason: .noCredentials, clientPrincipal: nil, servicePrincipal: servicePrincipal, gssMessage: "a password source needs a user and password",
                    majorStatus: UInt32(MTLS_GSS_S_NO_CRED), beforeSending: true)
            }
            try acquire(password: credentials)
        case .automatic(let name):
            do throws(KerberosFailure) {
                try acquire(cache: name)
                if let credentials, !credentials.isUser(ofPrincipal: clientPrincipal) {
                    // Another user's ticket is not the login of the user given.
                    let held = clientPrincipal
                    mtls_gss_release_cred(credential)
                    credential = nil
                    clientPrincipal = nil
                    throw KerberosFailure(
                        reason: .noCredentials, clientPrincipal: held, servicePrincipal: servicePrincipal,
                        gssMessage: "the credentials cache holds a ticket of \(held ?? "another user"), not of \(credentials.user)", majorStatus: 0, beforeSending: true)
                }
                usedSource = .credentialsCache(name)
            } catch {
                guard let credentials else { throw error }
                let fromCache = error
                do throws(KerberosFailure) {
                    try acquire(password: credentials)
                } catch {
                    // The password's reason decides (it was the last chance); the cache's is kept in the text.
                    var failure = error
                    failure.gssMessage += (failure.gssMessage.isEmpty ? "" : "; ") + "before that, the credentials cache: \(fromCache.gssMessage)"
                    throw failure
                }
            }
        }
    }

    /// Initiator credentials from a credentials cache (nil: KRB5CCNAME or the default).
    private func acquire(cache name: String?) throws(KerberosFailure) {
        var cred: OpaquePointer? = nil
        var lifetime: UInt32 = 0
        let status = mtls_gss_acquire(nil, nil, 0, name, &cred, &lifetime)
        if let failure = Self.failure(status, service: servicePrincipal, client: clientPrincipal) { throw failure }
        credential = cred
        usedSource = .credentialsCache(name)
        if let cred, let name = mtls_gss_cred_name(cred) {
            clientPrincipal = String(cString: name)
            free(name)
        }
    }

    /// A fresh ticket-granting ticket from a password, held in memory only.
    private func acquire(password credentials: Credentials) throws(KerberosFailure) {
        var cred: OpaquePointer? = nil
        var lifetime: UInt32 = 0
        let principal = Self.principal(credentials)
        clientPrincipal = principal
        let status = credentials.password.withUnsafeBytes { bytes in
            mtls_gss_acquire(principal, bytes.baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count, nil, &cred, &lifetime)
        }
        if let failure = Self.failure(status, service: servicePrincipal, client: clientPrincipal) { throw failure }
        credential = cred
        usedSource = .password
        if let cred, let name = mtls_gss_cred_name(cred) {
            clientPrincipal = String(cString: name)
            free(name)
        }
    }

    deinit {
        mtls_gss_delete_context(context)
        mtls_gss_release_cred(credential)
    }

    /// The Kerberos principal for credentials: `DOMAIN\user` becomes `user@DOMAIN`, `user@REALM`
    /// and a bare `user` (the default realm) are passed as they are.
    static func principal(_ credentials: Credentials) -> String {
        if let domain = credentials.domain, !domain.isEmpty, !credentials.user.contains("@") { return "\(credentials.user)@\(domain.uppercased())" }
        let (user, domain) = credentials.ntlmUserAndDomain
        return domain.isEmpty ? user : "\(user)@\(domain.uppercased())"
    }

    /// One step: the first token (`input` nil), or the next from the server's token.
    ///
    /// - Parameter channelBindings: The application data of the TLS channel binding
    ///   (`tls-server-end-point:` + hash), or nil to send none.
    /// - Returns: The token to send, or nil when there is none (the context is complete).
    /// - Throws: ``KerberosFailure``.
    public func step(input: [UInt8]?, channelBindings: [UInt8]?) throws(KerberosFailure) -> [UInt8]? {
        var output: UnsafeMutablePointer<UInt8>? = nil
        var outputLength = 0
        var granted: UInt32 = 0
        let flags = UInt32(UInt32(MTLS_GSS_C_MUTUAL_FLAG) | UInt32(MTLS_GSS_C_SEQUENCE_FLAG))
        let status = Self.withOptionalBytes(channelBindings) { bindings, bindingsLength in
            Self.withOptionalBytes(input) { inputBytes, inputLength in
                mtls_gss_init(
                    credential, &context, "HTTP@" + servicePrincipal.dropFirst(5), flags, bindings, bindingsLength, inputBytes, inputLength, &output, &outputLength, &granted)
            }
        }
        defer { free(output) }
        if var failure = Self.failure(status, service: servicePrincipal, client: clientPrincipal) {
            failure.beforeSending = input == nil
            if let input, let code = Self.kerberosErrorCode(in: input) {
                failure.kerberosErrorCode = code
                failure.reason = KerberosFailure.classify(kerberosError: code)
            } else if input != nil, [.other, .wrongPassword, .cannotDecrypt].contains(failure.reason) {
                // The server's token did not verify (KRB5KRB_AP_ERR_BAD_INTEGRITY here is the AP-REP, not a password).
                failure.reason = .mutualAuthenticationFailed
            }
            throw failure
        }
        isEstablished = status.major == 0
        if isEstablished { mutualAuthenticated = granted & UInt32(UInt32(MTLS_GSS_C_MUTUAL_FLAG)) != 0 }
        guard let output, outputLength > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: output, count: outputLength))
    }

    private static func withOptionalBytes<R>(_ bytes: [UInt8]?, _ body: (UnsafePointer<UInt8>?, Int) -> R) -> R {
        guard let bytes else { return body(nil, 0) }
        return bytes.withUnsafeBufferPointer { body($0.baseAddress ?? UnsafePointer(bitPattern: 1), $0.count) }
    }

    private static func failure(_ status: mtls_gss_status, service: String, client: String?) -> KerberosFailure? {
        let text = status.text.map { String(cString: $0) } ?? ""
        free(status.text)
        guard status.major & UInt32(MTLS_GSS_ERROR_MASK) != 0 else { return nil }
        return KerberosFailure(
            reason: KerberosFailure.classify(major: status.major, minor: status.minor, text: text), clientPrincipal: client, servicePrincipal: service,
            gssMessage: text, majorStatus: status.major, beforeSending: true, minorStatus: status.minor)
    }

    /// The `error-code` of a `KRB-ERROR` (RFC 4120 §5.9.1, `[APPLICATION 30]`) inside a server's
    /// token — SPNEGO's `negTokenResp` wrapping the Kerberos mechanism token — or nil.
    public static func kerberosErrorCode(in token: [UInt8]) -> Int? {
        // The KRB-ERROR is found by its tag wherever the wrapping puts it; its body is then read by DER.
        var index = 0
        while index + 2 < token.count {
            if token[index] == 0x7E, let (start, length) = derLength(token, index + 1), start + length <= token.count,
                token[start] == 0x30, let (body, bodyLength) = derLength(token, start + 1), body + bodyLength <= start + length
            {
                var field = body
                while field < body + bodyLength {
                    let tag = token[field]
                    guard let (value, valueLength) = derLength(token, field + 1), value + valueLength <= body + bodyLength else { break }
                    if tag == 0xA6, token[value] == 0x02, let (int, intLength) = derLength(token, value + 1), intLength > 0, intLength <= 4 {
                        return token[int..<(int + intLength)].reduce(0) { $0 << 8 | Int($1) }
                    }
                    field = value + valueLength
                }
            }
            index += 1
        }
        return nil
    }

    /// A DER length at `offset`: the start of the value and its length.
    private static func derLength(_ bytes: [UInt8], _ offset: Int) -> (Int, Int)? {
        guard offset < bytes.count else { return nil }
        let first = bytes[offset]
        if first < 0x80 { return (offset + 1, Int(first)) }
        let count = Int(first & 0x7F)
        guard count >= 1, count <= 3, offset + count < bytes.count else { return nil }
        let length = bytes[(offset + 1)...(offset + count)].reduce(0) { $0 << 8 | Int($1) }
        return (offset + 1 + count, length)
    }
}

/// What a Kerberos (`Negotiate`) hop did, for the event log and the report.
public struct NegotiateOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The mechanism whose token was sent: `Kerberos`, or `NTLM` after a fallback.
    public var mechanism: String
    /// The user principal (`alice@EXAMPLE.COM`), when known.
    public var clientPrincipal: String?
    /// The service principal asked for (`HTTP/host`).
    public var servicePrincipal: String
    /// True when the server's final token was checked (mutual authentication), false when the
    /// server sent none; nil until a response to the token came.
    public var mutualAuthentication: Bool?
    /// The server's `Persistent-Auth` header (`true`: the login holds for the connection, as IIS
    /// and mod_auth_gssapi's `GssapiConnectionBound` say).
    public var persistentAuth: String?
    /// Why Kerberos was not used when another scheme answered instead, or when nothing could
    /// answer (`--auth any`; then ``mechanism`` is `none`).
    public var fallback: KerberosFailure?
    /// Where the Kerberos ticket came from: `credentials cache` or `password`; nil after a fallback.
    public var ticketSource: String?

    public init(
        mechanism: String, clientPrincipal: String? = nil, servicePrincipal: String, mutualAuthentication: Bool? = nil, persistentAuth: String? = nil,
        fallback: KerberosFailure? = nil
    ) {
        self.mechanism = mechanism
        self.clientPrincipal = clientPrincipal
        self.servicePrincipal = servicePrincipal
        self.mutualAuthentication = mutualAuthentication
        self.persistentAuth = persistentAuth
        self.fallback = fallback
    }

    /// `Kerberos alice@REALM → HTTP/host, mutual auth verified, Persistent-Auth: true`.
    /// The ticket's source, as a user would name it.
    static func ticketSourceName(_ source: KerberosCredentialSource) -> String {
        switch source {
        case .credentialsCache: "credentials cache"
        case .password: "password"
        case .automatic: "credentials cache or password"
        }
    }

    /// `Kerberos alice@REALM → HTTP/host, mutual auth verified, Persistent-Auth: true`.
    public var description: String {
        var text = "\(mechanism) \(clientPrincipal ?? "?") → \(servicePrincipal)"
        switch mutualAuthentication {
        case true?: text += ", mutual authentication verified"
        case false?: text += ", no final token from the server (mutual authentication not proven)"
        case nil: break
        }
        if let persistentAuth { text += ", Persistent-Auth: \(persistentAuth)" }
        if let ticketSource { text += ", ticket from the \(ticketSource)" }
        if let fallback { text += ", Kerberos not used: \(fallback.reason.rawValue)" }
        return text
    }
}

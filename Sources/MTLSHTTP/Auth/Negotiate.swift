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

/// Why a Kerberos (`Negotiate`) login failed, as GSSAPI and the KDC or server said it.
///
/// ``reason`` is keyed on GSSAPI's major status and on the Kerberos error code (`KRB-ERROR`
/// `error-code`) the server returned in its `WWW-Authenticate: Negotiate` token, or else on MIT
/// krb5's message text (GSSAPI minor codes through SPNEGO are process-local, not comparable).
public struct KerberosFailure: Sendable, Equatable, CustomStringConvertible {
    /// True when the KDC judged the account itself (wrong password, password expired, account
    /// disabled or locked out). Windows' Negotiate does not then try NTLM with the same password:
    /// the domain controller would refuse it too, and count a second failed logon toward lockout.
    public var judgesTheAccount: Bool { [.wrongPassword, .passwordExpired, .accountDisabled].contains(reason) }

    /// The failure classes a user can act on.
    public enum Reason: String, Sendable, Equatable {
        /// No ticket in the credentials cache (no `kinit`), or no cache at all.
        case noCredentials = "no-credentials"
        /// The ticket-granting ticket in the cache has expired.
        case ticketExpired = "ticket-expired"
        /// The KDC does not know `HTTP/<host>`: reached by IP address or by an alias, or no SPN registered.
        case servicePrincipalUnknown = "spn-unknown"
        /// No KDC of the realm answered.
        case kdcUnreachable = "kdc-unreachable"
        /// The clocks of this machine and the KDC or server differ by more than the allowed skew.
        case clockSkew = "clock-skew"
        /// The user's password has expired (with a password source).
        case passwordExpired = "password-expired"
        /// The account is disabled or locked (the KDC revoked its credentials).
        case accountDisabled = "account-disabled"
        /// The password is wrong (pre-authentication failed).
        case wrongPassword = "wrong-password"
        /// The KDC does not know the user principal.
        case clientUnknown = "client-unknown"
        /// The server's keytab has no key for the SPN the ticket is for (wrong SPN or keytab).
        case wrongServicePrincipal = "wrong-spn"
        /// The server's keytab holds an older key version (kvno) than the KDC issued the ticket with.
        case keyVersionOutdated = "kvno-outdated"
        /// The server could not decrypt the ticket (its key differs from the KDC's).
        case cannotDecrypt = "cannot-decrypt"
        /// The server's final token did not prove it holds the service key (mutual authentication).
        case mutualAuthenticationFailed = "mutual-auth-failed"
        /// The server refused the ticket and said nothing more (a 401 without a token).
        case refused = "refused"
        /// MIT krb5's GSSAPI library could not be loaded.
        case libraryUnavailable = "library-unavailable"
        /// Anything else; ``KerberosFailure/gssMessage`` says what.
        case other = "other"
    }

    /// The class of the failure.
    public var reason: Reason
    /// The user principal, when known (`alice@EXAMPLE.COM`).
    public var clientPrincipal: String?
    /// The service principal asked for (`HTTP/intranet.example.com`).
    public var servicePrincipal: String
    /// GSSAPI's own text (`gss_display_status` of the major and minor status), or the server's error.
    public var gssMessage: String
    /// The GSSAPI major status (RFC 2744), 0 when the failure came from the server.
    public var majorStatus: UInt32
    /// The Kerberos error code (RFC 4120 §7.5.9) in the server's token, when there was one.
    public var kerberosErrorCode: Int?
    /// Whether the failure happened here before anything was sent (else the server refused).
    public var beforeSending: Bool
    /// The GSSAPI minor status as the library returned it (for MIT krb5 usually a com_err code
    /// of the krb5 table; see ``KerberosFailure/krb5ErrorCode(minor:)``), 0 when not known.
    public var minorStatus: UInt32 = 0

    /// One sentence: what happened, to which principal.
    public var description: String { explanation.message }

    /// What happened and what to do, naming the principals.
    public var explanation: (message: String, hint: String) {
        let user = clientPrincipal.map { "'\($0)'" } ?? "the user"
        let spn = "'\(servicePrincipal)'"
        let host = servicePrincipal.split(separator: "/", maxSplits: 1).last.map(String.init) ?? servicePrincipal
        let said = gssMessage.isEmpty ? "" : " (GSSAPI: \(gssMessage))"
        switch reason {
        case .noCredentials:
            return (
                "no Kerberos ticket to answer Negotiate for \(spn): the credentials cache holds none\(said)",
                "run 'kinit user@REALM' first (or point KRB5CCNAME at a cache), or give --user and --user-password to get a ticket without kinit"
            )
        case .ticketExpired:
            return ("the Kerberos ticket of \(user) has expired\(said)", "run 'kinit' again to renew it")
        case .servicePrincipalUnknown:
            let address = CookieRules.isIPAddress(host)
            return (
                "the KDC does not know the service principal \(spn) asked for by \(user)\(address ? ": the site was reached by IP address, and SPNs name hosts" : "")\(said)",
                address
                    ? "use the server's host name (the one its SPN is registered for, e.g. 'setspn -L <service account>'); by IP address only NTLM can work"
                    : "use the host name the SPN is registered for (an alias/CNAME needs its own SPN: 'setspn -S HTTP/\(host) <service account>'), or register it"
            )
        case .kdcUnreachable:
            return (
                "no KDC answered for \(user) while asking for \(spn)\(said)", "check the realm's KDC in krb5.conf (or DNS SRV _kerberos._tcp records) and that port 88 is reachable"
            )
        case .clockSkew:
            return (
                "the clocks differ too much for Kerberos (more than the allowed skew, 5 minutes by default) between this machine and \(beforeSending ? "the KDC" : "the server at \(host)"), so the ticket of \(user) for \(spn) was refused\(said)",
                "synchronise the clocks (NTP) of the client, the KDC and the server"
            )
        case .passwordExpired:
            return ("the password of \(user) has expired\(said)", "change it (kpasswd, or Ctrl+Alt+Del → Change a password on Windows), then retry")
        case .accountDisabled:
            return ("the KDC refused \(user): the account is disabled or locked out\(said)", "ask the domain administrator to enable or unlock the account")
        case .wrongPassword:
            return ("the KDC refused the password of \(user) (pre-authentication failed)\(said)", "check the password (and the realm: user@REALM)")
        case .clientUnknown:
            return ("the KDC does not know the user \(user)\(said)", "check the user name and realm (user@REALM)")
        case .wrongServicePrincipal:
            return (
                "the server at \(host) could not accept the ticket of \(user) for \(spn): its keytab holds no key for that SPN (a wrong SPN, or a site bound to another service account)\(said)",
                "register \(spn) on the account the site runs as ('setspn -S \(servicePrincipal) <account>') and export a keytab holding it; on Apache check GssapiCredStore"
            )
        case .keyVersionOutdated:
            return (
                "the server at \(host) refused the ticket of \(user): it holds an out-of-date key (kvno) for \(spn): the account's password changed after the keytab was made\(said)",
                "export a new keytab for \(spn) (ktpass / kadmin ktadd) and install it on the server"
            )
        case .cannotDecrypt:
            return (
                "the server at \(host) could not decrypt the ticket of \(user) for \(spn): its key is not the KDC's (duplicate SPN, or a keytab for another account or encryption type)\(said)",
                "find duplicate SPNs ('setspn -X'), and re-export the keytab for the account that holds \(spn)"
            )
        case .mutualAuthenticationFailed:
            return (
                "the server's final Negotiate token for \(spn) did not prove its identity (mutual authentication)\(said)",
                "the response may not come from the real server; do not trust it"
            )
        case .refused:
            return (
                "the server refused the Kerberos ticket of \(user) for \(spn) without saying why (401 again, no token)\(said)",
                "look in the server's log (Windows: System log, Kerberos events)"
            )
        case .libraryUnavailable:
            return ("Kerberos is unavailable: \(gssMessage)", "install MIT Kerberos (Debian: apt-get install libgssapi-krb5-2 krb5-user), or use NTLM with --user")
        case .other:
            return ("Kerberos failed for \(user) and \(spn): \(gssMessage)", "see the GSSAPI message above; 'kinit' and 'kvno \(servicePrincipal)' show the same from the shell")
        }
    }

    /// MIT krb5's com_err table `krb5` (ERROR_TABLE_BASE_krb5): its first 128 codes are the
    /// protocol's own error codes (RFC 4120 §7.5.9), the rest the library's (krb5_err.et).
    static let krb5TableBase: Int32 = -1_765_328_384

    /// The offset in MIT's `krb5` error table of a GSSAPI minor status, or nil when the status is
    /// from another table (SPNEGO's, the GSS krb5 mechanism's own) or not a com_err code.
    ///
    /// MIT's mechglue passes a mechanism's minor status up unchanged the first time a value is
    /// seen, and re-maps it to a process-local number when another mechanism reported the same
    /// value (gssint_mecherrmap_map). A call to the krb5 mechanism keeps the code; through SPNEGO
    /// (what HTTP Negotiate uses) MIT 1.20 re-maps it, so there the code is recovered from the
    /// text by ``classify(tableText:)``. The code is read first wherever it survives.
    public static func krb5ErrorCode(minor: UInt32) -> Int? {
        let offset = Int64(Int32(bitPattern: minor)) - Int64(krb5TableBase)
        return (0..<256).contains(offset) ? Int(offset) : nil
    }

    /// The codes classified, as offsets in the `krb5` table (see ``classify(krb5Code:)``).
    static let classifiedKrb5Codes = [6, 7, 18, 23, 24, 31, 32, 37, 148, 154, 156, 220, 141, 195]

    /// The library's own message of each classified code (MIT's `error_message`, in the locale
    /// GSSAPI writes its texts in), longest first; empty when the library is not loaded.
    static let krb5TableMessages: [(text: String, reason: Reason)] = {
        classifiedKrb5Codes.compactMap { code -> (String, Reason)? in
            guard let message = mtls_krb5_error_message(krb5TableBase + Int32(code)), let reason = classify(krb5Code: code) else { return nil }
            let text = String(cString: message)
            return text.isEmpty || text.hasPrefix("Unknown code") ? nil : (text, reason)
        }.sorted { $0.0.count > $1.0.count }
    }()

    /// The class of a GSSAPI text by the krb5 table's own message for a classified code: the
    /// message (whose principal names are cut out, as MIT's extended messages insert them, e.g.
    /// "Server HTTP/x@R not found in Kerberos database") contains the table's text.
    static func classify(tableText text: String) -> Reason? {
        let words = normalized(text)
        return krb5TableMessages.first { words.contains(normalized($0.text)) }?.reason
    }

    /// Lower case, words naming principals or quoted realms cut out.
    private static func normalized(_ text: String) -> String {
        text.split(separator: " ").filter { !$0.contains("@") && !$0.contains("\"") }.joined(separator: " ").lowercased()
    }

    /// The class of a `krb5` error table offset (krb5.h's KRB5KDC_ERR_*, KRB5KRB_AP_ERR_*, KRB5_*).
    static func classify(krb5Code code: Int) -> Reason? {
        switch code {
        case 6: .clientUnknown  // KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN
        case 7: .servicePrincipalUnknown  // KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN
        case 18: .accountDisabled  // KRB5KDC_ERR_CLIENT_REVOKED (disabled, locked out, -allow_tix)
        case 23: .passwordExpired  // KRB5KDC_ERR_KEY_EXP
        case 24: .wrongPassword  // KRB5KDC_ERR_PREAUTH_FAILED
        case 31: .wrongPassword  // KRB5KRB_AP_ERR_BAD_INTEGRITY: the AS-REP did not decrypt (no pre-authentication)
        case 32: .ticketExpired  // KRB5KRB_AP_ERR_TKT_EXPIRED
        case 37, 148: .clockSkew  // KRB5KRB_AP_ERR_SKEW, KRB5_KDCREP_SKEW
        case 154, 156, 220: .kdcUnreachable  // KRB5_REALM_UNKNOWN ("Cannot find KDC"), KRB5_KDC_UNREACH, KRB5_REALM_CANT_RESOLVE
        case 141, 195: .noCredentials  // KRB5_CC_NOTFOUND, KRB5_FCC_NOFILE
        default: nil
        }
    }

    /// The class of a client-side GSSAPI failure: the krb5 error code in the minor status first,
    /// then the major status, and MIT krb5's text last.
    static func classify(major: UInt32, minor: UInt32 = 0, text: String) -> Reason {
        let error = major & UInt32(MTLS_GSS_ERROR_MASK)
        if major == UInt32(MTLS_GSS_S_UNAVAILABLE) && text.contains("could not be loaded") { return .libraryUnavailable }
        if let code = krb5ErrorCode(minor: minor), let reason = classify(krb5Code: code) { return reason }
        // Through SPNEGO the minor status is a process-local number (MIT's SPNEGO re-maps the
        // krb5 mechanism's code, which the mechglue then sees a second time: 100001, 100002, …),
        // so the code is recovered from the text, by the krb5 table's own message for each code
        // (error_message), not by English literals: that follows the library and its locale.
        if let reason = classify(tableText: text) { return reason }
        // The English literals below stay as the last resort, for MIT's extended messages that
        // reword the table's ("Cannot find KDC for realm \"X\"" for "Cannot find KDC for
        // requested realm") and for codes of other tables (the GSS krb5 mechanism's own says
        // "No Kerberos credentials available"). mtls does not call setlocale, so these are the
        // texts MIT writes (krb5-locales' translations apply only after setlocale).
        // The krb5 error table's messages (krb5/krb5_err.et), as gss_display_status gives them.
        let rules: [(String, Reason)] = [
            ("Server not found in Kerberos database", .servicePrincipalUnknown),
            ("Decrypt integrity check failed", .wrongPassword),  // no pre-authentication: the AS-REP did not decrypt
            ("Cannot contact any KDC", .kdcUnreachable),
            ("Cannot find KDC", .kdcUnreachable),
            ("Clock skew too great", .clockSkew),
            ("Password has expired", .passwordExpired),
            ("Client's credentials have been revoked", .accountDisabled),
            ("Clients credentials have been revoked", .accountDisabled),
            ("Preauthentication failed", .wrongPassword),
            ("Password incorrect", .wrongPassword),
            ("Client not found in Kerberos database", .clientUnknown),
            ("Ticket expired", .ticketExpired),
        ]
        // MIT names principals inside these texts ("Server HTTP/x@R not found in Kerberos database"):
        // the principal is cut out, so that a user called "expired" matches nothing.
        let words = text.split(separator: " ").filter { !$0.contains("@") }.joined(separator: " ").lowercased()
        for (needle, reason) in rules where words.contains(needle.lowercased()) { return reason }
        switch error {
        case UInt32(MTLS_GSS_S_CREDENTIALS_EXPIRED): return .ticketExpired
        case UInt32(MTLS_GSS_S_NO_CRED): return .noCredentials
        default: break
        }
        if text.contains("No Kerberos credentials available") || text.contains("No credentials cache found") || text.contains("not found") && text.contains("cache") {
            return .noCredentials
        }
        return .other
    }

    /// The class of a server's `KRB-ERROR` code (RFC 4120 §7.5.9).
    static func classify(kerberosError code: Int) -> Reason {
        switch code {
        case 37: .clockSkew  // KRB_AP_ERR_SKEW
        case 35: .wrongServicePrincipal  // KRB_AP_ERR_NOT_US
        case 44: .keyVersionOutdated  // KRB_AP_ERR_BADKEYVER
        case 45: .wrongServicePrincipal  // KRB_AP_ERR_NOKEY
        case 31, 41: .cannotDecrypt  // KRB_AP_ERR_BAD_INTEGRITY, KRB_AP_ERR_MODIFIED
        case 32: .ticketExpired  // KRB_AP_ERR_TKT_EXPIRED
        default: .other
        }
    }

    /// The name of a `KRB-ERROR` code (RFC 4120 §7.5.9) a server sends about an AP-REQ.
    public static func kerberosErrorName(_ code: Int) -> String {
        let names = [
            31: "KRB_AP_ERR_BAD_INTEGRITY", 32: "KRB_AP_ERR_TKT_EXPIRED", 33: "KRB_AP_ERR_TKT_NYV", 34: "KRB_AP_ERR_REPEAT", 35: "KRB_AP_ERR_NOT_US",
            36: "KRB_AP_ERR_BADMATCH", 37: "KRB_AP_ERR_SKEW", 41: "KRB_AP_ERR_MODIFIED", 44: "KRB_AP_ERR_BADKEYVER", 45: "KRB_AP_ERR_NOKEY",
            60: "KRB_ERR_GENERIC",
        ]
        return names[code] ?? "Kerberos error \(code)"
    }
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
                if let credentials, !LoginStateMachine.samePrincipal(clientPrincipal, credentials) {
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

extension KerberosFailure: Error {}

extension KerberosFailure {
    /// The failure as an ``HTTPSError`` (`.auth`) for `host`, with ``HTTPSError/kerberos`` set.
    func httpsError(host: String) -> HTTPSError {
        let (message, hint) = explanation
        var error = HTTPSError(.auth, host: host, message, hint: Hint(stringLiteral: hint))
        error.kerberos = self
        return error
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

internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// NTLM authentication (MS-NLMP) with NTLMv2 responses, as IIS "Windows authentication" uses over
/// HTTP: a Negotiate (type 1) message, the server's Challenge (type 2), and an Authenticate
/// (type 3) message, all on one kept-alive connection.
///
/// The NT hash is MD4, which OpenSSL 3 keeps in its legacy provider; it is loaded into the
/// library's own context, never into the process-wide default.
public enum NTLM {
    /// Negotiate flags (MS-NLMP §2.2.2.5) used here.
    public struct Flags: OptionSet, Sendable {
        /// The flag bits.
        public let rawValue: UInt32
        /// Flags from their bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// NTLMSSP_NEGOTIATE_UNICODE: strings are UTF-16LE.
        public static let unicode = Flags(rawValue: 0x0000_0001)
        /// NTLM_NEGOTIATE_OEM: OEM strings are acceptable.
        public static let oem = Flags(rawValue: 0x0000_0002)
        /// NTLMSSP_REQUEST_TARGET: the server names its domain.
        public static let requestTarget = Flags(rawValue: 0x0000_0004)
        /// NTLMSSP_NEGOTIATE_NTLM.
        public static let ntlm = Flags(rawValue: 0x0000_0200)
        /// NTLMSSP_NEGOTIATE_ALWAYS_SIGN.
        public static let alwaysSign = Flags(rawValue: 0x0000_8000)
        /// NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY.
        public static let extendedSessionSecurity = Flags(rawValue: 0x0008_0000)
        /// NTLMSSP_NEGOTIATE_TARGET_INFO: the challenge carries AV pairs.
        public static let targetInfo = Flags(rawValue: 0x0080_0000)
        /// NTLMSSP_NEGOTIATE_VERSION.
        public static let version = Flags(rawValue: 0x0200_0000)
        /// NTLMSSP_NEGOTIATE_128.
        public static let use128 = Flags(rawValue: 0x2000_0000)
        /// NTLMSSP_NEGOTIATE_56.
        public static let use56 = Flags(rawValue: 0x8000_0000)

        /// What this client asks for: Unicode, NTLM with extended session security, no signing or sealing.
        public static let client: Flags = [.unicode, .oem, .requestTarget, .ntlm, .alwaysSign, .extendedSessionSecurity, .use128, .use56]
    }

    /// The Challenge (type 2) message, parsed.
    public struct Challenge: Sendable {
        /// The 8-byte server challenge.
        public var serverChallenge: [UInt8]
        /// The flags the server chose.
        public var flags: Flags
        /// The target name (usually the domain), decoded.
        public var targetName: String
        /// The raw AV pairs (TargetInfo), echoed in the NTLMv2 response.
        public var targetInfo: [UInt8]

        /// Parses a type 2 message.
        ///
        /// - Throws: ``HTTPSError`` (`.auth`) naming what is malformed.
        public init(bytes: [UInt8], host: String = "") throws(HTTPSError) {
            func fail(_ why: String) -> HTTPSError { HTTPSError(.auth, host: host, "the NTLM challenge (type 2 message) is malformed: \(why)") }
            guard bytes.count >= 32, Array(bytes[0..<8]) == NTLM.signature else { throw fail("it does not start with NTLMSSP") }
            guard NTLM.u32(bytes, 8) == 2 else { throw fail("its message type is \(NTLM.u32(bytes, 8)), not 2") }
            flags = Flags(rawValue: NTLM.u32(bytes, 20))
            serverChallenge = Array(bytes[24..<32])
            func field(_ offset: Int) throws(HTTPSError) -> [UInt8] {
                guard bytes.count >= offset + 8 else { return [] }
                let length = Int(NTLM.u16(bytes, offset))
                let start = Int(NTLM.u32(bytes, offset + 4))
                guard length > 0 else { return [] }
                guard start >= 0, start + length <= bytes.count else { throw fail("a field points outside the message") }
                return Array(bytes[start..<(start + length)])
            }
            let name = try field(12)
            targetName = flags.contains(.unicode) ? NTLM.fromUTF16LE(name) : String(decoding: name, as: UTF8.self)
            targetInfo = flags.contains(.targetInfo) || bytes.count >= 48 ? try field(40) : []
        }

        /// The value of one AV pair (MS-NLMP §2.2.2.1), e.g. 7 for MsvAvTimestamp.
        public func avPair(_ id: UInt16) -> [UInt8]? {
            var offset = 0
            while offset + 4 <= targetInfo.count {
                let pairID = NTLM.u16(targetInfo, offset)
                let length = Int(NTLM.u16(targetInfo, offset + 2))
                if pairID == 0 { return nil }
                guard offset + 4 + length <= targetInfo.count else { return nil }
                if pairID == id { return Array(targetInfo[(offset + 4)..<(offset + 4 + length)]) }
                offset += 4 + length
            }
            return nil
        }
    }

    /// The result of computing an NTLMv2 response.
    public struct V2Response: Sendable {
        /// NTOWFv2: HMAC-MD5 over the user and domain keyed with the NT hash.
        public var responseKeyNT: [UInt8]
        /// NTProofStr, the first 16 bytes of the NT response.
        public var ntProof: [UInt8]
        /// The NtChallengeResponse.
        public var ntResponse: [UInt8]
        /// The LmChallengeResponse (LMv2).
        public var lmResponse: [UInt8]
        /// SessionBaseKey.
        public var sessionBaseKey: [UInt8]
    }

    static let signature: [UInt8] = Array("NTLMSSP".utf8) + [0]

    /// The Negotiate (type 1) message: flags only, no domain or workstation.
    public static func negotiateMessage(flags: Flags = .client) -> [UInt8] {
        signature + le32(1) + le32(flags.rawValue) + [UInt8](repeating: 0, count: 16)
    }

    /// The NT hash: MD4 of the UTF-16LE password, or nil without OpenSSL's legacy provider.
    ///
    /// The hash is password-equivalent for NTLM: callers wipe it (``Secret/wipe(_:)``) after use.
    public static func ntHash(password: Secret) -> [UInt8]? {
        password.withUTF16LittleEndian { utf16 in
            var copy = [UInt8](utf16)
            defer { Secret.wipe(&copy) }
            return AuthHash.md4(copy)
        }
    }

    /// NTLMv2 (MS-NLMP §3.3.2): `NTOWFv2`, `NTProofStr`, the NT and LM responses, the session key.
    ///
    /// - Parameters:
    ///   - timestamp: The 8-byte FILETIME (little-endian) placed in the blob.
    ///   - clientChallenge: 8 random bytes.
    /// - Returns: nil when MD4 is unavailable.
    public static func v2Response(user: String, password: Secret, domain: String, serverChallenge: [UInt8], clientChallenge: [UInt8], timestamp: [UInt8], targetInfo: [UInt8])
        -> V2Response?
    {
        guard var ntHash = ntHash(password: password) else { return nil }
        defer { Secret.wipe(&ntHash) }
        let responseKey = AuthHash.hmacMD5(key: ntHash, utf16LE(user.uppercased() + domain))
        // temp = RespType HiRespType Z(6) Time ClientChallenge Z(4) ServerName Z(4)
        let temp: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0] + timestamp + clientChallenge + [0, 0, 0, 0] + targetInfo + [0, 0, 0, 0]
        let proof = AuthHash.hmacMD5(key: responseKey, serverChallenge + temp)
        let lm = AuthHash.hmacMD5(key: responseKey, serverChallenge + clientChallenge) + clientChallenge
        let sessionKey = AuthHash.hmacMD5(key: responseKey, proof)
        return V2Response(responseKeyNT: responseKey, ntProof: proof, ntResponse: proof + temp, lmResponse: lm, sessionBaseKey: sessionKey)
    }

    /// RFC 5929 `tls-server-end-point` channel binding data of a TLS server certificate: the hash of
    /// its DER encoding with the hash of its signature algorithm, SHA-256 when that is MD5 or SHA-1
    /// (or has no separate hash, as Ed25519).
    public static func tlsServerEndPoint(_ certificate: Certificate) -> [UInt8] {
        var digestNID: Int32 = NID_undef
        var keyNID: Int32 = NID_undef
        _ = OBJ_find_sigid_algs(X509_get_signature_nid(certificate.x509Pointer), &digestNID, &keyNID)
        let name: String
        switch digestNID {
        case NID_sha384: name = "SHA384"
        case NID_sha512: name = "SHA512"
        default: name = "SHA256"  // RFC 5929 §4.1: MD5 and SHA-1 are replaced by SHA-256
        }
        return AuthHash.digest(name, certificate.derBytes) ?? []
    }

    /// The 16-byte `MsvAvChannelBindings` value (MS-NLMP §2.2.2.1): the MD5 hash of a
    /// `gss_channel_bindings_struct` (RFC 2744 §3.11) with no addresses and `applicationData` —
    /// `"tls-server-end-point:"` followed by ``tlsServerEndPoint(_:)`` for HTTPS.
    public static func channelBindingsHash(applicationData: [UInt8]) -> [UInt8] {
        // initiator_addrtype, initiator_address.length, acceptor_addrtype, acceptor_address.length: 0
        let structure = [UInt8](repeating: 0, count: 16) + le32(UInt32(applicationData.count)) + applicationData
        return AuthHash.md5(structure)
    }

    /// The channel binding of an HTTPS server, as IIS Extended Protection checks it.
    public static func httpsChannelBindingsHash(serverCertificate: Certificate) -> [UInt8] {
        channelBindingsHash(applicationData: Array("tls-server-end-point:".utf8) + tlsServerEndPoint(serverCertificate))
    }

    /// `targetInfo` with an `MsvAvChannelBindings` pair (id 10) set to `hash`, before `MsvAvEOL`.
    static func targetInfo(_ targetInfo: [UInt8], settingChannelBindings hash: [UInt8]) -> [UInt8] {
        var pairs: [UInt8] = []
        var offset = 0
        while offset + 4 <= targetInfo.count {
            let id = u16(targetInfo, offset)
            let length = Int(u16(targetInfo, offset + 2))
            guard id != 0, offset + 4 + length <= targetInfo.count else { break }
            if id != 10 { pairs += targetInfo[offset..<(offset + 4 + length)] }
            offset += 4 + length
        }
        return pairs + le16(10) + le16(UInt16(hash.count)) + hash + [0, 0, 0, 0]
    }

    /// The Authenticate (type 3) message answering `challenge`.
    ///
    /// - Parameters:
    ///   - channelBindings: The ``channelBindingsHash(applicationData:)`` of the TLS connection
    ///     (``httpsChannelBindingsHash(serverCertificate:)``), sent as `MsvAvChannelBindings` in the
    ///     NTLMv2 response: IIS with Extended Protection refuses a login without it. nil sends none.
    ///   - clientChallenge: Fixed for tests; nil draws 8 random bytes.
    ///   - timestamp: Fixed for tests; nil uses the server's MsvAvTimestamp, or now.
    /// - Throws: ``HTTPSError`` (`.auth`) when MD4 is unavailable.
    public static func authenticateMessage(
        challenge: Challenge, credentials: Credentials, channelBindings: [UInt8]? = nil, workstation: String = "", clientChallenge: [UInt8]? = nil, timestamp: [UInt8]? = nil,
        host: String = ""
    ) throws(HTTPSError) -> [UInt8] {
        let (user, domain) = credentials.ntlmUserAndDomain
        let serverTimestamp = challenge.avPair(7)
        let time = timestamp ?? serverTimestamp ?? fileTime(Date())
        let boundTargetInfo = channelBindings.map { NTLM.targetInfo(challenge.targetInfo, settingChannelBindings: $0) } ?? challenge.targetInfo
        guard
            let response = v2Response(
                user: user, password: credentials.password, domain: domain, serverChallenge: challenge.serverChallenge, clientChallenge: clientChallenge ?? AuthHash.random(8),
                timestamp: time, targetInfo: boundTargetInfo)
        else {
            throw HTTPSError(
                .auth, host: host, "NTLM needs MD4, and OpenSSL's legacy provider (ossl-modules/legacy.so) could not be loaded",
                hint: "install the OpenSSL legacy provider module, or use Basic or Digest")
        }
        // With a server timestamp, MS-NLMP sends an all-zero LMv2 response.
        let lm = serverTimestamp != nil ? [UInt8](repeating: 0, count: 24) : response.lmResponse
        let unicode = challenge.flags.contains(.unicode)
        func encode(_ text: String) -> [UInt8] { unicode ? utf16LE(text) : Array(text.utf8) }
        var flags = Flags.client.intersection(challenge.flags.union([.unicode, .ntlm]))
        if !unicode { flags.remove(.unicode) }
        let fields: [[UInt8]] = [lm, response.ntResponse, encode(domain), encode(user), encode(workstation), []]
        var header = signature + le32(3)
        var payload: [UInt8] = []
        var offset = 64
        for field in fields {
            header += le16(UInt16(field.count)) + le16(UInt16(field.count)) + le32(UInt32(offset))
            payload += field
            offset += field.count
        }
        header += le32(flags.rawValue)
        return header + payload
    }

    /// A FILETIME (100 ns ticks since 1601-01-01), little-endian.
    public static func fileTime(_ date: Date) -> [UInt8] {
        let ticks = UInt64(max(0, (date.timeIntervalSince1970 + 11_644_473_600) * 10_000_000))
        return (0..<8).map { UInt8((ticks >> (8 * UInt64($0))) & 0xFF) }
    }

    static func utf16LE(_ text: String) -> [UInt8] { text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
    static func fromUTF16LE(_ bytes: [UInt8]) -> String {
        var units: [UInt16] = []
        var index = 0
        while index + 1 < bytes.count {
            units.append(UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8)
            index += 2
        }
        return String(decoding: units, as: UTF16.self)
    }
    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * UInt32($0))) & 0xFF) } }
    static func u16(_ bytes: [UInt8], _ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8 }
    static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) } }
}

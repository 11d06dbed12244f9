internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust
import Synchronization

/// Owns one `SSL_SESSION*` (a reference from `SSL_get1_session`).
final class SSLSessionReference: @unchecked Sendable {
    // @unchecked Sendable: never modified after the handshake that made it; SSL_set_session only
    // takes another reference, which OpenSSL counts atomically.
    let pointer: OpaquePointer
    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { SSL_SESSION_free(pointer) }
}

/// What every client made from one configuration can share: the `SSL_CTX` (about 14 KiB in
/// OpenSSL 3.0) and the trust evaluator per host (its X509_STORE, the anchors' facts). Sessions
/// are not in it: each client keeps its own (`TLSClient.sessions`), and the context's internal
/// session store is off. An evaluator's policy is fixed; what it remembers is a verdict any of the
/// clients would have worked out the same way (`TrustEvaluator.rememberedEvaluation`).
final class TLSClientContext: Sendable {
    let context: SSLContextReference
    let evaluators = Locked<[String: TrustEvaluator]>([:])
    static let evaluatorCapacity = 64
    init(_ context: SSLContextReference) { self.context = context }
}

/// Makes client TLS connections with one configuration, reusing sessions per host.
public final class TLSClient: Sendable {
    public let configuration: TLSClientConfiguration
    private let shared: TLSClientContext
    var context: SSLContextReference { shared.context }
    private let baseEvaluatorPolicy: TrustPolicy
    /// Sessions for resumption, per host, port and server name: this client's own.
    private let sessions = Locked<[String: SSLSessionReference]>([:])
    private let observer = Locked<(@Sendable (TLSEvent) -> Void)?>(nil)
    /// Receives each ``TLSEvent`` of every connection as it happens (for a live `-v` trace); a
    /// change applies to the connections made after it.
    public var eventObserver: (@Sendable (TLSEvent) -> Void)? {
        get { observer.withLock { $0 } }
        set { observer.withLock { $0 = newValue } }
    }

    /// Prepares a client.
    public init(configuration: TLSClientConfiguration) throws(HTTPSError) {
        self.configuration = configuration
        self.baseEvaluatorPolicy = configuration.trust
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPSError(.configuration, host: "-", "OpenSSL could not create a TLS context")
        }
        shared = TLSClientContext(SSLContextReference(taking: ctx))
        if configuration.releasesIdleBuffers { _ = mtls_SSL_CTX_set_mode(ctx, Int(SSL_MODE_RELEASE_BUFFERS)) }
        if let minimum = configuration.minimumVersion { _ = mtls_SSL_CTX_set_min_proto_version(ctx, minimum.openSSLValue) }
        if let maximum = configuration.maximumVersion { _ = mtls_SSL_CTX_set_max_proto_version(ctx, maximum.openSSLValue) }
        if (configuration.minimumVersion ?? .tls1_2) < .tls1_2 {
            SSL_CTX_set_security_level(ctx, 0)  // TLS 1.0/1.1 need SHA-1 signatures, asked for explicitly
        }
        if let list = configuration.cipherList, SSL_CTX_set_cipher_list(ctx, list) != 1 {
            throw HTTPSError(.configuration, host: "-", "the cipher list '\(list)' names no cipher OpenSSL knows")
        }
        if let suites = configuration.cipherSuites, SSL_CTX_set_ciphersuites(ctx, suites) != 1 {
            throw HTTPSError(.configuration, host: "-", "the TLS 1.3 cipher suites '\(suites)' are not known to OpenSSL")
        }
        if configuration.allowsLegacyRenegotiation {
            SSL_CTX_set_options(ctx, mtls_SSL_OP_LEGACY_SERVER_CONNECT() | mtls_SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION())
        }
        if !configuration.alpn.isEmpty {
            var wire: [UInt8] = []
            for protocolName in configuration.alpn {
                wire.append(UInt8(protocolName.utf8.count))
                wire += protocolName.utf8
            }
            _ = SSL_CTX_set_alpn_protos(ctx, wire, UInt32(wire.count))
        }
        // Sessions are kept per host by `rememberSession`; OpenSSL's internal client cache would also
        // keep every TLS 1.3 ticket received (up to 20,480, with the peer's certificates): memory
        // that grew with every new connection.
        _ = mtls_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        // Read ahead: one read(2) takes what the socket has (a small response is one read, not a
        // record header and then its body). Whatever OpenSSL holds unprocessed is seen with
        // SSL_has_pending, which every wait on the socket checks first.
        _ = SSL_CTX_ctrl(ctx, SSL_CTRL_SET_READ_AHEAD, 1, nil)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_cert_verify_callback(ctx, clientVerifyTrampoline, nil)
        SSL_CTX_set_cert_cb(ctx, clientCertificateTrampoline, nil)
        SSL_CTX_set_info_callback(ctx, clientInfoTrampoline)
        SSL_CTX_set_msg_callback(ctx, tlsMessageCallback)
    }

    /// A client with `other`'s configuration, `SSL_CTX` and trust evaluators, and sessions of its
    /// own: what a fan-out of independent clients (no session or connection of one reused by
    /// another, as `probe --targets` keeps its probes apart) makes once instead of once per client.
    /// A verdict one of them worked out for a chain is remembered for the others; the policy is
    /// `other`'s.
    public init(sharingContextWith other: TLSClient) {
        configuration = other.configuration
        baseEvaluatorPolicy = other.baseEvaluatorPolicy
        shared = other.shared
    }

    /// True when both clients use the same `SSL_CTX` and evaluators.
    package func sharesContext(with other: TLSClient) -> Bool { shared === other.shared }

    private func evaluator(for host: String?) throws(HTTPSError) -> TrustEvaluator {
        let key = host ?? ""
        if let cached = shared.evaluators.withLock({ $0[key] }) { return cached }
        var policy = baseEvaluatorPolicy
        policy.hostname = configuration.validatesHostname ? host : nil
        if policy.purpose == .any { policy.purpose = .server }
        let made: TrustEvaluator
        do throws(MTLSTrustError) {
            made = try TrustEvaluator(policy: policy)
        } catch {
            throw HTTPSError(.configuration, host: host ?? "-", error.message)
        }
        shared.evaluators.withLock { evaluators in
            // Bounded: clients sharing a context may meet thousands of hosts (a fleet), each with
            // an evaluator of its own; one made again costs what it cost the first time.
            if evaluators.count >= TLSClientContext.evaluatorCapacity { evaluators.removeAll() }
            evaluators[key] = made
        }
        return made
    }

    /// Connects and completes the TLS handshake.
    ///
    /// - Parameters:
    ///   - host: The host to verify and (unless it is an IP literal) to send as SNI.
    ///   - port: The port.
    ///   - connectTo: Where to connect instead (`--connect-to`), keeping `host` for SNI and checks.
    public func connect(host: String, port: Int, connectTo: (host: String, port: Int)? = nil, deadline: Deadline? = nil, token: CancellationToken? = nil) throws(HTTPSError)
        -> TLSConnection
    {
        try Engine.blocking { () async throws(HTTPSError) -> TLSConnection in
            try await self.connect(host: host, port: port, connectTo: connectTo, deadline: deadline, token: token)
        }
    }

    /// The async form of ``connect(host:port:connectTo:deadline:token:)``: every wait (name
    /// lookup, TCP connect, handshake) is awaited on the engine, holding no thread.
    public func connect(host: String, port: Int, connectTo: (host: String, port: Int)? = nil, deadline: Deadline? = nil, token: CancellationToken? = nil) async throws(HTTPSError)
        -> TLSConnection
    {
        let timeouts = configuration.timeouts
        let total = deadline ?? .after(timeouts.total)
        let target = connectTo ?? (host, port)
        let socket = try await TCP.connect(host: target.host, port: target.port, deadline: Deadline.earliest(total, .after(timeouts.connect)), token: token)
        let label = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard let ssl = SSL_new(context.pointer) else {
            socket.close()
            throw HTTPSError(.configuration, host: label, "OpenSSL could not create a connection")
        }
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let serverName = configuration.serverName ?? (IPAddress.parse(bare) == nil ? bare : nil)
        var report = TLSSessionReport(host: host, port: port)
        report.serverName = serverName
        report.address = socket.peerAddress
        let state = TLSConnectionState(report: report, isServer: false, clientConfiguration: configuration, evaluator: try evaluator(for: bare))
        state.observer = eventObserver
        let connection = TLSConnection(ssl: ssl, socket: socket, context: context, state: state, label: label)
        connection.token = token
        if let serverName { _ = mtls_SSL_set_tlsext_host_name(ssl, serverName) }
        _ = mtls_SSL_request_ocsp_status(ssl)  // OCSP stapling, as browsers ask (StapledOCSP.swift)
        if configuration.offersPostHandshakeAuth { SSL_set_post_handshake_auth(ssl, 1) }
        guard SocketBIO.attach(ssl, fd: socket.fd) else {
            connection.close()
            throw HTTPSError(.configuration, host: label, "OpenSSL could not create a socket BIO")
        }
        let sessionKey = "\(label)/\(serverName ?? "")"
        connection.sessionKey = sessionKey
        sessions.withLock { sessions in
            if let session = sessions[sessionKey] { _ = SSL_set_session(ssl, session.pointer) }
        }
        do throws(HTTPSError) {
            _ = try await connection.drive(.tlsHandshake, until: Deadline.earliest(total, .after(timeouts.handshake))) { SSL_connect(ssl) }
        } catch {
            var failure = error
            connection.fillSessionFacts()
            failure.report = connection.report
            if failure.trust == nil { failure.trust = connection.report.trust }
            connection.close()
            throw failure
        }
        state.handshakeDone = true
        connection.fillSessionFacts()
        if let revoked = connection.judgeStapledOCSP(continuing: configuration.continuesOnTrustFailure) {
            connection.close()
            throw revoked
        }
        rememberSession(connection, key: sessionKey)
        return connection
    }

    /// Stores the connection's session for resumption by the next connection to the same host.
    func rememberSession(_ connection: TLSConnection, key: String) {
        guard let session = SSL_get1_session(connection.ssl) else { return }
        let reference = SSLSessionReference(taking: session)
        sessions.withLock { $0[key] = reference }
    }

    /// Stores the session after the first read (TLS 1.3 tickets arrive after the handshake).
    public func refreshSession(_ connection: TLSConnection) {
        guard let key = connection.sessionKey else { return }
        rememberSession(connection, key: key)
    }
}

// MARK: Client callbacks (non-capturing trampolines; Swift errors are stored, never thrown through C)

/// Server certificate check: the MTLSTrust evaluator decides, inside the handshake.
private func clientVerifyTrampoline(_ storeContext: OpaquePointer?, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let storeContext,
        let sslRaw = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()),
        let state = TLSConnectionState.from(OpaquePointer(sslRaw)),
        let configuration = state.clientConfiguration, let evaluator = state.evaluator,
        let leafPointer = X509_STORE_CTX_get0_cert(storeContext)
    else { return 0 }
    let leaf = Certificate(borrowingX509: leafPointer)
    var sent: [Certificate] = []
    if let untrusted = X509_STORE_CTX_get0_untrusted(storeContext) {
        for i in 0..<mtls_sk_X509_num(untrusted) {
            if let x509 = mtls_sk_X509_value(untrusted, i) { sent.append(Certificate(borrowingX509: x509)) }
        }
    }
    if sent.first != leaf { sent.insert(leaf, at: 0) }
    let host = state.report.host
    // A renegotiation must present the same server certificate.
    if let first = state.firstPeerLeaf, first != leaf {
        state.trustFailure = HTTPSError(
            .serverCertificate, host: host, "the server presented a different certificate during renegotiation (\(leaf.displayName) instead of \(first.displayName)); refused",
            hint: "this is what a man-in-the-middle or a misconfigured load balancer does")
        X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
        return 0
    }
    if state.firstPeerLeaf != nil { return 1 }
    state.firstPeerLeaf = leaf
    state.report.peerChainAsSent = sent
    let evaluation = evaluator.evaluate(leaf, extraIntermediates: Array(sent.dropFirst()))
    state.report.trust = evaluation
    var problems: [String] = evaluation.findings.map { $0.reason }
    if let pinning = configuration.pinning ?? configuration.pins.map(PinDocument.init) {
        let result = pinning.evaluate(evaluation.chain, host: host)
        state.report.pinEvaluation = result
        state.report.pinMatch = result.summary
        if result.refusesConnection { problems.append(result.mismatchDescription) }
    }
    if problems.isEmpty { return 1 }
    if configuration.continuesOnTrustFailure {
        state.report.overriddenProblems += problems
        return 1
    }
    let first = evaluation.findings.first
    let message = first.map { "\($0.reason) (\($0.name))" } ?? problems[0]
    state.trustFailure = HTTPSError(
        .serverCertificate, host: host, "the server's certificate is not trusted: \(message)", hint: first?.hint ?? "check the pins, or the server's key changed", trust: evaluation
    )
    X509_STORE_CTX_set_error(storeContext, first?.code ?? X509_V_ERR_APPLICATION_VERIFICATION)
    return 0
}

/// The shared info callback, plus what only a client does in a server-initiated renegotiation.
///
/// OpenSSL's TLS client answers a HelloRequest with `SSL_renegotiate_abbreviated`: its ClientHello
/// offers the current session ID and ticket, and a server that resumes (Node.js, any OpenSSL
/// server without `SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION`) completes an abbreviated
/// handshake, in which no CertificateRequest can be sent: the server that renegotiated to ask for
/// our certificate never gets it. curl never resumes in a renegotiation either. Once the
/// HelloRequest has been processed (state `TLS_ST_CR_HELLO_REQ`, before the ClientHello is built),
/// `SSL_renegotiate` sets `new_session`, so the ClientHello carries an empty session ID and an empty
/// session-ticket extension: the renegotiation is a full handshake.
private func clientInfoTrampoline(_ ssl: OpaquePointer?, _ where_: Int32, _ ret: Int32) {
    tlsInfoCallback(ssl, where_, ret)
    guard let ssl, let state = TLSConnectionState.from(ssl), state.handshakeDone else { return }
    if where_ & SSL_CB_LOOP != 0, SSL_get_state(ssl) == TLS_ST_CR_HELLO_REQ {
        _ = SSL_renegotiate(ssl)
        ERR_clear_error()
    }
    if where_ & SSL_CB_HANDSHAKE_DONE != 0, SSL_version(ssl) != TLSVersion.tls1_3.openSSLValue, SSL_session_reused(ssl) == 1 {
        state.report.resumedRenegotiations += 1
    }
}

/// The server asked for a client certificate: record when and what, choose an identity.
private func clientCertificateTrampoline(_ ssl: OpaquePointer?, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let ssl, let state = TLSConnectionState.from(ssl), let configuration = state.clientConfiguration else { return 1 }
    var names: [String] = []
    if let list = SSL_get0_peer_CA_list(ssl) {
        for i in 0..<mtls_sk_X509_NAME_num(list) {
            if let name = mtls_sk_X509_NAME_value(list, i) { names.append(Certificate.nameString(name)) }
        }
    }
    var algorithms: [String] = []
    let count = SSL_get_sigalgs(ssl, -1, nil, nil, nil, nil, nil)
    if count > 0 {
        for index in 0..<min(count, 64) {
            var signAndHash: Int32 = 0
            var sign: Int32 = 0
            var hash: Int32 = 0
            var rsig: UInt8 = 0
            var rhash: UInt8 = 0
            _ = SSL_get_sigalgs(ssl, index, &sign, &hash, &signAndHash, &rsig, &rhash)
            let code = (UInt16(rhash) << 8) | UInt16(rsig)
            if let name = signatureSchemeNames[code] {
                algorithms.append(name)
            } else if signAndHash != NID_undef, let name = OBJ_nid2ln(signAndHash) {
                algorithms.append(String(cString: name))
            } else {
                algorithms.append(String(cFormat: "0x%04x", code))
            }
        }
    }
    let phase: CertificateRequestPhase = !state.handshakeDone ? .handshake : (SSL_version(ssl) == TLSVersion.tls1_3.openSSLValue ? .postHandshake : .renegotiation)
    let identities = configuration.identities
    let fitting = identities.first { $0.fits(acceptedCANames: names) }
    let chosen = fitting ?? identities.first
    var record = CertificateRequestRecord(
        phase: phase, acceptedCANames: names, signatureAlgorithms: algorithms, sentCertificate: nil, sentIdentityLabel: nil,
        identityFits: fitting != nil, hadNoIdentity: identities.isEmpty)
    if let chosen {
        if SSL_use_certificate(ssl, chosen.certificate.x509Pointer) == 1, SSL_use_PrivateKey(ssl, chosen.privateKey.evpPointer) == 1 {
            if let stack = mtls_sk_X509_new_null() {
                for certificate in chosen.chain { _ = mtls_sk_X509_push(stack, certificate.x509Pointer) }
                _ = mtls_SSL_set1_chain(ssl, stack)  // set1: OpenSSL takes its own references
                mtls_sk_X509_free(stack)
            }
            record.sentCertificate = chosen.certificate
            record.sentIdentityLabel = chosen.label
        }
        ERR_clear_error()
    }
    state.report.certificateRequests.append(record)
    return 1
}

/// TLS SignatureScheme names (RFC 8446 §4.2.3), as `openssl s_client` prints them.
let signatureSchemeNames: [UInt16: String] = [
    0x0401: "rsa_pkcs1_sha256", 0x0501: "rsa_pkcs1_sha384", 0x0601: "rsa_pkcs1_sha512",
    0x0403: "ecdsa_secp256r1_sha256", 0x0503: "ecdsa_secp384r1_sha384", 0x0603: "ecdsa_secp521r1_sha512",
    0x0804: "rsa_pss_rsae_sha256", 0x0805: "rsa_pss_rsae_sha384", 0x0806: "rsa_pss_rsae_sha512",
    0x0807: "ed25519", 0x0808: "ed448", 0x0809: "rsa_pss_pss_sha256", 0x080a: "rsa_pss_pss_sha384", 0x080b: "rsa_pss_pss_sha512",
    0x0201: "rsa_pkcs1_sha1", 0x0203: "ecdsa_sha1", 0x0303: "ecdsa_sha224", 0x0301: "rsa_pkcs1_sha224", 0x0402: "dsa_sha256", 0x0202: "dsa_sha1", 0x0302: "dsa_sha224",
    0x0502: "dsa_sha384", 0x0602: "dsa_sha512",
]

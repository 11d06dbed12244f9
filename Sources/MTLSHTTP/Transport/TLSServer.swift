internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// How a TLS server presents itself and treats client certificates.
public struct TLSServerConfiguration: Sendable {
    public var certificate: Certificate
    public var privateKey: PrivateKey
    public var chain: [Certificate]
    /// The CAs whose client certificates are trusted (also the CA names sent, unless ``sendsCANames`` is false).
    public var clientCAs: [Certificate]
    /// Send the client CA names in certificate requests (IIS 2012+ sends none by default).
    public var sendsCANames: Bool
    /// Ask for the client certificate in the first handshake (IIS `clientcertnegotiation=enable`, nginx).
    public var requestsCertificateAtHandshake: Bool
    public var crls: [CertificateRevocationList]
    public var minimumVersion: TLSVersion
    public var maximumVersion: TLSVersion?
    /// Let a client resume its session in a renegotiation, and so skip the certificate request, as
    /// servers do by default (Node.js, OpenSSL without `SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION`):
    /// for testing clients against them. Off by default: a renegotiation is then a full handshake.
    public var allowsResumptionInRenegotiation: Bool

    public init(
        certificate: Certificate, privateKey: PrivateKey, chain: [Certificate] = [], clientCAs: [Certificate] = [], sendsCANames: Bool = true,
        requestsCertificateAtHandshake: Bool = false, crls: [CertificateRevocationList] = [], minimumVersion: TLSVersion = .tls1_2, maximumVersion: TLSVersion? = nil,
        allowsResumptionInRenegotiation: Bool = false
    ) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.chain = chain
        self.clientCAs = clientCAs
        self.sendsCANames = sendsCANames
        self.requestsCertificateAtHandshake = requestsCertificateAtHandshake
        self.crls = crls
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.allowsResumptionInRenegotiation = allowsResumptionInRenegotiation
    }
}

/// The server side of the transport: accepts TLS connections and asks for client certificates at
/// any moment — in the handshake, by TLS 1.2 renegotiation, or by TLS 1.3 post-handshake auth.
public final class TLSServerContext: Sendable {
    public let configuration: TLSServerConfiguration
    let context: SSLContextReference
    let clientEvaluator: TrustEvaluator

    public init(configuration: TLSServerConfiguration) throws(HTTPSError) {
        self.configuration = configuration
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw HTTPSError(.configuration, host: "-", "OpenSSL could not create a server context") }
        context = SSLContextReference(taking: ctx)
        _ = mtls_SSL_CTX_set_min_proto_version(ctx, configuration.minimumVersion.openSSLValue)
        if let maximum = configuration.maximumVersion { _ = mtls_SSL_CTX_set_max_proto_version(ctx, maximum.openSSLValue) }
        if configuration.minimumVersion < .tls1_2 { SSL_CTX_set_security_level(ctx, 0) }
        guard SSL_CTX_use_certificate(ctx, configuration.certificate.x509Pointer) == 1,
            SSL_CTX_use_PrivateKey(ctx, configuration.privateKey.evpPointer) == 1,
            SSL_CTX_check_private_key(ctx) == 1
        else {
            ERR_clear_error()
            throw HTTPSError(.configuration, host: "-", "the server key does not match its certificate \(configuration.certificate.displayName)")
        }
        if !configuration.chain.isEmpty, let stack = mtls_sk_X509_new_null() {
            for certificate in configuration.chain { _ = mtls_sk_X509_push(stack, certificate.x509Pointer) }
            _ = mtls_SSL_CTX_set1_chain(ctx, stack)  // set1: takes its own references
            mtls_sk_X509_free(stack)
        }
        if configuration.sendsCANames, let names = mtls_sk_X509_NAME_new_null() {
            for ca in configuration.clientCAs {
                if let name = X509_NAME_dup(X509_get_subject_name(ca.x509Pointer)) { _ = mtls_sk_X509_NAME_push(names, name) }
            }
            SSL_CTX_set_client_CA_list(ctx, names)  // set0: the context owns `names`
        }
        let mode = configuration.requestsCertificateAtHandshake ? SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE : SSL_VERIFY_NONE
        SSL_CTX_set_verify(ctx, mode, nil)
        SSL_CTX_set_cert_verify_callback(ctx, serverVerifyTrampoline, nil)
        SSL_CTX_set_info_callback(ctx, tlsInfoCallback)
        SSL_CTX_set_msg_callback(ctx, tlsMessageCallback)
        SSL_CTX_set_alpn_select_cb(ctx, serverALPNTrampoline, nil)
        _ = mtls_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_SERVER))
        // A renegotiation for a client certificate must be a full handshake, or no CertificateRequest
        // is sent. Session tickets (TLS 1.2 and 1.3) stay on either way, as in OpenSSL's default.
        if !configuration.allowsResumptionInRenegotiation {
            SSL_CTX_set_options(ctx, mtls_SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION())
        }
        var sessionID = Array("mtls-serve".utf8)
        _ = SSL_CTX_set_session_id_context(ctx, &sessionID, UInt32(sessionID.count))
        _ = mtls_SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384")
        do throws(MTLSTrustError) {
            clientEvaluator = try TrustEvaluator(policy: TrustPolicy(anchors: configuration.clientCAs, intermediates: [], purpose: .client, crls: configuration.crls))
        } catch {
            throw HTTPSError(.configuration, host: "-", error.message)
        }
    }

    /// Completes the TLS handshake on an accepted socket.
    public func accept(_ socket: SocketHandle, deadline: Deadline) throws(HTTPSError) -> TLSConnection {
        let label = socket.peerAddress ?? "client"
        guard let ssl = SSL_new(context.pointer) else {
            socket.close()
            throw HTTPSError(.configuration, host: label, "OpenSSL could not create a connection")
        }
        let state = TLSConnectionState(report: TLSSessionReport(host: label, port: 0), isServer: true, clientConfiguration: nil, evaluator: nil)
        state.clientEvaluator = clientEvaluator
        let connection = TLSConnection(ssl: ssl, socket: socket, context: context, state: state, label: label)
        guard SocketBIO.attach(ssl, fd: socket.fd) else {
            connection.close()
            throw HTTPSError(.configuration, host: label, "OpenSSL could not create a socket BIO")
        }
        do throws(HTTPSError) {
            _ = try connection.drive(.tlsHandshake, until: deadline) { SSL_accept(ssl) }
        } catch {
            // The report keeps the alerts with their direction, so the log can say which side sent one.
            var failure = error
            connection.fillSessionFacts()
            failure.report = connection.report
            throw failure
        }
        state.handshakeDone = true
        connection.fillSessionFacts()
        if configuration.requestsCertificateAtHandshake {
            state.report.certificateRequests.append(
                CertificateRequestRecord(
                    phase: .handshake, acceptedCANames: configuration.sendsCANames ? configuration.clientCAs.map(\.subject) : [], signatureAlgorithms: [],
                    sentCertificate: connection.peerCertificate, sentIdentityLabel: nil, identityFits: true, hadNoIdentity: false))
        }
        return connection
    }
}

extension TLSConnection {
    /// Why a certificate request after the request could not be made.
    public enum LateRequestOutcome: Sendable, Equatable {
        /// The request was made and answered (with or without a certificate).
        case asked(CertificateRequestPhase)
        /// TLS 1.3 and the client did not offer post-handshake auth.
        case clientOffersNoPostHandshakeAuth
        /// TLS 1.2 and the client refused to renegotiate.
        case clientRefusedRenegotiation
    }

    /// Server side: asks for a client certificate now, after a request has been read — by TLS 1.2
    /// renegotiation or TLS 1.3 post-handshake auth — and waits until the client has answered.
    public func requestClientCertificate(deadline: Deadline) throws(HTTPSError) -> LateRequestOutcome {
        let isTLS13 = SSL_version(ssl) == TLSVersion.tls1_3.openSSLValue
        SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, nil)
        if isTLS13 {
            ERR_clear_error()
            state.awaitingClientFinished = true
            state.clientFinishedSeen = false
            defer { state.awaitingClientFinished = false }
            guard SSL_verify_client_post_handshake(ssl) == 1 else {
                ERR_clear_error()
                return .clientOffersNoPostHandshakeAuth
            }
            _ = try drive(.tlsHandshake, until: deadline) { SSL_do_handshake(ssl) }
            try pump(until: deadline) { self.state.clientFinishedSeen }
            record(.postHandshake)
            return .asked(.postHandshake)
        }
        ERR_clear_error()
        let alertsBefore = state.report.alerts.count
        guard SSL_renegotiate(ssl) == 1 else {
            ERR_clear_error()
            return .clientRefusedRenegotiation
        }
        _ = try drive(.tlsHandshake, until: deadline) { SSL_do_handshake(ssl) }
        var refused = false
        try pump(until: deadline) {
            if self.state.report.alerts.dropFirst(alertsBefore).contains(where: { $0.description == "no renegotiation" }) {
                refused = true
                return true
            }
            return SSL_renegotiate_pending(self.ssl) == 0
        }
        if refused { return .clientRefusedRenegotiation }
        record(.renegotiation)
        return .asked(.renegotiation)
    }

    private func record(_ phase: CertificateRequestPhase) {
        state.report.certificateRequests.append(
            CertificateRequestRecord(
                phase: phase, acceptedCANames: [], signatureAlgorithms: [], sentCertificate: peerCertificate, sentIdentityLabel: nil, identityFits: true, hadNoIdentity: false))
    }

    /// Reads handshake records (peeking, so no application data is consumed) until `done`.
    private func pump(until deadline: Deadline, _ done: () -> Bool) throws(HTTPSError) {
        var byte: UInt8 = 0
        while !done() {
            ERR_clear_error()
            let result = SSL_peek(ssl, &byte, 1)
            if let failure = state.trustFailure {
                state.trustFailure = nil
                throw failure
            }
            if result > 0 { return }  // the client sent data: the exchange is over either way
            if done() { return }
            let status = SSLCallResult(ssl, returned: result)
            switch status {
            case .wantRead, .wantWrite:
                if !socket.wait(forRead: status == .wantRead, forWrite: status == .wantWrite, until: deadline) {
                    throw HTTPSError(.timeout, host: label, "the client did not answer the certificate request in time")
                }
            case .closedCleanly:
                throw HTTPSError(.io, host: label, "the client closed the connection during the certificate request")
            case .systemCall, .failed:
                let reasons = OpenSSLErrorQueue.drain().map(\.reason).joined(separator: "; ")
                throw HTTPSError(
                    .clientCertificate, host: label, "the certificate request failed: \(reasons.isEmpty ? "connection error" : reasons)",
                    alert: state.report.alerts.last?.description)
            }
        }
    }
}

/// Server side: evaluate the client's certificate, record it, never fail the handshake (the HTTP
/// layer answers 403.16/403.17/403.13 as IIS does).
private func serverVerifyTrampoline(_ storeContext: OpaquePointer?, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    guard let storeContext,
        let sslRaw = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()),
        let state = TLSConnectionState.from(OpaquePointer(sslRaw)),
        let leafPointer = X509_STORE_CTX_get0_cert(storeContext)
    else { return 1 }
    let leaf = Certificate(borrowingX509: leafPointer)
    var sent: [Certificate] = []
    if let untrusted = X509_STORE_CTX_get0_untrusted(storeContext) {
        for i in 0..<mtls_sk_X509_num(untrusted) {
            if let x509 = mtls_sk_X509_value(untrusted, i) { sent.append(Certificate(borrowingX509: x509)) }
        }
    }
    state.clientTrust = state.clientEvaluator?.evaluate(leaf, extraIntermediates: sent.filter { $0 != leaf })
    state.report.peerChainAsSent = sent.isEmpty ? [leaf] : sent
    return 1
}

/// ALPN: the server speaks HTTP/1.1 only (renegotiation and post-handshake auth do not exist in HTTP/2).
private func serverALPNTrampoline(
    _ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ outLength: UnsafeMutablePointer<UInt8>?,
    _ input: UnsafePointer<UInt8>?, _ inputLength: UInt32, _ arg: UnsafeMutableRawPointer?
) -> Int32 {
    guard let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
    var index = 0
    let total = Int(inputLength)
    while index < total {
        let length = Int(input[index])
        let start = index + 1
        guard start + length <= total else { break }
        if length == 8, String(decoding: UnsafeBufferPointer(start: input + start, count: length), as: UTF8.self) == "http/1.1" {
            out.pointee = input + start
            outLength.pointee = UInt8(length)
            return SSL_TLSEXT_ERR_OK
        }
        index = start + length
    }
    return SSL_TLSEXT_ERR_NOACK
}

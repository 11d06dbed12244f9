import Foundation
import XCTest

@testable import MTLSHTTP
import MTLSTrust
import MTLSTestSupport

/// Negotiate with Kerberos against a real MIT KDC and Apache mod_auth_gssapi (scripts/peers/kerberos.sh):
/// the login from a credentials cache and from a password, mutual authentication, the
/// connection-bound login, the certificate asked for after the 401, and every failure class made
/// to happen for real, each naming its cause.
final class KerberosNegotiateTests: XCTestCase {
    /// The peer, with KRB5_CONFIG pointing at its private krb5.conf (GSSAPI reads it per context).
    private func peer() throws -> LoginPeer {
        let peer = try LoginPeers.shared.kerberos()
        setenv("KRB5_CONFIG", peer["KRB5_CONFIG"], 1)
        return peer
    }

    /// `kinit` into a new cache file of the peer's dir; returns `FILE:<path>`.
    private func kinit(_ peer: LoginPeer, user: String? = nil, lifetime: String? = nil) throws -> String {
        let cache = "FILE:\(peer["DIR"])/cc-\(UUID().uuidString)"
        let life = lifetime.map { "-l \($0) " } ?? ""
        let result = Subprocess.run(
            "/bin/sh",
            [
                "-c", "printf '%s\\n' \"$0\" | KRB5_CONFIG=\"$1\" KRB5CCNAME=\"$2\" kinit \(life)\"$3\" >/dev/null", peer["PASSWORD"], peer["KRB5_CONFIG"], cache,
                user ?? peer["USER"],
            ])
        XCTAssertEqual(result.status, 0, "kinit failed")
        return cache
    }

    private func session(_ peer: LoginPeer, source: KerberosCredentialSource, credentials: Credentials? = nil, allowed: Set<AuthScheme> = [.negotiate], bindings: Bool = true)
        throws -> LoginSession
    {
        try LoginFixtures.session(LoginOptions(credentials: credentials, allowedSchemes: allowed, sendsChannelBinding: bindings, kerberos: source))
    }

    private func failure(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> HTTPSError? {
        do {
            try body()
            XCTFail("expected a failure", file: file, line: line)
        } catch let error as HTTPSError {
            return error
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
        return nil
    }

    func testLoginFromTheCredentialsCacheWithMutualAuthentication() throws {
        let peer = try peer()
        let cache = try kinit(peer)
        let session = try session(peer, source: .credentialsCache(cache))
        let result = try session.get("https://localhost:\(peer.port)/kerberos")
        XCTAssertEqual(result.status, 200, result.text.text)
        XCTAssertEqual(LoginFixtures.fields(result.text.text)["remote_user"], "alice@MTLS.TEST")
        XCTAssertEqual(result.hops.map(\.status), [401, 200])
        let outcome = try XCTUnwrap(result.hops.last?.negotiate)
        XCTAssertEqual(outcome.mechanism, "Kerberos")
        XCTAssertEqual(outcome.clientPrincipal, "alice@MTLS.TEST")
        XCTAssertEqual(outcome.servicePrincipal, "HTTP/localhost")
        XCTAssertEqual(outcome.mutualAuthentication, true, "the server's final token was checked")
        XCTAssertEqual(outcome.persistentAuth, "true")
        XCTAssertTrue(result.hops.last?.reusedConnection ?? false, "the 401 round trip stays on one connection")
        XCTAssertEqual(result.hops.last?.channelBindingSent, true)
        XCTAssertTrue(result.hops.last?.description.contains("mutual authentication verified") ?? false)
        // Connection-bound (Persistent-Auth: true): the next request on that connection needs no token.
        let again = try session.get("https://localhost:\(peer.port)/kerberos")
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.hops.map(\.status), [200], "the connection stayed authenticated")
    }

    func testLoginWithAPasswordNeedsNoKinit() throws {
        let peer = try peer()
        let credentials = Credentials(user: peer["USER"], password: Secret(peer["PASSWORD"]))
        let session = try session(peer, source: .password, credentials: credentials)
        let result = try session.get("https://localhost:\(peer.port)/kerberos")
        XCTAssertEqual(result.status, 200, result.text.text)
        XCTAssertEqual(LoginFixtures.fields(result.text.text)["remote_user"], "alice@MTLS.TEST")
        XCTAssertEqual(result.hops.last?.negotiate?.mutualAuthentication, true)
    }

    func testNegotiateThenBasicIsAnsweredWithKerberos() throws {
        let peer = try peer()
        let session = try session(peer, source: .credentialsCache(try kinit(peer)))
        let result = try session.get("https://localhost:\(peer.port)/negotiate-basic")
        XCTAssertEqual(result.status, 200)
        let offered = result.hops.first?.challenges.map(\.normalizedScheme) ?? []
        XCTAssertTrue(offered.first == "negotiate" && offered.contains("basic"), "\(offered)")
        XCTAssertEqual(result.hops.last?.sentAuthorization, .negotiate)
        XCTAssertEqual(LoginFixtures.fields(result.text.text)["auth_type"], "Negotiate")
    }

    /// TLS 1.2: the 401, the Kerberos answer, then the certificate request (renegotiation) on the same connection.
    func testKerberosThenACertificateAskedForAfterTheRequest() throws {
        let peer = try peer()
        let identity = try ClientIdentity.files(certificatePath: LoginFixtures.cert("client-alice.pem"), keyPath: LoginFixtures.cert("client-alice.key"))
        var configuration = try LoginFixtures.configuration()
        configuration.identities = [identity]
        let session = try LoginSession(
            configuration: configuration, options: LoginOptions(allowedSchemes: [.negotiate], kerberos: .credentialsCache(try kinit(peer))))
        let result = try session.get("https://localhost:\(peer["RENEG_PORT"])/kerberos-cert")
        XCTAssertEqual(result.status, 200, result.text.text)
        let fields = LoginFixtures.fields(result.text.text)
        XCTAssertEqual(fields["remote_user"], "alice@MTLS.TEST")
        XCTAssertEqual(fields["verify"], "SUCCESS")
        XCTAssertEqual(fields["protocol"], "TLSv1.2")
        XCTAssertEqual(result.response.tls.certificateRequests.map(\.phase), [.renegotiation], "the certificate was asked for after the request")
        XCTAssertEqual(result.hops.map(\.status), [401, 200])
        XCTAssertTrue(result.hops.last?.reusedConnection ?? false)
    }

    /// IIS's order (scripts/peers/kerberos/iis_negotiate.py): the anonymous request gets the 401
    /// Negotiate, and the certificate is asked for only on the authenticated request of the same
    /// connection — by TLS 1.2 renegotiation, and by TLS 1.3 post-handshake auth. The client's
    /// event log and the server's own record both show the 401 before the CertificateRequest.
    func testIISOrderTheCertificateIsAskedForAfterTheKerberos401() throws {
        let peer = try peer()
        let identity = try ClientIdentity.files(certificatePath: LoginFixtures.cert("client-alice.pem"), keyPath: LoginFixtures.cert("client-alice.key"))
        let cache = try kinit(peer)
        let cases: [(String, CertificateRequestPhase, String)] = [("IIS_PORT", .renegotiation, "TLSv1.2"), ("IIS_PHA_PORT", .postHandshake, "TLSv1.3")]
        for (port, phase, version) in cases {
            var configuration = try LoginFixtures.configuration()
            configuration.identities = [identity]
            let session = try LoginSession(configuration: configuration, options: LoginOptions(allowedSchemes: [.negotiate], kerberos: .credentialsCache(cache)))
            let result = try session.get("https://localhost:\(peer[port])/kerberos-cert")
            XCTAssertEqual(result.status, 200, "\(port): \(result.text.text)")
            let fields = LoginFixtures.fields(result.text.text)
            XCTAssertEqual(fields["remote_user"], "alice@MTLS.TEST", port)
            XCTAssertEqual(fields["verify"], "SUCCESS", port)
            XCTAssertEqual(fields["protocol"], version, port)
            XCTAssertEqual(
                fields["order"], "GET /kerberos-cert,401 Negotiate,GET /kerberos-cert,authenticated alice@MTLS.TEST,CertificateRequest \(phase.rawValue),200 alice@MTLS.TEST",
                "\(port): the server asked after the login")
            XCTAssertEqual(result.hops.map(\.status), [401, 200], port)
            XCTAssertTrue(result.hops.last?.reusedConnection ?? false, "\(port): one connection")
            XCTAssertEqual(result.hops.last?.negotiate?.mutualAuthentication, true, port)
            XCTAssertEqual(result.response.tls.certificateRequests.map(\.phase), [phase], port)
            // The client's event log: 401, then the CertificateRequest, then 200.
            let events = result.response.tls.events.events
            let unauthorized = try XCTUnwrap(events.firstIndex { if case .httpResponse(401, _) = $0 { true } else { false } }, "\(port): \(events.map(\.line))")
            let request = try XCTUnwrap(
                events.firstIndex { if case .message(false, "CertificateRequest", phase == .renegotiation ? .renegotiation : .postHandshake) = $0 { true } else { false } })
            let ok = try XCTUnwrap(events.firstIndex { if case .httpResponse(200, _) = $0 { true } else { false } })
            XCTAssertTrue(unauthorized < request && request < ok, "\(port): \(events.map(\.line))")
        }
        // Apache asks in the other order: the certificate before the 401 (mod_ssl's access hook runs first).
        var configuration = try LoginFixtures.configuration()
        configuration.identities = [identity]
        let session = try LoginSession(configuration: configuration, options: LoginOptions(allowedSchemes: [.negotiate], kerberos: .credentialsCache(cache)))
        let apache = try session.get("https://localhost:\(peer["RENEG_PORT"])/kerberos-cert")
        XCTAssertEqual(apache.status, 200)
        let events = apache.response.tls.events.events
        let request = try XCTUnwrap(events.firstIndex { if case .message(false, "CertificateRequest", .renegotiation) = $0 { true } else { false } })
        let unauthorized = try XCTUnwrap(events.firstIndex { if case .httpResponse(401, _) = $0 { true } else { false } })
        XCTAssertLessThan(request, unauthorized, events.map(\.line).joined(separator: "\n"))
    }

    /// Without a certificate, the IIS-ordered peer answers the authenticated request with 403.7.
    func testIISOrderWithoutACertificateIs403AfterTheLogin() throws {
        let peer = try peer()
        let session = try session(peer, source: .credentialsCache(try kinit(peer)))
        let result = try session.get("https://localhost:\(peer["IIS_PORT"])/kerberos-cert")
        XCTAssertEqual(result.status, 403, result.text.text)
        XCTAssertEqual(result.hops.map(\.status), [401, 403])
        XCTAssertEqual(result.response.tls.certificateRequests.map(\.phase), [.renegotiation])
        XCTAssertTrue(result.text.text.contains("403.7"), result.text.text)
    }

    // MARK: Client-side failures, before anything is sent

    func testNoCredentialsNamesKinit() throws {
        let peer = try peer()
        let session = try session(peer, source: .credentialsCache("FILE:\(peer["DIR"])/no-such-cache"))
        let error = try XCTUnwrap(failure { _ = try session.get("https://localhost:\(peer.port)/kerberos") })
        XCTAssertEqual(error.kerberos?.reason, .noCredentials, error.description)
        XCTAssertTrue(error.hint?.description.contains("kinit") ?? false)
        XCTAssertEqual(session.hops.count, 1, "nothing was sent after the 401")
    }

    func testASiteReachedByIPAddressHasNoServicePrincipal() throws {
        let peer = try peer()
        let session = try session(peer, source: .credentialsCache(try kinit(peer)))
        let error = try XCTUnwrap(failure { _ = try session.get("https://127.0.0.1:\(peer.port)/kerberos") })
        XCTAssertEqual(error.kerberos?.reason, .servicePrincipalUnknown, error.description)
        XCTAssertEqual(error.kerberos?.servicePrincipal, "HTTP/127.0.0.1")
        XCTAssertTrue(error.message.contains("reached by IP address"), error.message)
        XCTAssertTrue(error.message.contains("not found in Kerberos database"), "GSSAPI's own text is kept: \(error.message)")
    }

    func testExpiredTicket() throws {
        let peer = try peer()
        let cache = try kinit(peer, lifetime: "2s")
        Thread.sleep(forTimeInterval: 3)
        let session = try session(peer, source: .credentialsCache(cache))
        let error = try XCTUnwrap(failure { _ = try session.get("https://localhost:\(peer.port)/kerberos") })
        XCTAssertEqual(error.kerberos?.reason, .ticketExpired, error.description)
        XCTAssertTrue(error.hint?.description.contains("kinit") ?? false)
    }

    func testExpiredPasswordDisabledAccountAndWrongPassword() throws {
        let peer = try peer()
        let cases: [(String, String, KerberosFailure.Reason)] = [
            (peer["EXPIRED_USER"], peer["PASSWORD"], .passwordExpired), (peer["DISABLED_USER"], peer["PASSWORD"], .accountDisabled),
            (peer["USER"], "wrong", .wrongPassword), ("nobody", "x", .clientUnknown),
        ]
        for (user, password, reason) in cases {
            let session = try session(peer, source: .password, credentials: Credentials(user: user, password: Secret(password)))
            let error = try XCTUnwrap(failure { _ = try session.get("https://localhost:\(peer.port)/kerberos") })
            XCTAssertEqual(error.kerberos?.reason, reason, "\(user): \(error.description)")
            XCTAssertEqual(error.kerberos?.clientPrincipal, "\(user)", "\(user)")
            XCTAssertTrue(error.message.contains(user), error.message)
        }
    }

    func testKDCUnreachable() throws {
        let peer = try peer()
        // A copy of the peer's krb5.conf whose KDC port is closed (the KDC's port + 1000 is not listened on).
        let original = try String(contentsOfFile: peer["KRB5_CONFIG"], encoding: .utf8)
        let closed = original.replacingOccurrences(of: "127.0.0.1:\(peer["KDC_PORT"])", with: "127.0.0.1:9")
        let path = peer["DIR"] + "/krb5-unreachable.conf"
        try closed.write(toFile: path, atomically: true, encoding: .utf8)
        setenv("KRB5_CONFIG", path, 1)
        defer { setenv("KRB5_CONFIG", peer["KRB5_CONFIG"], 1) }
        let session = try session(peer, source: .password, credentials: Credentials(user: peer["USER"], password: Secret(peer["PASSWORD"])))
        let error = try XCTUnwrap(failure { _ = try session.get("https://localhost:\(peer.port)/kerberos") })
        XCTAssertEqual(error.kerberos?.reason, .kdcUnreachable, error.description)
    }

    // MARK: Server-side failures, read from the 401's Negotiate token

    func testServerSideFailuresAreReadFromTheKerberosErrorInTheToken() throws {
        let peer = try peer()
        let cache = try kinit(peer)
        let cases: [(String, KerberosFailure.Reason, Int)] = [
            ("WRONG_SPN_PORT", .wrongServicePrincipal, 35), ("OLD_KVNO_PORT", .keyVersionOutdated, 44), ("SKEW_PORT", .clockSkew, 37),
        ]
        for (port, reason, code) in cases {
            let session = try session(peer, source: .credentialsCache(cache))
            let error = try XCTUnwrap(failure { _ = try session.get("https://localhost:\(peer[port])/kerberos") })
            XCTAssertEqual(error.kerberos?.reason, reason, "\(port): \(error.description)")
            XCTAssertEqual(error.kerberos?.kerberosErrorCode, code, port)
            XCTAssertEqual(error.kerberos?.beforeSending, false)
            XCTAssertTrue(error.message.contains("HTTP/localhost"), error.message)
            XCTAssertEqual(session.hops.map(\.status), [401, 401], port)
        }
    }

    func testTheKerberosErrorCodeIsFoundInTheSPNEGOWrapping() throws {
        // mod_auth_gssapi's 401 for an out-of-date keytab (KRB_AP_ERR_BADKEYVER, 44), as captured from the peer.
        let token =
            "oXIwcKADCgEComkEZ2BlBgkqhkiG9xIBAgIDAH5WMFSgAwIBBaEDAgEepBEYDzIwMjYxMjA3MDI0MDQ5WqUFAgMLrbemAwIBLKkLGwlNVExTLlRFU1SqHDAaoAMCAQOhEzARGwRIVFRQGwlsb2NhbGhvc3Q="
        XCTAssertEqual(NegotiateContext.kerberosErrorCode(in: Array(try XCTUnwrap(Data(base64Encoded: token)))), 44)
        XCTAssertNil(NegotiateContext.kerberosErrorCode(in: [0x7E, 0x03, 0x30, 0x01]))
        XCTAssertNil(NegotiateContext.kerberosErrorCode(in: []))
    }

    // MARK: Channel bindings

    /// The token carries the tls-server-end-point binding: an acceptor (python3-gssapi, the peer's
    /// keytab) given the right binding accepts it, one given another binding refuses it.
    func testTheTokenCarriesTheChannelBinding() throws {
        let peer = try peer()
        guard Subprocess.run("/usr/bin/python3", ["-c", "import gssapi"]).status == 0 else { throw XCTSkip("python3-gssapi is not installed") }
        let context = try NegotiateContext(host: "localhost", source: .credentialsCache(try kinit(peer)))
        let certificate = try HTTPFixtures.certificates("server.pem")[0]
        let bindings = LoginStateMachine.channelBindingData(certificate)
        let token = try XCTUnwrap(try context.step(input: nil, channelBindings: bindings))
        let script = """
            import base64, sys, gssapi, gssapi.raw as raw
            creds = gssapi.Credentials(usage='accept', store={'keytab': sys.argv[1]})
            bindings = raw.ChannelBindings(application_data=bytes.fromhex(sys.argv[2]))
            try:
                result = raw.accept_sec_context(base64.b64decode(sys.argv[3]), acceptor_creds=creds, channel_bindings=bindings)
                print('accepted', str(gssapi.Name(result.initiator_name)))
            except gssapi.exceptions.GSSError as e:
                print('refused', e.maj_code)
            """
        func accept(_ data: [UInt8]) -> String {
            Subprocess.run(
                "/bin/sh",
                [
                    "-c", "exec \"$@\" 2>&1", "sh", "/usr/bin/env", "KRB5_CONFIG=\(peer["KRB5_CONFIG"])", "KRB5RCACHETYPE=none", "/usr/bin/python3", "-c", script,
                    peer["DIR"] + "/http.keytab", AuthHash.hex(data), Data(token).base64EncodedString(),
                ]
            ).stdout
        }
        XCTAssertTrue(accept(bindings).hasPrefix("accepted alice@MTLS.TEST"), accept(bindings))
        let other = LoginStateMachine.channelBindingData(try HTTPFixtures.certificates("server-p384.pem")[0])
        XCTAssertTrue(accept(other).hasPrefix("refused"), accept(other))
    }

    func testNoChannelBindingSendsNone() throws {
        let peer = try peer()
        let session = try session(peer, source: .credentialsCache(try kinit(peer)), bindings: false)
        let result = try session.get("https://localhost:\(peer.port)/kerberos")
        XCTAssertEqual(result.status, 200)
        XCTAssertEqual(result.hops.last?.channelBindingSent, false)
    }

    // MARK: Fallback

    /// `.automatic` (`--auth any`): the ticket cache when it holds a ticket, no password needed.
    func testAutomaticUsesTheTicketCache() throws {
        let peer = try peer()
        let options = LoginOptions(kerberos: .automatic(try kinit(peer)))
        let result = try LoginFixtures.session(options).get("https://localhost:\(peer.port)/kerberos")
        XCTAssertEqual(result.status, 200, result.text.text)
        XCTAssertEqual(result.hops.last?.negotiate?.mechanism, "Kerberos")
        XCTAssertEqual(result.hops.last?.negotiate?.ticketSource, "credentials cache")
        XCTAssertEqual(result.hops.last?.negotiate?.mutualAuthentication, true)
    }

    /// `.automatic` with a password and no cache: a ticket from the password, still Kerberos.
    func testAutomaticGetsATicketFromThePasswordWhenTheCacheHasNone() throws {
        let peer = try peer()
        let options = LoginOptions(
            credentials: Credentials(user: peer["USER"], password: Secret(peer["PASSWORD"])), kerberos: .automatic("FILE:\(peer["DIR"])/no-such-cache"))
        let result = try LoginFixtures.session(options).get("https://localhost:\(peer.port)/kerberos")
        XCTAssertEqual(result.status, 200, result.text.text)
        XCTAssertEqual(result.hops.last?.sentAuthorization, .negotiate)
        XCTAssertEqual(result.hops.last?.negotiate?.ticketSource, "password")
        XCTAssertEqual(LoginFixtures.fields(result.text.text)["remote_user"], "alice@MTLS.TEST")
    }

    /// `.automatic` without a ticket or a password: the 401 is the answer, and the hop says why.
    func testAutomaticWithoutATicketLeavesThe401Explained() throws {
        let peer = try peer()
        let session = try LoginFixtures.session(LoginOptions(kerberos: .automatic("FILE:\(peer["DIR"])/no-such-cache")))
        let result = try session.get("https://localhost:\(peer.port)/kerberos")
        XCTAssertEqual(result.status, 401)
        XCTAssertEqual(result.hops.count, 1, "nothing was sent")
        XCTAssertEqual(result.hops.last?.negotiate?.mechanism, "none")
        XCTAssertEqual(result.hops.last?.negotiate?.fallback?.reason, .noCredentials)
        // A site reached by IP address: the SPN is unknown, also explained without an error.
        let byAddress = try LoginFixtures.session(LoginOptions(kerberos: .automatic(try kinit(peer)))).get("https://127.0.0.1:\(peer.port)/kerberos")
        XCTAssertEqual(byAddress.status, 401)
        XCTAssertEqual(byAddress.hops.last?.negotiate?.fallback?.reason, .servicePrincipalUnknown)
    }

    /// IIS's provider order with a user: no ticket can be had (no cache; the NTLM domain is no
    /// Kerberos realm here), so NTLM answers inside Negotiate, and the hop says why not Kerberos.
    func testAutomaticFallsBackToNTLMInsideNegotiate() throws {
        guard OpenSSLInfo.legacyProviderAvailable else { throw XCTSkip("OpenSSL's legacy provider (MD4) is not installed") }
        let peer = try peer()
        let ntlm = try LoginPeers.shared.ntlm()
        let options = LoginOptions(
            credentials: Credentials(user: ntlm["NTLM_USER"], password: Secret(ntlm["NTLM_PASSWORD"]), domain: ntlm["NTLM_DOMAIN"]),
            kerberos: .automatic("FILE:\(peer["DIR"])/no-such-cache"))
        let result = try LoginFixtures.session(options).get("https://localhost:\(ntlm.port)/negotiate")
        XCTAssertEqual(result.status, 200, result.text.text)
        XCTAssertEqual(result.hops.dropFirst().map(\.sentAuthorization), [.ntlm, .ntlm])
        let outcome = try XCTUnwrap(result.hops.last?.negotiate)
        XCTAssertEqual(outcome.mechanism, "NTLM")
        XCTAssertEqual(outcome.fallback?.reason, .kdcUnreachable, outcome.fallback?.gssMessage ?? "")
        XCTAssertEqual(outcome.fallback?.clientPrincipal, "alice@MTLS")
        XCTAssertTrue(outcome.fallback?.gssMessage.contains("before that, the credentials cache") ?? false, outcome.fallback?.gssMessage ?? "")
    }

    /// A password the KDC refuses is not tried again with NTLM (as Windows' Negotiate does): the
    /// domain would count a second failed logon toward the account's lockout.
    func testAutomaticDoesNotTryNTLMWithAPasswordTheKDCRefused() throws {
        guard OpenSSLInfo.legacyProviderAvailable else { throw XCTSkip("OpenSSL's legacy provider (MD4) is not installed") }
        let peer = try peer()
        let ntlm = try LoginPeers.shared.ntlm()
        for (user, password, reason) in [(peer["USER"], "wrong", KerberosFailure.Reason.wrongPassword), (peer["DISABLED_USER"], peer["PASSWORD"], .accountDisabled)] {
            let options = LoginOptions(credentials: Credentials(user: user, password: Secret(password)), kerberos: .automatic("FILE:\(peer["DIR"])/no-such-cache"))
            let session = try LoginFixtures.session(options)
            let error = try XCTUnwrap(failure { _ = try session.get("https://localhost:\(ntlm.port)/negotiate") }, user)
            XCTAssertEqual(error.kerberos?.reason, reason, "\(user): \(error.description)")
            XCTAssertTrue(error.kerberos?.judgesTheAccount ?? false, user)
        }
    }

    /// The class comes from the krb5 error code in GSSAPI's minor status, whatever the text says.
    func testClassificationKeysOnTheKrb5ErrorCode() throws {
        func minor(_ code: Int32) -> UInt32 { UInt32(bitPattern: KerberosFailure.krb5TableBase + code) }
        let failure = UInt32(13 << 16)
        XCTAssertEqual(KerberosFailure.classify(major: failure, minor: minor(7), text: "Serveur inconnu"), .servicePrincipalUnknown)
        XCTAssertEqual(KerberosFailure.classify(major: failure, minor: minor(23), text: ""), .passwordExpired)
        XCTAssertEqual(KerberosFailure.classify(major: failure, minor: minor(18), text: ""), .accountDisabled)
        XCTAssertEqual(KerberosFailure.classify(major: failure, minor: minor(156), text: ""), .kdcUnreachable)
        XCTAssertEqual(KerberosFailure.classify(major: failure, minor: minor(37), text: ""), .clockSkew)
        XCTAssertNil(KerberosFailure.krb5ErrorCode(minor: 39_756_044), "the GSS krb5 mechanism's own table is not krb5's")
        XCTAssertEqual(KerberosFailure.classify(major: failure, minor: 39_756_044, text: "No Kerberos credentials available"), .noCredentials, "text as the last resort")
        // Through SPNEGO, MIT re-maps the krb5 code to a process-local minor status, so the real
        // failure is classed by the krb5 table's own message for the code (error_message).
        let peer = try peer()
        XCTAssertEqual(KerberosFailure.krb5TableMessages.first { $0.reason == .servicePrincipalUnknown }?.text, "Server not found in Kerberos database")
        let context = try NegotiateContext(host: "127.0.0.1", source: .credentialsCache(try kinit(peer)))
        do throws(KerberosFailure) {
            _ = try context.step(input: nil, channelBindings: nil)
            XCTFail("no SPN for an IP address")
        } catch {
            XCTAssertNil(KerberosFailure.krb5ErrorCode(minor: error.minorStatus), "SPNEGO's minor status is process-local: \(error.minorStatus)")
            XCTAssertEqual(KerberosFailure.classify(tableText: error.gssMessage), .servicePrincipalUnknown, error.gssMessage)
            XCTAssertEqual(error.reason, .servicePrincipalUnknown)
        }
        XCTAssertEqual(KerberosFailure.classify(tableText: "Client's credentials have been revoked"), .accountDisabled)
        XCTAssertEqual(KerberosFailure.classify(tableText: "Password has expired"), .passwordExpired)
    }

    /// `any` with a password but no ticket of that user: Basic answers instead; the Kerberos reason is kept.
    func testAnyFallsBackWhenNoTicketCanBeHad() throws {
        let peer = try peer()
        let options = LoginOptions(
            credentials: Credentials(user: peer["USER"], password: Secret(peer["PASSWORD"])), allowedSchemes: [.negotiate, .basic],
            kerberos: .credentialsCache("FILE:\(peer["DIR"])/no-such-cache"))
        let session = try LoginFixtures.session(options)
        let result = try session.get("https://localhost:\(peer.port)/negotiate-basic")
        XCTAssertEqual(result.status, 200)
        XCTAssertEqual(result.hops.last?.sentAuthorization, .basic)
        XCTAssertEqual(LoginFixtures.fields(result.text.text)["auth_type"], "Basic")
        XCTAssertEqual(result.hops.last?.negotiate?.fallback?.reason, .noCredentials)
        XCTAssertTrue(result.hops.last?.description.contains("Kerberos not used: no-credentials") ?? false, result.hops.last?.description ?? "")
    }
}

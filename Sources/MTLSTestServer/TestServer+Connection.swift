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

extension TestServer {
    // MARK: One connection

    func serve(_ socket: SocketHandle, slot: UInt64) {
        // One deadline for the sniffing and the whole handshake: a client that sends nothing, or
        // one byte at a time, is closed when it passes.
        let handshakeDeadline = Deadline.after(configuration.handshakeTimeout)
        // A plain-HTTP request on the TLS port gets IIS's 403.4.
        var first: UInt8 = 0
        if socket.wait(forRead: true, forWrite: false, until: handshakeDeadline), recv(socket.fd, &first, 1, Int32(MSG_PEEK)) == 1, first != 0x16 {
            if (0x41...0x5A).contains(first) {
                let body = TestServer.errorPage(status: 403, substatus: 4, title: "Forbidden", text: "The page must be viewed over a secure channel (HTTPS).")
                let response =
                    "HTTP/1.1 403 Forbidden\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nX-MTLS-Substatus: 403.4\r\nConnection: close\r\n\r\n"
                    + body
                _ = response.withCString { Glibc.send(socket.fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                log("\(socket.peerAddress ?? "unknown peer") plain HTTP on the TLS port -> 403.4")
            }
            socket.close()
            return
        }
        let connection: TLSConnection
        let peer = socket.peerAddress ?? "unknown peer"  // before a failed handshake closes the socket
        do throws(HTTPSError) {
            connection = try tls.accept(socket, deadline: handshakeDeadline)
        } catch {
            log("\(peer) TLS handshake failed: \(TestServer.describeFailure(error))")
            socket.close()
            return
        }
        let canceller = connection.canceller
        defer { connection.lingeringClose() }
        // Reaped during the handshake: closed without a word.
        guard mark(slot, idle: true, wake: { canceller.cancel() }) else { return }
        var pending: [UInt8] = []
        var firstRequest = true
        while isRunning {
            do throws(HTTPSError) {
                guard try handleRequest(on: connection, pending: &pending, slot: slot, first: firstRequest) else { return }
                firstRequest = false
            } catch {
                if error.phase != .io && error.phase != .cancelled && error.phase != .timeout {
                    log("\(connection.label) \(error.message)\(TestServer.alertNote(connection.report.alerts))")
                } else if !connection.report.alerts.isEmpty {
                    log("\(connection.label) connection ended\(TestServer.alertNote(connection.report.alerts))")
                }
                return
            }
        }
    }

    /// Reads and answers one request; false when the connection should close.
    func handleRequest(on connection: TLSConnection, pending: inout [UInt8], slot: UInt64, first: Bool) throws(HTTPSError) -> Bool {
        var parser = HTTPRequestParser(maximumBody: configuration.maximumBodySize)
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        var headSeen = false
        // Read the head (and whatever body arrives with it).
        func consume(_ bytes: ArraySlice<UInt8>) throws(HTTPSError) -> Bool {
            do throws(HTTPRequestParser.ParseError) {
                let (events, _) = try parser.feed(bytes)
                for event in events {
                    switch event {
                    case .head: headSeen = true
                    case .body(let chunk): body += chunk
                    case .end: return true
                    }
                }
                return false
            } catch {
                let status = error == .bodyTooLarge ? 413 : 400
                try send(
                    connection, status: status, reason: status == 413 ? "Payload Too Large" : "Bad Request", headers: [("Connection", "close")],
                    body: Array(TestServer.errorPage(status: status, substatus: nil, title: "Bad Request", text: "The request is malformed (\(error)).").utf8))
                throw HTTPSError(.httpParse, host: connection.label, "bad request: \(error)")
            }
        }
        var complete = false
        if !pending.isEmpty {
            complete = try consume(pending[...])
            pending.removeAll()
        }
        // Idle (reapable under pressure) until the head is complete. The first request's head must
        // be whole within requestHeadTimeout of the handshake; a kept-alive connection may wait
        // keepAliveTimeout for the next head's first byte, then has requestHeadTimeout for the rest.
        if !first { mark(slot, idle: true) }
        var headDeadline: Deadline? = first || !pending.isEmpty ? .after(configuration.requestHeadTimeout) : nil
        while !headSeen {
            let deadline = headDeadline ?? .after(configuration.keepAliveTimeout)
            let n: Int
            do throws(HTTPSError) {
                n = try connection.read(into: &buffer, deadline: deadline, idle: nil)
            } catch {
                if error.phase == .timeout && headDeadline != nil {
                    log("\(connection.label) closed: the request head did not arrive within \(configuration.requestHeadTimeout)")
                }
                throw error
            }
            if n == 0 { return false }
            if headDeadline == nil { headDeadline = .after(configuration.requestHeadTimeout) }
            complete = try consume(buffer[0..<n])
        }
        guard let head = parser.head else { return false }
        // Answering: not reapable until the response is sent. Reaped meanwhile: close.
        guard mark(slot, idle: false) else { return false }
        let bodyDeadline = Deadline.after(configuration.requestBodyTimeout)
        let rule =
            configuration.rules.filter { head.path == $0.path || head.path.hasPrefix($0.path == "/" ? "/" : $0.path + "/") || ($0.path != "/" && head.path.hasPrefix($0.path)) }.max
        { $0.path.count < $1.path.count } ?? PathRule(path: "/")
        let expectsContinue = head.headers["Expect"]?.lowercased() == "100-continue"
        var note = ""
        // IIS reads the client certificate after the request: renegotiate / post-handshake auth.
        if rule.clientCertificate != .ignore && connection.peerCertificate == nil && !configuration.tls.requestsCertificateAtHandshake
            && !connection.report.certificateRequests.contains(where: { $0.phase != .handshake })
        {
            if connection.version == .tls1_3 && configuration.httpSysMode {
                let body = TestServer.errorPage(
                    status: 500, substatus: nil, title: "Internal Server Error", text: "The request is not supported. (Exception from HRESULT: 0x80070032)", code: "0x80070032")
                try send(connection, status: 500, reason: "Internal Server Error", headers: [("Connection", "close")], body: Array(body.utf8))
                log(
                    "\(connection.label) \"\(head.method) \(head.target)\" 500 0x80070032 \(connection.report.version ?? "") (http.sys: TLS 1.3 cannot renegotiate for a per-path certificate)"
                )
                return false
            }
            // Without 100-continue, the body arrives before the renegotiation: buffer a little, like IIS.
            if !expectsContinue && !complete {
                while !complete {
                    if body.count > configuration.renegotiationBufferLimit {
                        try send(
                            connection, status: 413, reason: "Request Entity Too Large", headers: [("Connection", "close")],
                            body: Array(
                                TestServer.errorPage(
                                    status: 413, substatus: nil, title: "Request Entity Too Large",
                                    text:
                                        "The body arrived before the client certificate was negotiated and is larger than \(configuration.renegotiationBufferLimit) bytes; send Expect: 100-continue."
                                ).utf8))
                        log("\(connection.label) \"\(head.method) \(head.target)\" 413 (body before renegotiation)")
                        return false
                    }
                    let n = try connection.read(into: &buffer, deadline: bodyDeadline, idle: nil)
                    if n == 0 { return false }
                    complete = try consume(buffer[0..<n])
                }
            }
            switch try connection.requestClientCertificate(deadline: .after(30)) {
            case .asked(let phase): note = "asked by \(phase.rawValue)"
            case .clientOffersNoPostHandshakeAuth: note = "TLS 1.3 client offers no post-handshake auth"
            case .clientRefusedRenegotiation: note = "client refused renegotiation"
            }
        }
        if expectsContinue && !complete {
            try connection.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), deadline: .after(10))
        }
        while !complete {
            let n = try connection.read(into: &buffer, deadline: bodyDeadline, idle: nil)
            if n == 0 { return false }
            complete = try consume(buffer[0..<n])
        }
        let keepAlive = head.version == "HTTP/1.1" && head.headers["Connection"]?.lowercased() != "close"
        try respond(connection, head: head, body: body, rule: rule, note: note, keepAlive: keepAlive)
        return keepAlive
    }

    // MARK: Deciding

    func respond(_ connection: TLSConnection, head: HTTPRequestHead, body: [UInt8], rule: PathRule, note: String, keepAlive: Bool) throws(HTTPSError) {
        let peer = connection.peerCertificate
        var extra: [(String, String)] = keepAlive ? [] : [("Connection", "close")]
        let certText = peer.map { "cert=\"\($0.subject)\"" } ?? "cert=none"
        func finish(
            _ status: Int, _ substatus: Int?, _ reason: String, _ page: String, headers: [(String, String)] = [], contentType: String = "text/html; charset=utf-8",
            raw: [UInt8]? = nil
        ) throws(HTTPSError) {
            var all = extra + headers
            if let substatus { all.append(("X-MTLS-Substatus", "\(status).\(substatus)")) }
            try send(connection, status: status, reason: reason, headers: all + [("Content-Type", contentType)], body: raw ?? Array(page.utf8))
            let code = substatus.map { "\(status).\($0)" } ?? "\(status)"
            log("\(connection.label) \"\(head.method) \(head.target)\" \(code) \(connection.report.version ?? "") \(certText)\(note.isEmpty ? "" : " (\(note))")")
        }
        if rule.clientCertificate != .ignore {
            if peer == nil && rule.clientCertificate == .require {
                return try finish(
                    403, 7, "Forbidden",
                    TestServer.errorPage(
                        status: 403, substatus: 7, title: "Forbidden",
                        text: "The page you are attempting to access requires your browser to have a Secure Sockets Layer (SSL) client certificate that the Web server recognizes.")
                )
            }
            if peer != nil, let trust = connection.clientTrust, !trust.isTrusted {
                let names = Set(trust.findings.map(\.code))
                if names.contains(X509_V_ERR_CERT_HAS_EXPIRED) || names.contains(X509_V_ERR_CERT_NOT_YET_VALID) {
                    return try finish(
                        403, 17, "Forbidden", TestServer.errorPage(status: 403, substatus: 17, title: "Forbidden", text: "The client certificate has expired or is not yet valid."))
                }
                if names.contains(X509_V_ERR_CERT_REVOKED) {
                    return try finish(
                        403, 13, "Forbidden",
                        TestServer.errorPage(
                            status: 403, substatus: 13, title: "Forbidden", text: "The client certificate used for this request has been revoked by the Web server."))
                }
                let reason = trust.findings.first?.reason ?? "untrusted"
                return try finish(
                    403, 16, "Forbidden", TestServer.errorPage(status: 403, substatus: 16, title: "Forbidden", text: "The client certificate is untrusted or invalid: \(reason)."))
            }
        }
        switch rule.authentication {
        case .none: break
        case .basic:
            let expected = "Basic " + Data("\(configuration.username):\(configuration.password)".utf8).base64EncodedString()
            guard let authorization = head.headers["Authorization"] else {
                return try finish(
                    401, 2, "Unauthorized",
                    TestServer.errorPage(status: 401, substatus: 2, title: "Unauthorized", text: "Access is denied due to server configuration: no credentials were sent."),
                    headers: [("WWW-Authenticate", "Basic realm=\"\(configuration.realm)\"")])
            }
            guard authorization == expected else {
                return try finish(
                    401, 1, "Unauthorized", TestServer.errorPage(status: 401, substatus: 1, title: "Unauthorized", text: "Access is denied due to invalid credentials."),
                    headers: [("WWW-Authenticate", "Basic realm=\"\(configuration.realm)\"")])
            }
        case .digest:
            let nonce = makeNonce()
            let challenge = "Digest realm=\"\(configuration.realm)\", qop=\"auth\", algorithm=MD5, nonce=\"\(nonce)\", opaque=\"mtls\""
            guard let authorization = head.headers["Authorization"], authorization.lowercased().hasPrefix("digest ") else {
                return try finish(
                    401, 2, "Unauthorized",
                    TestServer.errorPage(status: 401, substatus: 2, title: "Unauthorized", text: "Access is denied due to server configuration: no credentials were sent."),
                    headers: [("WWW-Authenticate", challenge)])
            }
            switch verifyDigest(authorization, method: head.method) {
            case .ok: break
            case .stale:
                return try finish(
                    401, 1, "Unauthorized", TestServer.errorPage(status: 401, substatus: 1, title: "Unauthorized", text: "The nonce is stale."),
                    headers: [("WWW-Authenticate", challenge + ", stale=true")])
            case .wrong:
                return try finish(
                    401, 1, "Unauthorized", TestServer.errorPage(status: 401, substatus: 1, title: "Unauthorized", text: "Access is denied due to invalid credentials."),
                    headers: [("WWW-Authenticate", challenge)])
            }
        }
        switch rule.handler {
        case .page(let text):
            try finish(200, nil, "OK", "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>mtls serve</title></head><body><p>\(TestServer.escape(text))</p></body></html>\n")
        case .echoCertificate:
            var lines = ["path: \(head.path)", "tls: \(connection.report.version ?? "?")"]
            if let peer {
                lines += [
                    "subject: \(peer.subject)", "issuer: \(peer.issuer)", "serial: \(peer.serialNumberHex)", "sha256: \(peer.sha256Fingerprint.colonHex)",
                    "notAfter: \(RFC3339.string(peer.notAfter))", "trusted: \(connection.clientTrust?.isTrusted ?? false)",
                ]
            } else {
                lines.append("subject: (no client certificate)")
            }
            try finish(
                200, nil, "OK", lines.joined(separator: "\n") + "\n", headers: peer.map { [("X-Client-Subject", $0.subject)] } ?? [], contentType: "text/plain; charset=utf-8")
        case .shiftJIS:
            let text = "<!DOCTYPE html><html><head><meta charset=\"Shift_JIS\"><title>テスト</title></head><body><p>日本語のページです。クライアント証明書のテスト。</p></body></html>\n"
            let bytes = ShiftJIS.encode(text)
            try finish(200, nil, "OK", "", contentType: "text/html; charset=Shift_JIS", raw: bytes)
        case .redirect(let target):
            extra.append(("Location", target))
            try finish(302, nil, "Found", "<p>Moved to <a href=\"\(TestServer.escape(target))\">\(TestServer.escape(target))</a></p>\n")
        case .refresh(let target):
            let escaped = TestServer.escape(target)
            try finish(
                200, nil, "OK",
                "<!DOCTYPE html><html><head><meta http-equiv=\"refresh\" content=\"0; url=\(escaped)\"><title>Signing in</title></head>"
                    + "<body><p>Signing you in&hellip; <a href=\"\(escaped)\">continue</a></p></body></html>\n")
        case .cookie:
            try finish(200, nil, "OK", "<p>A cookie was set.</p>\n", headers: [("Set-Cookie", "mtls-session=\(makeNonce()); Path=/; Secure; HttpOnly; SameSite=Lax")])
        }
    }

    func send(_ connection: TLSConnection, status: Int, reason: String, headers: [(String, String)], body: [UInt8]) throws(HTTPSError) {
        var head = "HTTP/1.1 \(status) \(reason)\r\nServer: mtls-serve\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try connection.write(Array(head.utf8) + body, deadline: .after(30))
    }

}

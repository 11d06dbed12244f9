import Glibc
import MTLSTrust

/// Fetches what an authorityInfoAccess caIssuers URL publishes: the certificate (DER or PEM) or
/// PKCS#7 bundle of an issuer, over plain `http://` as RFC 5280 4.2.2.1 has it. iOS, macOS and
/// Chrome fetch a missing intermediate this way; `PlatformEvaluator.evaluate(…, fetchIssuer:)`
/// uses it to judge a chain as they do.
///
/// One GET, no redirect, no cookie, nothing sent but the request line and `Host`; the answer must
/// be a 200 within `timeout` seconds and `maximumBytes` long at most.
public enum IssuerFetch {
    public static func fetch(_ url: String, timeout: Double = 5, maximumBytes: Int = 256 * 1024) -> FetchedIssuer {
        Engine.blocking { () async -> FetchedIssuer in await fetch(url, timeout: timeout, maximumBytes: maximumBytes) }
    }

    /// The async form of ``fetch(_:timeout:maximumBytes:)``: the connect, the request and the
    /// answer are awaited on the engine, holding no thread.
    public static func fetch(_ url: String, timeout: Double = 5, maximumBytes: Int = 256 * 1024) async -> FetchedIssuer {
        do throws(HTTPSError) {
            let bytes = try await get(url, timeout: timeout, maximumBytes: maximumBytes)
            do throws(MTLSTrustError) {
                let certificates = try CertificateLoader.certificates(from: bytes, source: url).certificates
                return FetchedIssuer(url: url, certificates: certificates, failure: nil)
            } catch {
                return FetchedIssuer(url: url, certificates: [], failure: "it answered \(bytes.count) bytes that are not a certificate (\(error.message))")
            }
        } catch {
            return FetchedIssuer(url: url, certificates: [], failure: error.description)
        }
    }

    static func get(_ text: String, timeout: Double, maximumBytes: Int) async throws(HTTPSError) -> [UInt8] {
        let answer = try await exchange(text, timeout: timeout, maximumBytes: maximumBytes, purpose: "a caIssuers location")
        guard answer.status == 200 else { throw HTTPSError(.httpParse, host: answer.host, "it answered HTTP \(answer.status), not 200") }
        return answer.body
    }

    /// The one bounded plain-HTTP exchange of mtls (caIssuers certificates, CRLs, OCSP): one
    /// request (GET, or POST with `body`), no redirect followed, no cookie, `Connection: close`;
    /// the whole exchange within `timeout` seconds and the answer at most `maximumBytes` long.
    static func exchange(
        _ text: String, method: String = "GET", body requestBody: [UInt8] = [], contentType: String? = nil, timeout: Double, maximumBytes: Int, purpose: String
    ) async throws(HTTPSError) -> (status: Int, body: [UInt8], host: String) {
        let url = try HTTPSURL(text)
        guard url.scheme == "http" else { throw HTTPSError(.url, host: url.hostHeader, "\(purpose) is an http:// URL, not \(url.scheme)://") }
        let deadline = Deadline.after(timeout)
        let socket = try await TCP.connect(host: url.host, port: url.port, deadline: deadline)
        defer { socket.close() }
        let content = requestBody.isEmpty && method == "GET" ? "" : "Content-Type: \(contentType ?? "application/octet-stream")\r\nContent-Length: \(requestBody.count)\r\n"
        let request =
            Array("\(method) \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nAccept: */*\r\nUser-Agent: mtls\r\n\(content)Connection: close\r\n\r\n".utf8) + requestBody
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { Glibc.write(socket.fd, $0.baseAddress, $0.count) }
            if written > 0 {
                sent += written
            } else if written < 0 && (errno == EAGAIN || errno == EINTR) {
                guard await socket.wait(forRead: false, forWrite: true, until: deadline) else { throw timedOut(url) }
            } else {
                throw HTTPSError(.io, host: url.hostHeader, "could not send the request: \(String(cString: strerror(errno)))")
            }
        }
        var parser = HTTPResponseParser(requestMethod: method)
        var status = 0
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        func take(_ events: [HTTPResponseParser.Event]) throws(HTTPSError) -> Bool {
            for event in events {
                switch event {
                case .informational: continue
                case .head(let code): status = code
                case .body(let chunk):
                    body += chunk
                    guard body.count <= maximumBytes else {
                        throw HTTPSError(.io, host: url.hostHeader, "the answer is longer than \(maximumBytes) bytes, more than \(purpose) may serve")
                    }
                case .end: return true
                }
            }
            return false
        }
        reading: while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(socket.fd, $0.baseAddress, $0.count) }
            if count < 0 {
                guard errno == EAGAIN || errno == EINTR else {
                    throw HTTPSError(.io, host: url.hostHeader, "the connection failed: \(String(cString: strerror(errno)))")
                }
                guard await socket.wait(forRead: true, forWrite: false, until: deadline) else { throw timedOut(url) }
                continue
            }
            let events: [HTTPResponseParser.Event]
            do throws(HTTPResponseParser.ParseError) {
                events = count > 0 ? try parser.feed(buffer[0..<count]) : try parser.finish()
            } catch {
                throw HTTPSError(.httpParse, host: url.hostHeader, "the answer is not HTTP/1.1: \(error)")
            }
            if try take(events) || count == 0 { break reading }
        }
        return (status, body, url.hostHeader)
    }

    private static func timedOut(_ url: HTTPSURL) -> HTTPSError {
        HTTPSError(.timeout, host: url.hostHeader, "no complete answer within the timeout")
    }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The phase of a connection a handshake message belongs to.
public enum TLSMessagePhase: String, Sendable, Equatable {
    /// The first handshake.
    case handshake
    /// A TLS 1.2 renegotiation (after the first handshake).
    case renegotiation
    /// TLS 1.3 messages after the handshake (post-handshake auth, tickets, key updates).
    case postHandshake = "post-handshake"
}

/// One thing that happened on a connection, in the order it happened.
///
/// The log holds facts only (who sent what, when); explanations are derived from it by the
/// caller (`mtls probe`'s rules), so that an explanation can never claim what did not happen.
public enum TLSEvent: Sendable, Equatable {
    /// A handshake message (`ClientHello`, `CertificateRequest`, …) and who sent it.
    case message(sentByUs: Bool, name: String, phase: TLSMessagePhase)
    /// The ServerHello's choice: version (`TLSv1.3` when it selects 1.3 by `supported_versions`)
    /// and cipher suite, known before the handshake finishes.
    case serverHello(version: String, cipher: String?)
    /// A handshake (the first or a renegotiation) finished.
    case handshakeFinished(phase: TLSMessagePhase, version: String, cipher: String?, resumed: Bool)
    /// A TLS alert other than close_notify, and who sent it.
    case alert(sentByUs: Bool, level: String, description: String)
    /// The peer ended the connection: with a close_notify alert, or without one (TCP FIN).
    case peerClosed(closeNotify: Bool)
    /// A socket error (`Connection reset by peer`, `Broken pipe`) while reading or writing.
    case socketError(operation: String, reason: String)
    /// The peer's first bytes are not a TLS record; the printable prefix (`HTTP/`).
    case notTLS(prefix: String)
    /// A wait ran out (`TLS handshake`, `I/O`) after this many seconds.
    case timeout(during: String, seconds: Double)
    /// An HTTP request head was sent.
    case httpRequest(method: String, target: String)
    /// An HTTP response head was received.
    case httpResponse(status: Int, reason: String)

    /// One line, like `openssl s_client -msg` and `curl -v` print it.
    public var line: String {
        switch self {
        case .message(let ours, let name, let phase): "\(ours ? ">>>" : "<<<") \(name)\(phase == .handshake ? "" : " (\(phase.rawValue))")"
        case .serverHello(let version, let cipher): "* ServerHello chose \(version)\(cipher.map { ", \($0)" } ?? "")"
        case .handshakeFinished(let phase, let version, let cipher, let resumed):
            "* \(phase == .renegotiation ? "renegotiation" : "handshake") finished: \(version)\(cipher.map { ", \($0)" } ?? "")\(resumed ? ", session resumed" : ", full handshake")"
        case .alert(let ours, let level, let description): "\(ours ? ">>>" : "<<<") Alert \(level) \"\(description)\""
        case .peerClosed(let closeNotify): closeNotify ? "<<< close_notify" : "* the server closed the connection without close_notify"
        case .socketError(let operation, let reason): "* \(operation) failed: \(reason)"
        case .notTLS(let prefix): "* the answer is not TLS (it starts with \"\(prefix)\")"
        case .timeout(let during, let seconds): "* no answer for \(Self.seconds(seconds)) during \(during)"
        case .httpRequest(let method, let target): "> \(method) \(target)"
        case .httpResponse(let status, let reason): "< \(status) \(reason)"
        }
    }

    /// `10 s`, `1.5 s`.
    public static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : String(cFormat: "%.1f s", value)
    }
}

/// The ordered record of a connection's events (bounded: a flood cannot grow it without limit).
public struct TLSEventLog: Sendable, Equatable {
    /// The events, oldest first.
    public private(set) var events: [TLSEvent] = []
    /// Events kept; later ones are counted in ``dropped``.
    public static let capacity = 1000
    /// Events not kept because the log was full.
    public private(set) var dropped = 0

    /// A log holding `events` (the first ``capacity`` of them), for tests and replays.
    public init(_ events: [TLSEvent] = []) { self.events = Array(events.prefix(Self.capacity)) }

    mutating func append(_ event: TLSEvent) {
        if events.count < Self.capacity { events.append(event) } else { dropped += 1 }
    }
}

// MARK: Recording, from the callbacks and the I/O loop

extension TLSConnectionState {
    /// Appends an event and hands it to the live observer (`-v` streams it as it happens).
    func log(_ event: TLSEvent) {
        report.events.append(event)
        observer?(event)
    }

    /// The phase of a message seen now.
    func phase(_ ssl: OpaquePointer?) -> TLSMessagePhase {
        guard handshakeDone else { return .handshake }
        return SSL_version(ssl) == TLSVersion.tls1_3.openSSLValue ? .postHandshake : .renegotiation
    }

    /// From the message callback: handshake messages, alerts and the first record header.
    func logRecord(sentByUs: Bool, contentType: Int32, bytes: UnsafeRawBufferPointer, ssl: OpaquePointer?) {
        switch contentType {
        case 256 where !sentByUs && !sawRecordHeader:  // SSL3_RT_HEADER: the first record header received
            sawRecordHeader = true
            if let first = bytes.first, !(20...24).contains(first) {
                let printable = bytes.prefix(5).map { (0x20..<0x7F).contains($0) ? Character(Unicode.Scalar($0)) : "." }
                log(.notTLS(prefix: String(printable)))
            }
        case 22:  // handshake
            guard let type = bytes.first else { return }
            var name = handshakeName(type)
            if type == 11, sentByUs, Self.isEmptyCertificate(bytes, tls13: SSL_version(ssl) == TLSVersion.tls1_3.openSSLValue) { name = "Certificate (empty)" }
            let phase = phase(ssl)
            log(.message(sentByUs: sentByUs, name: name, phase: phase))
            if type == 2, !sentByUs { logServerHello(bytes, ssl: ssl) }
        default:
            break
        }
    }

    /// True when our Certificate message carries no certificate (RFC 5246 §7.4.6, RFC 8446 §4.4.2).
    static func isEmptyCertificate(_ bytes: UnsafeRawBufferPointer, tls13: Bool) -> Bool {
        var index = 4
        if tls13 {
            guard bytes.count > index else { return false }
            index += 1 + Int(bytes[index])
        }
        guard bytes.count >= index + 3 else { return false }
        return bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 0
    }

    /// Parses a ServerHello for its version and cipher suite (RFC 8446 §4.1.3).
    private func logServerHello(_ bytes: UnsafeRawBufferPointer, ssl: OpaquePointer?) {
        // type(1) length(3) legacy_version(2) random(32) session_id(1+n) cipher_suite(2) compression(1) extensions(2+…)
        guard bytes.count >= 4 + 2 + 32 + 1 else { return }
        var index = 4 + 2 + 32
        let sessionIDLength = Int(bytes[index])
        index += 1 + sessionIDLength
        guard bytes.count >= index + 3 else { return }
        let suite = [bytes[index], bytes[index + 1]]
        index += 3
        var version = bytes[4] == 3 && bytes[5] == 3 ? "TLSv1.2" : bytes[4] == 3 && bytes[5] == 2 ? "TLSv1.1" : bytes[4] == 3 && bytes[5] == 1 ? "TLSv1" : "legacy"
        if bytes.count >= index + 2 {
            let end = min(bytes.count, index + 2 + (Int(bytes[index]) << 8 | Int(bytes[index + 1])))
            index += 2
            while index + 4 <= end {
                let type = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                if type == 0x2B, length == 2, index + 6 <= end, bytes[index + 4] == 3, bytes[index + 5] == 4 { version = "TLSv1.3" }
                index += 4 + length
            }
        }
        var cipher: String? = nil
        if let ssl, let found = suite.withUnsafeBufferPointer({ SSL_CIPHER_find(ssl, $0.baseAddress) }), let name = SSL_CIPHER_get_name(found) {
            cipher = String(cString: name)
        }
        log(.serverHello(version: version, cipher: cipher))
    }

    /// From the info callback: alerts (close_notify as the peer's close) and finished handshakes.
    func logInfo(_ ssl: OpaquePointer?, where_: Int32, ret: Int32, alertDescription: String, level: String) {
        if where_ & SSL_CB_ALERT != 0 {
            let sentByUs = where_ & SSL_CB_READ == 0
            if alertDescription == "close notify" {
                if !sentByUs { log(.peerClosed(closeNotify: true)) }
            } else {
                log(.alert(sentByUs: sentByUs, level: level, description: alertDescription))
            }
        }
        // TLS 1.3 reports every post-handshake message as a "handshake"; only the first counts there.
        if where_ & SSL_CB_HANDSHAKE_DONE != 0, !(handshakeDone && SSL_version(ssl) == TLSVersion.tls1_3.openSSLValue) {
            let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) }
            let version = SSL_get_version(ssl).map { String(cString: $0) } ?? "unknown"
            log(.handshakeFinished(phase: handshakeDone ? .renegotiation : .handshake, version: version, cipher: cipher, resumed: SSL_session_reused(ssl) == 1))
        }
    }
}

/// The name of a handshake message type (RFC 8446 §4, RFC 5246 §7.4), as `openssl s_client -msg`
/// prints it. Every handshake message of every connection is named: a switch, not a hashed table.
func handshakeName(_ type: UInt8) -> String {
    switch type {
    case 0: "HelloRequest"
    case 1: "ClientHello"
    case 2: "ServerHello"
    case 4: "NewSessionTicket"
    case 5: "EndOfEarlyData"
    case 8: "EncryptedExtensions"
    case 11: "Certificate"
    case 12: "ServerKeyExchange"
    case 13: "CertificateRequest"
    case 14: "ServerHelloDone"
    case 15: "CertificateVerify"
    case 16: "ClientKeyExchange"
    case 20: "Finished"
    case 24: "KeyUpdate"
    default: "handshake type \(type)"
    }
}

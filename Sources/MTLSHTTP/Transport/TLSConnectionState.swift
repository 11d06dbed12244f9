internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MTLSTrust
import Synchronization

/// Per-connection state reached from OpenSSL callbacks through `SSL_set_ex_data(ssl, 0, …)`.
final class TLSConnectionState {
    // Not Sendable: touched only by the task that drives the connection (callbacks run inside
    // its SSL calls).
    var report: TLSSessionReport
    let isServer: Bool
    let clientConfiguration: TLSClientConfiguration?
    let evaluator: TrustEvaluator?
    /// True once the first handshake has finished.
    var handshakeDone = false
    /// Set by the server side while it waits for a post-handshake certificate.
    var awaitingClientFinished = false
    var clientFinishedSeen = false
    /// The first leaf the server presented: a renegotiation must not change it.
    var firstPeerLeaf: Certificate?
    /// A trust failure captured in the verify callback, rethrown after the call returns.
    var trustFailure: HTTPSError?
    /// Server side: the evaluation of the client's certificate (never fails the handshake).
    var clientTrust: TrustEvaluation?
    var clientEvaluator: TrustEvaluator?
    /// Receives each event as it is logged (`-v` streams them); see TLSEventLog.swift.
    var observer: (@Sendable (TLSEvent) -> Void)?
    /// True once the first record header from the peer was seen (to spot a non-TLS answer).
    var sawRecordHeader = false

    init(report: TLSSessionReport, isServer: Bool, clientConfiguration: TLSClientConfiguration?, evaluator: TrustEvaluator?) {
        self.report = report
        self.isServer = isServer
        self.clientConfiguration = clientConfiguration
        self.evaluator = evaluator
    }

    static func from(_ ssl: OpaquePointer?) -> TLSConnectionState? {
        guard let ssl, let raw = SSL_get_ex_data(ssl, 0) else { return nil }
        return Unmanaged<TLSConnectionState>.fromOpaque(raw).takeUnretainedValue()
    }
}

// The OpenSSL callbacks shared by clients and servers, which record into that state.

/// TLS alert descriptions by code (RFC 8446 §6; OpenSSL 3.0 lacks names for some TLS 1.3 ones).
let tlsAlertNames: [Int: String] = [
    0: "close notify", 10: "unexpected message", 20: "bad record mac", 21: "decryption failed", 22: "record overflow",
    30: "decompression failure", 40: "handshake failure", 41: "no certificate", 42: "bad certificate",
    43: "unsupported certificate", 44: "certificate revoked", 45: "certificate expired", 46: "certificate unknown",
    47: "illegal parameter", 48: "unknown ca", 49: "access denied", 50: "decode error", 51: "decrypt error",
    60: "export restriction", 70: "protocol version", 71: "insufficient security", 80: "internal error",
    86: "inappropriate fallback", 90: "user canceled", 100: "no renegotiation", 109: "missing extension",
    110: "unsupported extension", 111: "certificate unobtainable", 112: "unrecognized name",
    113: "bad certificate status response", 114: "bad certificate hash value", 115: "unknown psk identity",
    116: "certificate required", 120: "no application protocol",
]

/// Records alerts and counts handshakes.
func tlsInfoCallback(_ ssl: OpaquePointer?, _ where_: Int32, _ ret: Int32) {
    guard let state = TLSConnectionState.from(ssl) else { return }
    if where_ & SSL_CB_ALERT != 0 {
        let description = tlsAlertNames[Int(ret & 0xFF)] ?? SSL_alert_desc_string_long(ret).map { String(cString: $0) } ?? "alert \(ret & 0xFF)"
        let level = SSL_alert_type_string_long(ret).map { String(cString: $0) } ?? "?"
        if description != "close notify" {
            state.report.alerts.append(TLSAlertRecord(received: where_ & SSL_CB_READ != 0, level: level, description: description))
        }
    }
    if where_ & SSL_CB_HANDSHAKE_START != 0, state.handshakeDone, SSL_version(ssl) != TLSVersion.tls1_3.openSSLValue {
        state.report.renegotiations += 1
    }
    if where_ & (SSL_CB_ALERT | SSL_CB_HANDSHAKE_DONE) != 0 {
        let description = tlsAlertNames[Int(ret & 0xFF)] ?? "alert \(ret & 0xFF)"
        state.logInfo(ssl, where_: where_, ret: ret, alertDescription: description, level: SSL_alert_type_string_long(ret).map { String(cString: $0) } ?? "unknown")
    }
}

/// Summarises handshake messages like `s_client -msg`.
func tlsMessageCallback(_ writeP: Int32, _ version: Int32, _ contentType: Int32, _ buf: UnsafeRawPointer?, _ len: Int, _ ssl: OpaquePointer?, _ arg: UnsafeMutableRawPointer?) {
    // Handshake messages, alerts and received record headers are recorded; OpenSSL also calls
    // for every record we send and for each TLS 1.3 inner content type, around every request.
    guard contentType == 22 || contentType == 21 || (contentType == 256 && writeP == 0) else { return }
    guard let state = TLSConnectionState.from(ssl) else { return }
    if let buf, len > 0 { state.logRecord(sentByUs: writeP == 1, contentType: contentType, bytes: UnsafeRawBufferPointer(start: buf, count: len), ssl: ssl) }
    if contentType == 22, let buf, len > 0 {  // handshake
        let type = buf.load(as: UInt8.self)
        if state.report.messageTraceCount < 200 { state.report.traceMessage(.init(kind: .handshake(type), sentByUs: writeP == 1, length: len)) }
        if type == 20, writeP == 0, state.awaitingClientFinished { state.clientFinishedSeen = true }
    } else if contentType == 21, let buf, len >= 2 {  // alert
        let description = buf.load(fromByteOffset: 1, as: UInt8.self)
        if state.report.messageTraceCount < 200 { state.report.traceMessage(.init(kind: .alert(description), sentByUs: writeP == 1, length: len)) }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One probe as its JSON (docs/schemas/probe.schema.json), read back: the one model both HTML
/// reports are drawn from. A single probe's page decodes `ProbeAnalysis.json()`, a fleet page the
/// JSON lines `probe --targets --json` printed — so a page can show no fact the JSON does not hold,
/// and the browser tests compare a page with the same JSON. Keys a page does not show are skipped.
struct ReportRecord: Decodable, Sendable {
    struct Connection: Decodable, Sendable {
        var address: String?
        var handshakeFinished: Bool?
        var tlsVersion: String?
        var cipher: String?
        var notTLS: String?
        var alpn: String?
        var resumed: Bool?
        var secureRenegotiation: Bool?
        var renegotiationResumed: Bool?
        var renegotiations: Int?
        var serverName: String?
        var alerts: [Alert]?
    }

    struct Alert: Decodable, Sendable {
        var received: Bool
        var level: String
        var description: String
    }

    struct ChainCertificate: Decodable, Sendable {
        var depth: Int?
        var subject: String
        var issuer: String
        var notBefore: String?
        var notAfter: String?
        var key: String?
        var selfSigned: Bool?
        var sha256: String?
        var problems: [String]?
    }

    struct Trust: Decodable, Sendable {
        var trusted: Bool
        var summary: String?
        var findings: [Finding]?
    }

    struct Finding: Decodable, Sendable {
        var depth: Int
        var error: String?
        var reason: String
        var hint: String?
    }

    struct Pins: Decodable, Sendable {
        var satisfied: Bool
        var presented: [String]?
        var matched: [String]?
    }

    struct ClientCertificate: Decodable, Sendable {
        var requested: Bool?
        var requestPhases: [String]?
        var requests: [CertificateRequest]?
    }

    struct CertificateRequest: Decodable, Sendable {
        var phase: String
        var acceptedCANames: [String]?
        var sent: String?
        var identity: String?
        var identityFits: Bool?
        var hadNoIdentity: Bool?
    }

    struct Exchange: Decodable, Sendable {
        var kind: String
        var method: String?
        var url: String?
        var status: Int
        var substatus: Int?
        var meaning: String?
        var authSchemes: [String]?
        var location: String?
        var title: String?
    }

    struct Failure: Decodable, Sendable {
        var code: Int?
        var phase: String?
        var message: String
        var hint: String?
        var alert: String?
    }

    struct Cause: Decodable, Sendable {
        var rule: String?
        var cause: String
        var fix: String
    }

    struct Verdict: Decodable, Sendable {
        var ok: Bool
        var causes: [Cause]?
        var warnings: [Cause]?
    }

    /// One event of the connection's log (`ProbeAnalysis.json(_ event:)`).
    struct Event: Decodable, Sendable {
        var kind: String
        var sentByUs: Bool?
        var name: String?
        var phase: String?
        var version: String?
        var cipher: String?
        var resumed: Bool?
        var level: String?
        var description: String?
        var closeNotify: Bool?
        var operation: String?
        var reason: String?
        var prefix: String?
        var during: String?
        var seconds: Double?
        var method: String?
        var target: String?
        var status: Int?
        var line: String?
    }

    /// The line of the targets file (fleet records only).
    var target: String?
    var url: String?
    var connection: Connection?
    var serverChain: [ChainCertificate]?
    var trust: Trust?
    var pins: Pins?
    var clientCertificate: ClientCertificate?
    var overriddenProblems: [String]?
    var http: [Exchange]?
    var error: Failure?
    var verdict: Verdict?
    var events: [Event]?
    /// Required: every probe record has it (single, fleet line, or a fleet line's error), and
    /// requiring it tells another command's JSON from a probe's.
    var exitCode: Int

    /// Reads one record; the message says what is wrong, for the caller to name the file and line.
    static func decode(_ bytes: some Collection<UInt8>) throws(ReportInputError) -> ReportRecord { try ReportInputError.decode(ReportRecord.self, bytes) }

}

/// The keys of a probe record a fleet's row is made from.
protocol ProbeRecordFields {
    var target: String? { get }
    var url: String? { get }
    var connection: ReportRecord.Connection? { get }
    var serverChain: [ReportRecord.ChainCertificate]? { get }
    var trust: ReportRecord.Trust? { get }
    var pins: ReportRecord.Pins? { get }
    var clientCertificate: ReportRecord.ClientCertificate? { get }
    var http: [ReportRecord.Exchange]? { get }
    var error: ReportRecord.Failure? { get }
    var verdict: ReportRecord.Verdict? { get }
    var exitCode: Int { get }
}

extension ProbeRecordFields {
    /// The endpoint's name: the targets line, else the URL.
    var name: String { target ?? url ?? "?" }

    /// The leaf as sent, when a chain was received.
    var leaf: ReportRecord.ChainCertificate? { serverChain?.first }
}

extension ReportRecord: ProbeRecordFields {}

/// A fleet's record without its event log, which a fleet's page does not show: a line of a
/// fleet is mostly events, and decoding them was half the time `mtls report` took.
struct FleetRecord: Decodable, Sendable, ProbeRecordFields {
    var target: String?
    var url: String?
    var connection: ReportRecord.Connection?
    var serverChain: [ReportRecord.ChainCertificate]?
    var trust: ReportRecord.Trust?
    var pins: ReportRecord.Pins?
    var clientCertificate: ReportRecord.ClientCertificate?
    var http: [ReportRecord.Exchange]?
    var error: ReportRecord.Failure?
    var verdict: ReportRecord.Verdict?
    var exitCode: Int

    static func decode(_ bytes: some Collection<UInt8>) throws(ReportInputError) -> FleetRecord { try ReportInputError.decode(FleetRecord.self, bytes) }
}

/// A record that could not be read.
struct ReportInputError: Error {
    var reason: String

    /// Reads one record; the message says what is wrong, for the caller to name the file and line.
    static func decode<Record: Decodable>(_ type: Record.Type, _ bytes: some Collection<UInt8>) throws(ReportInputError) -> Record {
        do {
            return try JSONDecoder().decode(Record.self, from: Data(bytes))
        } catch let error as DecodingError {
            switch error {
            case .dataCorrupted(let context): throw ReportInputError(reason: "not JSON (\(context.debugDescription))")
            case .keyNotFound(let key, let context):
                throw ReportInputError(reason: "not a probe record: \(Self.path(context.codingPath + [key])) is missing")
            case .typeMismatch(_, let context), .valueNotFound(_, let context):
                throw ReportInputError(reason: "not a probe record: \(Self.path(context.codingPath)) has the wrong type")
            @unknown default: throw ReportInputError(reason: "not a probe record")
            }
        } catch {
            throw ReportInputError(reason: "not JSON")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." }.description
    }

}

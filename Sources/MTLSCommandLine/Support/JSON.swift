#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// A JSON value with ordered object keys, so that output is stable and reads in a sensible order.
enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case int(Int)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    static func == (lhs: JSON, rhs: JSON) -> Bool { lhs.serialized() == rhs.serialized() }

    /// Serialises compactly or pretty-printed (two-space indent).
    func serialized(pretty: Bool = false) -> String {
        var out = ""
        write(into: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(into out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .number(let value):
            if value.isFinite { out += value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value) } else { out += "null" }
        case .string(let value): JSON.escape(value, into: &out)
        case .array(let values):
            if values.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                value.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let pairs):
            if pairs.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                JSON.escape(key, into: &out)
                out += pretty ? ": " : ":"
                value.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    private static func escape(_ string: String, into out: inout String) {
        // Exact for a parser, inert on a terminal: unsafe characters as \u escapes.
        out += "\"" + TextEscaping.escape(string, .json) + "\""
    }

    /// The error envelope of the contract: exactly `{"error": {"code": N, "message": "..."}}`
    /// (docs/schemas/error.schema.json, version 1 in its `$id`: the envelope's one key is fixed by CLI.md).
    static func error(code: Int32, message: String) -> JSON {
        .object([("error", .object([("code", .int(Int(code))), ("message", .string(message))]))])
    }

    /// This object with `schemaVersion` first: the version of its schema in docs/schemas/, which
    /// changes only when a key is removed, renamed or changes type.
    func versioned(_ version: Int) -> JSON {
        guard case .object(let pairs) = self else { return self }
        return .object([("schemaVersion", .int(version))] + pairs.filter { $0.0 != "schemaVersion" })
    }
}

extension JSON {
    static func strings(_ values: [String]) -> JSON { .array(values.map { .string($0) }) }
    static func optional(_ value: String?) -> JSON { value.map { .string($0) } ?? .null }
}

/// RFC 3339 formatting in UTC.
enum Timestamp {
    static func rfc3339(_ date: Date) -> String { RFC3339.string(date) }

    /// Parses RFC 3339 (`2030-01-01T00:00:00Z`, offsets and fractions allowed), a date
    /// (`2030-01-01`, midnight UTC), or integer Unix seconds.
    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingWhitespace()
        if let seconds = Int64(trimmed) { return Date(timeIntervalSince1970: TimeInterval(seconds)) }
        return RFC3339.parse(trimmed, allowingDateOnly: true)
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Text forms of pins, read without the ambiguities of a naive prefix strip.
enum PinText {
    /// Parses `sha256/B64`, `sha256//B64` (curl), `pin-sha256="B64"` (HPKP), `cert-sha256/B64`,
    /// `cert-sha256:HEX`, `sha256:HEX`, colon-separated hex, or a bare base64 SHA-256 (SPKI).
    ///
    /// A digest whose base64 begins with `/` is legal (`sha256//j4i…=`); the 44-character
    /// base64 after exactly one `/` is tried before curl's `sha256//` prefix is assumed.
    static func parse(_ raw: String) -> Pin? {
        var text = raw.trimmingWhitespaceAndNewlines()
        text = text.trimming(charactersIn: "\"',;")
        var kind = Pin.Kind.publicKey
        let lower = text.lowercased()
        if lower.hasPrefix("pin-sha256=") {
            text = String(text.dropFirst("pin-sha256=".count)).trimming(charactersIn: "\"' ;")
            return digest(text).map { Pin(kind: .publicKey, digest: $0) }
        }
        var body = text
        if lower.hasPrefix("cert-sha256") {
            kind = .certificate
            body = String(text.dropFirst("cert-sha256".count))
        } else if lower.hasPrefix("sha256") {
            body = String(text.dropFirst("sha256".count))
        } else {
            return digest(text).map { Pin(kind: .publicKey, digest: $0) }
        }
        // `/B64` (one slash, the digest may itself begin with "/"), `//B64` (curl), `:HEX`, `=B64`.
        for separator in ["/", "//", ":", "="] where body.hasPrefix(separator) {
            if let bytes = digest(String(body.dropFirst(separator.count))) { return Pin(kind: kind, digest: bytes) }
        }
        return nil
    }

    /// A 32-byte digest from base64 or (colon-separated) hex.
    static func digest(_ text: String) -> [UInt8]? {
        let trimmed = text.trimmingWhitespace()
        let hex = trimmed.replacingAll(":", with: "")
        if hex.count == 64, hex.allSatisfy(\.isHexDigit) {
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return bytes
        }
        guard trimmed.count == 44, let data = Data(base64Encoded: trimmed), data.count == 32 else { return nil }
        return [UInt8](data)
    }

    /// True when `text` is a 44-character base64 SHA-256 digest.
    static func isBase64Digest(_ text: String) -> Bool { text.count == 44 && digest(text) != nil }
}

/// Calendar arithmetic in UTC for expiry dates (`YYYY-MM-DD`) and the rotation calendar.
public enum PinDates {
    // Not `TimeZone(identifier: "UTC")`: without FoundationInternationalization (the binary does
    // not link it) identifiers are not resolved and that is nil.
    public static let utc = TimeZone.gmt

    /// Parses `YYYY-MM-DD` strictly (a real calendar day): RFC 3339's full-date, read by the same
    /// reader as `--at`, so that ``string(_:)`` of the result gives the text back.
    public static func day(_ text: String) -> Date? {
        text.utf8.count == 10 ? RFC3339.parse(text, allowingDateOnly: true) : nil
    }

    /// `YYYY-MM-DD` of a date, in UTC (by `gmtime_r`: a pin list prints one per pin, and a
    /// calendar and a formatted string per date cost more than reading the certificate).
    public static func string(_ date: Date) -> String { RFC3339.day(date) }

    /// The end of an expiry day: TrustKit and Android stop enforcing after the day named.
    public static func endOfDay(_ day: Date) -> Date { day.addingTimeInterval(86_399) }

    /// Whole days from `now` to `date` (negative when past), counted as calendar days in UTC.
    public static func days(from now: Date, to date: Date) -> Int {
        Int((date.timeIntervalSince(now) / 86_400).rounded(.down))
    }

    /// "in 214 days", "today", "3 days ago".
    public static func relative(_ days: Int) -> String {
        switch days {
        case 0: return "today"
        case 1: return "in 1 day"
        case -1: return "1 day ago"
        case let n where n > 1: return "in \(n) days"
        default: return "\(-days) days ago"
        }
    }
}

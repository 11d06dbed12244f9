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

/// RFC 3339 timestamps in UTC (`2026-06-01T00:00:00Z`), whole seconds, written with `gmtime_r`:
/// the same text as `Date.ISO8601FormatStyle()`, without making a
/// formatter (and its calendar) for every date — descriptions print many.
package enum RFC3339 {
    package static func string(_ date: Date) -> String {
        guard let parts = utc(date) else { return Date.ISO8601FormatStyle().format(date) }
        return "\(day(parts))T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }

    /// The full date alone (`2026-06-01`), in UTC.
    package static func day(_ date: Date) -> String {
        guard let parts = utc(date) else { return String(Date.ISO8601FormatStyle().format(date).prefix { $0 != "T" }) }
        return day(parts)
    }

    private static func utc(_ date: Date) -> tm? {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        return gmtime_r(&seconds, &parts) != nil ? parts : nil
    }

    private static func day(_ parts: tm) -> String {
        "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
    }

    private static func pad(_ value: Int32, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

extension RFC3339 {
    /// Parses an RFC 3339 date-time (`2030-01-01T00:00:00Z`, `…T12:00:00.250+02:00`; `t`, `z` and
    /// `±HHMM` accepted as ISO 8601 writes them), or a full date alone (`2030-01-01`, midnight UTC)
    /// when `allowingDateOnly`. Nil for anything else, including out-of-range fields.
    package static func parse(_ text: String, allowingDateOnly: Bool = false) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + width] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += width
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else { return nil }
        guard let midnight = utcSeconds(year: year, month: month, day: day) else { return nil }
        if index == bytes.count {
            return allowingDateOnly ? Date(timeIntervalSince1970: TimeInterval(midnight)) : nil
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: "t") else { return nil }
        index += 1
        guard let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2) else { return nil }
        guard hour < 24, minute < 60, second < 60 else { return nil }
        var fraction = 0.0
        if expect(".") {
            var scale = 0.1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if expect("Z") || expect("z") {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2) else { return nil }
            _ = expect(":")
            guard let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let seconds = midnight + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }

    /// The instant of a civil date and time in UTC, in the proleptic Gregorian calendar: the one
    /// calendar of the package, for RFC 3339 text and for the dates of cookies (RFC 6265 5.1.1).
    /// Nil when no such date exists (month 13, 31 April, 29 February of a common year, hour 24).
    package static func utcDate(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Date? {
        utcSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// ``utcDate(year:month:day:hour:minute:second:)`` as whole seconds since 1970.
    private static func utcSeconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Int? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        guard (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) else { return nil }
        return daysSinceEpoch(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

import MTLSTrust

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A character encoding for response bodies and form submissions, by its WHATWG name, decoded
/// natively (UTF-8, UTF-16, windows-1252) or through the system's iconv (Shift_JIS as CP932,
/// EUC-JP, ISO-2022-JP, GBK, Big5, EUC-KR, KOI8, ISO-8859-x, windows-125x …).
///
/// Labels follow the WHATWG Encoding Standard: `Shift_JIS`, `sjis`, `windows-31j` and `cp932`
/// all mean CP932 (what Windows servers send under the name Shift_JIS, with the NEC and IBM
/// extensions such as ①②); `ISO-8859-1` and `US-ASCII` mean windows-1252.
public struct TextCharset: Sendable, Hashable, CustomStringConvertible {
    /// The canonical name (`Shift_JIS`, `EUC-JP`, `windows-1252`, `UTF-8` …).
    public let name: String
    /// The iconv name used to convert; nil for the native decoders.
    let iconvName: String?

    private init(_ name: String, iconv: String?) {
        self.name = name
        self.iconvName = iconv
    }

    /// UTF-8.
    public static let utf8 = TextCharset("UTF-8", iconv: nil)
    /// windows-1252 (also for the labels ISO-8859-1 and US-ASCII).
    public static let windows1252 = TextCharset("windows-1252", iconv: nil)
    /// Shift_JIS, decoded as CP932.
    public static let shiftJIS = TextCharset("Shift_JIS", iconv: "CP932")
    /// EUC-JP (with the Microsoft extensions, as the WHATWG index has them).
    public static let eucJP = TextCharset("EUC-JP", iconv: "EUC-JP-MS")
    /// ISO-2022-JP.
    public static let iso2022JP = TextCharset("ISO-2022-JP", iconv: "ISO-2022-JP")
    /// UTF-16LE.
    public static let utf16LE = TextCharset("UTF-16LE", iconv: nil)
    /// UTF-16BE.
    public static let utf16BE = TextCharset("UTF-16BE", iconv: nil)

    /// Looks up a charset label as the WHATWG Encoding Standard's "get an encoding" does: ASCII
    /// white space around it ignored, ASCII case-insensitive, every label of the standard
    /// (``whatwgLabels``). Beyond the standard, Microsoft's code-page names that Windows servers
    /// send (`cp932`, `cp936`, `cp949`, `euc-jp-ms`) and any other name the system's iconv knows.
    /// Nil for anything else, so that a page's next declaration is tried, as a browser tries it.
    public init?(label: String) {
        let isSpace = { (scalar: Unicode.Scalar) in ScalarClass.isASCIIWhitespace(scalar) }
        let scalars = label.unicodeScalars.drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        // Quotes are not part of a label: `MediaType` and the `<meta>` prescan take them off
        // where the syntax has them, and a quote left in (`charset='gbk'`, `sjis"`) makes the
        // text no label at all, as in a browser.
        let key = String(String.UnicodeScalarView(scalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 0x20)! : $0 }))
        guard !key.isEmpty else { return nil }
        if let name = TextCharset.whatwgLabels[key] {
            self = TextCharset(name, iconv: TextCharset.iconvName(forWHATWGName: name))
            return
        }
        switch key {
        case "cp932", "x-ms-cp932": self = .shiftJIS
        case "eucjp", "euc-jp-ms": self = .eucJP
        case "cp936", "ms936", "windows-936": self = TextCharset("GBK", iconv: "GBK")
        case "cp949": self = TextCharset("EUC-KR", iconv: "CP949")
        default:
            let upper = key.uppercased()
            guard upper.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_.:".unicodeScalars.contains($0) }), TextCharset.iconvKnows(upper)
            else { return nil }
            self = TextCharset(upper.hasPrefix("WINDOWS-") ? key : upper, iconv: upper)
        }
    }

    /// The name.
    public var description: String { name }

    /// Decodes bytes; malformed sequences become U+FFFD, never an error.
    public func decode(_ bytes: [UInt8]) -> String {
        switch name {
        case "UTF-8":
            return String(decoding: bytes, as: UTF8.self)
        case "windows-1252":
            return String(String.UnicodeScalarView(bytes.map { Windows1252.scalar($0) }))
        case "EUC-JP":
            return TextCharset.decodeEUCJP(bytes)
        case "ISO-2022-JP":
            return TextCharset.decodeISO2022JP(bytes)
        case "replacement":
            // ISO-2022-KR, HZ and the like: one U+FFFD, as browsers read them (their escape
            // sequences have hidden markup from filters).
            return bytes.isEmpty ? "" : "\u{FFFD}"
        case "x-user-defined":
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0 < 0x80 ? UInt32($0) : 0xF780 + UInt32($0) - 0x80)! }))
        case "UTF-16LE", "UTF-16BE":
            let little = name == "UTF-16LE"
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var index = 0
            while index + 1 < bytes.count {
                let a = UInt16(bytes[index])
                let b = UInt16(bytes[index + 1])
                units.append(little ? a | b << 8 : a << 8 | b)
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        default:
            let policy: Iconv.InvalidPolicy = self == .shiftJIS ? .resynchronize(TextCharset.shiftJISError) : .replace(Array("\u{FFFD}".utf8))
            guard let iconvName, let converted = Iconv.convert(bytes, from: iconvName, to: "UTF-8", onInvalid: policy) else {
                return String(decoding: bytes, as: UTF8.self)
            }
            return String(decoding: converted, as: UTF8.self)
        }
    }

    /// Encodes text in this charset. A character the charset cannot represent is written as an
    /// HTML numeric character reference (`&#9312;`), as browsers do in form submissions.
    public func encode(_ text: String) -> [UInt8] {
        switch name {
        case "UTF-8":
            return Array(text.utf8)
        case "windows-1252":
            return text.unicodeScalars.flatMap { scalar -> [UInt8] in
                if let byte = Windows1252.byte(scalar) { return [byte] }
                return Array("&#\(scalar.value);".utf8)
            }
        case "replacement":
            return Array(text.utf8)  // a form in this encoding is submitted as UTF-8
        case "EUC-JP":
            return text.unicodeScalars.flatMap { TextCharset.encodeEUCJP($0) ?? Array("&#\($0.value);".utf8) }
        case "ISO-2022-JP":
            return TextCharset.encodeISO2022JP(text)
        case "x-user-defined":
            return text.unicodeScalars.flatMap { scalar -> [UInt8] in
                if scalar.isASCII { return [UInt8(scalar.value)] }
                if (0xF780...0xF7FF).contains(scalar.value) { return [UInt8(scalar.value - 0xF780 + 0x80)] }
                return Array("&#\(scalar.value);".utf8)
            }
        case "UTF-16LE":
            return text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        case "UTF-16BE":
            return text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        default:
            guard let iconvName else { return Array(text.utf8) }
            // Shift_JIS as the WHATWG encoder writes it: U+0080 is the byte 0x80, and the private
            // use area CP932 maps to its user-defined rows is not encoded (a browser writes `&#N;`).
            let exception: (Unicode.Scalar) -> [UInt8]? = { scalar in
                guard self == .shiftJIS else { return nil }
                if scalar.value == 0x80 { return [0x80] }
                return (0xE000...0xE757).contains(scalar.value) ? Array("&#\(scalar.value);".utf8) : nil
            }
            if self != .shiftJIS || !text.unicodeScalars.contains(where: { exception($0) != nil }),
                let whole = Iconv.convert(Array(text.utf8), from: "UTF-8", to: iconvName, onInvalid: .fail)
            {
                return whole
            }
            var out: [UInt8] = []
            for scalar in text.unicodeScalars {
                if let bytes = exception(scalar) {
                    out += bytes
                } else if let bytes = Iconv.convert(Array(String(scalar).utf8), from: "UTF-8", to: iconvName, onInvalid: .fail) {
                    out += bytes
                } else {
                    out += Array("&#\(scalar.value);".utf8)
                }
            }
            return out
        }
    }

    private static func iconvKnows(_ name: String) -> Bool {
        let descriptor = iconv_open("UTF-8", name)
        guard descriptor != iconv_t(bitPattern: -1) else { return false }
        iconv_close(descriptor)
        return true
    }
}

/// windows-1252 as the WHATWG index has it (0x80–0x9F are typographic marks; the five unassigned
/// bytes map to C1 controls).
enum Windows1252 {
    static let high: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
        0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ]

    static func scalar(_ byte: UInt8) -> Unicode.Scalar {
        if byte >= 0x80 && byte < 0xA0 { return Unicode.Scalar(high[Int(byte - 0x80)])! }
        return Unicode.Scalar(byte)
    }

    static func byte(_ scalar: Unicode.Scalar) -> UInt8? {
        if scalar.value < 0x80 || (scalar.value >= 0xA0 && scalar.value <= 0xFF) { return UInt8(scalar.value) }
        if let index = high.firstIndex(of: scalar.value) { return UInt8(0x80 + index) }
        return nil
    }
}

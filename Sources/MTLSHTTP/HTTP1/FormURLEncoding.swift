#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `application/x-www-form-urlencoded`: names and values percent-encoded as UTF-8 (or another
/// charset's bytes) as the URL Standard's urlencoded serializer writes them, which is what
/// browsers send: ASCII letters and digits, `*`, `-`, `.` and `_` left as they are, a space
/// written `+`, every other byte `%XX` (`~` too).
///
/// A literal `+` therefore becomes `%2B` (a server decodes `+` as a space), and `=`, `&`, `/`
/// inside base64 values such as `SAMLResponse` are escaped too, so no hand-made `+` → `%2B`
/// replacement is ever needed.
public enum FormURLEncoding {
    /// The media type.
    public static let contentType = "application/x-www-form-urlencoded"

    /// Encodes fields in order: `name=value&name=value`.
    public static func encode(_ fields: [(name: String, value: String)]) -> String {
        encode(bytes: fields.map { (Array($0.name.utf8), Array($0.value.utf8)) })
    }

    /// Encodes fields whose names and values are already bytes in the submission charset.
    public static func encode(bytes fields: [(name: [UInt8], value: [UInt8])]) -> String {
        fields.map { serialize($0.name) + "=" + serialize($0.value) }.joined(separator: "&")
    }

    /// The URL Standard's urlencoded byte serializer.
    static func serialize(_ bytes: [UInt8]) -> String {
        percentEncode(bytes: bytes, spaceAsPlus: true) { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2A || byte == 0x2D || byte == 0x2E || byte == 0x5F
        }
    }

    /// Percent-encodes UTF-8 text: unreserved characters (`A–Z a–z 0–9 - . _ ~`) stay, a space
    /// becomes `+` (or `%20` when `spaceAsPlus` is false), everything else `%XX`.
    public static func percentEncode(_ text: String, spaceAsPlus: Bool = true) -> String {
        percentEncode(bytes: Array(text.utf8), spaceAsPlus: spaceAsPlus)
    }

    /// Percent-encodes bytes, as ``percentEncode(_:spaceAsPlus:)``.
    public static func percentEncode(bytes: [UInt8], spaceAsPlus: Bool = true) -> String {
        percentEncode(bytes: bytes, spaceAsPlus: spaceAsPlus, keeping: isUnreserved)
    }

    private static func percentEncode(bytes: [UInt8], spaceAsPlus: Bool, keeping: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for byte in bytes {
            if keeping(byte) {
                out.append(byte)
            } else if byte == 0x20 && spaceAsPlus {
                out.append(0x2B)
            } else {
                out += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes a form body into fields: `+` is a space, `%XX` a byte; invalid escapes are kept
    /// literally (as browsers do) and bytes are read as UTF-8.
    public static func decode(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = percentDecode(String(parts[0]))
            let value = parts.count > 1 ? percentDecode(String(parts[1])) : ""
            return (name, value)
        }
    }

    /// Decodes `+` and `%XX` escapes.
    public static func percentDecode(_ text: String, plusAsSpace: Bool = true) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x2B && plusAsSpace {
                out.append(0x20)
            } else if byte == 0x25, index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x37
        case 0x61...0x66: byte - 0x57
        default: nil
        }
    }
}

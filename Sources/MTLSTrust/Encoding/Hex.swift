extension Array where Element == UInt8 {
    /// Colon-separated upper-case hex, as `openssl x509 -fingerprint` prints it.
    public var colonHex: String { hexDigits(Array("0123456789ABCDEF".utf8), separator: UInt8(ascii: ":")) }
    /// Lower-case hex without separators.
    public var hex: String { hexDigits(Array("0123456789abcdef".utf8), separator: nil) }

    private func hexDigits(_ digits: [UInt8], separator: UInt8?) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(count * 3)
        for (index, byte) in enumerated() {
            if let separator, index > 0 { out.append(separator) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

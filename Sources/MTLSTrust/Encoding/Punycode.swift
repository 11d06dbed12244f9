/// RFC 3492 Punycode, the `xn--` form of internationalised domain labels (`IDNA` adds and checks
/// the prefix and the rules around it).
package enum Punycode {
    /// The longest label encoded or decoded, in code points: far above DNS's 63 octets, and low
    /// enough that the quadratic steps of RFC 3492 stay cheap on hostile input.
    package static let maximumLabelLength = 1_024

    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26

    /// RFC 3492 encoding of a label (without `xn--`): the basic code points, a `-` if there were
    /// any, then the rest as deltas. The caller keeps labels within ``maximumLabelLength``, far
    /// from the 32-bit overflow RFC 3492 guards against.
    package static func encode(_ label: [Unicode.Scalar]) -> String {
        precondition(label.count <= maximumLabelLength, "Punycode.encode: label too long")
        var output = String(String.UnicodeScalarView(label.filter(\.isASCII)))
        let basic = output.unicodeScalars.count
        if basic > 0 { output.append("-") }
        var n: UInt32 = 0x80
        var delta = 0
        var bias = 72
        var handled = basic
        func digit(_ value: Int) -> Character {
            Character(Unicode.Scalar(UInt8(value < 26 ? 0x61 + value : 0x30 + value - 26)))
        }
        while handled < label.count {
            let next = label.lazy.map(\.value).filter { $0 >= n }.min()!
            delta += Int(next - n) * (handled + 1)
            n = next
            for scalar in label {
                if scalar.value < n { delta += 1 }
                guard scalar.value == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, handled + 1, handled == basic)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return output
    }

    private static func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
        var delta = first ? delta / 700 : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + 38)
    }

    /// RFC 3492 decoding of a label's Punycode part (after `xn--`): the label, or nil unless it
    /// decodes to at least one non-ASCII code point (the basic code points before the last `-`
    /// must be ASCII).
    package static func decode(_ encoded: Substring) -> String? {
        guard let scalars = decodeScalars(encoded), scalars.contains(where: { !$0.isASCII }) else { return nil }
        return String(String.UnicodeScalarView(scalars))
    }

    /// RFC 3492 decoding as such: the code points, which may all be ASCII or none at all (`""`),
    /// or nil when `encoded` is not Punycode (a `-` with nothing before it, a digit out of range,
    /// an overflow, a code point that is not a Unicode scalar).
    package static func decodeScalars(_ encoded: Substring) -> [Unicode.Scalar]? {
        // Each decoded code point is an insertion: quadratic in the label's length. No real label
        // comes near the bound (DNS allows 63 octets).
        guard encoded.utf8.count <= maximumLabelLength else { return nil }
        let scalars = Array(encoded.unicodeScalars)
        var output: [UInt32] = []
        var start = 0
        if let dash = scalars.lastIndex(of: "-") {
            output = scalars[..<dash].map(\.value)
            start = dash + 1
        }
        // A `-` first is a digit to RFC 3492's decoder when it is the last one, and no digit is `-`.
        guard output.allSatisfy({ $0 < 0x80 }), start != 1 else { return nil }
        var n = 0x80
        var i = 0
        var bias = 72
        var position = start
        while position < scalars.count {
            let oldI = i
            var w = 1
            var k = base
            while true {
                guard position < scalars.count else { return nil }
                let c = scalars[position].value
                position += 1
                let digit: Int
                switch c {
                case 0x30...0x39: digit = Int(c) - 22
                case 0x41...0x5A: digit = Int(c) - 0x41
                case 0x61...0x7A: digit = Int(c) - 0x61
                default: return nil
                }
                let (product, overflow) = digit.multipliedReportingOverflow(by: w)
                guard !overflow, i <= Int(Int32.max) - product else { return nil }
                i += product
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                guard w <= Int(Int32.max) / (base - t) else { return nil }
                w *= base - t
                k += base
            }
            bias = adapt(i - oldI, output.count + 1, oldI == 0)
            guard i / (output.count + 1) <= 0x10FFFF - n else { return nil }
            n += i / (output.count + 1)
            i %= output.count + 1
            guard n >= 0x80, Unicode.Scalar(UInt32(n)) != nil else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        return output.compactMap(Unicode.Scalar.init)
    }
}

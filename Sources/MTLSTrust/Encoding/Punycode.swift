/// RFC 3492 Punycode, the `xn--` form of internationalised domain labels: decoding only (mtls
/// compares and checks `xn--` labels; it never makes them).
package enum Punycode {
    /// RFC 3492 decoding of a label's Punycode part (after `xn--`): the label, or nil unless it
    /// decodes to at least one non-ASCII code point (the basic code points before the last `-`
    /// must be ASCII).
    package static func decode(_ encoded: Substring) -> String? {
        let base = 36
        let tMin = 1
        let tMax = 26
        let skew = 38
        let damp = 700
        let scalars = Array(encoded.unicodeScalars)
        var output: [UInt32] = []
        var start = 0
        if let dash = scalars.lastIndex(of: "-") {
            output = scalars[..<dash].map(\.value)
            start = dash + 1
        }
        guard output.allSatisfy({ $0 < 0x80 }), start < scalars.count else { return nil }
        var n = 0x80
        var i = 0
        var bias = 72
        var position = start
        func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
            var delta = first ? delta / damp : delta / 2
            delta += delta / count
            var k = 0
            while delta > ((base - tMin) * tMax) / 2 {
                delta /= base - tMin
                k += base
            }
            return k + (base - tMin + 1) * delta / (delta + skew)
        }
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
        guard output.contains(where: { $0 >= 0x80 }) else { return nil }
        return String(String.UnicodeScalarView(output.compactMap(Unicode.Scalar.init)))
    }
}

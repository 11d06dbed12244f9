/// Tells a truncated BER/DER structure from a damaged one, for error messages: walks the
/// elements (definite and indefinite lengths, constructed ones recursively) and reports whether
/// one of them runs past the end of the input.
enum BERScan {
    /// True when the structure that starts at the first byte continues past the end of `bytes`.
    static func endsEarly(_ bytes: [UInt8]) -> Bool {
        var budget = 100_000  // elements visited at most: the walk stays linear on hostile input
        if case .truncated = scan(bytes, at: 0, depth: 0, budget: &budget) { return true }
        return false
    }

    private enum Outcome { case end(Int), truncated, malformed }

    private static func scan(_ bytes: [UInt8], at offset: Int, depth: Int, budget: inout Int) -> Outcome {
        budget -= 1
        guard budget > 0, depth < 64 else { return .malformed }
        guard offset < bytes.count else { return .truncated }
        let tag = bytes[offset]
        guard tag & 0x1F != 0x1F else { return .malformed }
        guard offset + 1 < bytes.count else { return .truncated }
        let first = bytes[offset + 1]
        var cursor = offset + 2
        if first == 0x80 {
            // Indefinite length: elements until the end-of-contents octets 00 00.
            guard tag & 0x20 != 0 else { return .malformed }
            while true {
                guard cursor + 1 < bytes.count else { return .truncated }
                if bytes[cursor] == 0 && bytes[cursor + 1] == 0 { return .end(cursor + 2) }
                switch scan(bytes, at: cursor, depth: depth + 1, budget: &budget) {
                case .end(let next): cursor = next
                case .truncated: return .truncated
                case .malformed: return .malformed
                }
            }
        }
        var length = Int(first)
        if first > 0x80 {
            let count = Int(first & 0x7F)
            guard count <= 4 else { return .malformed }
            guard cursor + count <= bytes.count else { return .truncated }
            length = bytes[cursor..<cursor + count].reduce(0) { $0 << 8 | Int($1) }
            cursor += count
        }
        let end = cursor + length
        guard end <= bytes.count else { return .truncated }
        if tag & 0x20 != 0 {
            while cursor < end {
                switch scan(bytes, at: cursor, depth: depth + 1, budget: &budget) {
                case .end(let next):
                    guard next <= end else { return .malformed }
                    cursor = next
                case .truncated: return .malformed  // an inner element overruns its definite outer one
                case .malformed: return .malformed
                }
            }
        }
        return .end(end)
    }
}

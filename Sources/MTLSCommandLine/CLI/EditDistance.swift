// "Did you mean …?" suggestions for mistyped options and subcommands.

extension ArgumentParser {
    /// The candidate closest to `input`, or `nil` if none is close enough.
    ///
    /// Distance is the optimal-string-alignment (restricted Damerau–Levenshtein)
    /// distance, so a swapped pair of letters (`--hots` → `--host`) costs 1.
    /// Leading dashes are ignored when measuring length, and a candidate must be
    /// within `max(1, length / 3)` edits of the input (at most 3, as in
    /// swift-argument-parser). Ties go to the earlier candidate.
    static func suggestion(for input: String, among candidates: [String]) -> String? {
        let length = input.drop(while: { $0 == "-" }).count
        let threshold = min(3, max(1, length / 3))
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(input, candidate)
            guard distance <= threshold else { continue }
            if best.map({ distance < $0.distance }) ?? true {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// The optimal-string-alignment distance between `a` and `b`: insertions,
    /// deletions, substitutions and transpositions of adjacent characters each cost 1.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, table[i - 2][j - 2] + 1)
                }
                table[i][j] = value
            }
        }
        return table[a.count][b.count]
    }
}

/// Seeded mutations of the fixture certificates, for the tests that hold a DER reader to OpenSSL's
/// on inputs no fixture has: one to three bit flips, interesting bytes, increments, insertions and
/// removals (and, with `truncating`, a cut tail) per certificate. SplitMix64 from a fixed seed: the
/// same sequence on every run, so a failure names an iteration that can be replayed.
struct MutatedCertificates: Sequence, IteratorProtocol {
    private static let fixtures = ["server.der", "server-rsa2048.der", "server-ed25519.der", "intermediate-ca.der", "root-ca.der", "client-alice.der"]
    private static let interestingBytes: [UInt8] = [0x00, 0x01, 0x02, 0x05, 0x06, 0x0C, 0x13, 0x17, 0x18, 0x30, 0x31, 0x80, 0x81, 0xA3, 0xFF]

    private let seeds: [[UInt8]]
    private let kinds: Int
    private var state: UInt64
    private var remaining: Int

    init(seed: UInt64, count: Int, truncating: Bool = false) throws {
        seeds = try Self.fixtures.map { try TestCertificates.bytes($0) }
        kinds = truncating ? 6 : 5
        state = seed
        remaining = count
    }

    mutating func next() -> [UInt8]? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        var bytes = seeds[random() % seeds.count]
        for _ in 0...(random() % 3) {
            let at = random() % bytes.count
            switch random() % kinds {
            case 0: bytes[at] ^= UInt8(1 << (random() % 8))
            case 1: bytes[at] = Self.interestingBytes[random() % Self.interestingBytes.count]
            case 2: bytes[at] = bytes[at] &+ 1
            case 3: bytes.insert(UInt8(truncatingIfNeeded: random()), at: at)
            case 4: bytes.remove(at: at)
            default: bytes.removeLast(random() % Swift.min(bytes.count, 8) + 1)
            }
        }
        return bytes
    }

    private mutating func random() -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
    }
}

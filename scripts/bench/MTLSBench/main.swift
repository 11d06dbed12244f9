// mtls-bench: the in-process side of scripts/bench/run_all.sh. Each mode does the same work as the
// C limit program of the same name (c_verify, c_pin, c_https) through this package's libraries,
// and prints one line on stderr that the harness parses: RESULT key=value ... rss_kib=N.
//
//   mtls-bench verify leaf|noparse ROOT.pem INT.pem DER_LIST UNIX_TIME HOST
//   mtls-bench pin fast|full LIST [mem]
//   mtls-bench https keepalive|full|resumed|download PORT CAFILE PATH N [OUTFILE]
//   mtls-bench fuzz ITERATIONS SEED CERTIFICATE_FILE...
//   mtls-bench memory-flat [--evaluations N] [--requests N] [--certs DIR] [--leak-bytes B]   (MemoryFlat.swift)
#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

// As `mtls` does, so that the figures include the wiping of OpenSSL's frees.
OpenSSLInfo.installWipingAllocator()

/// Writes to standard error unbuffered, as the RESULT lines are read while the process runs.
func writeError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(2, $0.baseAddress!, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}

func fail(_ message: String) -> Never {
    writeError("error: \(message)\n")
    exit(2)
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func peakRSSKiB() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss
}

func result(_ pairs: String) {
    writeError("RESULT \(pairs) rss_kib=\(peakRSSKiB())\n")
}

func lines(_ path: String) -> [String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { fail("cannot read \(path)") }
    return text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
}

func certificates(_ path: String) -> [Certificate] {
    do { return try CertificateLoader.certificates(atPath: path) } catch { fail("\(path): \(error)") }
}

/// Buffered stdout.
final class Output {
    private var buffer: [UInt8] = []
    init() { buffer.reserveCapacity(1 << 20) }
    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count > 1 << 20 { flush() }
    }
    func flush() {
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(1, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

// MARK: verify

func verify(_ args: [String]) {
    guard args.count >= 6 else { fail("usage: mtls-bench verify leaf|noparse ROOT INT DER_LIST UNIX_TIME HOST") }
    let mode = args[0]
    let root = certificates(args[1])
    let intermediate = certificates(args[2])
    let paths = lines(args[3])
    let time = Date(timeIntervalSince1970: Double(args[4]) ?? 0)
    let ders: [[UInt8]] = paths.map { path in
        guard let bytes = (try? CertificateLoader.readFile(path)) else { fail("cannot read \(path)") }
        return bytes
    }
    let policy = TrustPolicy(anchors: root, intermediates: intermediate, evaluationTime: time, purpose: .server, hostname: args[5])
    let evaluator: TrustEvaluator
    do { evaluator = try TrustEvaluator(policy: policy) } catch { fail("\(error)") }
    var trusted = 0
    let start: Double
    switch mode {
    case "leaf":
        start = now()
        for der in ders {
            guard let leaf = try? Certificate(derBytes: der) else { fail("parse") }
            if evaluator.evaluate(leaf).isTrusted { trusted += 1 }
        }
    case "noparse":
        let leaves = ders.map { der -> Certificate in
            guard let leaf = try? Certificate(derBytes: der) else { fail("parse") }
            return leaf
        }
        start = now()
        for leaf in leaves where evaluator.evaluate(leaf).isTrusted { trusted += 1 }
    default:
        fail("unknown verify mode \(mode)")
    }
    let elapsed = now() - start
    guard trusted == ders.count else {
        let first = ders.first.flatMap { try? Certificate(derBytes: $0) }.map { evaluator.evaluate($0).findings.map(\.reason) } ?? []
        fail("\(trusted) of \(ders.count) chains trusted: \(first)")
    }
    let fast = evaluator.fastPathStatistics
    result(
        String(
            cFormat: "rate=%.1f n=%d ok=%d seconds=%.4f fast_accepted=%d fast_declined=%d fast_on_der=%d", Double(ders.count) / elapsed, ders.count, trusted, elapsed,
            fast.accepted, fast.declined, fast.acceptedOnDER))
}

// MARK: pin

/// The pin line, as c_pin prints it (the subject, role and expiry are read all the same).
func pinLine(_ digest: [UInt8], subject: String, role: String, notAfter: Date) -> String {
    "sha256/\(Data(digest).base64EncodedString())\n"
}

func pin(_ args: [String]) {
    guard args.count >= 2 else { fail("usage: mtls-bench pin fast|full LIST [mem]") }
    let fast = args[0] == "fast"
    let paths = lines(args[1])
    let preload = args.count > 2 && args[2] == "mem"
    var files: [[UInt8]] = []
    if preload {
        files = paths.map { (try? CertificateLoader.readFile($0)) ?? [] }
    }
    let out = Output()
    var count = 0
    let start = now()
    for (index, path) in paths.enumerated() {
        guard let bytes = preload ? files[index] : (try? CertificateLoader.readFile(path)) else { fail("cannot read \(path)") }
        if fast {
            guard let summaries = CertificateSummaryReader.summaries(ofFile: bytes) else { fail("\(path) is outside the fast subset") }
            for summary in summaries {
                out.write(pinLine(summary.spkiSHA256, subject: summary.subject, role: summary.isCA ? "intermediate" : "leaf", notAfter: summary.notAfter))
                count += 1
            }
        } else {
            guard let loaded = try? CertificateLoader.certificates(from: bytes, source: path).certificates else { fail("\(path)") }
            for certificate in loaded {
                out.write(
                    pinLine(
                        certificate.spkiSHA256, subject: certificate.subject, role: (certificate.basicConstraints?.isCA ?? false) ? "intermediate" : "leaf",
                        notAfter: certificate.notAfter))
                count += 1
            }
        }
    }
    out.flush()
    let elapsed = now() - start
    result(String(cFormat: "rate=%.1f n=%d seconds=%.5f", Double(count) / elapsed, count, elapsed))
}

// MARK: https

func https(_ args: [String]) {
    guard args.count >= 5 else { fail("usage: mtls-bench https keepalive|full|resumed|download PORT CAFILE PATH N [OUTFILE]") }
    let mode = args[0]
    let port = Int(args[1]) ?? 0
    let count = Int(args[4]) ?? 0
    let configuration = TLSClientConfiguration(trust: TrustPolicy(anchors: certificates(args[2])))
    let client: HTTPSClient
    let url: HTTPSURL
    do {
        client = try HTTPSClient(configuration: configuration)
        url = try HTTPSURL("https://localhost:\(port)\(args[3])")
    } catch { fail("\(error)") }
    let start = now()
    switch mode {
    case "keepalive":
        let request = HTTPRequest(method: "GET", url: url)
        for _ in 0..<count {
            do {
                let response = try client.send(request)
                guard response.status == 200 else { fail("status \(response.status)") }
            } catch { fail("\(error)") }
        }
        let elapsed = now() - start
        result(String(cFormat: "rate=%.1f n=%d seconds=%.4f", Double(count) / elapsed, count, elapsed))
    case "full", "resumed":
        let request = HTTPRequest(method: "GET", url: url, headers: ["Connection": "close"])
        var resumed = 0
        for _ in 0..<count {
            do {
                let response = try client.send(request)
                guard response.status == 200, !response.reusedConnection else { fail("status \(response.status)") }
                if response.tls.resumed { resumed += 1 }
            } catch { fail("\(error)") }
        }
        let elapsed = now() - start
        result(String(cFormat: "rate=%.1f n=%d resumed=%d seconds=%.4f", Double(count) / elapsed, count, resumed, elapsed))
    case "download":
        guard args.count >= 6 else { fail("download needs OUTFILE") }
        let fd = open(args[5], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { fail("cannot create \(args[5])") }
        var bytes = 0
        do {
            let response = try client.send(HTTPRequest(method: "GET", url: url, headers: ["Connection": "close"])) { chunk in
                try chunk.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                        if n <= 0 { throw POSIXError(.EIO) }
                        offset += n
                    }
                }
                bytes += chunk.count
            }
            guard response.status == 200 else { fail("status \(response.status)") }
        } catch { fail("\(error)") }
        close(fd)
        let elapsed = now() - start
        result(String(cFormat: "mb_s=%.1f bytes=%d seconds=%.4f", Double(bytes) / elapsed / 1e6, bytes, elapsed))
    default:
        fail("unknown https mode \(mode)")
    }
}

// MARK: fanout

/// A library user's fan-out: `count` concurrent `await client.send` in one task group, each with a
/// client of its own (a full handshake each, as every probe of `probe --targets` has) sharing one
/// TLS context and trust store (`HTTPSClient(sharingContextWith:)`, as the probes do), against
/// `BASE?i=N&…`. Every answer must be a 200.
func fanout(_ args: [String]) {
    guard args.count >= 3, let count = Int(args[2]), count > 0 else { fail("usage: mtls-bench fanout URL CAFILE N") }
    let base = args[0]
    let configuration = TLSClientConfiguration(trust: TrustPolicy(anchors: certificates(args[1])))
    let start = now()
    let shared: HTTPSClient
    do { shared = try HTTPSClient(configuration: configuration) } catch { fail("fanout: \(error)") }
    let failures = Engine.blocking(onLoop: false) { () async -> [String] in
        await withTaskGroup(of: String?.self) { group in
            for index in 0..<count {
                group.addTask {
                    do throws(HTTPSError) {
                        let client = HTTPSClient(sharingContextWith: shared)
                        let url = try HTTPSURL(base + (base.contains("?") ? "&" : "?") + "i=\(index)")
                        let response = try await client.send(HTTPRequest(url: url))
                        return response.status == 200 ? nil : "status \(response.status)"
                    } catch {
                        return error.description
                    }
                }
            }
            var failures: [String] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
    }
    guard failures.isEmpty else { fail("\(failures.count) of \(count) sends failed; first: \(failures[0])") }
    let elapsed = now() - start
    result(String(cFormat: "rate=%.1f n=%d seconds=%.4f", Double(count) / elapsed, count, elapsed))
}

// MARK: fuzz

/// SplitMix64: deterministic for a seed.
struct Random {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
}

/// One random change of the kinds that break or bend DER: bit flips, byte values that matter to
/// DER (0x00, 0x80, 0xFF, tag bytes), length bytes ± 1, insertions, deletions, truncation.
func mutate(_ input: [UInt8], _ random: inout Random) -> [UInt8] {
    var bytes = input
    guard !bytes.isEmpty else { return bytes }
    let at = random.below(bytes.count)
    switch random.below(8) {
    case 0: bytes[at] ^= UInt8(1 << random.below(8))
    case 1: bytes[at] = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0C, 0x13, 0x17, 0x18, 0x30, 0x31, 0x7F, 0x80, 0x81, 0x82, 0xA0, 0xA3, 0xFF][random.below(20)]
    case 2: bytes[at] = bytes[at] &+ 1
    case 3: bytes[at] = bytes[at] &- 1
    case 4: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
    case 5: bytes.remove(at: at)
    case 6: bytes.removeLast(random.below(min(bytes.count, 8)) + 1)
    default:
        let length = min(random.below(16) + 1, bytes.count - at)
        let slice = Array(bytes[at..<(at + length)])
        bytes.insert(contentsOf: slice, at: random.below(bytes.count))
    }
    return bytes
}

/// The facts the slow path gives, for comparison.
func facts(_ certificate: Certificate) -> (spki: [UInt8], subject: String, notAfter: Date, isCA: Bool, selfSigned: Bool) {
    (certificate.spkiSHA256, certificate.subject, certificate.notAfter, certificate.basicConstraints?.isCA ?? false, certificate.isSelfSigned)
}

/// Differential fuzzing of the fast reader against `d2i_X509` (``Certificate``): whenever the fast
/// reader accepts an input, the full parse must accept it too and give the same facts.
func fuzz(_ args: [String]) {
    guard args.count >= 3, let iterations = Int(args[0]), let seed = UInt64(args[1]) else { fail("usage: mtls-bench fuzz ITERATIONS SEED FILE...") }
    var seeds: [[UInt8]] = []
    for path in args.dropFirst(2) {
        seeds += certificates(path).map(\.derBytes)
    }
    guard !seeds.isEmpty else { fail("no seed certificates") }
    var random = Random(state: seed)
    var fastAccepted = 0
    var slowAccepted = 0
    var mismatches = 0
    var pemAccepted = 0
    let start = now()
    func check(_ input: [UInt8], _ label: String) {
        let fast = CertificateSummaryReader.summary(ofDER: input)
        let slow = try? Certificate(derBytes: input)
        if slow != nil { slowAccepted += 1 }
        guard let fast else { return }
        fastAccepted += 1
        guard let slow else {
            mismatches += 1
            writeError("MISMATCH (\(label)): fast accepted what d2i_X509 refuses: \(input.map { String(cFormat: "%02x", $0) }.joined())\n")
            return
        }
        let expected = facts(slow)
        if fast.spkiSHA256 != expected.spki || fast.subject != expected.subject || fast.notAfter != expected.notAfter
            || fast.isCA != expected.isCA || (!fast.mayBeSelfSigned && expected.selfSigned)
        {
            mismatches += 1
            writeError("MISMATCH (\(label)): facts differ: fast \(fast) slow \(expected)\n")
        }
    }
    for seed in seeds { check(seed, "seed") }
    for iteration in 0..<iterations {
        var input = seeds[random.below(seeds.count)]
        for _ in 0...random.below(3) { input = mutate(input, &random) }
        check(input, "iteration \(iteration)")
        // The PEM layer too: a mutated PEM text must never give other certificates than PEM.parse.
        if iteration % 8 == 0 {
            var pem = Array(PEM.encode(seeds[random.below(seeds.count)], label: "CERTIFICATE").utf8)
            if random.below(2) == 0 { pem = Array(("Bag Attributes\n" + String(decoding: pem, as: UTF8.self) + PEM.encode(seeds[0], label: "CERTIFICATE")).utf8) }
            for _ in 0...random.below(2) {
                let at = random.below(pem.count)
                switch random.below(4) {
                case 0: pem[at] = [0x0A, 0x0D, 0x20, 0x2D, 0x3D, 0x41, 0x2B, 0x2F][random.below(8)]
                case 1: pem.remove(at: at)
                case 2: pem.insert([0x0A, 0x0D, 0x20, 0x3D][random.below(4)], at: at)
                default: pem[at] ^= UInt8(1 << random.below(8))
                }
            }
            if let fast = CertificateSummaryReader.summaries(ofFile: pem) {
                pemAccepted += 1
                let slow = try? CertificateLoader.certificates(from: pem, source: "fuzz").certificates
                if slow == nil || slow!.count != fast.count
                    || zip(fast, slow!).contains(where: { $0.spkiSHA256 != $1.spkiSHA256 || $0.subject != $1.subject || $0.notAfter != $1.notAfter })
                {
                    mismatches += 1
                    writeError("MISMATCH (PEM iteration \(iteration)): \(String(decoding: pem, as: UTF8.self))\n")
                }
            }
        }
    }
    let elapsed = now() - start
    result(
        String(
            cFormat: "iterations=%d fast_accepted=%d slow_accepted=%d pem_accepted=%d mismatches=%d seconds=%.2f", iterations, fastAccepted, slowAccepted, pemAccepted, mismatches,
            elapsed))
    exit(mismatches == 0 ? 0 : 1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else { fail("usage: mtls-bench verify|pin|https|fuzz ...") }
switch mode {
case "verify": verify(Array(arguments.dropFirst()))
case "pin": pin(Array(arguments.dropFirst()))
case "https": https(Array(arguments.dropFirst()))
case "fuzz": fuzz(Array(arguments.dropFirst()))
case "fanout": fanout(Array(arguments.dropFirst()))
case "memory-flat": memoryFlat(Array(arguments.dropFirst()))
default: fail("unknown mode \(mode)")
}

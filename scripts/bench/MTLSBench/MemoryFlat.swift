// mtls-bench memory-flat: resident memory stays flat across many trust evaluations and HTTPS
// requests (issue #9). Each phase samples VmRSS (/proc/self/status) and the open descriptors
// before it starts, after a warm-up of 10 % of its iterations, and after every further tenth; the
// phase fails when VmRSS at the end exceeds VmRSS after the warm-up by more than its budget, or
// when descriptors were left open.
//
//   mtls-bench memory-flat [--evaluations N] [--requests N] [--certs DIR] [--leak-bytes B]
//
// --leak-bytes B allocates B bytes per iteration and never frees them: a deliberate leak, to show
// that the check fails (100 B per evaluation is 9 MB after the warm-up of 100,000 evaluations; 1 KB
// per request is 9 MB after the warm-up of 10,000 requests).
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
import MTLSTestServer

/// The largest growth of VmRSS after the warm-up that counts as flat, per phase.
private let evaluationBudgetKiB = 2 * 1024
private let requestBudgetKiB = 3 * 1024
/// Descriptors may differ by a few (a connection the server has not finished closing).
private let descriptorSlack = 4

/// Prints a line at once (the figures appear as they are measured, also through a pipe).
private func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// VmRSS of this process in KiB.
private func residentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    return -1
}

/// The number of open file descriptors of this process.
private func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Allocations that are never freed, for `--leak-bytes`.
nonisolated(unsafe) private var leaked: [UnsafeMutableRawPointer] = []

private func leak(_ bytes: Int) {
    guard bytes > 0, let pointer = malloc(bytes) else { return }
    memset(pointer, 0xA5, bytes)  // touched, as a leaked object would be
    leaked.append(pointer)
}

/// One row of a phase's table.
private struct Sample {
    var label: String
    var iterations: Int
    var rssKiB: Int
    var descriptors: Int
    var seconds: Double
}

/// What a phase measured.
private struct PhaseResult {
    var name: String
    var samples: [Sample]
    var warmUp: Sample
    var end: Sample
    var budgetKiB: Int
    var growthKiB: Int { end.rssKiB - warmUp.rssKiB }
    var descriptorGrowth: Int { end.descriptors - warmUp.descriptors }
    var isFlat: Bool { growthKiB <= budgetKiB && descriptorGrowth <= descriptorSlack }
}

/// Runs `body` for iterations 0..<total, sampling before, after the warm-up (10 %) and after each
/// further tenth, and prints the table.
private func measure(_ name: String, total: Int, budgetKiB: Int, leakBytes: Int, _ body: (Int) -> Void) -> PhaseResult {
    let start = now()
    var samples = [Sample(label: "start", iterations: 0, rssKiB: residentKiB(), descriptors: openDescriptors(), seconds: 0)]
    var done = 0
    for decile in 1...10 {
        let until = total * decile / 10
        while done < until {
            body(done)
            leak(leakBytes)
            done += 1
        }
        let label = decile == 1 ? "warm-up" : "\(decile * 10) %"
        samples.append(Sample(label: label, iterations: done, rssKiB: residentKiB(), descriptors: openDescriptors(), seconds: now() - start))
    }
    let result = PhaseResult(name: name, samples: samples, warmUp: samples[1], end: samples[samples.count - 1], budgetKiB: budgetKiB)
    say("\n\(name): \(total) iterations")
    say("  point      iterations   VmRSS KiB   since warm-up KiB   fds   seconds")
    for sample in samples {
        let delta = sample.label == "start" ? "" : String(sample.rssKiB - result.warmUp.rssKiB)
        say(
            "  "
                + [
                    sample.label.padded(to: 9), String(sample.iterations).leftPadded(12), String(sample.rssKiB).leftPadded(11),
                    delta.leftPadded(19), String(sample.descriptors).leftPadded(5), String(cFormat: "%9.2f", sample.seconds),
                ].joined(separator: " "))
    }
    let verdict = result.isFlat ? "flat" : "GREW"
    say(
        "  \(verdict): VmRSS \(result.warmUp.rssKiB) KiB after the warm-up, \(result.end.rssKiB) KiB at the end, growth \(result.growthKiB) KiB (budget \(budgetKiB) KiB); "
            + "fds \(result.warmUp.descriptors) -> \(result.end.descriptors); \(String(cFormat: "%.1f", result.end.seconds)) s, "
            + "\(String(cFormat: "%.0f", Double(total) / max(result.end.seconds, 1e-9)))/s")
    return result
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}

private func readFixture(_ directory: String, _ name: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: "\(directory)/\(name)") else { fail("cannot read \(directory)/\(name) (run from the package root, or pass --certs)") }
    return [UInt8](data)
}

// MARK: Trust evaluations

/// One TrustEvaluator; leaves that pass and that fail in different ways (expired, not yet valid,
/// wrong host, wrong EKU, untrusted root), each parsed from its bytes (DER, or PEM) every time; every
/// third evaluation also gets the intermediate, parsed again, as an extra intermediate. Every
/// outcome is compared with the first evaluation of the same input.
private func evaluations(_ total: Int, certs: String, leakBytes: Int) -> PhaseResult {
    let time = Date(timeIntervalSince1970: 1_780_272_000)
    let root = certificates("\(certs)/root-ca.pem")
    let intermediate = certificates("\(certs)/intermediate-ca.pem")
    let intermediateDER = readFixture(certs, "intermediate-ca.der")
    let policy = TrustPolicy(anchors: root, intermediates: intermediate, evaluationTime: time, purpose: .server, hostname: "localhost")
    let evaluator: TrustEvaluator
    do { evaluator = try TrustEvaluator(policy: policy) } catch { fail("\(error)") }
    let inputs: [(name: String, bytes: [UInt8], pem: Bool)] = [
        ("server.der", readFixture(certs, "server.der"), false),
        ("server-expired.der", readFixture(certs, "server-expired.der"), false),
        ("server-wronghost.der", readFixture(certs, "server-wronghost.der"), false),
        ("client-other.der", readFixture(certs, "client-other.der"), false),
        ("server.pem", readFixture(certs, "server.pem"), true),
        ("server-notyetvalid.der", readFixture(certs, "server-notyetvalid.der"), false),
        ("server-clientauth-only.pem", readFixture(certs, "server-clientauth-only.pem"), true),
    ]
    func evaluate(_ iteration: Int) -> (index: Int, extra: Bool, outcome: String) {
        let index = iteration % inputs.count
        let input = inputs[index]
        let leaf: Certificate
        do {
            leaf = input.pem ? try CertificateLoader.certificates(from: input.bytes, source: input.name).certificates[0] : try Certificate(derBytes: input.bytes)
        } catch { fail("\(input.name): \(error)") }
        let extra = iteration % 3 == 0
        var extras: [Certificate] = []
        if extra {
            do { extras = [try Certificate(derBytes: intermediateDER)] } catch { fail("intermediate-ca.der: \(error)") }
        }
        let evaluation = evaluator.evaluate(leaf, extraIntermediates: extras)
        // The reasons and hints are built for every finding; read them all.
        let outcome = evaluation.isTrusted ? "trusted" : evaluation.findings.map { "\($0.depth):\($0.name):\($0.reason.count):\($0.hint.description.count)" }.joined(separator: ",")
        return (index, extra, outcome)
    }
    var expected: [String: String] = [:]
    for iteration in 0..<(inputs.count * 3) {
        let (index, extra, outcome) = evaluate(iteration)
        expected["\(index)/\(extra)"] = outcome
    }
    let trustedCount = expected.values.filter { $0 == "trusted" }.count
    say("trust inputs: \(inputs.map(\.name).joined(separator: ", ")); \(trustedCount) of \(expected.count) input variants trusted, the others fail with findings")
    var mismatches = 0
    let result = measure("trust evaluations (one TrustEvaluator)", total: total, budgetKiB: evaluationBudgetKiB, leakBytes: leakBytes) { iteration in
        let (index, extra, outcome) = evaluate(iteration)
        if expected["\(index)/\(extra)"] != outcome { mismatches += 1 }
    }
    if mismatches > 0 { fail("\(mismatches) evaluations gave another outcome than the first evaluation of the same input") }
    return result
}

// MARK: HTTPS requests

/// The in-process TestServer (TLSServer) on loopback with the TestCerts server identity, asking for
/// client certificates on /secure; a client with alice's identity, kept-alive requests mixed with
/// `Connection: close`, POSTs, 401s, 403.7s from a client without identity, and a handshake refused
/// for the server certificate by a client trusting another root.
private func requests(_ total: Int, certs: String, leakBytes: Int) -> PhaseResult {
    let time = Date(timeIntervalSince1970: 1_780_272_000)
    let root = certificates("\(certs)/root-ca.pem")
    let intermediate = certificates("\(certs)/intermediate-ca.pem")
    let server: TestServer
    let port: Int
    do {
        let key = try PrivateKey(bytes: readFixture(certs, "server.key"))
        let tls = TLSServerConfiguration(certificate: certificates("\(certs)/server.pem")[0], privateKey: key, chain: intermediate, clientCAs: root + intermediate)
        server = try TestServer(configuration: TestServerConfiguration(tls: tls, bindAddress: "127.0.0.1", port: 0))
        port = try server.start()
    } catch { fail("cannot start the test server: \(error)") }
    defer { server.stop() }

    func client(anchors: [Certificate], identity: Bool) -> HTTPSClient {
        do {
            let identities = identity ? [try ClientIdentity.pkcs12(path: "\(certs)/p12/client-alice-modern.p12", password: "mtls")] : []
            return try HTTPSClient(
                configuration: TLSClientConfiguration(trust: TrustPolicy(anchors: anchors, evaluationTime: time), identities: identities, timeouts: Timeouts.uniform(.seconds(10))))
        } catch { fail("cannot make a client: \(error)") }
    }
    let alice = client(anchors: root, identity: true)
    let anonymous = client(anchors: root, identity: false)
    let distrusting = client(anchors: certificates("\(certs)/other-root-ca.pem"), identity: true)
    func url(_ path: String) -> HTTPSURL {
        do { return try HTTPSURL("https://localhost:\(port)\(path)") } catch { fail("\(error)") }
    }
    let page = url("/")
    let secure = url("/secure")
    let basic = url("/basic")
    let upload = [UInt8](repeating: 0x61, count: 1024)

    var counts: [String: Int] = [:]
    var unexpected: [String] = []
    func request(_ iteration: Int) {
        let client: HTTPSClient
        let request: HTTPRequest
        let expected: String
        switch iteration {
        case _ where iteration % 100 == 50:
            (client, request, expected) = (distrusting, HTTPRequest(url: page), "error server certificate")
        case _ where iteration % 20 == 3:
            (client, request, expected) = (alice, HTTPRequest(url: basic), "401")
        case _ where iteration % 20 == 7:
            (client, request, expected) = (alice, HTTPRequest(url: secure), "200")
        case _ where iteration % 20 == 13:
            (client, request, expected) = (anonymous, HTTPRequest(url: secure), "403")
        case _ where iteration % 20 == 17:
            (client, request, expected) = (alice, HTTPRequest(method: "POST", url: page, headers: ["Content-Type": "text/plain"], body: upload), "200")
        case _ where iteration % 10 == 9:
            (client, request, expected) = (alice, HTTPRequest(url: page, headers: ["Connection": "close"]), "200")
        default:
            (client, request, expected) = (alice, HTTPRequest(url: page), "200")
        }
        let outcome: String
        do throws(HTTPSError) {
            let response = try client.send(request)
            outcome = "\(response.status)"
            counts[response.reusedConnection ? "reused connection" : "new connection", default: 0] += 1
        } catch {
            outcome = "error \(error.phase.rawValue)"
        }
        counts[outcome, default: 0] += 1
        if outcome != expected && unexpected.count < 5 { unexpected.append("request \(iteration) \(request.method) \(request.url): \(outcome), expected \(expected)") }
    }
    // Every kind once before measuring.
    for iteration in 0..<100 { request(iteration) }
    counts = [:]
    let result = measure("HTTPS requests (HTTPSClient -> in-process TestServer on 127.0.0.1:\(port))", total: total, budgetKiB: requestBudgetKiB, leakBytes: leakBytes) {
        request($0)
    }
    say("  outcomes: " + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    if !unexpected.isEmpty { fail("unexpected outcomes: \(unexpected.joined(separator: "; "))") }
    return result
}

// MARK: The subcommand

func memoryFlat(_ args: [String]) {
    var evaluationCount = 100_000
    var requestCount = 10_000
    var certs = "TestCerts"
    var leakBytes = 0
    var rest = args[...]
    while let option = rest.popFirst() {
        guard let value = rest.popFirst() else { fail("\(option) needs a value") }
        switch option {
        case "--evaluations": evaluationCount = Int(value) ?? -1
        case "--requests": requestCount = Int(value) ?? -1
        case "--certs": certs = value
        case "--leak-bytes": leakBytes = Int(value) ?? -1
        default: fail("usage: mtls-bench memory-flat [--evaluations N] [--requests N] [--certs DIR] [--leak-bytes B]")
        }
    }
    guard evaluationCount >= 0, requestCount >= 0, leakBytes >= 0 else { fail("counts must be whole numbers ≥ 0") }
    say("memory-flat: \(evaluationCount) trust evaluations, then \(requestCount) HTTPS requests\(leakBytes > 0 ? "; DELIBERATE LEAK of \(leakBytes) bytes per iteration" : "")")
    var results: [PhaseResult] = []
    if evaluationCount > 0 { results.append(evaluations(evaluationCount, certs: certs, leakBytes: leakBytes)) }
    if requestCount > 0 { results.append(requests(requestCount, certs: certs, leakBytes: leakBytes)) }
    let grew = results.filter { !$0.isFlat }
    say("")
    for phase in results {
        say(
            "RESULT phase=\"\(phase.name)\" warmup_kib=\(phase.warmUp.rssKiB) end_kib=\(phase.end.rssKiB) growth_kib=\(phase.growthKiB) budget_kib=\(phase.budgetKiB) "
                + "fds_growth=\(phase.descriptorGrowth) seconds=\(String(cFormat: "%.1f", phase.end.seconds)) \(phase.isFlat ? "flat" : "GREW")")
    }
    say(grew.isEmpty ? "memory-flat: resident memory stayed flat" : "memory-flat: FAILED: \(grew.map(\.name).joined(separator: "; ")) grew beyond the budget")
    exit(grew.isEmpty ? 0 : 1)
}

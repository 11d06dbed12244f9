#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import MTLSHTTP
import MTLSTrust
import Synchronization

/// `mtls probe --targets FILE`: many endpoints at once, JSON Lines out, shardable.
enum FleetProbe {
    static func run(targetsFile: String, arguments: ParsedArguments, console: Console) throws(CommandFailure) -> Int32 {
        if !arguments.positionals.isEmpty { throw CommandFailure.usage("give either URL or --targets FILE, not both", command: "probe") }
        let concurrency = try Inputs.integer(arguments.value(.concurrency), option: "--concurrency", command: "probe", range: 1...1024) ?? 16
        var shard = (index: 1, count: 1)
        if let text = arguments.value(.shard) {
            let parts = text.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 2, parts[1] >= 1, (1...parts[1]).contains(parts[0]) else {
                throw CommandFailure.usage("--shard '\(text)' must be I/N with 1 ≤ I ≤ N", command: "probe")
            }
            shard = (parts[0], parts[1])
        }
        let bytes = try Inputs.read(targetsFile, console: console)
        var lines: [String] = []
        for raw in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingWhitespace() } ?? ""
            if !line.isEmpty { lines.append(line) }
        }
        // Shards by position so that every machine gets the same split of the same file.
        let mine = lines.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element)
        var requests: [(String, Result<HTTPRequest, CommandFailure>)] = []
        for line in mine {
            do throws(CommandFailure) {
                let url = try ProbeCommand.parseURL(line)
                requests.append((line, .success(try ProbeCommand.makeRequest(url, arguments: arguments, console: console))))
            } catch {
                requests.append((line, .failure(error)))
            }
        }
        let prepared = requests
        let credentials = try ProbeCommand.credentials(arguments, console: console)
        let time = try Inputs.time(arguments.value(.at))
        var tlsConfiguration = try TLSOptions.configuration(arguments, command: "probe", console: console, evaluationTime: time)
        // Most connections of a fleet wait for their server: their empty record buffers go back.
        tlsConfiguration.releasesIdleBuffers = true
        let configuration = tlsConfiguration
        // One SSL_CTX and trust evaluator per host for the whole fleet, not one per probe (each
        // probe still has a client, sessions and connections of its own). When it cannot be made,
        // each probe tries its own and reports why, as before.
        let sharedClient = try? HTTPSClient(configuration: configuration)
        let results = ResultSlots(count: requests.count)
        let progress = Progress(total: requests.count, enabled: isatty(2) == 1 && !arguments.flag(.json))
        let json = arguments.flag(.json)
        let report = try FleetReportSink(arguments, count: prepared.count)  // --report: the page, once the fleet has ended
        let probeOne: @Sendable (Int) async -> Void = { index in
            let (line, request) = prepared[index]
            let outcome: (JSON, String, Int32)
            switch request {
            case .failure(let failure):
                outcome = (
                    .object([
                        ("target", .string(line)), ("error", .object([("code", .int(Int(failure.exitCode))), ("message", .string(failure.message))])),
                        ("exitCode", .int(Int(failure.exitCode))),
                    ]).versioned(ProbeAnalysis.schemaVersion), "\(line)  error: \(failure.message)", failure.exitCode
                )
            case .success(let request):
                do throws(CommandFailure) {
                    let analysis = try await ProbeCommand.probe(
                        request, configuration: configuration, arguments: arguments, credentials: credentials, trace: nil, sharing: sharedClient)
                    var object = analysis.json()
                    if case .object(let pairs) = object { object = JSON.object([("target", .string(line))] + pairs).versioned(ProbeAnalysis.schemaVersion) }
                    outcome = (object, summary(line, analysis), analysis.exitCode)
                } catch {
                    outcome = (
                        .object([
                            ("target", .string(line)), ("error", .object([("code", .int(Int(error.exitCode))), ("message", .string(error.message))])),
                            ("exitCode", .int(Int(error.exitCode))),
                        ]).versioned(ProbeAnalysis.schemaVersion), "\(line)  error: \(error.message)", error.exitCode
                    )
                }
            }
            // JSON Lines stream out as each probe finishes; only the row and the exit code are kept
            // for the end (a whole analysis per endpoint would grow with the fleet).
            if json { console.out(outcome.0.serialized()) }
            report?.add(index, outcome.0)
            results.set(index, (json ? "" : outcome.1, outcome.2))
            progress.step()
        }
        run(count: prepared.count, concurrency: concurrency, probeOne)
        progress.finish()
        try report?.finish(console: console, source: targetsFile)
        let all = results.values
        if !json {
            for value in all { console.out(value.0) }
            let ok = all.filter { $0.1 == ExitCode.success }.count
            console.out("\(ok) of \(all.count) endpoints OK" + (shard.count > 1 ? " (shard \(shard.index)/\(shard.count) of \(lines.count) targets)" : ""))
        }
        if all.contains(where: { $0.1 == ExitCode.network }) && !all.contains(where: { $0.1 == ExitCode.success }) { return ExitCode.network }
        return all.allSatisfy { $0.1 == ExitCode.success } ? ExitCode.success : ExitCode.no
    }

    /// Runs `job(i)` for every target, at most `concurrency` at once: a task group over the
    /// library's async API, as a library user's fan-out is. A probe waiting for its server holds
    /// no thread: its socket waits on the engine's loops (see MTLSHTTP's Concurrency article).
    static func run(count: Int, concurrency: Int, _ job: @escaping @Sendable (Int) async -> Void) {
        guard count > 0 else { return }  // a shard with no target of its own
        let width = min(concurrency, count)
        Engine.blocking(onLoop: false) { () async -> Void in
            await withTaskGroup(of: Void.self) { group in
                var next = 0
                while next < width {
                    let index = next
                    group.addTask { await job(index) }
                    next += 1
                }
                while await group.next() != nil, next < count {
                    let index = next
                    group.addTask { await job(index) }
                    next += 1
                }
            }
        }
    }

    /// One table row, from the same facts and rules as a single probe (no TLS claim for a
    /// handshake that did not finish).
    static func summary(_ target: String, _ analysis: ProbeAnalysis) -> String {
        let facts = analysis.facts
        let tls = facts.finishedHandshake?.version ?? (facts.notTLSPrefix.map { $0.hasPrefix("HTTP") ? "plain HTTP" : "not TLS" } ?? "no TLS session")
        let trust = facts.serverTrusted.map { $0 ? "trusted" : "UNTRUSTED" } ?? "trust unknown"
        let phases = facts.certificateRequestPhases
        let request: String
        if let phase = phases.first {
            request = "cert asked (\(phase.rawValue))"
        } else if facts.handshakeFinished {
            request = "no cert asked"
        } else {
            request = "cert request unknown"
        }
        let status = analysis.final.map { "\($0.status)" + (StatusMeaning.substatus($0).map { ".\($0)" } ?? "") } ?? "no answer"
        let causes = ProbeRules.causes(facts)
        let verdict = causes.first.map { "[\($0.id)] \($0.text)" } ?? "OK"
        return "\(target)  \(status)  \(tls)  \(trust)  \(request)  \(verdict)"
    }
}

/// Each target's table row and exit code, in input order.
final class ResultSlots: Sendable {
    private let slots: Locked<[(String, Int32)?]>
    init(count: Int) { slots = Locked(Array(repeating: nil, count: count)) }
    func set(_ index: Int, _ value: (String, Int32)) {
        slots.withLock { $0[index] = value }
    }
    var values: [(String, Int32)] { slots.withLock { $0.compactMap { $0 } } }
}

/// A progress bar on stderr, only on a terminal.
final class Progress: Sendable {
    private let total: Int
    private let enabled: Bool
    private let done = Locked(0)
    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }
    func step() {
        let current = done.withLock { done in
            done += 1
            return done
        }
        guard enabled, total > 0 else { return }
        let width = 30
        let filled = current * width / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        Console.writeAll(2, Array("\r[\(bar)] \(current)/\(total)".utf8))
    }
    func finish() {
        if enabled { Console.writeAll(2, Array("\n".utf8)) }
    }
}

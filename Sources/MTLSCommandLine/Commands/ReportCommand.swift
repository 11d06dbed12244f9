#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Dispatch
import MTLSTrust  // Locked

/// `mtls report FLEET.jsonl… --out FILE.html`: the page of a fleet from the JSON lines of
/// `probe --targets … --json`, merged from any number of shards.
enum ReportCommand {
    static let spec = CommandSpec(
        name: "report",
        abstract: "Make one self-contained HTML page of a fleet from the JSON lines `mtls probe` wrote for its targets (merged from shards).",
        discussion: """
            Reads every JSON line of each FILE ('-': stdin) as `mtls probe` writes them for a targets file in \
            JSON mode — one file per shard or already concatenated — and writes one HTML page: summary counts, \
            an expiry timeline of the leaf certificates, the endpoints that ask for a client certificate (and when), \
            TLS versions, trust and chain problems, and pin drift when the probes were given pins. The page has \
            no external resources and a Content-Security-Policy that forbids any; its tables sort and filter with \
            a little inline script and read the same without it. An endpoint that appears in several files is \
            shown once, from the last file (a re-run shard replaces the first run). A single record of one \
            probe's JSON makes the page of that probe, as probe's own report option does.

            Exit codes: 0 the page was written; 2 usage error; 3 a file is unreadable or holds a line that is not \
            a probe record (named with its line number), or --out exists without --force.
            """,
        arguments: [ArgumentSpec(name: "FILE", help: "JSON lines of a fleet probe ('-': stdin)", variadic: true)],
        options: [
            OptionSpec(.out, short: "-o", valueName: "FILE", help: "The HTML page to write (required)."),
            OptionSpec(.at, valueName: "TIME", help: "Count days to expiry from this time (RFC 3339 or Unix seconds) instead of now."),
            OptionSpec(.force, help: "Overwrite --out."),
        ],
        examples: [
            "mtls report fleet.jsonl --out fleet.html",
            "mtls report shard-1.jsonl shard-2.jsonl shard-3.jsonl shard-4.jsonl --out fleet.html --at 2027-01-01T00:00:00Z",
        ])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        guard !arguments.positionals.isEmpty else { throw CommandFailure.usage("Missing expected argument '<FILE>' (the JSON lines of a fleet probe)", command: "report") }
        guard let out = arguments.value(.out) else { throw CommandFailure.usage("--out FILE.html is required: the page to write", command: "report") }
        let now = try Inputs.time(arguments.value(.at)) ?? Date()
        try ReportFile.checkWritable(out, force: arguments.flag(.force))
        var records: [(name: String, record: FleetRecord)] = []
        // A single probe's record is read again whole (with its events) for the probe's page.
        var firstLine: [UInt8] = []
        var seen: [String: Int] = [:]
        for path in arguments.positionals {
            let bytes = try Inputs.read(path, console: console)
            var lines: [(number: Int, bytes: ArraySlice<UInt8>)] = []
            for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
            where !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                lines.append((index + 1, line))
            }
            if firstLine.isEmpty, let first = lines.first { firstLine = Array(first.bytes) }
            // Decoded on every core (a fleet's lines are independent), then taken in file order.
            let decoded = ReportCommand.decodeAll(lines.map(\.bytes))
            for (line, result) in zip(lines, decoded) {
                let record: FleetRecord
                switch result {
                case .success(let value): record = value
                case .failure(let error):
                    throw CommandFailure(
                        ExitCode.badInput, "\(path) line \(line.number): \(error.reason)",
                        hint: "give the JSON lines of `mtls probe --targets FILE --json` (one object a line)")
                }
                if let index = seen[record.name] {
                    console.err("warning: \(record.name) appears again in \(path) line \(line.number); the later record is shown")
                    records[index] = (record.name, record)
                } else {
                    seen[record.name] = records.count
                    records.append((record.name, record))
                }
            }
        }
        let html: String
        if records.count == 1, records[0].record.target == nil {
            do throws(ReportInputError) { html = ProbeReportPage.html(try ReportRecord.decode(firstLine)) } catch {
                throw CommandFailure(ExitCode.badInput, "\(arguments.positionals[0]): \(error.reason)")
            }
        } else {
            html = FleetReportPage.html(records.map { FleetRow($0.record) }, now: now, sources: arguments.positionals)
        }
        try OutputFile.write(Array(html.utf8), to: out, force: arguments.flag(.force))
        console.err("Wrote \(out) (\(records.count) endpoint\(records.count == 1 ? "" : "s"))")
        return ExitCode.success
    }
}

extension ReportCommand {
    /// Every line decoded, in order, on as many threads as there are cores.
    static func decodeAll(_ lines: [ArraySlice<UInt8>]) -> [Result<FleetRecord, ReportInputError>] {
        let results = Locked([Result<FleetRecord, ReportInputError>?](repeating: nil, count: lines.count))
        let chunks = max(1, min(lines.count / 64, ProcessInfo.processInfo.activeProcessorCount * 4))
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let range = (lines.count * chunk / chunks)..<(lines.count * (chunk + 1) / chunks)
            let decoded = range.map { index -> Result<FleetRecord, ReportInputError> in
                do throws(ReportInputError) { return .success(try FleetRecord.decode(lines[index])) } catch { return .failure(error) }
            }
            results.withLock { all in for (index, result) in zip(range, decoded) { all[index] = result } }
        }
        return results.withLock { $0.map { $0! } }
    }
}

/// Where `--report` pages go.
enum ReportFile {
    /// Fails before any traffic when the page could not be written later.
    static func checkWritable(_ path: String, force: Bool) throws(CommandFailure) {
        if FileSystem.isDirectory(path) { throw CommandFailure(ExitCode.badInput, "\(path) is a directory; give a file name for the HTML page") }
        if !force, FileManager.default.fileExists(atPath: path) { throw CommandFailure(ExitCode.badInput, "\(path) already exists; pass --force to overwrite it") }
    }

    /// `probe URL --report FILE`: the page of one probe, from its JSON.
    static func writeProbe(_ json: JSON, to path: String, force: Bool) throws(CommandFailure) {
        let record: ReportRecord
        do throws(ReportInputError) { record = try ReportRecord.decode(Array(json.serialized().utf8)) } catch {
            throw CommandFailure(ExitCode.badInput, "could not make the report: \(error.reason)")
        }
        try OutputFile.write(Array(ProbeReportPage.html(record).utf8), to: path, force: force)
    }
}

/// `probe --targets … --report FILE`: each endpoint's row, kept as the fleet runs (a few hundred
/// bytes each, not its whole analysis), and the page written when the fleet has ended.
final class FleetReportSink: Sendable {
    private let path: String
    private let force: Bool
    private let now: Date
    private let rows: Locked<[FleetRow?]>

    /// nil without `--report`.
    init?(_ arguments: ParsedArguments, count: Int) throws(CommandFailure) {
        guard let path = arguments.value(.report) else { return nil }
        self.path = path
        force = arguments.flag(.force)
        now = try Inputs.time(arguments.value(.at)) ?? Date()
        try ReportFile.checkWritable(path, force: force)
        rows = Locked(Array(repeating: nil, count: count))
    }

    /// One endpoint's JSON record, as printed on its JSON line.
    func add(_ index: Int, _ json: JSON) {
        let row = (try? FleetRecord.decode(Array(json.serialized().utf8))).map { FleetRow($0) }
        rows.withLock { if index < $0.count { $0[index] = row } }
    }

    func finish(console: Console, source: String) throws(CommandFailure) {
        let all = rows.withLock { $0.compactMap { $0 } }
        try OutputFile.write(Array(FleetReportPage.html(all, now: now, sources: [source]).utf8), to: path, force: force)
        console.err("Wrote \(path) (\(all.count) endpoint\(all.count == 1 ? "" : "s"))")
    }
}

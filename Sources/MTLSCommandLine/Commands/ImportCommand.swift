import Foundation
import MTLSTrust

/// `mtls import P12 [--out-dir DIR]`.
enum ImportCommand {
    static let spec = CommandSpec(
        name: "import",
        abstract: "Read a PKCS#12/PFX identity (modern or legacy RC2/3DES) and write it out as PEM or DER.",
        discussion: """
            Shows what the file holds. With --out-dir, writes key.pem (mode 0600), cert.pem and chain.pem \
            (with --to der: key.der, cert.der and chain-N.der, one per chain certificate). Files that \
            exist are not overwritten without --force; on any failure nothing is left half-written.
            """,
        arguments: [ArgumentSpec(name: "P12", help: "The PKCS#12 (.p12/.pfx) file.")],
        options: [
            OptionSpec(names: ["--password"], valueName: "SPEC", help: "The file's password (pass:, env:, file:, fd:, stdin); asked for on a terminal."),
            OptionSpec(names: ["--out-dir"], valueName: "DIR", help: "Write key, certificate and chain into DIR."),
            OptionSpec(names: ["--to"], valueName: "FORMAT", help: "pem or der.", kind: .choice(["pem", "der"]), defaultValue: "pem"),
            OptionSpec(names: ["--force"], help: "Overwrite existing files."),
            OptionSpec(names: ["--json"], help: "Print one JSON object."),
        ],
        examples: ["mtls import alice.pfx --password env:PFX_PASSWORD --out-dir ./alice", "mtls import legacy-windows-export.pfx"])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        guard let path = arguments.positionals.first else { throw CommandFailure.usage("Missing expected argument '<P12>'", command: "import") }
        let format = arguments.value("to")?.lowercased() ?? "pem"
        guard format == "pem" || format == "der" else { throw CommandFailure.usage("--to '\(format)' must be pem or der", command: "import") }
        let bytes = try Inputs.read(path, console: console)
        let password = try SecretSpec.resolve(arguments.value("password"), option: "--password", prompt: "Password for \(path): ", console: console)
        let bundle: PKCS12Bundle
        do throws(MTLSTrustError) {
            bundle = try PKCS12Bundle(derBytes: bytes, password: password)
        } catch {
            throw CommandFailure(ExitCode.badInput, error.attributed(to: path).message, hint: Inputs.hint(for: error, path: path))
        }
        var written: [String] = []
        if let directory = arguments.value("out-dir") {
            // Checked before the directory is created, so that a failure leaves nothing behind.
            guard let leaf = bundle.leaf, let key = bundle.privateKey else {
                throw CommandFailure(
                    ExitCode.badInput, "\(path) holds no identity (no private key with its certificate): nothing to write as key and cert",
                    hint: "use `mtls inspect \(path)` to see what it holds")
            }
            // The directories this import makes, outermost first: removed again when writing fails.
            var made: [String] = []
            var missing = directory
            while !missing.isEmpty && missing != "/" && !FileManager.default.fileExists(atPath: missing) {
                made.insert(missing, at: 0)
                missing = (missing as NSString).deletingLastPathComponent
            }
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
                do {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                } catch {
                    throw CommandFailure(ExitCode.badInput, "cannot create \(directory): \(error.localizedDescription)")
                }
            } else if !isDirectory.boolValue {
                throw CommandFailure(ExitCode.badInput, "\(directory) exists and is not a directory")
            }
            var files: [(path: String, bytes: [UInt8], mode: mode_t)] = []
            // The key's bytes are overwritten once written (or not): freed, they would stay in the heap.
            defer {
                for index in files.indices where files[index].mode == 0o600 { Secret.wipe(&files[index].bytes) }
            }
            do throws(MTLSTrustError) {
                if format == "pem" {
                    files.append((directory + "/key.pem", try key.pkcs8PEM(), 0o600))
                    files.append((directory + "/cert.pem", Array(leaf.certificate.pemString.utf8), 0o644))
                    if !bundle.chain.isEmpty {
                        files.append((directory + "/chain.pem", Array(bundle.chain.map(\.certificate.pemString).joined().utf8), 0o644))
                    }
                } else {
                    files.append((directory + "/key.der", try key.pkcs8DER(), 0o600))
                    files.append((directory + "/cert.der", leaf.certificate.derBytes, 0o644))
                    for (index, entry) in bundle.chain.enumerated() {
                        files.append((directory + "/chain-\(index + 1).der", entry.certificate.derBytes, 0o644))
                    }
                }
            } catch {
                throw CommandFailure(error)
            }
            do throws(CommandFailure) {
                try OutputFile.writeAll(files, force: arguments.flag("force"))
            } catch {
                for path in made.reversed() { rmdir(path) }
                throw error
            }
            written = files.map(\.path)
        }
        let item = InspectCommand.pkcs12Item(bundle, console: console)
        if arguments.flag("json") {
            var pairs: [(String, JSON)] = [("file", .string(path))]
            if case .object(let inner) = item.2 { pairs += inner }
            pairs.append(("written", .strings(written)))
            console.out(JSON.object(pairs).versioned(1).serialized())
        } else {
            console.out(console.paint("PKCS#12 \(path)", .bold))
            item.1.forEach { console.out($0) }
            for file in written { console.out("wrote \(file)\(file.hasSuffix("key.pem") || file.hasSuffix("key.der") ? " (mode 0600)" : "")") }
        }
        return ExitCode.success
    }
}

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
import MTLSTrust

/// `mtls import P12 [--out-dir DIR] [--name NAME | --index N]`.
enum ImportCommand {
    static let spec = CommandSpec(
        name: "import",
        abstract: "Read a PKCS#12/PFX identity (modern or legacy RC2/3DES) and write it out as PEM or DER.",
        discussion: """
            Shows what the file holds. With --out-dir, writes what it holds: key.pem (mode 0600), cert.pem \
            and chain.pem for an identity; cert.pem (the first certificate) and chain.pem (the others) for a \
            certificate-only file (a Java truststore); key.pem alone for a key-only file. With --to der: \
            key.der, cert.der and chain-N.der. A file with several identities needs --name or --index \
            (`mtls inspect` lists them); repeated certificates and keys are written once, with a note. \
            Files that exist are not overwritten without --force; on any failure nothing is left half-written.
            """,
        arguments: [ArgumentSpec(name: "P12", help: "The PKCS#12 (.p12/.pfx) file.")],
        options: [
            OptionSpec(.password, valueName: "SPEC", help: "The file's password (pass:, env:, file:, fd:, stdin); asked for on a terminal."),
            OptionSpec(.outDir, valueName: "DIR", help: "Write key, certificate and chain into DIR."),
            OptionSpec(.to, valueName: "FORMAT", help: "pem or der.", kind: .choice(["pem", "der"]), defaultValue: "pem"),
            OptionSpec(.name, valueName: "NAME", help: "The identity to write, by its friendly name."),
            OptionSpec(.index, valueName: "N", help: "The identity to write, by its position (1 = first), as `mtls inspect` lists them."),
            OptionSpec(.force, help: "Overwrite existing files."),
            OptionSpec(.json, help: "Print one JSON object."),
        ],
        examples: ["mtls import alice.pfx --password env:PFX_PASSWORD --out-dir ./alice", "mtls import legacy-windows-export.pfx"])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        guard let path = arguments.positionals.first else { throw CommandFailure.usage("Missing expected argument '<P12>'", command: "import") }
        let format = arguments.value(.to)?.lowercased() ?? "pem"
        guard format == "pem" || format == "der" else { throw CommandFailure.usage("--to '\(format)' must be pem or der", command: "import") }
        let bytes = try Inputs.read(path, console: console)
        let password = try SecretSpec.resolve(arguments.value(.password), option: "--password", prompt: "Password for \(path): ", console: console)
        let bundle: PKCS12Bundle
        do throws(MTLSTrustError) {
            bundle = try PKCS12Bundle(derBytes: bytes, password: password)
        } catch {
            throw CommandFailure(ExitCode.badInput, error.attributed(to: path).message, hint: Inputs.hint(for: error, path: path))
        }
        let name = arguments.value(.name)
        let index = try Inputs.integer(arguments.value(.index), option: "--index", command: "import", range: 1...100_000)
        if name != nil && index != nil { throw CommandFailure.usage("give --name or --index, not both", command: "import") }
        var written: [String] = []
        if password.map({ !$0.isEmpty }) ?? false, bundle.inspection.isUnprotected {
            console.err("note: \(path) has no password protection (no MAC, nothing encrypted): the password given was not needed, and anyone can read it")
        }
        if bundle.duplicatesRemoved > 0 {
            console.err(
                "note: \(path) holds \(bundle.duplicatesRemoved) repeated certificate\(bundle.duplicatesRemoved == 1 ? "" : "s") or key\(bundle.duplicatesRemoved == 1 ? "" : "s"); each is written once"
            )
        }
        if let directory = arguments.value(.outDir) {
            // Checked before the directory is created, so that a failure leaves nothing behind.
            let contents = try selection(bundle, path: path, name: name, index: index)
            // The directories this import makes (mode 0700 from the mkdir call), outermost first:
            // removed again when writing fails. An existing directory must be the user's own and
            // writable by no one else: another local user must not be able to plant it.
            let made: [String]
            do throws(MTLSTrustError) {
                made = try OutputWriter.makePrivateDirectory(directory)
            } catch {
                throw CommandFailure(ExitCode.badInput, error.message, hint: error.hint?.commandLine)
            }
            var files: [(path: String, bytes: [UInt8], mode: mode_t)] = []
            // The key's bytes are overwritten once written (or not): freed, they would stay in the heap.
            defer {
                for index in files.indices where files[index].mode == 0o600 { Secret.wipe(&files[index].bytes) }
            }
            do throws(MTLSTrustError) {
                if format == "pem" {
                    if let key = contents.key { files.append((directory + "/key.pem", try key.pkcs8PEM(), 0o600)) }
                    if let certificate = contents.certificate { files.append((directory + "/cert.pem", Array(certificate.pemString.utf8), 0o644)) }
                    if !contents.chain.isEmpty {
                        files.append((directory + "/chain.pem", Array(contents.chain.map(\.pemString).joined().utf8), 0o644))
                    }
                } else {
                    if let key = contents.key { files.append((directory + "/key.der", try key.pkcs8DER(), 0o600)) }
                    if let certificate = contents.certificate { files.append((directory + "/cert.der", certificate.derBytes, 0o644)) }
                    for (index, certificate) in contents.chain.enumerated() {
                        files.append((directory + "/chain-\(index + 1).der", certificate.derBytes, 0o644))
                    }
                }
            } catch {
                throw CommandFailure(error)
            }
            do throws(CommandFailure) {
                try OutputFile.writeAll(files, force: arguments.flag(.force))
            } catch {
                for path in made.reversed() { rmdir(path) }
                throw error
            }
            written = files.map(\.path)
        }
        let item = InspectCommand.pkcs12Item(bundle, console: console)
        if arguments.flag(.json) {
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

    /// What one import writes: a key, its certificate, the other certificates.
    struct Contents {
        var key: PrivateKey?
        var certificate: Certificate?
        var chain: [Certificate]
    }

    /// Picks what to write: the identity chosen by --name/--index (or the only one), else the
    /// certificates of a certificate-only file. Several identities and no choice is refused:
    /// writing the first would drop the others without a word.
    static func selection(_ bundle: PKCS12Bundle, path: String, name: String?, index: Int?) throws(CommandFailure) -> Contents {
        if bundle.identities.isEmpty {
            if name != nil || index != nil {
                throw CommandFailure(
                    ExitCode.badInput, "\(path) holds no private key, so there is no identity to pick with --name or --index", hint: "leave them out to write its certificates")
            }
            guard let first = bundle.certificates.first else {
                let bags = bundle.inspection.safes.flatMap(\.bags)
                var what = ""
                if bags.contains(where: { $0.kind == .enveloped }) {
                    what = " (its contents are encrypted to a recipient's public key — PKCS #7 envelopedData — which needs that recipient's private key, not a password)"
                } else if bags.contains(where: { $0.kind == .secret }) {
                    what = " (it holds only secret bags, such as the symmetric keys Java's keytool -genseckey stores)"
                }
                throw CommandFailure(
                    ExitCode.badInput, "\(path) holds neither a certificate nor a private key\(what): nothing to write",
                    hint: "use `mtls inspect \(path)` to see what it holds")
            }
            return Contents(key: nil, certificate: first.certificate, chain: bundle.certificates.dropFirst().map(\.certificate))
        }
        if bundle.identities.count > 1 && name == nil && index == nil {
            let listing = bundle.identities.enumerated().map { identityLabel($0.element, index: $0.offset + 1) }.joined(separator: "; ")
            throw CommandFailure(
                ExitCode.usage, "\(path) holds \(bundle.identities.count) identities (\(listing)): pick one with --name NAME or --index N",
                hint: "`mtls inspect \(path)` lists them")
        }
        let identity: PKCS12Bundle.Identity
        do throws(MTLSTrustError) {
            identity = try bundle.identity(named: name, index: index)
        } catch {
            throw CommandFailure(ExitCode.usage, "\(path): \(error.message)", hint: "`mtls inspect \(path)` lists the identities")
        }
        return Contents(key: identity.privateKey, certificate: identity.certificate?.certificate, chain: bundle.chain.map(\.certificate))
    }

    /// `1 "alice" (CN=alice)`, `2 (no name) (key only)`.
    static func identityLabel(_ identity: PKCS12Bundle.Identity, index: Int) -> String {
        let name = identity.friendlyName.map { DisplayText.quoted($0) } ?? "(no name)"
        return "\(index) \(name) (" + (identity.certificate.map { $0.certificate.subject } ?? "key only, no certificate") + ")"
    }
}

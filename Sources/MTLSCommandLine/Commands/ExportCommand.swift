#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// `mtls export --cert FILE --key FILE [--chain FILE] --out FILE.p12 --password SPEC`.
enum ExportCommand {
    static let spec = CommandSpec(
        name: "export",
        abstract: "Create a PKCS#12 (.p12/.pfx) from a certificate, its key and a chain.",
        discussion: """
            The default is OpenSSL 3's modern protection (AES-256-CBC, PBKDF2, SHA-256 MAC). --legacy \
            writes 3DES with a SHA-1 MAC, which older iOS/macOS Keychain, Android, Java 8 and Windows \
            importers need. The file is written with mode 0600.
            """,
        options: [
            OptionSpec(.cert, valueName: "FILE", help: "The certificate (PEM or DER).", required: true),
            OptionSpec(.key, valueName: "FILE", help: "Its private key (PEM or DER; default: the --cert file, when it holds the key too)."),
            OptionSpec(.keyPassword, valueName: "SPEC", help: "Password of an encrypted key."),
            OptionSpec(.chain, valueName: "FILE", repeatable: true, help: "Chain certificates to include (repeatable)."),
            OptionSpec(.out, valueName: "FILE", help: "The PKCS#12 file to write.", required: true),
            OptionSpec(.password, valueName: "SPEC", help: "The new file's password (pass:, env:, file:, fd:, stdin)."),
            OptionSpec(.name, valueName: "FRIENDLY", help: "The friendly name importers show."),
            OptionSpec(.legacy, help: "3DES + SHA-1 MAC for older importers."),
            OptionSpec(.force, help: "Overwrite FILE if it exists."),
            OptionSpec(.json, help: "Print one JSON object."),
        ],
        examples: ["mtls export --cert client.pem --key client.key --chain ca.pem --out client.p12 --password env:P12_PASSWORD --legacy"])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        guard let certPath = arguments.value(.cert) else { throw CommandFailure.usage("--cert FILE is required", command: "export") }
        let keyPath = try Inputs.keyPath(forCertificate: certPath, key: arguments.value(.key), command: "export")
        guard let out = arguments.value(.out) else { throw CommandFailure.usage("--out FILE.p12 is required", command: "export") }
        if FileManager.default.fileExists(atPath: out) && !arguments.flag(.force) {
            throw CommandFailure(ExitCode.badInput, "\(out) already exists; pass --force to overwrite it")
        }
        guard let password = try SecretSpec.resolve(arguments.value(.password), option: "--password", prompt: "Password for \(out): ", console: console) else {
            throw CommandFailure.usage("--password SPEC is required (use pass: for an empty password)", command: "export")
        }
        let keyPassword = try SecretSpec.resolve(arguments.value(.keyPassword), option: "--key-password", prompt: nil, console: console)
        let certificates = try Inputs.certificates(certPath, password: nil, console: console)
        let key = try Inputs.privateKey(keyPath, password: keyPassword, console: console)
        var extra: [Certificate] = []
        for path in arguments.values(.chain) { extra += try Inputs.certificates(path, password: nil, console: console) }
        // The leaf is the certificate the key belongs to, wherever it appears; each certificate
        // goes in once, even when the --cert file already holds the chain given with --chain.
        var all: [Certificate] = []
        for certificate in certificates + extra where !all.contains(certificate) { all.append(certificate) }
        guard let leaf = all.first(where: { key.matches($0) }) else {
            throw CommandFailure(
                ExitCode.badInput, "the private key in \(keyPath) does not belong to \(certificates.first?.displayName ?? "the certificate") in \(certPath)",
                hint: "pass the key that was generated with this certificate")
        }
        let chain = all.filter { $0 != leaf }
        let protection: PKCS12Bundle.Protection = arguments.flag(.legacy) ? .legacy3DES : .modern
        let bytes: [UInt8]
        do throws(MTLSTrustError) {
            bytes = try PKCS12Bundle.export(certificate: leaf, privateKey: key, chain: chain, password: password, friendlyName: arguments.value(.name), protection: protection)
        } catch {
            throw CommandFailure(error)
        }
        try OutputFile.write(bytes, to: out, mode: 0o600, force: arguments.flag(.force))
        let description = protection == .modern ? "AES-256-CBC/PBKDF2, SHA-256 MAC" : "3DES, SHA-1 MAC (legacy)"
        if arguments.flag(.json) {
            console.out(
                JSON.object([
                    ("file", .string(out)), ("protection", .string(protection == .modern ? "modern" : "legacy")), ("leaf", .string(leaf.subject)), ("chain", .int(chain.count)),
                    ("bytes", .int(bytes.count)),
                ]).versioned(1).serialized())
        } else {
            console.out("wrote \(out) (mode 0600): \(leaf.subject) with \(chain.count) chain certificate\(chain.count == 1 ? "" : "s"), \(description)")
        }
        return ExitCode.success
    }
}

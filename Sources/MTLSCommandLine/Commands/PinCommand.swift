import Foundation
import MTLSTrust

/// `mtls pin SOURCE...`: SPKI pins of certificate files (live hosts come with the HTTPS transport).
enum PinCommand {
    static let spec = CommandSpec(
        name: "pin",
        abstract: "Print SPKI SHA-256 pins (sha256/BASE64) of certificates, keys and CSRs.",
        discussion: "SOURCE is a certificate file (PEM, DER, bundle or PKCS#12), a public key or a CSR (for a backup pin).",
        arguments: [ArgumentSpec(name: "SOURCE", help: "Certificate, public key or CSR files.", variadic: true)],
        options: [
            OptionSpec(names: ["--format"], valueName: "FORMAT", help: "spki (default), cert, json or curl."),
            OptionSpec(names: ["--level"], valueName: "LEVEL", help: "leaf, intermediate, root or all (default)."),
            OptionSpec(names: ["--password"], valueName: "SPEC", help: "Password of PKCS#12 sources."),
            OptionSpec(names: ["--check"], valueName: "PINFILE", help: "Compare the sources against a pin set; exit 1 on drift."),
            OptionSpec(names: ["--out"], valueName: "FILE", help: "Write the pins to FILE."),
            OptionSpec(names: ["--force"], help: "Overwrite FILE if it exists."),
        ],
        examples: ["mtls pin server-chain.pem", "mtls pin leaf.pem backup.csr --format curl", "mtls pin chain.pem --check pins.txt"])

    struct Entry {
        var label: String
        var level: String
        var pin: Pin
        var certificate: Certificate?
    }

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        let format = arguments.value("format") ?? "spki"
        guard ["spki", "cert", "json", "curl"].contains(format) else {
            throw CommandFailure.usage("--format '\(format)' is not available yet: use spki, cert, json or curl", command: "pin")
        }
        let level = arguments.value("level") ?? "all"
        guard ["leaf", "intermediate", "root", "all"].contains(level) else {
            throw CommandFailure.usage("--level '\(level)' must be leaf, intermediate, root or all", command: "pin")
        }
        let password = try SecretSpec.resolve(arguments.value("password"), option: "--password", prompt: nil, console: console)
        var entries: [Entry] = []
        for source in arguments.positionals {
            if source.hasPrefix("https://") {
                throw CommandFailure(ExitCode.usage, "pins of live hosts (\(source)) need the HTTPS transport, which is not built yet", hint: "save the chain with `openssl s_client -showcerts` and pin the file")
            }
            let bytes = try Inputs.read(source, console: console)
            if PEM.looksLikePEM(bytes), let blocks = try? PEM.parse(bytes), !blocks.contains(where: { $0.label.contains("CERTIFICATE") && !$0.label.contains("REQUEST") }) {
                let countBefore = entries.count
                for block in blocks {
                    if block.label == "PUBLIC KEY", let key = try? PublicKey(spkiDER: block.derBytes) {
                        entries.append(Entry(label: "backup key (\(source))", level: "backup", pin: .publicKey(of: key)))
                    } else if block.label.contains("CERTIFICATE REQUEST"), let request = try? CertificateSigningRequest(derBytes: block.derBytes) {
                        entries.append(Entry(label: "backup CSR \(request.subject) (\(source))", level: "backup", pin: .publicKey(of: request.publicKey)))
                    }
                }
                if entries.count == countBefore { throw CommandFailure(ExitCode.badInput, "\(source) holds no certificate, public key or CSR") }
                continue
            }
            let certificates = try Inputs.certificates(source, password: password, console: console)
            for (index, certificate) in certificates.enumerated() {
                let role = certificate.isSelfSigned ? "root" : (index == 0 ? "leaf" : "intermediate")
                if level != "all" && level != role { continue }
                let pin: Pin = format == "cert" ? .certificate(certificate) : .publicKey(of: certificate)
                entries.append(Entry(label: certificate.subject, level: role, pin: pin, certificate: certificate))
            }
        }
        if let pinFile = arguments.value("check") {
            let bytes = try Inputs.read(pinFile, console: console)
            let set: PinSet
            do throws(MTLSTrustError) { set = try PinSet.parse(bytes, source: pinFile) } catch { throw CommandFailure(error) }
            let presented = entries.map(\.pin)
            let matched = presented.filter { set.pins.contains($0) }
            console.out("Presented pins:")
            for entry in entries { console.out("  \(entry.pin)  \(entry.label) [\(entry.level)]\(set.pins.contains(entry.pin) ? "  ✓ pinned" : "")") }
            console.out("Pin set (\(pinFile)):")
            for pin in set.pins { console.out("  \(pin)\(presented.contains(pin) ? "  ✓ present" : "  - not presented")") }
            if matched.isEmpty {
                console.out("Verdict: " + console.paint("DRIFT", .red) + ": none of the pins matches; clients that enforce this set will refuse the connection")
                return ExitCode.no
            }
            console.out("Verdict: " + console.paint("OK", .green) + ": \(matched.count) pin\(matched.count == 1 ? "" : "s") match")
            return ExitCode.success
        }
        let text: String
        switch format {
        case "json":
            text = JSON.object([("pins", .array(entries.map { entry in
                .object([("pin", .string(entry.pin.description)), ("subject", .string(entry.label)), ("level", .string(entry.level)), ("notAfter", JSON.optional(entry.certificate.map { Timestamp.rfc3339($0.notAfter) }))])
            }))]).serialized(pretty: true) + "\n"
        case "curl":
            let leafPins = entries.filter { $0.level == "leaf" || $0.level == "backup" }.map { "sha256//\($0.pin.base64)" }
            if entries.contains(where: { $0.level != "leaf" && $0.level != "backup" }) {
                console.err("warning: curl --pinnedpubkey checks the leaf only; CA pins were left out")
            }
            text = leafPins.joined(separator: ";") + "\n"
        default:
            text = entries.map { "\($0.pin)  # \($0.label) [\($0.level)]" }.joined(separator: "\n") + "\n"
        }
        if let out = arguments.value("out") {
            try OutputFile.write(Array(text.utf8), to: out, force: arguments.flag("force"))
            console.err("wrote \(out)")
        } else {
            console.write(text)
        }
        return ExitCode.success
    }
}

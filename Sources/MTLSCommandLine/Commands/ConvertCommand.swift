#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// `mtls convert IN --to pem|der [--out FILE]`.
enum ConvertCommand {
    static let spec = CommandSpec(
        name: "convert",
        abstract: "Convert certificates, keys and CRLs between DER and PEM.",
        discussion: """
            Certificates are written exactly as `openssl x509 -outform PEM|DER` writes them; private keys \
            as unencrypted PKCS#8 (like `openssl pkey`), written with mode 0600. DER holds one object: \
            a PEM bundle of several certificates can only be converted to PEM. A PKCS#12 file that holds a \
            private key is converted only with --include-key (key and certificates in one PEM, mode 0600, \
            like `openssl pkcs12 -nodes`); `mtls import` writes them into separate files instead.
            """,
        arguments: [ArgumentSpec(name: "IN", help: "The input file ('-' for standard input).")],
        options: [
            OptionSpec(.to, valueName: "FORMAT", help: "pem or der.", kind: .choice(["pem", "der"]), required: true),
            OptionSpec(.out, valueName: "FILE", help: "Write here instead of standard output."),
            OptionSpec(.password, valueName: "SPEC", help: "Password of an encrypted key or a PKCS#12 input."),
            OptionSpec(.includeKey, help: "PKCS#12 input: write its private keys too (unencrypted PEM, mode 0600)."),
            OptionSpec(.force, help: "Overwrite FILE if it exists."),
        ],
        examples: ["mtls convert server.cer --to pem --out server.pem", "mtls convert server.pem --to der --out server.der"])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        guard let path = arguments.positionals.first else { throw CommandFailure.usage("Missing expected argument '<IN>'", command: "convert") }
        guard let target = arguments.value(.to)?.lowercased(), target == "pem" || target == "der" else {
            throw CommandFailure.usage(arguments.value(.to).map { "--to '\($0)' must be pem or der" } ?? "--to pem|der is required", command: "convert")
        }
        var bytes = try Inputs.read(path, console: console)
        // The input may be an unencrypted key: overwritten once converted.
        defer { Secret.wipe(&bytes) }
        if bytes.isEmpty { throw CommandFailure(ExitCode.badInput, "\(path): the file is empty") }
        let password = try SecretSpec.resolve(arguments.value(.password), option: "--password", prompt: nil, console: console)
        var output: [UInt8] = []
        var secret = false
        // A private key's bytes are overwritten once written: freed, they would stay in the heap.
        defer { if secret { Secret.wipe(&output) } }
        var refusal: CommandFailure? = nil
        do throws(MTLSTrustError) {
            let kind = try objectKind(bytes)
            switch kind {
            case .pkcs12:
                let bundle = try PKCS12Bundle(derBytes: bytes, password: password)
                if bundle.identities.isEmpty {
                    let certificates = bundle.allCertificates
                    if certificates.isEmpty { throw MTLSTrustError(.wrongObjectKind, "the PKCS#12 file holds no certificate and no private key") }
                    if target == "der" {
                        guard certificates.count == 1 else {
                            throw MTLSTrustError(.invalidArgument, "it holds \(certificates.count) certificates and DER holds one: convert to PEM")
                        }
                        output = certificates[0].derBytes
                    } else {
                        output = Array(certificates.map(\.pemString).joined().utf8)
                    }
                } else if !arguments.flag(.includeKey) {
                    // Writing only the certificates would lose the key without a word.
                    refusal = CommandFailure(
                        ExitCode.usage,
                        "\(path) holds \(bundle.identities.count == 1 ? "a private key" : "\(bundle.identities.count) private keys"), which convert writes only with --include-key",
                        hint: "use `mtls import \(path) --out-dir DIR` for key.pem (mode 0600), cert.pem and chain.pem, or add --include-key for one PEM with key and certificates")
                } else if target == "der" {
                    throw MTLSTrustError(.invalidArgument, "it holds a private key and certificates and DER holds one object: convert to PEM, or use `mtls import --to der`")
                } else {
                    // Each key followed by its certificate, then the other certificates: `openssl pkcs12 -nodes` order.
                    // The pieces are joined into one buffer sized in advance and then wiped, so that no
                    // copy of a key is left in freed memory by a growing array.
                    secret = true
                    var pieces: [[UInt8]] = []
                    defer { for index in pieces.indices { Secret.wipe(&pieces[index]) } }
                    for identity in bundle.identities {
                        pieces.append(try identity.privateKey.pkcs8PEM())
                        if let certificate = identity.certificate { pieces.append(Array(certificate.certificate.pemString.utf8)) }
                    }
                    pieces.append(Array(bundle.chain.map(\.certificate.pemString).joined().utf8))
                    output.reserveCapacity(pieces.reduce(0) { $0 + $1.count })
                    for piece in pieces { output.append(contentsOf: piece) }
                }
            case .certificates:
                let certificates = try CertificateLoader.certificates(from: bytes, password: password, source: path).certificates
                if target == "der" {
                    guard certificates.count == 1 else {
                        throw MTLSTrustError(.invalidArgument, "it holds \(certificates.count) certificates and DER holds one: convert to PEM, or split the bundle")
                    }
                    output = certificates[0].derBytes
                } else {
                    output = Array(certificates.map(\.pemString).joined().utf8)
                }
            case .privateKey:
                let key = try PrivateKey(bytes: bytes, password: password)
                output = target == "der" ? try key.pkcs8DER() : try key.pkcs8PEM()
                secret = true
            case .publicKey(let der):
                let key = try PublicKey(spkiDER: der)
                output = target == "der" ? key.spkiDER : Array(key.pemString.utf8)
            case .crl(let ders):
                guard target == "pem" || ders.count == 1 else {
                    throw MTLSTrustError(.invalidArgument, "it holds \(ders.count) CRLs and DER holds one")
                }
                output = target == "der" ? ders[0] : Array(ders.map { PEM.encode($0, label: "X509 CRL") }.joined().utf8)
            }
        } catch {
            throw CommandFailure(ExitCode.badInput, error.attributed(to: path).message, hint: Inputs.hint(for: error, path: path))
        }
        if let refusal { throw refusal }
        if let out = arguments.value(.out) {
            try OutputFile.write(output, to: out, mode: secret ? 0o600 : 0o644, force: arguments.flag(.force))
            console.err("wrote \(out) (\(target.uppercased()))")
        } else {
            if target == "der" && console.stdoutIsTerminal {
                throw CommandFailure(ExitCode.usage, "DER is binary and standard output is a terminal", hint: "pass --out FILE")
            }
            FileHandleWriter.writeStdout(output, console: console)
        }
        return ExitCode.success
    }

    enum Kind {
        case certificates, pkcs12, privateKey, publicKey([UInt8]), crl([[UInt8]])
    }

    static func objectKind(_ bytes: [UInt8]) throws(MTLSTrustError) -> Kind {
        if PEM.looksLikePEM(bytes) {
            // Key blocks stay where they stand (PEM.parseKeepingKeysInPlace): parsing them would copy
            // the key's text into Strings, which cannot be wiped.
            let elements = try PEM.parseKeepingKeysInPlace(bytes)
            let blocks = elements.compactMap { if case .parsed(let block) = $0 { block } else { nil } }
            if blocks.contains(where: { ($0.label.contains("CERTIFICATE") && !$0.label.contains("REQUEST")) || $0.label == "PKCS7" || $0.label == "CMS" }) {
                return .certificates
            }
            if blocks.count < elements.count || blocks.contains(where: { $0.label.hasSuffix("PRIVATE KEY") }) { return .privateKey }
            if let block = blocks.first(where: { $0.label == "PUBLIC KEY" }) { return .publicKey(block.derBytes) }
            if let block = blocks.first(where: { $0.label == "RSA PUBLIC KEY" }) { return .publicKey(try PublicKey(pkcs1RSAPublicKeyDER: block.derBytes).spkiDER) }
            let crls = blocks.filter { $0.label == "X509 CRL" }.map(\.derBytes)
            if !crls.isEmpty { return .crl(crls) }
            throw MTLSTrustError(.wrongObjectKind, "it holds no certificate, key or CRL PEM block")
        }
        switch DER.shape(of: bytes) {
        case .certificate, .pkcs7: return .certificates
        case .pkcs12: return .pkcs12
        case .privateKey, .encryptedPrivateKey: return .privateKey
        case .publicKey: return .publicKey(bytes)
        case .crl: return .crl([bytes])
        case .unknown:
            // Damaged DER: OpenSSL says where; anything else is said as verify, inspect and pin say it.
            guard bytes.first == 0x30 else { throw CertificateLoader.notACertificate(bytes) }
            _ = try Certificate(derBytes: bytes)
            return .certificates
        }
    }
}

/// Binary-safe writes to standard output.
enum FileHandleWriter {
    static func writeStdout(_ bytes: [UInt8], console: Console) {
        if let text = String(bytes: bytes, encoding: .utf8), bytes.allSatisfy({ $0 != 0 }) {
            console.write(text)
        } else {
            console.writeBytes(bytes)
        }
    }
}

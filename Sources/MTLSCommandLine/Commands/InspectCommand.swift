#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// `mtls inspect FILE`: what a certificate, key, CRL, CSR or PKCS#12 file holds.
enum InspectCommand {
    static let spec = CommandSpec(
        name: "inspect",
        abstract: "Show what a certificate, key, CRL, CSR or PKCS#12 file holds.",
        discussion: "The format is detected from the content (PEM, DER or PKCS#12), not from the file name.",
        arguments: [ArgumentSpec(name: "FILE", help: "The file to inspect ('-' for standard input).")],
        options: [
            OptionSpec(.password, valueName: "SPEC", help: "Password of a PKCS#12 file or an encrypted key (pass:, env:, file:, fd:, stdin)."),
            OptionSpec(.json, help: "Print one JSON object."),
        ],
        examples: ["mtls inspect server.pem", "mtls inspect identity.pfx --password env:PFX_PASSWORD", "mtls inspect key.pem --json"])

    static func run(_ arguments: ParsedArguments, _ console: Console) throws(CommandFailure) -> Int32 {
        guard let path = arguments.positionals.first else { throw CommandFailure.usage("Missing expected argument '<FILE>'", command: "inspect") }
        var bytes = try Inputs.read(path, console: console)
        // The file may hold an unencrypted key: overwritten once described.
        defer { Secret.wipe(&bytes) }
        if bytes.isEmpty { throw CommandFailure(ExitCode.badInput, "\(path): the file is empty") }
        let isPKCS12 = !PEM.looksLikePEM(bytes) && DER.shape(of: bytes) == .pkcs12
        let password = try SecretSpec.resolve(arguments.value(.password), option: "--password", prompt: isPKCS12 ? "Password for \(path): " : nil, console: console)
        var items: [(kind: String, human: [String], json: JSON)] = []
        do throws(MTLSTrustError) {
            if PEM.looksLikePEM(bytes) {
                // Private key blocks are read where they stand, not copied into the parser's Strings.
                let elements = try PEM.parseKeepingKeysInPlace(bytes)
                if elements.isEmpty { throw MTLSTrustError(.malformedInput, "no PEM block was found") }
                for element in elements {
                    switch element {
                    case .parsed(let block) where block.label == "PKCS7" || block.label == "CMS":
                        // A `.p7b` chain: one item per certificate it carries.
                        items += try Certificate.fromPKCS7(derBytes: block.derBytes).map { certificateItem($0, console: console) }
                    case .parsed(let block):
                        items.append(try describe(pemBlock: block, password: password, console: console))
                    case .privateKey(let location):
                        var keyBytes = Array(bytes[location.range])
                        defer { Secret.wipe(&keyBytes) }
                        let encrypted = location.label == "ENCRYPTED PRIVATE KEY" || location.isTraditionallyEncrypted
                        items.append(try privateKeyItem(keyBytes, encrypted: encrypted, password: password))
                    }
                }
            } else if isPKCS12 {
                items.append(try describePKCS12(bytes, password: password, console: console))
            } else if DER.shape(of: bytes) == .pkcs7 {
                items += try Certificate.fromPKCS7(derBytes: bytes).map { certificateItem($0, console: console) }
            } else {
                items.append(try describe(der: bytes, password: password, console: console))
            }
        } catch {
            let failure = error.attributed(to: path)
            throw CommandFailure(ExitCode.badInput, failure.message, hint: Inputs.hint(for: error, path: path))
        }
        if arguments.flag(.json) {
            console.out(JSON.object([("file", .string(path)), ("items", .array(items.map(\.json)))]).versioned(1).serialized())
        } else {
            for (index, item) in items.enumerated() {
                if index > 0 { console.out() }
                console.out(console.paint(items.count > 1 ? "[\(index + 1)] \(item.kind)" : item.kind, .bold))
                item.human.forEach { console.out($0) }
            }
        }
        return ExitCode.success
    }

    private static func describe(pemBlock block: PEMBlock, password: Secret?, console: Console) throws(MTLSTrustError) -> (String, [String], JSON) {
        switch block.label {
        case "CERTIFICATE", "X509 CERTIFICATE", "TRUSTED CERTIFICATE":
            let certificate = try Certificate.fromPEM(Array(block.text.utf8))[0]
            return certificateItem(certificate, console: console)
        case "X509 CRL":
            return crlItem(try CertificateRevocationList(derBytes: block.derBytes))
        case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST":
            return csrItem(try CertificateSigningRequest(derBytes: block.derBytes))
        case "PUBLIC KEY":
            return publicKeyItem(try PublicKey(spkiDER: block.derBytes))
        case "RSA PUBLIC KEY":
            return publicKeyItem(try PublicKey(pkcs1RSAPublicKeyDER: block.derBytes))
        default:
            if block.label.hasSuffix("PRIVATE KEY") {
                return try privateKeyItem(Array(block.text.utf8), encrypted: block.label == "ENCRYPTED PRIVATE KEY" || block.isTraditionallyEncrypted, password: password)
            }
            return (
                "PEM block \(block.label)", ["  (not decoded: \(block.derBytes.count) bytes)"], .object([("type", .string(block.label)), ("bytes", .int(block.derBytes.count))])
            )
        }
    }

    private static func describe(der bytes: [UInt8], password: Secret?, console: Console) throws(MTLSTrustError) -> (String, [String], JSON) {
        switch DER.shape(of: bytes) {
        case .certificate: return certificateItem(try Certificate(derBytes: bytes), console: console)
        case .crl: return crlItem(try CertificateRevocationList(derBytes: bytes))
        case .publicKey: return publicKeyItem(try PublicKey(spkiDER: bytes))
        case .privateKey: return try privateKeyItem(bytes, encrypted: false, password: password)
        case .encryptedPrivateKey: return try privateKeyItem(bytes, encrypted: true, password: password)
        case .pkcs12: return try describePKCS12(bytes, password: password, console: console)
        case .pkcs7: return certificateItem(try Certificate.fromPKCS7(derBytes: bytes)[0], console: console)  // the caller lists them all
        case .unknown:
            if let request = try? CertificateSigningRequest(derBytes: bytes) { return csrItem(request) }
            if bytes.first == 0x30 { _ = try Certificate(derBytes: bytes) }
            if let java = DER.javaKeyStoreRefusal(bytes) { throw MTLSTrustError(.wrongObjectKind, java) }
            // The sentence of verify, convert and pin, and what else inspect would have read.
            let notCertificate = CertificateLoader.notACertificate(bytes)
            throw MTLSTrustError(notCertificate.reason, notCertificate.message + ", nor a key, CRL or CSR")
        }
    }

    private static func certificateItem(_ certificate: Certificate, console: Console) -> (String, [String], JSON) {
        (
            "Certificate", CertificateDescription.detailed(certificate, console: console),
            .object([("type", .string("certificate")), ("certificate", CertificateDescription.json(certificate))])
        )
    }

    private static func crlItem(_ crl: CertificateRevocationList) -> (String, [String], JSON) {
        let next = crl.nextUpdate.map { Timestamp.rfc3339($0) } ?? "(none)"
        let revoked = crl.revokedSerialNumbers
        return (
            "Certificate revocation list",
            [
                "  Issuer              \(crl.issuer)", "  Last update         \(Timestamp.rfc3339(crl.lastUpdate))", "  Next update         \(next)",
                "  Revoked             \(revoked.count == 1 ? "1 certificate" : "\(revoked.count) certificates")",
            ],
            .object([
                ("type", .string("crl")), ("issuer", .string(crl.issuer)), ("lastUpdate", .string(Timestamp.rfc3339(crl.lastUpdate))),
                ("nextUpdate", JSON.optional(crl.nextUpdate.map { Timestamp.rfc3339($0) })),
                ("revokedSerialNumbers", .array(revoked.map { .string($0) })),
            ])
        )
    }

    private static func csrItem(_ request: CertificateSigningRequest) -> (String, [String], JSON) {
        (
            "Certificate signing request",
            [
                "  Subject             \(request.subject)", "  Key                 \(request.publicKey.algorithm)",
                "  Signature           \(request.signatureIsValid ? "valid" : "INVALID")", "  SPKI pin            \(request.publicKey.spkiPin)",
            ],
            .object([
                ("type", .string("csr")), ("subject", .string(request.subject)), ("key", .string(request.publicKey.algorithm.description)),
                ("signatureValid", .bool(request.signatureIsValid)), ("spkiSHA256", .string(request.publicKey.spkiPin)),
            ])
        )
    }

    private static func publicKeyItem(_ key: PublicKey) -> (String, [String], JSON) {
        (
            "Public key", ["  Key                 \(key.algorithm)", "  SPKI pin            \(key.spkiPin)"],
            .object([("type", .string("public key")), ("key", .string(key.algorithm.description)), ("spkiSHA256", .string(key.spkiPin))])
        )
    }

    private static func privateKeyItem(_ bytes: [UInt8], encrypted: Bool, password: Secret?) throws(MTLSTrustError) -> (String, [String], JSON) {
        if encrypted && password == nil {
            return (
                "Private key (encrypted)", ["  Encrypted           yes: give --password to see the key type"],
                .object([("type", .string("private key")), ("encrypted", .bool(true))])
            )
        }
        let key = try PrivateKey(bytes: bytes, password: password)
        return (
            "Private key",
            [
                "  Key                 \(key.algorithm)", "  Format              \(key.sourceFormat.rawValue)", "  Encrypted           \(encrypted ? "yes" : "no")",
                "  SPKI pin            \(key.publicKey.spkiPin)",
            ],
            .object([
                ("type", .string("private key")), ("key", .string(key.algorithm.description)), ("format", .string(key.sourceFormat.rawValue)), ("encrypted", .bool(encrypted)),
                ("spkiSHA256", .string(key.publicKey.spkiPin)),
            ])
        )
    }

    static func describePKCS12(_ bytes: [UInt8], password: Secret?, console: Console) throws(MTLSTrustError) -> (String, [String], JSON) {
        let bundle = try PKCS12Bundle(derBytes: bytes, password: password)
        return pkcs12Item(bundle, console: console)
    }

    static func pkcs12Item(_ bundle: PKCS12Bundle, console: Console) -> (String, [String], JSON) {
        let inspection = bundle.inspection
        var lines: [String] = []
        if let mac = inspection.mac {
            lines.append("  MAC                 \(mac.digest), \(mac.iterations) iterations")
        } else {
            lines.append("  MAC                 none (no integrity protection)")
        }
        for (index, safe) in inspection.safes.enumerated() {
            let enveloped = safe.bags.contains { $0.kind == .enveloped }
            let protection =
                enveloped
                ? "encrypted to a recipient's public key (PKCS #7 envelopedData): not read, it needs that recipient's private key"
                : (safe.encryption.map { "encrypted: \($0)" } ?? "not encrypted")
            lines.append("  Safe \(index + 1)              " + protection)
            for bag in safe.bags {
                var text = "    - \(bag.kind.rawValue)"
                if let subject = bag.subject { text += " \(subject)" }
                if let algorithm = bag.algorithm { text += " [\(algorithm)]" }
                if let name = bag.friendlyName { text += " friendlyName=\(DisplayText.quoted(name))" }
                if let id = bag.localKeyID { text += " localKeyID=\(id)" }
                lines.append(text)
            }
        }
        if bundle.neededLegacyProvider || inspection.usesLegacyAlgorithms {
            lines.append(
                "  " + console.paint("Legacy algorithms", .yellow)
                    + "   yes: plain OpenSSL 3 refuses this file (error:0308010C \"unsupported\"); read here with OpenSSL's legacy provider")
        }
        if inspection.pbes2PasswordIsBMPString {
            lines.append(
                "  " + console.paint("Password encoding", .yellow)
                    + "   BMPString (UTF-16), as NSS 3.21–3.30 wrote it: OpenSSL, Python and Java cannot open this file; `mtls import` then `mtls export` re-make it for them")
        }
        let compatibility = inspection.compatibility
        lines.append(
            "  Readable by         OpenSSL 3: \(compatibility.openSSL3 ? "yes" : inspection.pbes2PasswordIsBMPString ? "no" : "no (needs -legacy)"); OpenSSL 3 + legacy: \(compatibility.openSSL3WithLegacy ? "yes" : "no"); older Apple/Android/Windows/Java 8 importers: \(compatibility.olderImporters ? "yes" : "no (export with --legacy for them)")"
        )
        if bundle.identities.isEmpty {
            lines.append("  Identity            none (no private key)")
            lines.append("  Private key         none")
        }
        for (index, identity) in bundle.identities.enumerated() {
            // Every identity is listed, numbered when there are several: `import --index N` picks one.
            let label = bundle.identities.count > 1 ? "Identity \(index + 1)" : "Identity"
            let padded = label.padded(to: 20)
            let name = identity.friendlyName.map { " (\(DisplayText.quoted($0)))" } ?? ""
            if let entry = identity.certificate {
                lines.append("  \(padded)\(entry.certificate.subject)\(name)")
                lines += CertificateDescription.detailed(entry.certificate, console: console, indent: "      ")
            } else {
                lines.append("  \(padded)key only (no certificate in the file)\(name)")
            }
            lines.append("  Private key         \(identity.privateKey.algorithm)")
        }
        if bundle.duplicatesRemoved > 0 {
            lines.append("  Duplicates          \(bundle.duplicatesRemoved) repeated certificate or key bag\(bundle.duplicatesRemoved == 1 ? "" : "s"), shown once")
        }
        for (index, entry) in bundle.chain.enumerated() {
            lines.append("  Chain \(index + 1)             \(entry.certificate.subject) (expires \(Timestamp.rfc3339(entry.certificate.notAfter)))")
        }
        let json = JSON.object([
            ("type", .string("pkcs12")),
            ("mac", inspection.mac.map { .object([("digest", .string($0.digest)), ("iterations", .int($0.iterations))]) } ?? .null),
            (
                "safes",
                .array(
                    inspection.safes.map { safe in
                        .object([
                            ("encryption", safe.encryption.map { .string($0.description) } ?? .null),
                            (
                                "bags",
                                .array(
                                    safe.bags.map { bag in
                                        .object([
                                            ("kind", .string(bag.kind.rawValue)), ("subject", JSON.optional(bag.subject)), ("algorithm", JSON.optional(bag.algorithm?.description)),
                                            ("friendlyName", JSON.optional(bag.friendlyName)), ("localKeyID", JSON.optional(bag.localKeyID)),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
            ("legacy", .bool(bundle.neededLegacyProvider || inspection.usesLegacyAlgorithms)),
            (
                "readableBy",
                .object([
                    ("openssl3", .bool(compatibility.openSSL3)), ("openssl3Legacy", .bool(compatibility.openSSL3WithLegacy)),
                    ("olderImporters", .bool(compatibility.olderImporters)),
                ])
            ),
            ("leaf", bundle.leaf.map { CertificateDescription.json($0.certificate, extra: [("friendlyName", JSON.optional($0.friendlyName))]) } ?? .null),
            ("privateKey", bundle.privateKey.map { .string($0.algorithm.description) } ?? .null),
            ("chain", .array(bundle.chain.map { CertificateDescription.json($0.certificate) })),
            (
                "identities",
                .array(
                    bundle.identities.enumerated().map { index, identity in
                        .object([
                            ("index", .int(index + 1)), ("friendlyName", JSON.optional(identity.friendlyName)), ("localKeyID", JSON.optional(identity.localKeyID)),
                            ("certificate", identity.certificate.map { CertificateDescription.json($0.certificate) } ?? .null),
                            ("privateKey", .string(identity.privateKey.algorithm.description)),
                        ])
                    })
            ),
            ("duplicatesRemoved", .int(bundle.duplicatesRemoved)),
        ])
        return ("PKCS#12", lines, json)
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust

/// One source of `mtls pin`, loaded.
struct LoadedPinSource {
    /// The file name or URL as given.
    var source: String
    /// The pins it gives, one per certificate (chain order) or one for a backup key.
    var entries: [PinEntry]
    /// The certificate chain (leaf first) for `--check`; empty for a backup key.
    var chain: [Certificate]
    /// The host of an `https://` source.
    var host: String?
    /// For a live host: "validated chain" or "chain as sent (not trusted)".
    var chainDescription: String?
}

/// Loads certificate files, backup keys and live chains.
enum PinSources {
    /// True for a live source, an `http://` or `https://` URL in any case; everything else is a
    /// file. Read on the bytes: `mtls pin` asks once per source, and a run may name thousands.
    static func isLive(_ source: String) -> Bool {
        func hasPrefix(_ scheme: StaticString) -> Bool {
            let bytes = source.utf8
            guard bytes.count >= scheme.utf8CodeUnitCount else { return false }
            return scheme.withUTF8Buffer { expected in
                zip(expected, bytes).allSatisfy { expected, actual in (actual >= 0x41 && actual <= 0x5A ? actual | 0x20 : actual) == expected }
            }
        }
        return hasPrefix("https://") || hasPrefix("http://")
    }

    /// Leaf, intermediate or root, from a certificate's own facts and its place in its file.
    static func role(of certificate: Certificate, index: Int) -> PinRole {
        role(isCA: certificate.basicConstraints?.isCA ?? false, isSelfSigned: certificate.isSelfSigned, index: index)
    }

    static func role(isCA: Bool, isSelfSigned: Bool, index: Int) -> PinRole {
        if isSelfSigned, isCA || index > 0 { return .root }
        return isCA ? .intermediate : .leaf
    }

    /// A plain certificate file read for its pins only (`CertificateLoader.summaries`: no X.509
    /// parse where the strict DER walk applies), for the formats that need no more of a certificate
    /// than its key, subject, expiry and role. Nil for anything else — keys, CSRs, PKCS#12, errors —
    /// which ``file(_:password:console:)`` then reads and reports.
    static func summaryFile(_ path: String) -> LoadedPinSource? {
        guard path != "-", let summaries = try? CertificateLoader.summaries(atPath: path), !summaries.isEmpty else { return nil }
        let entries = summaries.enumerated().map { index, summary in
            PinEntry(
                pin: Pin(kind: .publicKey, digest: summary.spkiSHA256), role: role(isCA: summary.isCA, isSelfSigned: summary.mayBeSelfSigned, index: index),
                label: summary.subject, source: path, summaryNotAfter: summary.notAfter)
        }
        return LoadedPinSource(source: path, entries: entries, chain: [])
    }

    static func entries(for chain: [Certificate], source: String) -> [PinEntry] {
        chain.enumerated().map { index, certificate in
            PinEntry(pin: .publicKey(of: certificate), role: role(of: certificate, index: index), label: certificate.subject, source: source, certificate: certificate)
        }
    }

    /// Loads a file: certificates (PEM, DER, PKCS#12), or a backup key (PEM/DER public key, CSR, or
    /// a private key, whose public half is pinned).
    static func file(_ path: String, password: Secret?, console: Console) throws(CommandFailure) -> LoadedPinSource {
        var bytes = try Inputs.read(path, console: console)
        // The file may hold an unencrypted key: overwritten once pinned.
        defer { Secret.wipe(&bytes) }
        let name = path == "-" ? "standard input" : path
        // Labels name the file only, so generated outputs do not depend on where they were made.
        let short = path == "-" ? "standard input" : PathText.lastComponent(path)
        // Private key blocks are read where they stand, not copied into the parser's Strings.
        if PEM.looksLikePEM(bytes), let elements = try? PEM.parseKeepingKeysInPlace(bytes),
            !elements.contains(where: { if case .parsed(let block) = $0 { block.label.contains("CERTIFICATE") && !block.label.contains("REQUEST") } else { false } })
        {
            var entries: [PinEntry] = []
            for element in elements {
                if case .privateKey(let location) = element {
                    var keyBytes = Array(bytes[location.range])
                    defer { Secret.wipe(&keyBytes) }
                    let key: PrivateKey
                    do throws(MTLSTrustError) { key = try PrivateKey(bytes: keyBytes, password: password) } catch {
                        throw CommandFailure(ExitCode.badInput, error.attributed(to: name).message, hint: Inputs.hint(for: error, path: name))
                    }
                    console.err("warning: \(name) is a private key; only its public half is pinned. A public key or CSR is enough, and the private key can stay where it is kept")
                    entries.append(PinEntry(pin: .publicKey(of: key.publicKey), role: .backup, label: "backup key (\(short))", source: path))
                    continue
                }
                guard case .parsed(let block) = element else { continue }
                if let key = (block.label == "PUBLIC KEY" ? try? PublicKey(spkiDER: block.derBytes) : nil)
                    ?? (block.label == "RSA PUBLIC KEY" ? try? PublicKey(pkcs1RSAPublicKeyDER: block.derBytes) : nil)
                {
                    entries.append(PinEntry(pin: .publicKey(of: key), role: .backup, label: "backup key (\(short))", source: path))
                } else if block.label.contains("CERTIFICATE REQUEST"), let request = try? CertificateSigningRequest(derBytes: block.derBytes) {
                    entries.append(PinEntry(pin: .publicKey(of: request.publicKey), role: .backup, label: "backup CSR \(request.subject) (\(short))", source: path))
                } else if block.label.hasSuffix("PRIVATE KEY") {
                    let key: PrivateKey
                    do throws(MTLSTrustError) { key = try PrivateKey(bytes: Array(block.text.utf8), password: password) } catch {
                        throw CommandFailure(ExitCode.badInput, error.attributed(to: name).message, hint: Inputs.hint(for: error, path: name))
                    }
                    console.err("warning: \(name) is a private key; only its public half is pinned. A public key or CSR is enough, and the private key can stay where it is kept")
                    entries.append(PinEntry(pin: .publicKey(of: key.publicKey), role: .backup, label: "backup key (\(short))", source: path))
                }
            }
            if entries.isEmpty {
                throw CommandFailure(ExitCode.badInput, "\(name) holds no certificate, public key or CSR to pin")
            }
            return LoadedPinSource(source: path, entries: entries, chain: [])
        }
        if !PEM.looksLikePEM(bytes) {
            switch DER.shape(of: bytes) {
            case .publicKey:
                if let key = try? PublicKey(spkiDER: bytes) {
                    return LoadedPinSource(source: path, entries: [PinEntry(pin: .publicKey(of: key), role: .backup, label: "backup key (\(short))", source: path)], chain: [])
                }
            case .privateKey:
                if let key = try? PrivateKey(bytes: bytes, password: password) {
                    console.err("warning: \(name) is a private key; only its public half is pinned")
                    return LoadedPinSource(
                        source: path, entries: [PinEntry(pin: .publicKey(of: key.publicKey), role: .backup, label: "backup key (\(short))", source: path)], chain: [])
                }
            case .unknown:
                if bytes.first == 0x30, let request = try? CertificateSigningRequest(derBytes: bytes) {
                    return LoadedPinSource(
                        source: path, entries: [PinEntry(pin: .publicKey(of: request.publicKey), role: .backup, label: "backup CSR \(request.subject) (\(short))", source: path)],
                        chain: [])
                }
            default: break
            }
        }
        let certificates: [Certificate]
        do throws(MTLSTrustError) {
            certificates = try CertificateLoader.certificates(from: bytes, password: password, source: name).certificates
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message, hint: Inputs.hint(for: error, path: name))
        }
        return LoadedPinSource(source: path, entries: entries(for: certificates, source: path), chain: certificates)
    }

    /// Connects to `https://host[:port]` with the TLS client options and takes the chain: the
    /// validated chain (up to the anchor, as TrustKit, OkHttp and Android see it) when trusted, else
    /// the chain as sent (only with `--insecure`).
    static func live(_ text: String, arguments: ParsedArguments, evaluationTime: Date?, console: Console) throws(CommandFailure) -> LoadedPinSource {
        let url = try ProbeCommand.parseURL(text, command: "pin")
        let configuration = try TLSOptions.configuration(arguments, command: "pin", console: console, evaluationTime: evaluationTime)
        let connection: TLSConnection
        do throws(HTTPSError) {
            let client = try TLSClient(configuration: configuration)
            connection = try client.connect(host: url.host, port: url.port, connectTo: TLSOptions.connectTo(arguments))
        } catch {
            var failure = TLSOptions.failure(error)
            if error.phase == .serverCertificate {
                failure.hint = "trust its CA with --anchors FILE, or, on a network you trust, pin it anyway with --insecure"
            }
            throw failure
        }
        defer { connection.close() }
        let report = connection.report
        let chain: [Certificate]
        let description: String
        if let trust = report.trust, trust.isTrusted {
            chain = trust.chain
            description = "validated chain"
        } else {
            chain = report.peerChainAsSent
            description = "chain as sent, NOT trusted"
            console.err(
                "warning: \(url.host):\(url.port) is not trusted (\(report.overriddenProblems.first ?? "untrusted chain")); pinning the chain as sent because of --insecure: check these pins on a network you trust"
            )
        }
        guard !chain.isEmpty else { throw CommandFailure(ExitCode.network, "\(url.host):\(url.port) sent no certificate") }
        return LoadedPinSource(source: text, entries: entries(for: chain, source: text), chain: chain, host: url.host, chainDescription: description)
    }
}

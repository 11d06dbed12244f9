#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// Loading what users pass on the command line, with errors that name the file.
enum Inputs {
    /// Reads a file (or `-` for stdin).
    static func read(_ path: String, console: Console) throws(CommandFailure) -> [UInt8] {
        if path == "-" {
            // The same cap as files: standard input may be endless (`cat /dev/zero | mtls inspect -`).
            var bytes = console.readStandardInput()
            if bytes.count > CertificateLoader.maximumInputSize {
                Secret.wipe(&bytes)
                throw CommandFailure(
                    ExitCode.badInput, "standard input is larger than \(CertificateLoader.maximumInputSize >> 20) MiB: not a certificate, key or PKCS#12 file",
                    hint: "give the file itself, or check what is piped in")
            }
            return bytes
        }
        do throws(MTLSTrustError) {
            return try CertificateLoader.readFile(path)
        } catch {
            throw CommandFailure(error)
        }
    }

    /// Loads certificates from a PEM, DER or PKCS#12 file.
    static func certificates(_ path: String, password: Secret?, console: Console) throws(CommandFailure) -> [Certificate] {
        if path != "-", CertificateLoader.isDirectory(path) {
            // A directory of certificates, as curl's --capath and OpenSSL's CApath (/etc/ssl/certs).
            do throws(MTLSTrustError) { return try CertificateLoader.certificates(inDirectory: path) } catch {
                throw CommandFailure(ExitCode.badInput, error.message, hint: hint(for: error, path: error.source ?? path))
            }
        }
        let bytes = try read(path, console: console)
        do throws(MTLSTrustError) {
            return try CertificateLoader.certificates(from: bytes, password: password, source: path).certificates
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message, hint: hint(for: error, path: path))
        }
    }

    /// The key file for `--cert FILE`: `--key`, or else FILE itself when it holds a PEM private
    /// key beside the certificate (the combined PEM that curl's `--cert` and HAProxy take).
    static func keyPath(forCertificate certificatePath: String, key: String?, command: String) throws(CommandFailure) -> String {
        if let key { return key }
        if certificatePath != "-", var bytes = try? CertificateLoader.readFile(certificatePath) {
            defer { Secret.wipe(&bytes) }
            if PEM.blockLocations(in: bytes).contains(where: { $0.label.hasSuffix("PRIVATE KEY") }) { return certificatePath }
        }
        throw CommandFailure.usage("--cert \(certificatePath) holds no private key: give it with --key FILE (or the identity as --p12 FILE)", command: command)
    }

    /// Loads a private key.
    static func privateKey(_ path: String, password: Secret?, console: Console) throws(CommandFailure) -> PrivateKey {
        var bytes = try read(path, console: console)
        // The file's bytes may be an unencrypted key: overwritten once OpenSSL holds the key.
        defer { Secret.wipe(&bytes) }
        do throws(MTLSTrustError) {
            return try PrivateKey(bytes: bytes, password: password)
        } catch {
            throw CommandFailure(ExitCode.badInput, error.attributed(to: path).message, hint: hint(for: error, path: path))
        }
    }

    /// Loads CRLs.
    static func crls(_ path: String, console: Console) throws(CommandFailure) -> [CertificateRevocationList] {
        do throws(MTLSTrustError) {
            return try CertificateLoader.crls(atPath: path)
        } catch {
            throw CommandFailure(error)
        }
    }

    static func hint(for error: MTLSTrustError, path: String) -> String? {
        if let hint = error.hint { return hint.commandLine }
        switch error.reason {
        case .passwordRequired: return "give it with --password (pass:, env:, file:, fd: or stdin)"
        case .wrongPassword: return "check the password (passwords are case-sensitive)"
        case .wrongObjectKind: return "check that \(path) is the file you meant"
        case .truncatedInput: return "copy or download \(path) again: its end is missing"
        case .corruptInput: return "\(path) is damaged: get a fresh copy from where it came from"
        default: return nil
        }
    }

    /// Parses `--at`.
    static func time(_ text: String?) throws(CommandFailure) -> Date? {
        guard let text else { return nil }
        guard let date = Timestamp.parse(text) else {
            throw CommandFailure(
                ExitCode.usage, "--at '\(text)' is not a time: use RFC 3339 (2030-01-01T00:00:00Z) or Unix seconds", hint: "See 'mtls verify --help' for more information.")
        }
        return date
    }

    /// Parses an integer option.
    static func integer(_ text: String?, option: String, command: String, range: ClosedRange<Int>) throws(CommandFailure) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw CommandFailure.usage("\(option) '\(text)' must be a whole number from \(range.lowerBound) to \(range.upperBound)", command: command)
        }
        return value
    }

    /// Resolves `--pin` and `--pins` into one pin document: `--pins` in any format `mtls pin` writes
    /// (per host, with expiry and report-only as the file says), `--pin` values as extra pins that
    /// satisfy every requirement (or, alone, one any-host set).
    static func pinDocument(pins: [String], pinsFile: String?, console: Console) throws(CommandFailure) -> PinDocument? {
        var extra: [Pin] = []
        for spec in pins {
            do throws(MTLSTrustError) {
                extra.append(try Pin(parsing: spec))
            } catch {
                throw CommandFailure(ExitCode.usage, "--pin: \(error.message)")
            }
        }
        guard let pinsFile else {
            return extra.isEmpty ? nil : PinDocument(PinSet(pins: extra))
        }
        var document = try PinFileReader.read(pinsFile, console: console)
        for d in document.domains.indices {
            for r in document.domains[d].requirements.indices { document.domains[d].requirements[r].pins += extra }
        }
        return document
    }
}

/// The OpenSSL version in use.
enum OpenSSLVersion {
    static var text: String { MTLSTrust.OpenSSLInfo.version }
}

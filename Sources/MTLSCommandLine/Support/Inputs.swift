import Foundation
import MTLSTrust

/// Loading what users pass on the command line, with errors that name the file.
enum Inputs {
    /// Reads a file (or `-` for stdin).
    static func read(_ path: String, console: Console) throws(CommandFailure) -> [UInt8] {
        if path == "-" { return console.readStandardInput() }
        do throws(MTLSTrustError) {
            return try CertificateLoader.readFile(path)
        } catch {
            throw CommandFailure(error)
        }
    }

    /// Loads certificates from a PEM, DER or PKCS#12 file.
    static func certificates(_ path: String, password: Secret?, console: Console) throws(CommandFailure) -> [Certificate] {
        let bytes = try read(path, console: console)
        do throws(MTLSTrustError) {
            return try CertificateLoader.certificates(from: bytes, password: password, source: path).certificates
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message, hint: hint(for: error, path: path))
        }
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
        switch error.reason {
        case .passwordRequired: return "give it with --password (pass:, env:, file:, fd: or stdin)"
        case .wrongPassword: return "check the password; PKCS#12 passwords are case-sensitive"
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

    /// Resolves a pin set from `--pin` and `--pins`.
    static func pinSet(pins: [String], pinsFile: String?, console: Console) throws(CommandFailure) -> PinSet? {
        var set = PinSet(pins: [])
        for spec in pins {
            do throws(MTLSTrustError) {
                set.pins.append(try Pin(parsing: spec))
            } catch {
                throw CommandFailure(ExitCode.usage, "--pin: \(error.message)")
            }
        }
        if let pinsFile {
            let bytes = try read(pinsFile, console: console)
            do throws(MTLSTrustError) {
                let fileSet = try PinSet.parse(bytes, source: pinsFile)
                set.pins += fileSet.pins
                set.expiration = fileSet.expiration
            } catch {
                throw CommandFailure(error)
            }
        }
        return set.pins.isEmpty ? nil : set
    }
}

/// The OpenSSL version in use.
enum OpenSSLVersion {
    static var text: String { MTLSTrust.OpenSSLInfo.version }
}

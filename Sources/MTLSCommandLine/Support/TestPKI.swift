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

/// The throwaway PKI of `mtls serve` and `mtls demo`: a CA, a server certificate for localhost,
/// 127.0.0.1 and ::1, and a client identity (also as client.p12, password `mtls`).
struct TestPKI {
    var directory: String
    var ca: Certificate
    var caKey: PrivateKey
    var server: Certificate
    var serverKey: PrivateKey
    var client: Certificate
    var clientKey: PrivateKey
    /// True when `mtls serve` made the directory itself (no `--pki-dir`): removed on exit.
    var isTemporary = false

    static let p12Password = "mtls"

    var caPath: String { directory + "/ca.pem" }
    var serverPath: String { directory + "/server.pem" }
    var serverKeyPath: String { directory + "/server.key" }
    var clientPath: String { directory + "/client.pem" }
    var clientKeyPath: String { directory + "/client.key" }
    var p12Path: String { directory + "/client.p12" }

    /// Removes a temporary PKI directory (it holds the CA's, the server's and the client's private
    /// keys); a `--pki-dir` the user named is kept for reuse.
    func removeIfTemporary(console: Console) {
        guard isTemporary else { return }
        do {
            try FileManager.default.removeItem(atPath: directory)
        } catch {
            console.err("could not remove the temporary test PKI in \(directory): \(FileSystem.reason(error)); remove it by hand (it holds private keys)")
        }
    }

    /// Loads the PKI in `directory`, or makes it there when the files are missing.
    static func loadOrCreate(in directory: String) throws(CommandFailure) -> (TestPKI, created: Bool) {
        let names = ["ca.pem", "ca.key", "server.pem", "server.key", "client.pem", "client.key", "client.p12"]
        let present = names.filter { FileManager.default.fileExists(atPath: directory + "/" + $0) }
        if present.count == names.count {
            do throws(MTLSTrustError) {
                func cert(_ name: String) throws(MTLSTrustError) -> Certificate { try CertificateLoader.certificates(atPath: directory + "/" + name)[0] }
                func key(_ name: String) throws(MTLSTrustError) -> PrivateKey { try PrivateKey(bytes: try CertificateLoader.readFile(directory + "/" + name)) }
                return (
                    TestPKI(
                        directory: directory, ca: try cert("ca.pem"), caKey: try key("ca.key"), server: try cert("server.pem"), serverKey: try key("server.key"),
                        client: try cert("client.pem"), clientKey: try key("client.key")), false
                )
            } catch {
                throw CommandFailure(ExitCode.badInput, "the PKI in \(directory) cannot be read: \(error.message)", hint: "remove the directory to make a fresh one")
            }
        }
        if !present.isEmpty {
            throw CommandFailure(
                ExitCode.badInput, "\(directory) holds only part of a test PKI (\(present.joined(separator: ", ")))", hint: "remove those files or pick another --pki-dir")
        }
        do throws(MTLSTrustError) {
            _ = try OutputWriter.makePrivateDirectory(directory)
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message, hint: error.hint?.commandLine)
        }
        var files: [(path: String, bytes: [UInt8], mode: mode_t)] = []
        let made: TestPKI
        let now = Date()
        let start = now.addingTimeInterval(-3600)
        do throws(MTLSTrustError) {
            let caKey = try CertificateIssuer.generateKey()
            let ca = try CertificateIssuer.issue(
                .init(role: .rootCA, commonName: "mtls serve test CA", notBefore: start, notAfter: now.addingTimeInterval(5 * 365 * 86400)), key: caKey, issuer: nil,
                serial: UInt64.random(in: 1...UInt64(Int64.max)))
            let serverKey = try CertificateIssuer.generateKey()
            let server = try CertificateIssuer.issue(
                .init(
                    role: .server, commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"], notBefore: start,
                    notAfter: now.addingTimeInterval(398 * 86400)), key: serverKey, issuer: (ca, caKey), serial: UInt64.random(in: 1...UInt64(Int64.max)))
            let clientKey = try CertificateIssuer.generateKey()
            let client = try CertificateIssuer.issue(
                .init(role: .client, commonName: "mtls demo client", notBefore: start, notAfter: now.addingTimeInterval(398 * 86400)), key: clientKey, issuer: (ca, caKey),
                serial: UInt64.random(in: 1...UInt64(Int64.max)))
            let p12 = try PKCS12Bundle.export(certificate: client, privateKey: clientKey, chain: [ca], password: Secret(p12Password), friendlyName: "mtls demo client")
            files = [
                (directory + "/ca.pem", Array(ca.pemString.utf8), 0o644),
                (directory + "/ca.key", try caKey.pkcs8PEM(), 0o600),
                (directory + "/server.pem", Array((server.pemString + ca.pemString).utf8), 0o644),
                (directory + "/server.key", try serverKey.pkcs8PEM(), 0o600),
                (directory + "/client.pem", Array(client.pemString.utf8), 0o644),
                (directory + "/client.key", try clientKey.pkcs8PEM(), 0o600),
                (directory + "/client.p12", p12, 0o600),
            ]
            made = TestPKI(directory: directory, ca: ca, caKey: caKey, server: server, serverKey: serverKey, client: client, clientKey: clientKey)
        } catch {
            throw CommandFailure(ExitCode.badInput, "could not make the test PKI: \(error.message)")
        }
        try OutputFile.writeAll(files, force: false)
        return (made, true)
    }
}

import Foundation
import MTLSTrust
import XCTest

@testable import MTLSCommandLine

/// PKCS#12 files other software made (TestCerts/third-party/pkcs12/MANIFEST.tsv: BoringSSL, Go, forge, .NET (Windows exports),
/// pyca, OpenSSL, RFC 9579), each read by `openssl pkcs12 -legacy`, by Python `cryptography` and by
/// `mtls import`. Each file's expected outcome is in the manifest: `read` files must be read, and
/// alike by every judge that reads them (the same leaf, a matching key, the same certificates);
/// `refuse: PHRASE` files (malformed, failing MAC, unsafe PBMAC1 parameters …) must give exit 3
/// with PHRASE in the message and write nothing, even where a judge reads them (OpenSSL 3.0's
/// `pkcs12` app dumps a bag whose attributes OpenSSL 3.4+ refuses, and cannot check PBMAC1). A wrong
/// password must give exit 3, say "password" and write nothing. The coverage table is printed in the test log.
final class PKCS12CorpusTests: XCTestCase {
    struct Sample {
        var file: String
        /// Nil: no password given at all.
        var password: String?
        var origin: String
        /// Nil: the file must be read. Otherwise it must be refused with this phrase in the message.
        var refusal: String?
    }

    /// What one reader found in a file; nil when it refused the file.
    struct Reading: Equatable {
        var leaf: [UInt8]?
        var keySPKI: [UInt8]?
        var certificates: Set<[UInt8]>
        /// Every key's public half (nil for pyca, whose load_pkcs12 returns one key).
        var allKeys: Set<[UInt8]>?
    }

    static let corpus = "third-party/pkcs12"

    static func manifest() throws -> [Sample] {
        let text = try Fixtures.text("\(corpus)/MANIFEST.tsv")
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let password: String? =
                switch fields[1] {
                case "none": nil
                case "empty": ""
                default: fields[1]
                }
            let expected = fields.count > 4 ? fields[4] : ""
            precondition(expected == "read" || expected.hasPrefix("refuse: "), "MANIFEST.tsv: \(fields[0]) has no expected outcome (read, or refuse: PHRASE)")
            let refusal = expected.hasPrefix("refuse: ") ? String(expected.dropFirst("refuse: ".count)) : nil
            return Sample(file: fields[0], password: password, origin: fields[2], refusal: refusal)
        }
    }

    private func environment(_ password: String?) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["P12_PASSWORD"] = password
        if password == nil { environment.removeValue(forKey: "P12_PASSWORD") }
        return environment
    }

    /// `openssl pkcs12 -legacy -nodes`: the certificates, the first key, and the certificate that matches it.
    private func openssl(_ sample: Sample) throws -> Reading? {
        let path = Fixtures.path("\(Self.corpus)/\(sample.file)")
        // `-passin pass:` also tries no password at all, as a NULL-password file needs.
        let passin = sample.password == nil ? "pass:" : "env:P12_PASSWORD"
        let result = try runProcess("/usr/bin/env", ["openssl", "pkcs12", "-legacy", "-nodes", "-in", path, "-passin", passin], environment: environment(sample.password))
        guard result.status == 0 else { return nil }
        let blocks = try PEM.parse(result.stdout)
        let certificates = try blocks.filter { $0.label == "CERTIFICATE" }.map { try Certificate(derBytes: $0.derBytes) }
        let keys = try blocks.filter { $0.label.hasSuffix("PRIVATE KEY") }.map { try PrivateKey(bytes: Array($0.text.utf8), password: nil) }
        let leaf = keys.first.flatMap { key in certificates.first { key.matches($0) } }
        return Reading(
            leaf: leaf?.derBytes, keySPKI: keys.first?.publicKey.spkiDER, certificates: Set(certificates.map(\.derBytes)),
            allKeys: Set(keys.map(\.publicKey.spkiDER)))
    }

    /// The subjectPublicKey BIT STRING of a SubjectPublicKeyInfo: the key without its algorithm label.
    static func keyBits(_ spki: [UInt8]) -> [UInt8]? {
        guard let outer = DER.element(in: spki, at: 0), outer.tag == 0x30,
            let algorithm = DER.element(in: spki, at: outer.contentStart, limit: outer.contentEnd), algorithm.tag == 0x30,
            let bits = DER.element(in: spki, at: algorithm.end, limit: outer.contentEnd), bits.tag == 0x03
        else { return nil }
        return Array(spki[bits.contentStart..<bits.contentEnd])
    }

    private static let python: String? = {
        guard let result = try? runProcess("/bin/bash", [Fixtures.packageRoot.appendingPathComponent("scripts/pyca-venv.sh").path]), result.status == 0 else { return nil }
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }()

    /// pyca `load_pkcs12`: its key, its certificate (the one that matches the key) and the others.
    private func pyca(_ sample: Sample, python: String) throws -> Reading? {
        let path = Fixtures.path("\(Self.corpus)/\(sample.file)")
        let script = Fixtures.packageRoot.appendingPathComponent("scripts/pkcs12-pyca.py").path
        let result = try runProcess(python, ["-W", "ignore", script, path], environment: environment(sample.password))
        XCTAssertEqual(result.status, 0, "\(sample.file): \(result)")
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any], object["ok"] as? Bool == true else { return nil }
        func bytes(_ hex: Any?) -> [UInt8]? {
            guard let hex = hex as? String else { return nil }
            var out: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                out.append(UInt8(hex[index..<next], radix: 16)!)
                index = next
            }
            return out
        }
        return Reading(
            leaf: bytes(object["leaf"]), keySPKI: bytes(object["keySPKI"]),
            certificates: Set((object["certificates"] as? [String] ?? []).compactMap { bytes($0) }), allKeys: nil)
    }

    /// `mtls import --out-dir`: key.pem, cert.pem, chain.pem (the first identity when there are several).
    private func ours(_ sample: Sample, in directory: TemporaryDirectory) throws -> (Reading?, CLIResult) {
        let out = directory.file("ours")
        var arguments = ["import", Fixtures.path("\(Self.corpus)/\(sample.file)"), "--out-dir", out]
        if sample.password != nil { arguments += ["--password", "env:P12_PASSWORD"] }
        var result = mtls(arguments, environment: sample.password.map { ["P12_PASSWORD": $0] } ?? [:])
        if result.exitCode == 2, result.stderr.contains("identities") {
            result = mtls(arguments + ["--index", "1"], environment: sample.password.map { ["P12_PASSWORD": $0] } ?? [:])
        }
        guard result.exitCode == 0 else { return (nil, result) }
        let key = try contents(out + "/key.pem").map { try PrivateKey(bytes: $0, password: nil) }
        let cert = try contents(out + "/cert.pem").map { try Certificate.fromPEM($0) } ?? []
        let chain = try contents(out + "/chain.pem").map { try Certificate.fromPEM($0) } ?? []
        if key != nil { XCTAssertEqual(try permissions(out + "/key.pem"), 0o600, sample.file) }
        let leaf = key != nil ? cert.first : nil
        // Everything the file holds, every identity's key and certificate: `convert --include-key`.
        var everything = ["convert", Fixtures.path("\(Self.corpus)/\(sample.file)"), "--to", "pem", "--include-key", "--out", directory.file("all.pem")]
        if sample.password != nil { everything += ["--password", "env:P12_PASSWORD"] }
        let converted = mtls(everything, environment: sample.password.map { ["P12_PASSWORD": $0] } ?? [:])
        XCTAssertEqual(converted.exitCode, 0, "\(sample.file): convert --include-key: \(converted.stderr)")
        let blocks = try PEM.parse(contents(directory.file("all.pem")) ?? [])
        let certificates = blocks.filter { $0.label == "CERTIFICATE" }.map(\.derBytes)
        let keys = try blocks.filter { $0.label.hasSuffix("PRIVATE KEY") }.map { try PrivateKey(bytes: Array($0.text.utf8), password: nil).publicKey.spkiDER }
        XCTAssertTrue(Set((cert + chain).map(\.derBytes)).isSubset(of: Set(certificates)), "\(sample.file): import wrote what convert did not")
        return (Reading(leaf: leaf?.derBytes, keySPKI: key?.publicKey.spkiDER, certificates: Set(certificates), allKeys: Set(keys)), result)
    }

    func testEveryFileHasItsExpectedOutcomeReadAlikeOrRefusedAndAWrongPasswordIsRefused() throws {
        let samples = try Self.manifest()
        XCTAssertGreaterThanOrEqual(samples.count, 100)
        XCTAssertGreaterThanOrEqual(samples.filter { $0.refusal != nil }.count, 25, "the refusals are part of the corpus")
        guard let python = Self.python else {
            return XCTFail("scripts/pyca-venv.sh could not make the pyca venv (pip install cryptography): the corpus needs pyca as a judge")
        }
        var table: [(file: String, openssl: Bool, pyca: Bool, mtls: Bool, expected: String)] = []
        var unprotectedFiles: [String] = []
        for sample in samples {
            let directory = try TemporaryDirectory(self)
            let theirs = try openssl(sample)
            let pycas = try pyca(sample, python: python)
            let (mine, result) = try ours(sample, in: directory)
            table.append((sample.file, theirs != nil, pycas != nil, mine != nil, sample.refusal == nil ? "read" : "refuse"))
            if let refusal = sample.refusal {
                // Refused by design, whatever a judge does: exit 3, the reason in words, the file named, nothing written.
                XCTAssertNil(mine, "\(sample.file) must be refused (\(refusal)), but mtls import read it")
                XCTAssertEqual(result.exitCode, 3, "\(sample.file): \(result.stderr)")
                XCTAssertContains(result.stderr, refusal, "\(sample.file): the refusal must say why")
                XCTAssertContains(result.stderr, sample.file, "\(sample.file): the refusal must name the file")
                XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("ours")), "\(sample.file): a refused file writes nothing")
            } else {
                XCTAssertNotNil(mine, "\(sample.file) must be read: \(result.stderr)")
                for (judge, reading) in [("openssl", theirs), ("pyca", pycas)] {
                    guard let reading, let mine else { continue }
                    if judge == "pyca" {
                        // pyca has no RSA-PSS key type and hands an id-RSASSA-PSS key back as rsaEncryption:
                        // the key itself (the SPKI's BIT STRING) must agree, its algorithm label may not.
                        if let spki = reading.keySPKI { XCTAssertNotNil(Self.keyBits(spki), "\(sample.file): pyca's key is no SubjectPublicKeyInfo") }
                        XCTAssertEqual(mine.keySPKI.flatMap(Self.keyBits), reading.keySPKI.flatMap(Self.keyBits), "\(sample.file): the key differs from pyca's")
                    } else {
                        XCTAssertEqual(mine.keySPKI, reading.keySPKI, "\(sample.file): the key differs from \(judge)'s")
                    }
                    if reading.keySPKI != nil, reading.leaf != nil {
                        XCTAssertEqual(mine.leaf, reading.leaf, "\(sample.file): the leaf differs from \(judge)'s")
                    }
                    XCTAssertEqual(mine.certificates, reading.certificates, "\(sample.file): the certificates differ from \(judge)'s")
                    if let keys = reading.allKeys { XCTAssertEqual(mine.allKeys, keys, "\(sample.file): the keys differ from \(judge)'s") }
                }
            }
            // A wrong password: exit 3, says so, writes nothing.
            let wrongOut = directory.file("wrong")
            let unprotected = (try? PKCS12Bundle(derBytes: try Fixtures.bytes("\(Self.corpus)/\(sample.file)"), password: nil))?.inspection.isUnprotected ?? false
            let wrong = mtls(
                ["import", Fixtures.path("\(Self.corpus)/\(sample.file)"), "--password", "env:P12_PASSWORD", "--out-dir", wrongOut] + (unprotected ? [] : ["--index", "1"]),
                environment: ["P12_PASSWORD": "not the password \u{1F511}"])
            if unprotected && sample.refusal == nil {
                // No MAC and nothing encrypted: every reader opens it with any password, and so do we, saying so.
                XCTAssertEqual(wrong.exitCode, 0, "\(sample.file) (unprotected) with any password: \(wrong.stderr)")
                XCTAssertContains(wrong.stderr, "has no password protection", sample.file)
                unprotectedFiles.append(sample.file)
            } else {
                // A refused file may fail before its password matters (its structure is damaged); it must still be refused without writing.
                XCTAssertEqual(wrong.exitCode, 3, "\(sample.file) with a wrong password: \(wrong.stderr)")
                if sample.refusal == nil {
                    XCTAssertContains(wrong.stderr.lowercased(), "password", "\(sample.file) with a wrong password")
                    XCTAssertFalse(wrong.stderr.contains("not the password"), "\(sample.file): the password must not be echoed")
                }
                XCTAssertFalse(FileManager.default.fileExists(atPath: wrongOut), "\(sample.file): a wrong password writes nothing")
            }
        }
        let width = table.map(\.file.count).max() ?? 10
        var lines = [
            "PKCS#12 corpus coverage (\(table.count) files from TestCerts/third-party/pkcs12):",
            "file".padding(toLength: width, withPad: " ", startingAt: 0) + "  openssl  pyca  mtls  expected",
        ]
        for row in table {
            func mark(_ read: Bool) -> String { read ? "yes" : "no " }
            lines.append(row.file.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(mark(row.openssl))      \(mark(row.pyca))   \(mark(row.mtls))   \(row.expected)")
        }
        let readable = table.filter { $0.expected == "read" }
        let union = readable.filter { $0.openssl || $0.pyca }.count
        lines.append(
            "read, of all files: openssl \(table.filter(\.openssl).count), pyca \(table.filter(\.pyca).count), mtls \(table.filter(\.mtls).count); "
                + "files to read: \(readable.count), read by openssl or pyca \(union), by mtls \(readable.filter(\.mtls).count)")
        lines.append(
            "refused by design: \(table.count - readable.count) (of which a judge reads \(table.filter { $0.expected == "refuse" && ($0.openssl || $0.pyca) }.map(\.file).joined(separator: ", ")))"
        )
        lines.append("no password protection at all (any password opens them, in every reader): \(unprotectedFiles.joined(separator: ", "))")
        print(lines.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(readable.filter { $0.mtls && ($0.openssl || $0.pyca) }.count, union, "coverage must be at least the union of openssl's and pyca's")
    }

    /// Wrong password, unsupported algorithm, damaged file, truncated file: four different sentences,
    /// and each the same in every command that reads a PKCS#12.
    func testTheFourFailuresAreToldApartAndWordedAlikeInEveryCommand() throws {
        let directory = try TemporaryDirectory(self)
        var a1 = try Fixtures.bytes("\(Self.corpus)/rfc9579/A1-pbmac1-sha256.p12")
        // The PBMAC1 messageAuthScheme (the last hmacWithSHA256 OID) made an OID no HMAC has.
        let oid: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x09]
        let at = try XCTUnwrap((0...(a1.count - oid.count)).last { Array(a1[$0..<$0 + oid.count]) == oid })
        a1[at + oid.count - 1] = 0x7F
        let unsupported = try directory.write("unsupported.p12", a1)
        let cases: [(file: String, password: String, phrase: String)] = [
            (Fixtures.path("p12/client-alice-modern.p12"), "not-mtls", "the password is wrong"),
            (unsupported, "1234", "is not an HMAC this OpenSSL can compute"),
            (Fixtures.path("bad/corrupt-mac.p12"), "mtls", "the file is damaged"),
            (Fixtures.path("bad/truncated.p12"), "mtls", "the PKCS#12 file is truncated"),
        ]
        for (file, password, phrase) in cases {
            var sentences: Set<String> = []
            for command in [["inspect", file], ["import", file], ["convert", file, "--to", "pem"], ["pin", file], ["verify", file]] {
                let result = mtls(command + ["--password", "env:P"], environment: ["P": password])
                XCTAssertExit(result, 3, "\(command.joined(separator: " ")): \(result.stderr)")
                let line = result.stderr.split(separator: "\n").first { $0.contains(phrase) }
                XCTAssertNotNil(line, "\(command.joined(separator: " ")): expected “\(phrase)” in \(result.stderr)")
                if let line { sentences.insert(String(line[(line.range(of: file)?.lowerBound ?? line.startIndex)...])) }
            }
            XCTAssertEqual(sentences.count, 1, "one sentence for \(phrase) in every command: \(sentences)")
        }
    }
}

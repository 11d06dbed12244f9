import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls inspect` and `mtls convert` on every private key of pyca/cryptography's test vectors
/// (`TestCerts/third-party/pyca-keys`; the keys themselves are judged against openssl by
/// `PycaKeyVectorsTests` in MTLSTrustTests): exit 0 and openssl's SPKI pin for what openssl reads,
/// 3 (bad input) with a message naming the file for what it refuses, and a wrong or missing
/// password said as such.
final class PycaKeyCommandTests: XCTestCase {
    private static let corpus = "third-party/pyca-keys"
    private static let passwordVariable = "PYCA_KEY_PASSWORD"

    private struct Entry {
        var file: String
        var password: String?
        /// openssl's SPKI pin, or nil when openssl refuses the key.
        var pin: String?
    }

    /// Keys openssl reads and mtls refuses as inconsistent (`PycaKeyVectorsTests.deliberateDifferences`).
    static let refusedAsInconsistent: Set<String> = ["DSA/custom/nilpotent.pem", "PKCS8/ec-invalid-private-scalar.pem"]

    private func entries() throws -> [Entry] {
        let manifest = String(decoding: try Fixtures.bytes("\(Self.corpus)/MANIFEST.tsv"), as: UTF8.self)
        let expected = String(decoding: try Fixtures.bytes("\(Self.corpus)/EXPECTED.tsv"), as: UTF8.self)
        var pins: [String: String] = [:]
        for line in expected.split(separator: "\n") where !line.hasPrefix("#") {
            let columns = line.split(separator: "\t", maxSplits: 2).map(String.init)
            if columns.count == 3, columns[1] == "pubkey" { pins[columns[0]] = "sha256/" + columns[2] }
        }
        return manifest.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let file = columns[0]
            return Entry(file: file, password: columns[4] == "-" ? nil : columns[4], pin: Self.refusedAsInconsistent.contains(file) ? nil : pins[file])
        }
    }

    /// Text that only an unfilled template or a leaked Swift/C value would put in a message.
    static let placeholders = ["\\(", "%@", "%s", "%d", "Optional(", "<null>", "(null)", "nil)", "{}", "()"]

    private func assertNoPlaceholder(_ text: String, _ file: String, line: UInt = #line) {
        for placeholder in Self.placeholders {
            XCTAssertFalse(text.contains(placeholder), "\(file): \(placeholder.debugDescription) in \(text)", line: line)
        }
    }

    private func run(_ arguments: [String], password: String?) -> CLIResult {
        guard let password else { return mtls(arguments) }
        return mtls(arguments + ["--password", "env:\(Self.passwordVariable)"], environment: [Self.passwordVariable: password])
    }

    func testInspectAndConvertReadEachKeyOrRefuseItWithExitCode3() throws {
        let directory = try TemporaryDirectory(self)
        var read = 0
        var refused = 0
        for (index, entry) in try entries().enumerated() {
            let path = Fixtures.path("\(Self.corpus)/\(entry.file)")
            let inspected = run(["inspect", "--json", path], password: entry.password)
            let out = directory.url.appendingPathComponent("\(index).der").path
            let converted = run(["convert", path, "--to", "der", "--out", out], password: entry.password)
            guard let pin = entry.pin else {
                XCTAssertEqual(inspected.exitCode, 3, "\(entry.file): \(inspected)")
                let message = (try inspected.json()["error"] as? [String: Any])?["message"] as? String ?? ""
                XCTAssertTrue(message.hasPrefix(path + ": "), "\(entry.file): the message names the file: \(message)")
                assertNoPlaceholder(message, entry.file)
                let human = run(["inspect", path], password: entry.password)
                XCTAssertEqual(human.exitCode, 3, "\(entry.file): \(human)")
                XCTAssertEqual(human.stdout, "", entry.file)
                XCTAssertTrue(human.stderr.contains(message), "\(entry.file): \(human.stderr)")
                XCTAssertEqual(converted.exitCode, 3, "\(entry.file): \(converted)")
                XCTAssertTrue(converted.stderr.contains(message), "\(entry.file): convert says what inspect says: \(converted.stderr)")
                XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(entry.file): convert wrote a file for a key it refused")
                refused += 1
                continue
            }
            XCTAssertEqual(inspected.exitCode, 0, "\(entry.file): \(inspected)")
            let items = (try inspected.json()["items"] as? [[String: Any]]) ?? []
            XCTAssertEqual(items.count, 1, entry.file)
            XCTAssertEqual(items.first?["type"] as? String, "private key", entry.file)
            XCTAssertEqual(items.first?["spkiSHA256"] as? String, pin, "\(entry.file): the SPKI pin openssl gives")
            assertNoPlaceholder(items.first?["key"] as? String ?? "", entry.file)
            XCTAssertEqual(converted.exitCode, 0, "\(entry.file): \(converted)")
            let mode = (try? FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int) ?? -1
            XCTAssertEqual(mode, 0o600, "\(entry.file): a key is written with mode 0600")
            // The unencrypted DER written is the same key.
            let again = mtls(["inspect", "--json", out])
            XCTAssertEqual(((try? again.json()["items"] as? [[String: Any]]) ?? [])?.first?["spkiSHA256"] as? String, pin, entry.file)
            read += 1
        }
        XCTAssertEqual(read, 98, "the keys openssl reads, but the two inconsistent ones")
        XCTAssertEqual(refused, 23, "the keys openssl refuses, and the two inconsistent ones")
    }

    /// Every encrypted key that can be read: a wrong password exits 3 saying so, with the hint to
    /// check it; no password makes convert ask for one, and inspect show that the key is encrypted.
    func testWrongAndMissingPasswordsAreSaidAsSuch() throws {
        var checked = 0
        for entry in try entries() where entry.password != nil && entry.pin != nil {
            let path = Fixtures.path("\(Self.corpus)/\(entry.file)")
            let wrong = run(["inspect", path], password: "not the password")
            XCTAssertEqual(wrong.exitCode, 3, "\(entry.file): \(wrong)")
            XCTAssertTrue(wrong.stderr.contains("\(path): the password does not decrypt the private key"), "\(entry.file): \(wrong.stderr)")
            XCTAssertTrue(wrong.stderr.contains("check the password"), "\(entry.file): \(wrong.stderr)")
            let missing = mtls(["convert", path, "--to", "pem"])
            XCTAssertEqual(missing.exitCode, 3, "\(entry.file): \(missing)")
            XCTAssertTrue(missing.stderr.contains("\(path): the private key is encrypted"), "\(entry.file): \(missing.stderr)")
            XCTAssertTrue(missing.stderr.contains("--password"), "\(entry.file): \(missing.stderr)")
            let shown = mtls(["inspect", "--json", path])
            XCTAssertEqual(shown.exitCode, 0, "\(entry.file): \(shown)")
            XCTAssertEqual(((try? shown.json()["items"] as? [[String: Any]]) ?? [])?.first?["encrypted"] as? Bool, true, entry.file)
            checked += 1
        }
        XCTAssertEqual(checked, 41, "the encrypted keys openssl reads")
    }
}

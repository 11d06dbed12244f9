import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls inspect` and `mtls pin` on every certificate of pyca/cryptography's test vectors
/// (`TestCerts/third-party/pyca-x509`; the fields themselves are judged against openssl by
/// `PycaX509VectorsTests` in MTLSTrustTests): exit 0 for what mtls reads, 3 (bad input) with a
/// message naming the file for what it refuses, and the pin fast path byte for byte what the full
/// parse prints.
final class PycaX509CommandTests: XCTestCase {
    private static let corpus = "third-party/pyca-x509"

    /// The files `mtls inspect` refuses, and why.
    static let refusedByInspect: [String: String] = [
        // openssl refuses these too
        "cryptography-scts-tbs-precert.der": "not a DER certificate",
        "custom/invalid_utf8_common_name.pem": "a UTF8String in it is not valid UTF-8",
        "custom/long-form-name-attribute.pem": "is not encoded as one of the string types X.509 allows",
        "custom/name_attribute_unsupported_tag.pem": "is not encoded as one of the string types X.509 allows",
        // a notAfter that is not a time (openssl reads it as "Bad time value")
        "badasn1time.pem": "is not a valid time",
        // inspect describes every PEM block; these hold a PRIVATE KEY block of garbage
        "cryptography.io.with_garbage.pem": "PKCS#8 private key is malformed (its contents are not one well-formed DER SEQUENCE)",
        "cryptography.io.chain_with_garbage.pem": "PKCS#8 private key is malformed (its contents are not one well-formed DER SEQUENCE)",
    ]

    private func files() throws -> [String] {
        let text = String(decoding: try Fixtures.bytes("\(Self.corpus)/MANIFEST.tsv"), as: UTF8.self)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: "\t")[0]) }
    }

    func testInspectReadsOrRefusesEachFileWithExitCode3() throws {
        var read = 0
        var refused = 0
        for file in try files() {
            let path = Fixtures.path("\(Self.corpus)/\(file)")
            let result = mtls(["inspect", "--json", path])
            if let words = Self.refusedByInspect[file] {
                XCTAssertEqual(result.exitCode, 3, "\(file): \(result)")
                // --json: the error is a JSON object on stdout.
                let error = try result.json()["error"] as? [String: Any]
                XCTAssertEqual(error?["code"] as? Int, 3, "\(file): \(result)")
                let message = error?["message"] as? String ?? ""
                XCTAssertTrue(message.hasPrefix(path + ": "), "\(file): the message names the file: \(message)")
                XCTAssertTrue(message.contains(words), "\(file): \(message)")
                // Without --json: the same sentence on stderr, nothing on stdout.
                let human = mtls(["inspect", path])
                XCTAssertEqual(human.exitCode, 3, "\(file): \(human)")
                XCTAssertEqual(human.stdout, "", file)
                XCTAssertTrue(human.stderr.contains(message), "\(file): \(human.stderr)")
                refused += 1
            } else {
                XCTAssertEqual(result.exitCode, 0, "\(file): \(result)")
                let items = (try result.json()["items"] as? [[String: Any]]) ?? []
                XCTAssertFalse(items.isEmpty, file)
                XCTAssertTrue(items.contains { $0["type"] as? String == "certificate" }, file)
                read += 1
            }
        }
        XCTAssertEqual(read, 126)
        XCTAssertEqual(refused, Self.refusedByInspect.count)
    }

    /// What inspect shows of the certificates the fixes were for: names of every kind, UTF-8 in
    /// IA5Strings, keys OpenSSL cannot decode, and the problems it reports instead of hiding them.
    func testInspectShowsWhatEachNameAndKeyIs() throws {
        func certificate(_ file: String) throws -> [String: Any] {
            let result = mtls(["inspect", "--json", Fixtures.path("\(Self.corpus)/\(file)")])
            XCTAssertEqual(result.exitCode, 0, "\(file): \(result)")
            let items = try result.json()["items"] as? [[String: Any]]
            return try XCTUnwrap(items?.first?["certificate"] as? [String: Any], file)
        }
        XCTAssertEqual(try certificate("custom/san_other_name.pem")["subjectAltNames"] as? [String], ["othername:1.2.3.4:Hello World"])
        XCTAssertEqual(try certificate("custom/san_registered_id.pem")["subjectAltNames"] as? [String], ["RID:1.2.3.4"])
        XCTAssertEqual(try certificate("san_x400address.der")["subjectAltNames"] as? [String], ["X400Name:<unsupported>"])
        XCTAssertEqual(try certificate("custom/san_dirname.pem")["subjectAltNames"] as? [String], ["DirName:ST=Texas,O=Org,CN=test"])
        let utf8 = try certificate("utf8-dnsname.pem")["subjectAltNames"] as? [String] ?? []
        XCTAssertTrue(utf8.contains("DNS:biztosítás.hu"), "\(utf8)")
        XCTAssertEqual(try certificate("e-trust.ru.der")["key"] as? String, "GOST R 34.10-2001")
        XCTAssertEqual(try certificate("custom/unsupported_subject_public_key_info.pem")["key"] as? String, "1.3.6.1.4.1.8432.1.1.2")
        let malformed = try certificate("custom/malformed-san.pem")
        XCTAssertEqual(malformed["subjectAltNames"] as? [String], [])
        XCTAssertEqual(malformed["problems"] as? [String], ["the subjectAltName extension could not be decoded, so what it says is not shown"])
        XCTAssertEqual(
            try certificate("custom/two_basic_constraints.pem")["problems"] as? [String],
            ["the basicConstraints extension appears 2 times (RFC 5280 allows one), so none of them is read"])
        XCTAssertEqual(
            try certificate("custom/mismatch_inner_outer_sig_algorithm.der")["problems"] as? [String],
            [
                "its signature algorithm (sha256WithRSAEncryption) is not the one its TBSCertificate names (ecdsa_with_SHA3-224), so the signature cannot verify (RFC 5280 §4.1.1.2)"
            ])
        XCTAssertNil(try certificate("custom/san_ipaddr.pem")["problems"], "a sound certificate has no problems key")
        let human = mtls(["inspect", Fixtures.path("\(Self.corpus)/custom/empty-eku.pem")])
        XCTAssertEqual(human.exitCode, 0, "\(human)")
        XCTAssertTrue(human.stdout.contains("Problem             the extendedKeyUsage extension lists no purpose"), human.stdout)
    }

    func testPinFastPathPrintsWhatTheFullParsePrints() throws {
        var same = 0
        for file in try files() {
            let path = Fixtures.path("\(Self.corpus)/\(file)")
            let fast = mtls(["pin", path])
            let full = mtls(["pin", path], environment: ["MTLS_PIN_FULL_PARSE": "1"])
            XCTAssertEqual(fast.exitCode, full.exitCode, file)
            XCTAssertEqual(fast.stdout, full.stdout, file)
            XCTAssertEqual(fast.stderr, full.stderr, file)
            XCTAssertTrue([0, 3].contains(fast.exitCode), "\(file): \(fast)")
            if fast.exitCode == 3 { XCTAssertTrue(fast.stderr.contains(path), "\(file): \(fast.stderr)") }
            same += 1
        }
        XCTAssertEqual(same, 133)
    }
}

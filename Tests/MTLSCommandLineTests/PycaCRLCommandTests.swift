import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls inspect` on every CRL of pyca/cryptography's X.509 vectors (`TestCerts/third-party/pyca-crl`;
/// the fields are judged against openssl by `PycaCRLVectorsTests` in MTLSTrustTests): exit 0 with
/// as many revoked serial numbers as openssl lists, or 3 with a message naming the file.
final class PycaCRLCommandTests: XCTestCase {
    private static let corpus = "third-party/pyca-crl"
    /// The CRLs inspect refuses, and the words of its message (a deliberate difference in PycaCRLVectorsTests).
    static let refused = ["custom/crl_invalid_time.der": "its thisUpdate is not a valid time"]

    func testInspectReadsEachCRLOrRefusesItWithExitCode3() throws {
        let expected = String(decoding: try Fixtures.bytes("\(Self.corpus)/EXPECTED.tsv"), as: UTF8.self)
        var counts: [String: Int] = [:]
        for line in expected.split(separator: "\n") where !line.hasPrefix("#") {
            let columns = line.split(separator: "\t", maxSplits: 2).map(String.init)
            if columns.count == 3, columns[1] == "revoked" { counts[columns[0]] = Int(columns[2]) }
        }
        let manifest = String(decoding: try Fixtures.bytes("\(Self.corpus)/MANIFEST.tsv"), as: UTF8.self)
        var read = 0
        for line in manifest.split(separator: "\n") where !line.hasPrefix("#") {
            let file = String(line.split(separator: "\t")[0])
            let path = Fixtures.path("\(Self.corpus)/\(file)")
            let result = mtls(["inspect", "--json", path])
            if let words = Self.refused[file] {
                XCTAssertEqual(result.exitCode, 3, "\(file): \(result)")
                let message = (try result.json()["error"] as? [String: Any])?["message"] as? String ?? ""
                XCTAssertTrue(message.hasPrefix(path + ": ") && message.contains(words), "\(file): \(message)")
                continue
            }
            XCTAssertEqual(result.exitCode, 0, "\(file): \(result)")
            let item = ((try result.json()["items"] as? [[String: Any]]) ?? []).first ?? [:]
            XCTAssertEqual(item["type"] as? String, "crl", file)
            XCTAssertEqual((item["revokedSerialNumbers"] as? [String])?.count, counts[file], "\(file): the revoked entries openssl lists")
            read += 1
        }
        XCTAssertEqual(read, 25)
    }
}

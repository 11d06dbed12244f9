import Foundation
import XCTest

@testable import MTLSTrust

/// CRL reading judged on files no one here wrote: every CRL of pyca/cryptography's X.509 vectors
/// (`TestCerts/third-party/pyca-crl`, see its README), against what the openssl CLI reads in them
/// (`EXPECTED.tsv`, recorded by `scripts/gen-pyca-crl-expected.sh`; no openssl runs here): the
/// issuer, thisUpdate (`lastUpdate`), nextUpdate and the revoked entries' serial numbers, which is
/// all `CertificateRevocationList` exposes (revocation reasons, entry extensions and the CRL's own
/// extensions are left to OpenSSL's verifier, which `verify --crl` hands the CRL to). Each file
/// ends in exactly one of three outcomes, and the counts are asserted: agreed, a deliberate
/// difference (named below, with its reason), or refused by both.
final class PycaCRLVectorsTests: XCTestCase {
    private typealias T = TestCertificates
    private static let corpus = "third-party/pyca-crl"

    /// Where mtls reads a CRL differently from openssl on purpose: the fields that differ and why.
    static let deliberateDifferences: [String: (fields: Set<String>, reason: String)] = [
        "custom/crl_invalid_time.der": (
            ["refused"],
            "its thisUpdate is not a valid time; openssl reads the CRL and prints \"Bad time value\", mtls refuses it (whether "
                + "it is current cannot be judged; the library took the time as 1970), as it refuses such a certificate (PycaX509VectorsTests)"
        )
    ]
    static let expectedAgreed = 25
    static let expectedRefusedByBoth = 0

    func testEveryCRLReadsAsOpenSSLReadsIt() throws {
        let files = try CorpusTally.manifest(Self.corpus).map { (file: $0[0], sha256: $0[3]) }
        let expected = try CorpusTally.fieldsByFile(Self.corpus)
        XCTAssertEqual(files.count, 26, "the corpus is the 26 CRL files of MANIFEST.tsv")
        XCTAssertEqual(Set(expected.keys), Set(files.map(\.file)), "EXPECTED.tsv covers exactly the files of MANIFEST.tsv")
        var tally = CorpusTally(deliberate: Self.deliberateDifferences)
        for (file, sha256) in files {
            let bytes = try T.bytes("\(Self.corpus)/\(file)")
            XCTAssertEqual(Digest.sha256(bytes).hex, sha256, "\(file): not the bytes MANIFEST.tsv records")
            let theirs = expected[file] ?? [:]
            let crls: [CertificateRevocationList]
            do {
                crls = try CertificateLoader.crls(atPath: T.url("\(Self.corpus)/\(file)").path)
            } catch {
                XCTAssertEqual(error.source, T.url("\(Self.corpus)/\(file)").path, "\(file): the error names the file")
                XCTAssertTrue(error.message.hasPrefix(T.url("\(Self.corpus)/\(file)").path + ": "), "\(file): \(error.message)")
                XCTAssertEqual(error.reason, .malformedInput, "\(file): \(error.message)")
                if theirs["refused"] != nil {
                    tally.refusedByBoth.append(file)
                } else {
                    tally.differing[file] = ["refused"]
                    if Self.deliberateDifferences[file] == nil { XCTFail("\(file): openssl reads it, mtls refuses it: \(error.message)") }
                }
                continue
            }
            if theirs["refused"] != nil {
                tally.differing[file] = ["accepted"]
                XCTFail("\(file): openssl refuses it (\(theirs["refused"] ?? "")), mtls reads it")
                continue
            }
            XCTAssertEqual(crls.count, 1, "\(file): one CRL")
            guard let crl = crls.first else { continue }
            tally.record(file, fields: tally.differences(in: Self.compare(crl, theirs), of: file))
        }
        tally.assertCounts(agreed: Self.expectedAgreed, refusedByBoth: Self.expectedRefusedByBoth, of: files.count)
    }

    // MARK: Mapping mtls's reading to openssl's text

    static func compare(_ crl: CertificateRevocationList, _ expected: [String: String]) -> [(String, String, String)] {
        // openssl prints serials as whole bytes (`00`, `0A`); mtls as OpenSSL's BN_bn2hex (`0`).
        let serials = crl.revokedSerialNumbers.map(Self.significant)
        let theirs = (expected["serials"] ?? "?").split(separator: ",").map { Self.significant(String($0)) }
        let ourList: String
        if serials.count > 50 {
            ourList = "sha256:" + Digest.sha256(Array(crl.revokedSerialNumbers.joined(separator: "\n").utf8)).hex
        } else {
            ourList = serials.isEmpty ? "-" : serials.joined(separator: ",")
        }
        let recorded = expected["serials"] ?? "?"
        let theirList = recorded.hasPrefix("sha256:") || recorded == "-" ? recorded : theirs.joined(separator: ",")
        return [
            ("issuer", crl.issuer, expected["issuer"] ?? "?"),
            ("lastUpdate", PycaX509VectorsTests.opensslTime(crl.lastUpdate), expected["lastUpdate"] ?? "?"),
            ("nextUpdate", crl.nextUpdate.map(PycaX509VectorsTests.opensslTime) ?? "-", expected["nextUpdate"] ?? "?"),
            ("revoked", String(crl.revokedSerialNumbers.count), expected["revoked"] ?? "?"),
            ("serials", ourList, theirList),
        ]
    }

    /// A hex serial without leading zeros ("0" for zero), its sign kept.
    static func significant(_ hex: String) -> String {
        let negative = hex.hasPrefix("-")
        let digits = hex.drop { $0 == "-" }.drop { $0 == "0" }
        return (negative ? "-" : "") + (digits.isEmpty ? "0" : String(digits))
    }
}

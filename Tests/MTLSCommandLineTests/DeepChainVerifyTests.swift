import Foundation
import XCTest

@testable import MTLSCommandLine

/// `mtls verify` on the 100-intermediate chain of `TestCerts/deep/` (scripts/make-deep-chain.sh),
/// with `openssl verify` as the judge: accepted by default, refused with `--max-depth` below 100
/// and for 101 intermediates, the depth finding first and naming the limit. The library side is
/// `Tests/MTLSTrustTests/DeepChainTests.swift`.
final class DeepChainVerifyTests: XCTestCase {
    private let root = Fixtures.path("deep/root.pem")
    private let intermediates = Fixtures.path("deep/intermediates.pem")
    private let leaf = Fixtures.path("deep/leaf.pem")

    /// The findings of a `--json` run as (depth, error name, reason).
    private func findings(_ result: CLIResult) throws -> [(depth: Int, error: String, reason: String)] {
        let list = try result.json()["findings"] as? [[String: Any]] ?? []
        return list.map { (($0["depth"] as? NSNumber)?.intValue ?? -1, $0["error"] as? String ?? "", $0["reason"] as? String ?? "") }
    }

    func testOneHundredIntermediatesAreTrustedByDefaultLikeOpenSSL() throws {
        let judge = try OpenSSL.verify(["-CAfile", root, "-untrusted", intermediates, "-verify_hostname", "deep.example.com", leaf])
        XCTAssertTrue(judge.ok, judge.description)

        let given = verify([leaf, "--intermediates", intermediates, "--anchors", root, "--host", "deep.example.com", "--json"])
        XCTAssertExit(given, 0)
        XCTAssertEqual((try given.json()["chain"] as? [Any])?.count, 102, "leaf, 100 intermediates, root")

        // The chain as a server sends it, in one file.
        let sent = verify([Fixtures.path("deep/chain.pem"), "--anchors", root, "--host", "deep.example.com"])
        XCTAssertExit(sent, 0)
        XCTAssertContains(sent.stdout, "CN=mtls Deep Intermediate 001")
    }

    func testMaxDepthBelowTheChainRefusesItWithTheDepthFindingFirst() throws {
        for limit in ["5", "99"] {
            let judge = try OpenSSL.verify(["-verify_depth", limit, "-CAfile", root, "-untrusted", intermediates, leaf])
            XCTAssertFalse(judge.ok)
            XCTAssertEqual(judge.code, 22, judge.description)

            let result = verify([leaf, "--intermediates", intermediates, "--anchors", root, "--host", "deep.example.com", "--max-depth", limit, "--json"])
            XCTAssertExit(result, 1, "--max-depth \(limit)")
            let first = try findings(result).first
            XCTAssertEqual(first?.error, "X509_V_ERR_CERT_CHAIN_TOO_LONG", "\(result)")
            XCTAssertEqual(first?.depth, judge.depth, "at the depth openssl reports: \(result)")
            XCTAssertContains(first?.reason ?? "", "maximum depth (\(limit))")
        }
        let human = verify([leaf, "--intermediates", intermediates, "--anchors", root, "--host", "deep.example.com", "--max-depth", "5"])
        XCTAssertExit(human, 1)
        XCTAssertContains(human.stdout, "the chain is longer than the maximum depth (5)")
        XCTAssertContains(human.stdout, "raise --max-depth")
        // Exactly at the chain's depth, trusted.
        XCTAssertExit(verify([leaf, "--intermediates", intermediates, "--anchors", root, "--host", "deep.example.com", "--max-depth", "100"]), 0)
    }

    func testOneHundredAndOneIntermediatesAreRefusedByDefaultLikeOpenSSL() throws {
        let extra = Fixtures.path("deep/intermediate-101.pem")
        let deeper = Fixtures.path("deep/leaf-101.pem")
        let judge = try OpenSSL.verify(["-CAfile", root, "-untrusted", intermediates, "-untrusted", extra, deeper])
        XCTAssertFalse(judge.ok)
        XCTAssertEqual(judge.code, 22, judge.description)

        let result = verify([deeper, "--intermediates", intermediates, "--intermediates", extra, "--anchors", root, "--host", "deeper.example.com", "--json"])
        XCTAssertExit(result, 1)
        let first = try findings(result).first
        XCTAssertEqual(first?.error, "X509_V_ERR_CERT_CHAIN_TOO_LONG", "\(result)")
        XCTAssertEqual(first?.depth, judge.depth, "\(result)")
        XCTAssertContains(first?.reason ?? "", "100, OpenSSL's default")

        XCTAssertExit(verify([deeper, "--intermediates", intermediates, "--intermediates", extra, "--anchors", root, "--host", "deeper.example.com", "--max-depth", "101"]), 0)
    }
}

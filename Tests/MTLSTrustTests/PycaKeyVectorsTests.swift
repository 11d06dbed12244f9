import Foundation
import XCTest

@testable import MTLSTrust

/// Private-key reading judged on files no one here wrote: every private key of pyca/cryptography's
/// test vectors (`TestCerts/third-party/pyca-keys`, see its README), each read with the password
/// pyca's own tests give it, against what the openssl CLI reads in it (`EXPECTED.tsv`, recorded by
/// `scripts/gen-pyca-keys-expected.sh`; no openssl runs here). Each file ends in exactly one of
/// three outcomes, and the counts are asserted: agreed (accepted by both with the same algorithm,
/// size, curve and public key, or refused by both), a deliberate difference (named below, with the
/// fields that differ and why), or refused by both. A disagreement not named below fails, and so
/// does a named one that no longer occurs.
final class PycaKeyVectorsTests: XCTestCase {
    private typealias T = TestCertificates
    private static let corpus = "third-party/pyca-keys"

    /// Where mtls reads a key differently from openssl on purpose: the fields that differ
    /// (`refused`: mtls refuses what openssl reads) and why.
    static let deliberateDifferences: [String: (fields: Set<String>, reason: String)] = [
        "EC/explicit_parameters_wap_wsg_idm_ecid_wtls11_private_key.pem": (["curve"], explicitNamed),
        "EC/secp256k1-explicit-no-seed.pem": (["curve"], explicitNamed),
        "EC/secp256r1-explicit-no-seed.pem": (["curve"], explicitNamed),
        "EC/secp256r1-explicit-seed.pem": (["curve"], explicitNamed),
        "EC/secp384r1-explicit-no-seed.pem": (["curve"], explicitNamed),
        "EC/secp384r1-explicit-seed.pem": (["curve"], explicitNamed),
        "EC/secp521r1-explicit-no-seed.pem": (["curve"], explicitNamed),
        "EC/secp521r1-explicit-seed.pem": (["curve"], explicitNamed),
        "PKCS8/private.pem": (["curve"], explicitNamed),
        "DSA/custom/nilpotent.pem": (["refused"], inconsistent),
        "PKCS8/ec-invalid-private-scalar.pem": (["refused"], inconsistent),
    ]
    static let inconsistent =
        "the public key stored in the file is not the one its private value gives (DSA y = 1; an EC scalar longer than the order): "
        + "openssl reads it, mtls refuses it as corrupt (OpenSSL's pairwise check), as pyca does; read, it would sign with one half "
        + "while its certificate carries the other, and convert would write another key (nilpotent.pem) or fail (the scalar)"
    static let explicitNamed =
        "an EC key with explicit curve parameters that equal a named curve: openssl prints the parameters, mtls names the curve "
        + "(OpenSSL's own group matching), as it does for certificates (PycaX509VectorsTests); parameters that match no curve "
        + "read as \"explicit parameters\" in both"
    static let expectedAgreed = 89

    /// What mtls says of each file both refuse: the reason, and words the message must hold. None
    /// of them is a wrong password: a password cannot fix a damaged header or an unknown algorithm.
    static let refusals: [String: (reason: MTLSTrustError.Reason, words: String)] = [
        "DH/dh_key_256.pem": (.malformedInput, "PKCS#8 private key (dhKeyAgreement) is malformed"),
        "EC/ec-missing-curve.pem": (.malformedInput, "SEC1 EC private key is malformed"),
        "EC/explicit_parameters_private_key.pem": (.malformedInput, "SEC1 EC private key is malformed"),
        "MLDSA/mldsa44_priv.der": (.unsupportedAlgorithm, "algorithm, ML-DSA-44 (2.16.840.1.101.3.4.3.17), is not one OpenSSL"),
        "MLDSA/mldsa65_noseed_priv.der": (.unsupportedAlgorithm, "algorithm, ML-DSA-65 (2.16.840.1.101.3.4.3.18), is not one OpenSSL"),
        "MLKEM/mlkem768.der": (.unsupportedAlgorithm, "algorithm, ML-KEM-768 (2.16.840.1.101.3.4.4.2), is not one OpenSSL"),
        "MLKEM/mlkem768.pem": (.unsupportedAlgorithm, "algorithm, ML-KEM-768 (2.16.840.1.101.3.4.4.2), is not one OpenSSL"),
        "PKCS8/bad-encryption-oid.pem": (.unsupportedAlgorithm, "encrypted with an algorithm this OpenSSL cannot use (0.24.97.792.97.792.97.792)"),
        "PKCS8/bad-oid-dsa-key.pem": (.unsupportedAlgorithm, "algorithm, 0.37.11229.117.11229.113, is not one OpenSSL"),
        "PKCS8/ec-inconsistent-curve.pem": (.malformedInput, "PKCS#8 private key (id-ecPublicKey) is malformed"),
        "PKCS8/enc-rsa-pkcs8-pbkdf2-0iter.pem": (.malformedInput, "encryption parameters are invalid (invalid iteration count)"),
        "PKCS8/enc-unknown-algorithm.pem": (.unsupportedAlgorithm, "encrypted with an algorithm this OpenSSL cannot use (1.2.840.113549.3.7.23.321.3)"),
        "PKCS8/enc-unknown-kdf.pem": (.unsupportedAlgorithm, "encrypted with an algorithm this OpenSSL cannot use"),
        "PKCS8/enc-unknown-pbkdf2-prf.pem": (.unsupportedAlgorithm, "encrypted with an algorithm this OpenSSL cannot use"),
        "PKCS8/rsa-rc2-cbc-effective-key-length.pem": (.malformedInput, "encryption parameters are invalid (cipher parameter error)"),
        "PKCS8/unknown-oid.der": (.unsupportedAlgorithm, "algorithm, 1.2.840.1004321.3213.321, is not one OpenSSL"),
        "PKCS8/withdompar_private.pkcs8.pem": (.malformedInput, "PKCS#8 private key (id-ecPublicKey) is malformed"),
        "Traditional_OpenSSL_Serialization/key1-malformed-dek-info.pem": (.malformedInput, "encryption header (Proc-Type / DEK-Info)"),
        "Traditional_OpenSSL_Serialization/key1-malformed-iv.pem": (.malformedInput, "encryption header (Proc-Type / DEK-Info)"),
        "Traditional_OpenSSL_Serialization/key1-no-dek-info.pem": (.malformedInput, "encryption header (Proc-Type / DEK-Info)"),
        "Traditional_OpenSSL_Serialization/key1-short-iv.pem": (.malformedInput, "encryption header (Proc-Type / DEK-Info)"),
    ]
    static var expectedRefusedByBoth: Int { refusals.count }

    // MARK: The data

    struct Entry {
        var file: String
        var sha256: String
        var password: String?
    }

    private func manifest() throws -> [Entry] {
        try CorpusTally.manifest(Self.corpus).map { Entry(file: $0[0], sha256: $0[3], password: $0[4] == "-" ? nil : $0[4]) }
    }

    private func expectations() throws -> [String: [String: String]] { try CorpusTally.fieldsByFile(Self.corpus) }

    private func read(_ entry: Entry, password: String?? = .none) -> Result<PrivateKey, MTLSTrustError> {
        let bytes: [UInt8]
        do { bytes = try T.bytes("\(Self.corpus)/\(entry.file)") } catch { return .failure(MTLSTrustError(.unreadableFile, "\(error)")) }
        let given = password ?? entry.password
        do throws(MTLSTrustError) {
            return .success(try PrivateKey(bytes: bytes, password: given.map { Secret($0) }))
        } catch {
            return .failure(error)
        }
    }

    // MARK: The tests

    func testEveryKeyReadsAsOpenSSLReadsIt() throws {
        let entries = try manifest()
        let expected = try expectations()
        XCTAssertEqual(entries.count, 121, "the corpus is the 121 private-key files of MANIFEST.tsv")
        XCTAssertEqual(Set(expected.keys), Set(entries.map(\.file)), "EXPECTED.tsv covers exactly the files of MANIFEST.tsv")
        var tally = CorpusTally(deliberate: Self.deliberateDifferences)
        for entry in entries {
            let file = entry.file
            let bytes = try T.bytes("\(Self.corpus)/\(file)")
            XCTAssertEqual(Digest.sha256(bytes).hex, entry.sha256, "\(file): not the bytes MANIFEST.tsv records")
            let theirs = expected[file] ?? [:]
            let opensslRefuses = theirs["refused"] != nil
            switch read(entry) {
            case .failure(let error):
                XCTAssertFalse(error.message.isEmpty, file)
                XCTAssertNotEqual(error.reason, .internalFailure, "\(file): \(error.message)")
                XCTAssertNotEqual(error.reason, .passwordRequired, "\(file): the password was given: \(error.message)")
                if let said = Self.refusals[file] {
                    XCTAssertEqual(error.reason, said.reason, "\(file): \(error.message)")
                    XCTAssertTrue(error.message.contains(said.words), "\(file): \(error.message)")
                    // Each says what to do next: export again, re-encrypt, or another key or OpenSSL.
                    XCTAssertTrue(
                        ["export the key again", "encrypt it again", "use an RSA"].contains { error.message.contains($0) }, "\(file): \(error.message)")
                }
                if opensslRefuses {
                    tally.refusedByBoth.append(file)
                } else {
                    tally.differing[file] = ["refused"]
                    if Self.deliberateDifferences[file] == nil {
                        XCTFail("\(file): openssl reads it as \(theirs["keyalg"] ?? "?"), mtls refuses it: \(error.reason) \(error.message)")
                    }
                }
            case .success(let key):
                if opensslRefuses {
                    tally.differing[file] = ["accepted"]
                    if Self.deliberateDifferences[file] == nil {
                        XCTFail("\(file): openssl refuses it (\(theirs["refused"] ?? "")), mtls reads \(key.algorithm)")
                    }
                    continue
                }
                tally.record(file, fields: tally.differences(in: Self.compare(key, theirs), of: file))
            }
        }
        tally.assertCounts(agreed: Self.expectedAgreed, refusedByBoth: Self.expectedRefusedByBoth, of: entries.count)
        XCTAssertEqual(Set(tally.refusedByBoth), Set(Self.refusals.keys), "the files both refuse are the ones whose messages are named")
    }

    /// Every encrypted key openssl reads: a wrong password is reported as a wrong password (not as
    /// a damaged or unreadable file), and no password as one being required.
    func testWrongAndMissingPasswordsAreReportedAsSuch() throws {
        let expected = try expectations()
        var checked = 0
        for entry in try manifest() where entry.password != nil && expected[entry.file]?["refused"] == nil {
            switch read(entry, password: .some("not the password")) {
            case .success: XCTFail("\(entry.file): read with a wrong password")
            case .failure(let error):
                XCTAssertEqual(error.reason, .wrongPassword, "\(entry.file): \(error.message)")
                XCTAssertTrue(error.message.contains("password"), "\(entry.file): \(error.message)")
            }
            switch read(entry, password: .some(nil)) {
            case .success: XCTFail("\(entry.file): read without its password")
            case .failure(let error):
                XCTAssertEqual(error.reason, .passwordRequired, "\(entry.file): \(error.message)")
                XCTAssertTrue(error.message.contains("password"), "\(entry.file): \(error.message)")
            }
            checked += 1
        }
        XCTAssertEqual(checked, 41, "the encrypted keys openssl reads")
    }

    // MARK: Mapping mtls's reading to openssl's

    /// The SubjectPublicKeyInfo algorithm openssl names, for each key type mtls reports.
    static let algorithmNames = [
        "RSA": "rsaEncryption", "RSA-PSS": "rsassaPss", "EC": "id-ecPublicKey", "DSA": "dsaEncryption", "Ed25519": "ED25519",
        "Ed448": "ED448", "X25519": "X25519", "X448": "X448", "DH": "dhKeyAgreement", "DHX": "X9.42 DH",
    ]

    /// (field, mtls in openssl's form, openssl) for every field recorded.
    static func compare(_ key: PrivateKey, _ expected: [String: String]) -> [(String, String, String)] {
        let algorithm = key.algorithm
        var result: [(String, String, String)] = [
            ("keyalg", algorithmNames[algorithm.typeName] ?? algorithm.typeName, expected["keyalg"] ?? "?"),
            ("pubkey", Data(key.publicKey.spkiSHA256).base64EncodedString(), expected["pubkey"] ?? "?"),
        ]
        // openssl -text shows no size for Ed25519, Ed448, X25519 and X448.
        if let bits = expected["bits"], bits != "-" { result.append(("bits", String(algorithm.bits), bits)) }
        if case .ec(let curve, _) = algorithm {
            result.append(("curve", curve == KeyAlgorithm.explicitCurve ? "explicit" : curve, expected["curve"] ?? "?"))
        } else {
            result.append(("curve", "-", expected["curve"] ?? "?"))
        }
        return result
    }
}

import Foundation
import XCTest

@testable import MTLSTrust

/// Reading PKCS#12: every file in `TestCerts/p12`, with its structure compared against
/// `openssl pkcs12 -info`, and every password and damage case with its reason.
final class PKCS12ImportTests: XCTestCase {
    typealias T = TestCertificates
    typealias P = TestCertificates.P12

    private func bundle(_ path: String, password: String? = P.password) throws -> PKCS12Bundle {
        try PKCS12Bundle(derBytes: T.bytes(path), password: password.map(Secret.init))
    }

    // MARK: Identities

    func testModernFileGivesAlicesKeyLeafAndChain() throws {
        let bundle = try bundle(P.modern)
        let leaf = try XCTUnwrap(bundle.leaf)
        XCTAssertEqual(leaf.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(bundle.chain.map(\.certificate), [try T.certificate(T.intermediateCA), try T.certificate(T.rootCA)])
        let key = try XCTUnwrap(bundle.privateKey)
        XCTAssertTrue(key.matches(leaf.certificate))
        XCTAssertEqual(key.publicKey, try T.privateKey(T.clientAlice).publicKey)
        XCTAssertEqual(key.sourceFormat, .pkcs12)
        XCTAssertEqual(bundle.allCertificates.count, 3)
        XCTAssertEqual(bundle.allCertificates.first, leaf.certificate)
        XCTAssertFalse(bundle.neededLegacyProvider)
        XCTAssertFalse(bundle.inspection.usesLegacyAlgorithms)
    }

    func testFriendlyNameAndLocalKeyIDTieTheLeafToItsKey() throws {
        let bundle = try bundle(P.modern)
        let leaf = try XCTUnwrap(bundle.leaf)
        XCTAssertEqual(leaf.friendlyName, "alice")
        XCTAssertEqual(bundle.keyFriendlyName, "alice")
        let localKeyID = try XCTUnwrap(leaf.localKeyID)
        XCTAssertFalse(localKeyID.isEmpty)
        let keyBag = try XCTUnwrap(bundle.inspection.safes.flatMap(\.bags).first { $0.kind == .shroudedKey })
        XCTAssertEqual(keyBag.localKeyID, localKeyID)
        XCTAssertEqual(keyBag.friendlyName, "alice")
        // OpenSSL sets localKeyID to the SHA-1 of the leaf certificate.
        XCTAssertEqual(localKeyID, leaf.certificate.sha1Fingerprint.hex)
        XCTAssertTrue(bundle.chain.allSatisfy { $0.friendlyName == nil && $0.localKeyID == nil })
    }

    func testANonASCIIFriendlyNameWrittenByOpenSSLIsReadIntact() throws {
        let directory = try T.temporaryDirectory(for: self)
        let out = directory.appendingPathComponent("named.p12").path
        let name = "Zoë’s laptop ✓"
        try OpenSSLCLI.run([
            "pkcs12", "-export", "-in", T.url(T.clientAlice.pem).path, "-inkey", T.url(T.clientAlice.key).path,
            "-name", name, "-passout", "pass:pw", "-out", out,
        ])
        let bundle = try PKCS12Bundle(derBytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: out))), password: "pw")
        XCTAssertEqual(bundle.leaf?.friendlyName, name)
        XCTAssertEqual(bundle.keyFriendlyName, name)
    }

    func testEveryIdentityFileGivesTheDocumentedLeafChainAndName() throws {
        let cases: [(path: String, password: String?, leaf: T.Identity, chain: Int, name: String)] = [
            (P.modern, P.password, T.clientAlice, 2, "alice"),
            (P.legacyRC2, P.password, T.clientAlice, 2, "alice"),
            (P.tripleDES, P.password, T.clientAlice, 2, "alice"),
            (P.noChain, P.password, T.clientAlice, 0, "alice"),
            (P.emptyPassword, "", T.clientAlice, 2, "alice"),
            (P.emptyPassword, nil, T.clientAlice, 2, "alice"),
            (P.noPassword, nil, T.clientAlice, 2, "alice"),
            (P.noPassword, "", T.clientAlice, 2, "alice"),
            (P.server, P.password, T.server, 2, "server"),
            (P.clientBobRSA, P.password, T.clientBobRSA, 0, "bob"),
        ]
        for item in cases {
            let label = "\(item.path) with \(item.password.map { "'\($0)'" } ?? "no password")"
            let bundle = try bundle(item.path, password: item.password)
            XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(item.leaf), label)
            XCTAssertEqual(bundle.chain.count, item.chain, label)
            XCTAssertEqual(bundle.leaf?.friendlyName, item.name, label)
            XCTAssertEqual(bundle.keyFriendlyName, item.name, label)
            XCTAssertNotNil(bundle.leaf?.localKeyID, label)
            let key = try XCTUnwrap(bundle.privateKey, label)
            XCTAssertTrue(key.matches(try T.certificate(item.leaf)), label)
            XCTAssertEqual(key.algorithm, try T.certificate(item.leaf).publicKey.algorithm, label)
        }
        XCTAssertEqual(try bundle(P.clientBobRSA).privateKey?.algorithm, .rsa(bits: 2048))
        XCTAssertEqual(try bundle(P.server).leaf?.certificate.commonName, "localhost")
    }

    func testCertificatesOnlyFileHasNoKeyAndNoLeaf() throws {
        let bundle = try bundle(P.certsOnly)
        XCTAssertNil(bundle.privateKey)
        XCTAssertNil(bundle.leaf)
        XCTAssertNil(bundle.keyFriendlyName)
        XCTAssertEqual(bundle.chain.map(\.certificate), [try T.certificate(T.intermediateCA), try T.certificate(T.rootCA)])
        XCTAssertEqual(bundle.allCertificates.count, 2)
        XCTAssertTrue(bundle.chain.allSatisfy { $0.friendlyName == nil })
    }

    func testTheLeafIsChosenByKeyMatchNotByPosition() throws {
        // An unprotected file (no MAC, no encryption) whose certificate bags we can reorder in place:
        // permuting elements of one SEQUENCE changes no length.
        let directory = try T.temporaryDirectory(for: self)
        let out = directory.appendingPathComponent("plain.p12").path
        try OpenSSLCLI.run([
            "pkcs12", "-export", "-in", T.url(T.clientAlice.pem).path, "-inkey", T.url(T.clientAlice.key).path,
            "-certfile", T.url(T.intermediateCA.pem).path, "-keypbe", "NONE", "-certpbe", "NONE", "-nomac", "-passout", "pass:", "-out", out,
        ])
        var der = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: out)))

        // PFX → authSafe ContentInfo → [0] → OCTET STRING → AuthenticatedSafe → first ContentInfo → [0] → OCTET STRING → SafeContents
        func child(_ element: DER.Element, skip: Int = 0) throws -> DER.Element {
            var item = try XCTUnwrap(DER.element(in: der, at: element.contentStart, limit: element.contentEnd))
            for _ in 0..<skip { item = try XCTUnwrap(DER.element(in: der, at: item.end, limit: element.contentEnd)) }
            return item
        }
        let pfx = try XCTUnwrap(DER.element(in: der, at: 0))
        let authSafeInfo = try child(pfx, skip: 1)
        let authSafe = try child(try child(try child(authSafeInfo, skip: 1)))
        let certificateSafeInfo = try child(authSafe)
        let safeContents = try child(try child(try child(certificateSafeInfo, skip: 1)))
        var bags: [[UInt8]] = []
        var cursor = safeContents.contentStart
        while cursor < safeContents.contentEnd {
            let bag = try XCTUnwrap(DER.element(in: der, at: cursor, limit: safeContents.contentEnd))
            bags.append(Array(der[bag.headerStart..<bag.end]))
            cursor = bag.end
        }
        XCTAssertEqual(bags.count, 2, "leaf and intermediate certificate bags")
        let reordered = bags.dropFirst().flatMap { $0 } + bags[0]
        der.replaceSubrange(safeContents.contentStart..<safeContents.contentEnd, with: reordered)

        let openSSLOrder = try OpenSSLCLI.run(["pkcs12", "-in", out, "-passin", "pass:", "-nokeys"])
        XCTAssertTrue(String(decoding: openSSLOrder, as: UTF8.self).contains("client-alice"))
        try Data(der).write(to: URL(fileURLWithPath: out))
        let subjects = try OpenSSLCLI.text(["pkcs12", "-in", out, "-passin", "pass:", "-nokeys"]).split(separator: "\n").filter { $0.hasPrefix("subject=") }
        XCTAssertTrue(subjects.first?.contains("Intermediate") ?? false, "the intermediate now comes first: \(subjects)")

        let bundle = try PKCS12Bundle(derBytes: der, password: nil)
        XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(bundle.chain.map(\.certificate), [try T.certificate(T.intermediateCA)])
        XCTAssertEqual(bundle.inspection.safes.first?.bags.first?.subject, try T.certificate(T.intermediateCA).subject)
    }

    func testALeafRepeatedInTheChainIsNotReturnedTwice() throws {
        // `-certfile client-alice-chain.pem` repeats the leaf: OpenSSL writes it twice.
        let directory = try T.temporaryDirectory(for: self)
        let out = directory.appendingPathComponent("repeated.p12").path
        try OpenSSLCLI.run([
            "pkcs12", "-export", "-in", T.url(T.clientAlice.pem).path, "-inkey", T.url(T.clientAlice.key).path,
            "-certfile", T.url(T.clientAliceChain).path, "-passout", "pass:pw", "-out", out,
        ])
        let bundle = try PKCS12Bundle(derBytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: out))), password: "pw")
        XCTAssertEqual(bundle.inspection.safes.flatMap(\.bags).filter { $0.kind == .certificate }.count, 3, "the file holds the leaf twice")
        XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(bundle.chain.map(\.certificate), [try T.certificate(T.intermediateCA)])
    }

    // MARK: Legacy algorithms

    func testLegacyRC2FileIsReadWithTheLegacyProviderAndReportedAsLegacy() throws {
        let bundle = try bundle(P.legacyRC2)
        XCTAssertTrue(bundle.neededLegacyProvider)
        XCTAssertTrue(bundle.inspection.usesLegacyAlgorithms)
        XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
        XCTAssertEqual(bundle.chain.count, 2)
        let rc2 = try XCTUnwrap(bundle.inspection.safes.compactMap(\.encryption).first)
        XCTAssertEqual(rc2.name, "pbeWithSHA1And40BitRC2-CBC")
        XCTAssertTrue(rc2.isLegacy)
        XCTAssertTrue(rc2.isPKCS12PBE)
        XCTAssertEqual(rc2.iterations, 2048)
        // OpenSSL 3 without -legacy cannot read it: the independent confirmation of "legacy".
        let plain = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-in", T.url(P.legacyRC2).path, "-passin", "pass:mtls"])
        XCTAssertNotEqual(plain.status, 0)
        XCTAssertTrue(plain.combined.contains("unsupported"), plain.combined)
    }

    func testAKeyReadWithTheLegacyProviderWorksEverywhereAfterwards() throws {
        let legacy = try bundle(P.legacyRC2)
        let key = try XCTUnwrap(legacy.privateKey)
        let leaf = try XCTUnwrap(legacy.leaf?.certificate)
        XCTAssertTrue(key.matches(try T.certificate(T.clientAlice)))
        XCTAssertEqual(try key.pkcs8PEM(), try T.privateKey(T.clientAlice).pkcs8PEM())
        let exported = try PKCS12Bundle.export(certificate: leaf, privateKey: key, password: "pw")
        XCTAssertEqual(try PKCS12Bundle(derBytes: exported, password: "pw").leaf?.certificate, leaf)
        // Reading a modern file afterwards still uses the default context.
        XCTAssertFalse(try bundle(P.modern).neededLegacyProvider)
    }

    func testLegacyFilesCanBeReadFromManyThreadsAtOnce() throws {
        let bytes = try T.bytes(P.legacyRC2)
        let modern = try T.bytes(P.modern)
        let results = ResultBox()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let ok: Bool
            if index % 2 == 0 {
                ok = (try? PKCS12Bundle(derBytes: bytes, password: "mtls"))?.neededLegacyProvider == true
            } else {
                ok = (try? PKCS12Bundle(derBytes: modern, password: "mtls"))?.neededLegacyProvider == false
            }
            results.append(ok)
        }
        XCTAssertEqual(results.values, Array(repeating: true, count: 8))
    }

    func testTripleDESFileNeedsNoLegacyProviderAndSuitsOlderImporters() throws {
        let bundle = try bundle(P.tripleDES)
        XCTAssertFalse(bundle.neededLegacyProvider)
        XCTAssertFalse(bundle.inspection.usesLegacyAlgorithms)
        XCTAssertEqual(bundle.inspection.mac?.digest, "sha1")
        XCTAssertTrue(bundle.inspection.algorithms.allSatisfy { $0.name == "pbeWithSHA1And3-KeyTripleDES-CBC" && $0.isPKCS12PBE })
    }

    func testCompatibilityFlagsFollowTheAlgorithms() throws {
        let expected: [(String, String?, PKCS12Inspection.Compatibility)] = [
            (P.modern, P.password, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: false)),
            (P.legacyRC2, P.password, .init(openSSL3: false, openSSL3WithLegacy: true, olderImporters: true)),
            (P.tripleDES, P.password, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: true)),
            (P.noChain, P.password, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: false)),
            (P.emptyPassword, "", .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: false)),
            (P.noPassword, nil, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: true)),
            (P.certsOnly, P.password, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: false)),
            (P.server, P.password, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: false)),
            (P.clientBobRSA, P.password, .init(openSSL3: true, openSSL3WithLegacy: true, olderImporters: false)),
        ]
        for (path, password, compatibility) in expected {
            XCTAssertEqual(try bundle(path, password: password).inspection.compatibility, compatibility, path)
        }
    }

    // MARK: Structure against openssl pkcs12 -info

    /// `openssl pkcs12 -info -noout` lines that describe the structure (MAC, safes, bags).
    private func openSSLInfo(_ path: String, password: String?) throws -> [String] {
        var arguments = ["pkcs12", "-info", "-noout", "-in", T.url(path).path, "-passin", "pass:\(password ?? "")"]
        if path == P.legacyRC2 { arguments.append("-legacy") }
        let output = try OpenSSLCLI.runAllowingFailure(arguments)
        XCTAssertEqual(output.status, 0, "openssl pkcs12 -info \(path): \(output.stderr)")
        return output.combined.split(separator: "\n").map(String.init).filter { line in
            ["MAC:", "MAC length", "PKCS7", "Certificate bag", "Shrouded Keybag", "Key bag", "Warning: MAC is absent"].contains { line.hasPrefix($0) }
        }
    }

    /// The library's inspection written in `openssl pkcs12 -info` words.
    private func describeLikeOpenSSL(_ inspection: PKCS12Inspection) -> [String] {
        func algorithm(_ algorithm: PKCS12Inspection.Algorithm) -> String {
            let iterations = algorithm.iterations.map { ", Iteration \($0)" } ?? ""
            // "PBES2 (PBKDF2 hmacWithSHA256, AES-256-CBC)" → "PBES2, PBKDF2, AES-256-CBC, Iteration N, PRF hmacWithSHA256"
            if algorithm.name.hasPrefix("PBES2 ("), algorithm.name.hasSuffix(")") {
                let inner = algorithm.name.dropFirst("PBES2 (".count).dropLast()
                let parts = inner.components(separatedBy: ", ")
                let kdf = parts[0].split(separator: " ")
                return "PBES2, \(kdf[0]), \(parts[1])\(iterations), PRF \(kdf.count > 1 ? String(kdf[1]) : "?")"
            }
            return algorithm.name + iterations
        }
        var lines: [String] = []
        if let mac = inspection.mac {
            lines.append("MAC: \(mac.digest), Iteration \(mac.iterations)")
            lines.append("MAC length: \(mac.digest == "sha1" ? 20 : 32), salt length: \(mac.saltLength)")
        } else {
            lines.append("Warning: MAC is absent!")
        }
        for safe in inspection.safes {
            lines.append(safe.encryption.map { "PKCS7 Encrypted data: \(algorithm($0))" } ?? "PKCS7 Data")
            for bag in safe.bags {
                switch bag.kind {
                case .certificate: lines.append("Certificate bag")
                case .key: lines.append("Key bag")
                case .shroudedKey: lines.append("Shrouded Keybag: \(bag.algorithm.map(algorithm) ?? "?")")
                default: lines.append("other bag \(bag.kind)")
                }
            }
        }
        return lines
    }

    func testInspectionOfEveryFileMatchesOpenSSLInfo() throws {
        let files: [(String, String?)] = P.allWithPassword.map { ($0, P.password) } + [(P.emptyPassword, ""), (P.noPassword, nil)]
        for (path, password) in files {
            let inspection = try bundle(path, password: password).inspection
            let expected = try openSSLInfo(path, password: password)
            XCTAssertFalse(expected.isEmpty, path)
            XCTAssertEqual(describeLikeOpenSSL(inspection).sorted(), expected.sorted(), path)
            XCTAssertEqual(describeLikeOpenSSL(inspection), expected, "\(path) in file order")
        }
    }

    func testMACDigestAndIterationsAreThoseOpenSSLReports() throws {
        let expected: [(String, String, Int)] = [
            (P.modern, "sha256", 2048), (P.legacyRC2, "sha1", 2048), (P.tripleDES, "sha1", 2048), (P.server, "sha256", 2048),
        ]
        for (path, digest, iterations) in expected {
            let mac = try XCTUnwrap(bundle(path).inspection.mac, path)
            XCTAssertEqual(mac.digest, digest, path)
            XCTAssertEqual(mac.iterations, iterations, path)
            XCTAssertEqual(mac.saltLength, 8, path)
        }
        XCTAssertNil(try bundle(P.noPassword, password: nil).inspection.mac)
    }

    func testModernAlgorithmsAreNamedAsPBES2WithAES256AndHMACSHA256() throws {
        let algorithms = try bundle(P.modern).inspection.algorithms
        XCTAssertEqual(algorithms.count, 2, "the certificate safe and the key bag")
        for algorithm in algorithms {
            XCTAssertEqual(algorithm.name, "PBES2 (PBKDF2 hmacWithSHA256, AES-256-CBC)")
            XCTAssertEqual(algorithm.iterations, 2048)
            XCTAssertFalse(algorithm.isLegacy)
            XCTAssertFalse(algorithm.isPKCS12PBE)
            XCTAssertEqual(algorithm.description, "PBES2 (PBKDF2 hmacWithSHA256, AES-256-CBC), 2048 iterations")
        }
    }

    // MARK: Passwords

    func testAWrongPasswordIsReportedAsWrongForEveryProtectedFile() throws {
        for path in P.allWithPassword + [P.emptyPassword] {
            for password in ["wrong", "MTLS", "mtls "] {
                assertThrowsMTLSError(.wrongPassword, "\(path) with '\(password)'") { try bundle(path, password: password) }
            }
        }
        assertThrowsMTLSError(.wrongPassword) { try bundle(P.modern, password: "") }
    }

    func testNoPasswordOnAProtectedFileIsReportedAsRequired() throws {
        for path in P.allWithPassword {
            let error = assertThrowsMTLSError(.passwordRequired, path) { try bundle(path, password: nil) }
            XCTAssertTrue(error?.message.contains("password") ?? false, error?.message ?? "")
        }
    }

    func testAFileWithoutMACOrEncryptionOpensWithAnyPassword() throws {
        for password in [nil, "", "mtls", "anything"] {
            let bundle = try bundle(P.noPassword, password: password)
            XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
            XCTAssertNotNil(bundle.privateKey)
            XCTAssertEqual(bundle.inspection.safes.flatMap(\.bags).filter { $0.kind == .key }.count, 1, "a plain key bag")
        }
    }

    func testAnEncryptedFileWithoutMACAsksForItsPasswordAndTellsAWrongOne() throws {
        let directory = try T.temporaryDirectory(for: self)
        for password in ["pw", ""] {
            let out = directory.appendingPathComponent("nomac-\(password.isEmpty ? "empty" : "pw").p12").path
            try OpenSSLCLI.run([
                "pkcs12", "-export", "-in", T.url(T.clientAlice.pem).path, "-inkey", T.url(T.clientAlice.key).path,
                "-nomac", "-passout", "pass:\(password)", "-out", out,
            ])
            let bytes = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: out)))
            let bundle = try PKCS12Bundle(derBytes: bytes, password: Secret(password))
            XCTAssertNil(bundle.inspection.mac)
            XCTAssertEqual(bundle.leaf?.certificate, try T.certificate(T.clientAlice))
            assertThrowsMTLSError(.wrongPassword, "'\(password)'") { try PKCS12Bundle(derBytes: bytes, password: "wrong") }
            if password.isEmpty {
                XCTAssertNotNil(try PKCS12Bundle(derBytes: bytes, password: nil).privateKey, "no password tries the empty one")
            } else {
                assertThrowsMTLSError(.passwordRequired) { try PKCS12Bundle(derBytes: bytes, password: nil) }
            }
        }
    }

    // MARK: Damaged and wrong input

    func testAFlippedMACByteWithTheRightPasswordIsReportedAsDamageNotAsAWrongPassword() throws {
        let error = assertThrowsMTLSError(.corruptInput) { try bundle(T.Bad.corruptMAC, password: P.password) }
        XCTAssertTrue(error?.message.contains("damaged") ?? false, error?.message ?? "")
        // Independently: openssl -info can only say "invalid password?" for this file …
        let openssl = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-in", T.url(T.Bad.corruptMAC).path, "-passin", "pass:mtls"])
        XCTAssertTrue(openssl.combined.contains("Mac verify error"), openssl.combined)
        // … while skipping the MAC shows that the password does decrypt the contents.
        let noMAC = try OpenSSLCLI.runAllowingFailure(["pkcs12", "-info", "-noout", "-nomacver", "-in", T.url(T.Bad.corruptMAC).path, "-passin", "pass:mtls"])
        XCTAssertEqual(noMAC.status, 0, noMAC.combined)
    }

    func testAFlippedMACByteWithAWrongOrMissingPasswordIsStillAPasswordProblem() throws {
        assertThrowsMTLSError(.wrongPassword) { try bundle(T.Bad.corruptMAC, password: "wrong") }
        assertThrowsMTLSError(.passwordRequired) { try bundle(T.Bad.corruptMAC, password: nil) }
    }

    func testATruncatedFileIsTruncatedNotDamaged() throws {
        let error = assertThrowsMTLSError(.truncatedInput) { try bundle(T.Bad.truncatedP12) }
        XCTAssertTrue(error?.message.contains("truncated") ?? false, error?.message ?? "")
        let modern = try T.bytes(P.modern)
        // Too short to show the PFX header: not recognisable as PKCS#12 at all.
        for length in [1, 2] {
            assertThrowsMTLSError(.malformedInput, "first \(length) bytes") { try PKCS12Bundle(derBytes: Array(modern.prefix(length)), password: "mtls") }
        }
        for length in [10, modern.count / 2, modern.count - 1] {
            assertThrowsMTLSError(.truncatedInput, "first \(length) bytes") { try PKCS12Bundle(derBytes: Array(modern.prefix(length)), password: "mtls") }
        }
    }

    func testGarbageIsMalformedAndEmptyInputIsEmpty() throws {
        assertThrowsMTLSError(.malformedInput) { try bundle(T.Bad.garbage) }
        assertThrowsMTLSError(.malformedInput) { try bundle(T.Bad.notACert) }
        assertThrowsMTLSError(.emptyInput) { try bundle(T.Bad.empty) }
    }

    func testOtherObjectsAreTheWrongKind() throws {
        assertThrowsMTLSError(.wrongObjectKind) { try bundle(T.server.der) }
        assertThrowsMTLSError(.wrongObjectKind) { try bundle(T.server.pem) }
        assertThrowsMTLSError(.wrongObjectKind) { try bundle(T.Keys.rsaPKCS8DER) }
    }
}

/// Collects results from concurrent work.
private final class ResultBox: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: [Bool] = []
    func append(_ value: Bool) { lock.withLock { stored.append(value) } }
    var values: [Bool] { lock.withLock { stored } }
}

import Foundation
import XCTest

@testable import MTLSTrust

/// Trust evaluation: OpenSSL builds and checks the chain, the Swift policies decide. Fixtures from
/// `TestCerts/` cover the everyday verdicts (compared with `openssl verify -attime 1780272000`
/// where OpenSSL is right); small chains made with the `openssl` CLI in a temporary directory cover
/// each rule mtls adds, at the leaf, the intermediate and the root where the rule applies there.
final class TrustEvaluatorTests: XCTestCase {
    /// 2026-06-01T00:00:00Z, the fixed evaluation time of every test.
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    // MARK: Helpers

    private func fixture(_ identity: TestCertificates.Identity) throws -> Certificate { try TestCertificates.certificate(identity) }

    private func evaluate(
        _ leaf: Certificate, intermediates: [Certificate] = [], anchors: [Certificate], host: String? = nil,
        purpose: TrustPolicy.Purpose = .server, crls: [CertificateRevocationList] = [], maximumDepth: Int? = nil,
        profile: TrustPolicy.Profile? = nil, partialChain: Bool = false, at time: Date = TrustEvaluatorTests.fixedTime
    ) throws -> TrustEvaluation {
        // Most rule tests here judge by the Baseline Requirements: the webpki profile for a server,
        // unless a test names another.
        let policy = TrustPolicy(
            anchors: anchors, intermediates: intermediates, evaluationTime: time, purpose: purpose, hostname: host,
            allowsPartialChain: partialChain, crls: crls, maximumDepth: maximumDepth, profile: profile ?? (purpose == .server ? .webPKI : .automatic))
        return try TrustEvaluator(policy: policy).evaluate(leaf)
    }

    /// `openssl verify -attime 1780272000 -x509_strict …`: true when OpenSSL accepts.
    private func opensslAccepts(leaf: String, caFile: String, untrusted: String? = nil, _ extra: [String] = []) throws -> Bool {
        var arguments = ["verify", "-attime", "1780272000", "-x509_strict", "-no-CApath", "-no-CAstore", "-CAfile", caFile]
        if let untrusted { arguments += ["-untrusted", untrusted] }
        let output = try OpenSSLCLI.runAllowingFailure(arguments + extra + [leaf])
        return output.status == 0
    }

    private func path(_ relative: String) -> String { TestCertificates.url(relative).path }

    private func assertTrusted(_ evaluation: TrustEvaluation, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(evaluation.isTrusted, "expected trusted, got \(evaluation.findings)", file: file, line: line)
        XCTAssertEqual(evaluation.summary, .proceed, file: file, line: line)
    }

    /// Asserts a rejection with a finding named `name` (at `depth` when given) whose reason names
    /// the certificate and whose hint says what to do.
    @discardableResult
    private func assertRejected(
        _ evaluation: TrustEvaluation, _ name: String, depth: Int? = nil, file: StaticString = #filePath, line: UInt = #line
    ) -> TrustFinding? {
        XCTAssertFalse(evaluation.isTrusted, "expected \(name), but the chain was trusted", file: file, line: line)
        guard let finding = evaluation.findings.first(where: { $0.name == name && (depth == nil || $0.depth == depth) }) else {
            XCTFail("no \(name)\(depth.map { " at depth \($0)" } ?? "") among \(evaluation.findings)", file: file, line: line)
            return nil
        }
        XCTAssertFalse(finding.reason.isEmpty, "\(name) has no reason", file: file, line: line)
        XCTAssertFalse(finding.hint.isEmpty, "\(name) has no hint", file: file, line: line)
        if finding.depth < evaluation.chain.count, let cn = evaluation.chain[finding.depth].commonName, name.hasPrefix("MTLS_") {
            XCTAssertTrue(finding.reason.contains(cn) || finding.reason.contains("CN="), "the reason should name the certificate: \(finding.reason)", file: file, line: line)
        }
        return finding
    }

    // MARK: Everyday verdicts on the TestCerts fixtures

    func testServerChainIsTrustedAtTheFixedTimeAsOpenSSLSays() throws {
        let evaluation = try evaluate(
            fixture(TestCertificates.server), intermediates: [fixture(TestCertificates.intermediateCA)],
            anchors: [fixture(TestCertificates.rootCA)], host: "localhost")
        assertTrusted(evaluation)
        XCTAssertEqual(evaluation.chain.map(\.commonName), ["localhost", "mtls Test Intermediate CA", "mtls Test Root CA"])
        XCTAssertEqual(evaluation.pathsTried, 1)
        XCTAssertTrue(
            try opensslAccepts(
                leaf: path("server.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem"), ["-verify_hostname", "localhost", "-purpose", "sslserver"]))
    }

    func testExpiredLeafIsRejectedWithItsSubjectAndExpiryInTheReason() throws {
        let evaluation = try evaluate(
            fixture(TestCertificates.serverExpired), intermediates: [fixture(TestCertificates.intermediateCA)],
            anchors: [fixture(TestCertificates.rootCA)], host: "localhost")
        let finding = assertRejected(evaluation, "X509_V_ERR_CERT_HAS_EXPIRED", depth: 0)
        XCTAssertTrue(finding?.reason.contains("CN=localhost expired on 2021-01-01T00:00:00Z") == true, finding?.reason ?? "")
        XCTAssertEqual(evaluation.summary, .recoverableTrustFailure)
        XCTAssertFalse(try opensslAccepts(leaf: path("server-expired.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem")))
    }

    func testNotYetValidLeafIsRejectedWithAHintAboutTheClock() throws {
        let evaluation = try evaluate(
            fixture(TestCertificates.serverNotYetValid), intermediates: [fixture(TestCertificates.intermediateCA)],
            anchors: [fixture(TestCertificates.rootCA)], host: "localhost")
        let finding = assertRejected(evaluation, "X509_V_ERR_CERT_NOT_YET_VALID", depth: 0)
        XCTAssertTrue(finding?.hint.description.contains("clock") == true)
        XCTAssertFalse(try opensslAccepts(leaf: path("server-notyetvalid.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem")))
    }

    func testWrongHostIsRejectedWithTheNamesTheCertificateCarries() throws {
        let evaluation = try evaluate(
            fixture(TestCertificates.serverMulti), intermediates: [fixture(TestCertificates.intermediateCA)],
            anchors: [fixture(TestCertificates.rootCA)], host: "mail.example.com")
        let finding = assertRejected(evaluation, "X509_V_ERR_HOSTNAME_MISMATCH", depth: 0)
        XCTAssertTrue(finding?.reason.contains("api.example.com, www.example.com, not for mail.example.com") == true, finding?.reason ?? "")
        XCTAssertFalse(
            try opensslAccepts(leaf: path("server-multi.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem"), ["-verify_hostname", "mail.example.com"]))
    }

    func testSubjectCommonNameIsNeverUsedAsAHostNameUnlikeOpenSSL() throws {
        let evaluation = try evaluate(
            fixture(TestCertificates.serverCNOnly), intermediates: [fixture(TestCertificates.intermediateCA)],
            anchors: [fixture(TestCertificates.rootCA)], host: "localhost")
        let finding = assertRejected(evaluation, "X509_V_ERR_HOSTNAME_MISMATCH", depth: 0)
        XCTAssertTrue(finding?.reason.contains("has no subjectAltName") == true, finding?.reason ?? "")
        // Plain `openssl verify -verify_hostname` falls back to the CN: OpenSSL is wrong here.
        XCTAssertTrue(try opensslAccepts(leaf: path("server-cn-only.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem"), ["-verify_hostname", "localhost"]))
    }

    func testHostNamesMatchIgnoringASCIICaseAndATrailingDot() throws {
        let leaf = try fixture(TestCertificates.server)
        let intermediates = [try fixture(TestCertificates.intermediateCA)]
        let anchors = [try fixture(TestCertificates.rootCA)]
        for host in ["LOCALHOST", "LocalHost.", "localhost"] {
            assertTrusted(try evaluate(leaf, intermediates: intermediates, anchors: anchors, host: host))
        }
        // A Cyrillic "о" is not an ASCII "o": never folded, never matched.
        assertRejected(try evaluate(leaf, intermediates: intermediates, anchors: anchors, host: "l\u{043E}calhost"), "X509_V_ERR_HOSTNAME_MISMATCH")
    }

    func testIPLiteralsAreComparedAsAddressesNotAsText() throws {
        let leaf = try fixture(TestCertificates.server)
        let intermediates = [try fixture(TestCertificates.intermediateCA)]
        let anchors = [try fixture(TestCertificates.rootCA)]
        for host in ["127.0.0.1", "::1", "0:0:0:0:0:0:0:1", "[::1]", "0000::0001"] {
            assertTrusted(try evaluate(leaf, intermediates: intermediates, anchors: anchors, host: host))
        }
        assertRejected(try evaluate(leaf, intermediates: intermediates, anchors: anchors, host: "127.0.0.2"), "X509_V_ERR_IP_ADDRESS_MISMATCH")
        // Not IP literals (inet_pton refuses them): compared as DNS names, so they match nothing.
        for host in ["0x7f000001", "127.1", "127.000.000.001"] {
            assertRejected(try evaluate(leaf, intermediates: intermediates, anchors: anchors, host: host), "X509_V_ERR_HOSTNAME_MISMATCH")
        }
        XCTAssertFalse(try opensslAccepts(leaf: path("server.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem"), ["-verify_ip", "127.0.0.2"]))
    }

    func testPurposeIsCheckedThroughTheExtendedKeyUsage() throws {
        let intermediates = [try fixture(TestCertificates.intermediateCA)]
        let anchors = [try fixture(TestCertificates.rootCA)]
        let wrong = try evaluate(fixture(TestCertificates.serverClientAuthOnly), intermediates: intermediates, anchors: anchors, host: "localhost")
        let finding = assertRejected(wrong, "X509_V_ERR_INVALID_PURPOSE", depth: 0)
        XCTAssertTrue(finding?.hint.description.contains("serverAuth") == true)
        XCTAssertFalse(
            try opensslAccepts(leaf: path("server-clientauth-only.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem"), ["-purpose", "sslserver"]))
        assertTrusted(try evaluate(fixture(TestCertificates.clientAlice), intermediates: intermediates, anchors: anchors, purpose: .client))
        assertRejected(try evaluate(fixture(TestCertificates.clientServerAuthOnly), intermediates: intermediates, anchors: anchors, purpose: .client), "X509_V_ERR_INVALID_PURPOSE")
        assertTrusted(try evaluate(fixture(TestCertificates.clientServerAuthOnly), intermediates: intermediates, anchors: anchors, purpose: .any))
    }

    func testRevokedLeafIsAFatalFailureWhenCRLsAreGiven() throws {
        let crls = try CertificateLoader.crls(atPath: path(TestCertificates.crls))
        let intermediates = [try fixture(TestCertificates.intermediateCA)]
        let anchors = [try fixture(TestCertificates.rootCA)]
        let revoked = try evaluate(fixture(TestCertificates.serverRevoked), intermediates: intermediates, anchors: anchors, host: "localhost", crls: crls)
        assertRejected(revoked, "X509_V_ERR_CERT_REVOKED", depth: 0)
        XCTAssertEqual(revoked.summary, .fatalTrustFailure)
        XCTAssertFalse(
            try opensslAccepts(
                leaf: path("server-revoked.pem"), caFile: path("root-ca.pem"), untrusted: path("intermediate-ca.pem"), ["-crl_check_all", "-CRLfile", path(TestCertificates.crls)]))
        assertTrusted(try evaluate(fixture(TestCertificates.server), intermediates: intermediates, anchors: anchors, host: "localhost", crls: crls))
        assertTrusted(try evaluate(fixture(TestCertificates.serverRevoked), intermediates: intermediates, anchors: anchors, host: "localhost"))
    }

    func testMissingIssuerHintsAtWhatToPass() throws {
        let noIntermediate = try evaluate(fixture(TestCertificates.server), anchors: [fixture(TestCertificates.rootCA)], host: "localhost")
        let finding = assertRejected(noIntermediate, "X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY", depth: 0)
        // OpenSSL also reports that the leaf's signature cannot be checked: the same fact, told once.
        XCTAssertEqual(noIntermediate.findings.map(\.name), ["X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY"])
        XCTAssertEqual(finding?.hint.settings, [.intermediates, .anchors], "the hint names the settings as data")
        XCTAssertTrue(finding?.hint.description.contains("TrustPolicy.intermediates") == true, "a library user reads the API name: \(String(describing: finding?.hint))")
        XCTAssertFalse(finding?.hint.description.contains("--") ?? true, "no command-line flag in a library hint")
        let noAnchors = try evaluate(fixture(TestCertificates.server), intermediates: [fixture(TestCertificates.intermediateCA)], anchors: [], host: "localhost")
        let other = noAnchors.findings.first { $0.name.hasPrefix("X509_V_ERR_UNABLE_TO_GET_ISSUER") }
        XCTAssertTrue(other?.hint.description.contains("no anchors were given") == true, "\(noAnchors.findings)")
        let wrongRoot = try evaluate(
            fixture(TestCertificates.server), intermediates: [fixture(TestCertificates.intermediateCA)], anchors: [fixture(TestCertificates.otherRootCA)], host: "localhost")
        XCTAssertFalse(wrongRoot.isTrusted)
        XCTAssertFalse(try opensslAccepts(leaf: path("server.pem"), caFile: path("other-root-ca.pem"), untrusted: path("intermediate-ca.pem")))
    }

    func testSelfSignedLeafIsTrustedOnlyAsItsOwnAnchor() throws {
        let selfSigned = try fixture(TestCertificates.selfSigned)
        let alone = try evaluate(selfSigned, anchors: [fixture(TestCertificates.rootCA)], host: "localhost")
        let finding = assertRejected(alone, "X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT", depth: 0)
        XCTAssertEqual(finding?.hint.settings.first, .anchors)
        assertTrusted(try evaluate(selfSigned, anchors: [selfSigned], host: "localhost"))
        assertTrusted(try evaluate(selfSigned, anchors: [selfSigned], host: "127.0.0.1"))
        XCTAssertTrue(try opensslAccepts(leaf: path("self-signed.pem"), caFile: path("self-signed.pem"), untrusted: nil, ["-verify_hostname", "localhost"]))
    }

    func testModernKeysAreAcceptedForServers() throws {
        let intermediates = [try fixture(TestCertificates.intermediateCA)]
        let anchors = [try fixture(TestCertificates.rootCA)]
        for identity in [TestCertificates.serverRSA2048, TestCertificates.serverRSA4096, TestCertificates.serverP384, TestCertificates.serverEd25519] {
            assertTrusted(try evaluate(fixture(identity), intermediates: intermediates, anchors: anchors, host: "localhost"))
        }
    }

    func testCustomRulesHaveDistinctNamesAboveOpenSSLCodes() {
        XCTAssertEqual(Set(TrustRule.allCases.map(\.name)).count, TrustRule.allCases.count)
        for rule in TrustRule.allCases {
            XCTAssertGreaterThanOrEqual(rule.rawValue, 1000)
            XCTAssertTrue(rule.name.hasPrefix("MTLS_"))
            XCTAssertEqual(VerifyErrorCatalog.name(rule.rawValue), rule.name)
            XCTAssertTrue(VerifyErrorCatalog.isFatal(rule.rawValue))
        }
        let finding = TrustFinding(rule: .webPKIWeakKey, depth: 1, subject: "CN=x", reason: "r", hint: "h")
        XCTAssertEqual(finding.rule, .webPKIWeakKey)
        XCTAssertEqual(finding.name, "MTLS_WEBPKI_WEAK_KEY")
    }

    // MARK: RFC 5280 edge cases OpenSSL gets wrong

    func testNotAfterIsInclusiveAsRFC5280SaysUnlikeOpenSSL() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let leaf = try pki.leaf(issuer: root, notAfter: "20260601000000Z")
        assertTrusted(try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com"))
        let later = try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com", at: Self.fixedTime.addingTimeInterval(1))
        assertRejected(later, "X509_V_ERR_CERT_HAS_EXPIRED", depth: 0)
        XCTAssertFalse(try opensslAccepts(leaf: leaf.path, caFile: root.path), "OpenSSL treats notAfter as exclusive")
    }

    func testMaximumDepthDoesNotCountSelfIssuedIntermediates() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let first = try pki.ca("Issuing CA", issuer: root)
        let rekeyed = try pki.ca("Issuing CA", issuer: first)  // self-issued: same subject and issuer name
        let leaf = try pki.leaf(issuer: rekeyed)
        assertTrusted(try evaluate(leaf.certificate, intermediates: [first.certificate, rekeyed.certificate], anchors: [root.certificate], host: "example.com", maximumDepth: 1))
        let tooDeep = try evaluate(leaf.certificate, intermediates: [first.certificate, rekeyed.certificate], anchors: [root.certificate], host: "example.com", maximumDepth: 0)
        assertRejected(tooDeep, "X509_V_ERR_CERT_CHAIN_TOO_LONG")
        let bundle = try pki.bundle([first, rekeyed])
        XCTAssertFalse(try opensslAccepts(leaf: leaf.path, caFile: root.path, untrusted: bundle, ["-verify_depth", "1"]), "OpenSSL counts self-issued certificates")
    }

    func testSerialNumberZeroIsRejectedAtLeafAndIntermediate() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let ca = try pki.ca("Issuing CA", issuer: root)
        assertRejected(
            try evaluate(pki.leaf(issuer: ca, serial: "00").certificate, intermediates: [ca.certificate], anchors: [root.certificate], host: "example.com"),
            "MTLS_RFC5280_SERIAL_INVALID", depth: 0)
        let zeroCA = try pki.ca("Zero CA", issuer: root, serial: "00")
        assertRejected(
            try evaluate(pki.leaf(issuer: zeroCA).certificate, intermediates: [zeroCA.certificate], anchors: [root.certificate], host: "example.com", purpose: .client),
            "MTLS_RFC5280_SERIAL_INVALID", depth: 1)
        // The anchor is an input, not a certificate being validated.
        let zeroRoot = try pki.root("Zero Root", serial: "00")
        assertTrusted(try evaluate(pki.leaf(issuer: zeroRoot).certificate, anchors: [zeroRoot.certificate], host: "example.com"))
    }

    func testNameConstraintsMustBeCriticalNonEmptyAndOnlyInCAs() throws {
        let pki = try MiniPKI(self)
        let plainRoot = try pki.root()
        let nonCriticalCA = try pki.ca("Loose CA", issuer: plainRoot, extra: "nameConstraints = permitted;DNS:example.com\n")
        assertRejected(
            try evaluate(
                pki.leaf(issuer: nonCriticalCA).certificate, intermediates: [nonCriticalCA.certificate], anchors: [plainRoot.certificate], host: "example.com",
                profile: .rfc5280),
            "MTLS_RFC5280_NC_NOT_CRITICAL", depth: 1)
        // The Baseline Requirements allow a non-critical nameConstraints (BR 7.1.2.10.8).
        assertTrusted(
            try evaluate(pki.leaf(issuer: nonCriticalCA).certificate, intermediates: [nonCriticalCA.certificate], anchors: [plainRoot.certificate], host: "example.com"))
        let nonCriticalRoot = try pki.root("Loose Root", extra: "nameConstraints = permitted;DNS:example.com\n")
        assertRejected(
            try evaluate(pki.leaf(issuer: nonCriticalRoot).certificate, anchors: [nonCriticalRoot.certificate], host: "example.com", purpose: .client),
            "MTLS_RFC5280_NC_NOT_CRITICAL", depth: 1)
        let inLeaf = try pki.leaf(issuer: plainRoot, extra: "nameConstraints = critical,permitted;DNS:example.com\n")
        assertRejected(try evaluate(inLeaf.certificate, anchors: [plainRoot.certificate], host: "example.com"), "MTLS_RFC5280_NC_IN_EE", depth: 0)
        let empty = try pki.ca("Empty CA", issuer: plainRoot, extra: "2.5.29.30 = critical,DER:30:00\n")
        assertRejected(
            try evaluate(pki.leaf(issuer: empty).certificate, intermediates: [empty.certificate], anchors: [plainRoot.certificate], host: "example.com"), "MTLS_RFC5280_NC_EMPTY",
            depth: 1)
        let leadingDot = try pki.ca("Dot CA", issuer: plainRoot, extra: "nameConstraints = critical,permitted;DNS:.example.com\n")
        assertRejected(
            try evaluate(
                pki.leaf(issuer: leadingDot, san: "DNS:www.example.com").certificate, intermediates: [leadingDot.certificate], anchors: [plainRoot.certificate],
                host: "www.example.com"), "MTLS_RFC5280_NC_MALFORMED_NAME", depth: 1)
        let good = try pki.ca("Good CA", issuer: plainRoot, extra: "nameConstraints = critical,permitted;DNS:example.com\n")
        assertTrusted(
            try evaluate(
                pki.leaf(issuer: good, commonName: "www.example.com", san: "DNS:www.example.com").certificate, intermediates: [good.certificate],
                anchors: [plainRoot.certificate], host: "www.example.com"))
    }

    func testPolicyConstraintsMustBeCritical() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let ca = try pki.ca("Policy CA", issuer: root, extra: "policyConstraints = inhibitPolicyMapping:1\n")
        assertRejected(
            try evaluate(pki.leaf(issuer: ca).certificate, intermediates: [ca.certificate], anchors: [root.certificate], host: "example.com"), "MTLS_RFC5280_PC_NOT_CRITICAL",
            depth: 1)
    }

    func testMalformedDNSNamesInTheLeafAreRejected() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        for san in ["DNS:foo_bar.example.com, DNS:example.com", "DNS:.example.com, DNS:example.com", "DNS:ba*.example.com, DNS:example.com"] {
            let leaf = try pki.leaf(issuer: root, san: san)
            assertRejected(try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com"), "MTLS_RFC5280_SAN_MALFORMED_DNS", depth: 0)
        }
    }

    func testWildcardThatCoversAnExcludedNameIsRejectedUnlikeOpenSSL() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let ca = try pki.ca("Excluding CA", issuer: root, extra: "nameConstraints = critical,excluded;DNS:bar.example.com\n")
        let wildcard = try pki.leaf(issuer: ca, san: "DNS:*.example.com")
        let evaluation = try evaluate(wildcard.certificate, intermediates: [ca.certificate], anchors: [root.certificate], host: "foo.example.com")
        let finding = assertRejected(evaluation, "MTLS_NC_WILDCARD_EXCLUDED", depth: 0)
        XCTAssertTrue(finding?.reason.contains("bar.example.com") == true)
        XCTAssertTrue(
            try opensslAccepts(leaf: wildcard.path, caFile: root.path, untrusted: ca.path, ["-verify_hostname", "foo.example.com"]),
            "OpenSSL compares the pattern as a string (CVE-2025-61727)")
        assertTrusted(
            try evaluate(
                pki.leaf(issuer: ca, commonName: "foo.example.com", san: "DNS:foo.example.com").certificate, intermediates: [ca.certificate], anchors: [root.certificate],
                host: "foo.example.com"))
    }

    func testNameConstraintsApplyToTheCommonNameOfALeafWithoutSubjectAltName() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let ca = try pki.ca("Constrained CA", issuer: root, extra: "nameConstraints = critical,permitted;DNS:example.com\n")
        let outside = try pki.leaf(issuer: ca, commonName: "evil.test", san: nil)
        assertRejected(
            try evaluate(outside.certificate, intermediates: [ca.certificate], anchors: [root.certificate], purpose: .client), "X509_V_ERR_PERMITTED_VIOLATION", depth: 0)
        let inside = try pki.leaf(issuer: ca, commonName: "www.example.com", san: nil)
        assertTrusted(try evaluate(inside.certificate, intermediates: [ca.certificate], anchors: [root.certificate], purpose: .client))
        // With a subjectAltName (even an IP address only) the CN is not a name at all.
        let ipOnly = try pki.leaf(issuer: ca, commonName: "evil.test", san: "IP:192.0.2.1")
        assertTrusted(try evaluate(ipOnly.certificate, intermediates: [ca.certificate], anchors: [root.certificate], host: "192.0.2.1"))
    }

    func testCRLWithoutNumberIsRejected() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let leaf = try pki.leaf(issuer: root)
        let numbered = try pki.crl(issuer: root, number: true)
        assertTrusted(try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com", crls: [numbered]))
        let unnumbered = try pki.crl(issuer: root, number: false)
        assertRejected(try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com", crls: [unnumbered]), "MTLS_RFC5280_CRL_NUMBER_MISSING", depth: 1)
    }

    func testTrustAnchorWithoutKeyUsageMayIssueCRLs() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root(extensions: "basicConstraints = critical,CA:TRUE\nsubjectKeyIdentifier = hash\n")
        let leaf = try pki.leaf(issuer: root)
        assertTrusted(try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com", crls: [pki.crl(issuer: root, number: true)], profile: .rfc5280))
        // The Baseline Requirements give every CA certificate, the root included, a keyUsage (BR 7.1.2.1).
        assertRejected(
            try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com", crls: [pki.crl(issuer: root, number: true)]), "MTLS_WEBPKI_CA_KEY_USAGE", depth: 1)
    }

    // MARK: Web PKI rules (purpose server)

    func testWeakOrUnapprovedKeysAreRefusedAtEveryPosition() throws {
        let pki = try MiniPKI(self)
        for weakAt in 0...2 {
            let root = try pki.root("Root \(weakAt)", key: weakAt == 2 ? .secp256k1 : .p256)
            let ca = try pki.ca("CA \(weakAt)", issuer: root, key: weakAt == 1 ? .secp256k1 : .p256)
            let leaf = try pki.leaf(issuer: ca, key: weakAt == 0 ? .secp256k1 : .p256)
            let evaluation = try evaluate(leaf.certificate, intermediates: [ca.certificate], anchors: [root.certificate], host: "example.com")
            let finding = assertRejected(evaluation, "MTLS_WEBPKI_WEAK_KEY", depth: weakAt)
            XCTAssertTrue(finding?.reason.contains("secp256k1") == true, finding?.reason ?? "")
            // Not a Web PKI rule outside purpose server; OpenSSL agrees with that.
            assertTrusted(try evaluate(leaf.certificate, intermediates: [ca.certificate], anchors: [root.certificate], purpose: .client))
            XCTAssertTrue(try opensslAccepts(leaf: leaf.path, caFile: root.path, untrusted: ca.path))
        }
        let root = try pki.root("DSA Root")
        let dsaLeaf = try pki.leaf(issuer: root, key: .dsa)
        assertRejected(try evaluate(dsaLeaf.certificate, anchors: [root.certificate], host: "example.com"), "MTLS_WEBPKI_WEAK_KEY", depth: 0)
    }

    func testSmallRSAKeysFailOpenSSLsSecurityLevelAtEveryPosition() throws {
        let pki = try MiniPKI(self)
        let expected = ["X509_V_ERR_EE_KEY_TOO_SMALL", "X509_V_ERR_CA_KEY_TOO_SMALL", "X509_V_ERR_CA_KEY_TOO_SMALL"]
        for weakAt in 0...2 {
            let root = try pki.root("Root \(weakAt)", key: weakAt == 2 ? .rsa1024 : .p256)
            let ca = try pki.ca("CA \(weakAt)", issuer: root, key: weakAt == 1 ? .rsa1024 : .p256)
            let leaf = try pki.leaf(issuer: ca, key: weakAt == 0 ? .rsa1024 : .p256)
            assertRejected(try evaluate(leaf.certificate, intermediates: [ca.certificate], anchors: [root.certificate], host: "example.com"), expected[weakAt], depth: weakAt)
            XCTAssertFalse(try opensslAccepts(leaf: leaf.path, caFile: root.path, untrusted: ca.path, ["-auth_level", "2"]))
        }
    }

    func testSHA1SignedIntermediateIsRefusedAndTheSHA256CopyIsFound() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let key = try pki.key(.p256)
        let weak = try pki.ca("Issuing CA", issuer: root, keyPath: key, digest: "sha1")
        let strong = try pki.ca("Issuing CA", issuer: root, keyPath: key)
        let leaf = try pki.leaf(issuer: strong)
        let onlyWeak = try evaluate(leaf.certificate, intermediates: [weak.certificate], anchors: [root.certificate], host: "example.com")
        assertRejected(onlyWeak, "X509_V_ERR_CA_MD_TOO_WEAK", depth: 1)
        let both = try evaluate(leaf.certificate, intermediates: [weak.certificate, strong.certificate], anchors: [root.certificate], host: "example.com")
        assertTrusted(both)
        XCTAssertEqual(both.chain[1], strong.certificate)
    }

    func testAlternativePathsAreCheckedWithTheSameRules() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let stranger = try pki.root("Stranger Root")
        let key = try pki.key(.p256)
        let crossSigned = try pki.ca("Issuing CA", issuer: stranger, keyPath: key)
        let weak = try pki.ca("Issuing CA", issuer: root, keyPath: key, digest: "sha1")
        let leaf = try pki.leaf(issuer: weak, san: "DNS:example.com")
        // Every path to the trusted root goes through the SHA-1 signature: still refused.
        let evaluation = try evaluate(leaf.certificate, intermediates: [crossSigned.certificate, weak.certificate], anchors: [root.certificate], host: "example.com")
        assertRejected(evaluation, "X509_V_ERR_CA_MD_TOO_WEAK")
        // A good path with the wrong name is refused for the name, after trying the others.
        let strong = try pki.ca("Issuing CA", issuer: root, keyPath: key)
        let wrongName = try evaluate(
            leaf.certificate, intermediates: [crossSigned.certificate, weak.certificate, strong.certificate], anchors: [root.certificate], host: "other.example")
        assertRejected(wrongName, "X509_V_ERR_HOSTNAME_MISMATCH")
        XCTAssertGreaterThan(wrongName.pathsTried, 1)
        // And the good path with the right name is found.
        assertTrusted(
            try evaluate(leaf.certificate, intermediates: [crossSigned.certificate, weak.certificate, strong.certificate], anchors: [root.certificate], host: "example.com"))
    }

    func testExtendedKeyUsageRulesOfLeafAndRoot() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let anyEKU = try pki.leaf(issuer: root, eku: "serverAuth, anyExtendedKeyUsage")
        assertRejected(try evaluate(anyEKU.certificate, anchors: [root.certificate], host: "example.com"), "MTLS_WEBPKI_EE_ANY_EKU", depth: 0)
        let critical = try pki.leaf(issuer: root, eku: "critical, serverAuth")
        assertRejected(try evaluate(critical.certificate, anchors: [root.certificate], host: "example.com"), "MTLS_WEBPKI_EE_EKU_CRITICAL", depth: 0)
        let ekuRoot = try pki.root("EKU Root", extra: "extendedKeyUsage = serverAuth\n")
        assertRejected(try evaluate(pki.leaf(issuer: ekuRoot).certificate, anchors: [ekuRoot.certificate], host: "example.com"), "MTLS_WEBPKI_ROOT_HAS_EKU", depth: 1)
        // An intermediate may carry serverAuth; a leaf without EKU is fine under RFC 5280 alone, not
        // under the Baseline Requirements (7.1.2.7.10).
        let ekuCA = try pki.ca("EKU CA", issuer: root, extra: "extendedKeyUsage = serverAuth\n")
        assertTrusted(try evaluate(pki.leaf(issuer: ekuCA).certificate, intermediates: [ekuCA.certificate], anchors: [root.certificate], host: "example.com"))
        let noEKU = try pki.leaf(issuer: root, eku: nil)
        assertRejected(try evaluate(noEKU.certificate, anchors: [root.certificate], host: "example.com"), "MTLS_WEBPKI_EE_EKU_MISSING", depth: 0)
        assertTrusted(try evaluate(noEKU.certificate, anchors: [root.certificate], host: "example.com", profile: .rfc5280))
        // The same chains pass under RFC 5280 alone.
        assertTrusted(try evaluate(anyEKU.certificate, anchors: [root.certificate], host: "example.com", profile: .rfc5280))
    }

    /// The default (clients') profile: what a private CA issues every day and every client accepts
    /// is trusted, with the Baseline Requirements findings as warnings; webpki refuses the same chain.
    func testClientsProfileReportsBaselineRequirementsAsWarnings() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root("Private Root", extensions: "basicConstraints = critical,CA:TRUE\nsubjectKeyIdentifier = hash\n")
        let leaf = try pki.leaf(issuer: root, eku: nil, keyUsage: "critical, digitalSignature, keyEncipherment")
        let clients = try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com", profile: .automatic)
        assertTrusted(clients)
        let warned = Set(clients.warnings.map(\.name))
        XCTAssertTrue(warned.isSuperset(of: ["MTLS_WEBPKI_EE_EKU_MISSING", "MTLS_WEBPKI_EE_KEY_USAGE"]), "\(warned)")
        for warning in clients.warnings {
            XCTAssertTrue(warning.hint.description.contains("a public CA could not issue it"), "\(warning.hint)")
            XCTAssertTrue(warning.hint.description.contains("TrustPolicy.profile"), "\(warning.hint)")
        }
        let strict = try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com", profile: .webPKI)
        XCTAssertFalse(strict.isTrusted)
        XCTAssertTrue(strict.warnings.isEmpty, "webpki makes them findings, not warnings")
        XCTAssertTrue(Set(strict.findings.map(\.name)).isSuperset(of: warned), "\(strict.findings)")
        // The plain verdict agrees with the platforms whose rules allow the chain.
        let platforms = try PlatformEvaluator.evaluate(
            leaf.certificate, policy: TrustPolicy(anchors: [root.certificate], evaluationTime: TrustEvaluatorTests.fixedTime, hostname: "example.com"),
            platforms: [.chrome, .java]
        ).verdicts
        XCTAssertEqual(platforms.map(\.outcome), [.accepted, .accepted], "\(platforms)")
        // A client certificate has no Web PKI warnings; a public-suffix wildcard stays a failure
        // (Chrome and Firefox refuse it whoever issued it).
        XCTAssertTrue(try evaluate(leaf.certificate, anchors: [root.certificate], purpose: .client, profile: .automatic).warnings.isEmpty)
        let wildcard = try pki.leaf(issuer: root, san: "DNS:*.co.uk")
        assertRejected(try evaluate(wildcard.certificate, anchors: [root.certificate], host: "example.co.uk", profile: .automatic), "MTLS_WEBPKI_PUBLIC_SUFFIX_WILDCARD")
    }

    func testCACertificateCannotBeTheLeaf() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let caLeaf = try pki.leaf(issuer: root, basicConstraints: "critical, CA:TRUE", keyUsage: "critical, digitalSignature")
        assertRejected(try evaluate(caLeaf.certificate, anchors: [root.certificate], host: "example.com"), "MTLS_WEBPKI_EE_IS_CA", depth: 0)
    }

    func testAuthorityKeyIdentifierNeedsItsKeyIdentifierAtEveryPosition() throws {
        let pki = try MiniPKI(self)
        let issuerOnly = "authorityKeyIdentifier = issuer:always\n"
        let root = try pki.root("AKI Root", aki: issuerOnly)
        assertRejected(try evaluate(pki.leaf(issuer: root).certificate, anchors: [root.certificate], host: "example.com"), "MTLS_WEBPKI_AKI_WITHOUT_KEY_ID", depth: 1)
        let goodRoot = try pki.root()
        let ca = try pki.ca("AKI CA", issuer: goodRoot, aki: issuerOnly)
        assertRejected(
            try evaluate(pki.leaf(issuer: ca).certificate, intermediates: [ca.certificate], anchors: [goodRoot.certificate], host: "example.com"), "MTLS_WEBPKI_AKI_WITHOUT_KEY_ID",
            depth: 1)
        let leaf = try pki.leaf(issuer: goodRoot, aki: issuerOnly)
        assertRejected(try evaluate(leaf.certificate, anchors: [goodRoot.certificate], host: "example.com"), "MTLS_WEBPKI_AKI_WITHOUT_KEY_ID", depth: 0)
    }

    func testCriticalSubjectAltNameWithASubjectIsRejected() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let leaf = try pki.leaf(issuer: root, san: "critical, DNS:example.com")
        assertRejected(try evaluate(leaf.certificate, anchors: [root.certificate], host: "example.com"), "MTLS_WEBPKI_SAN_CRITICAL", depth: 0)
    }

    func testCommonNameMustCopyTheSubjectAltNameItNames() throws {
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let cases: [(cn: String, san: String, host: String)] = [
            ("Example.COM", "DNS:example.com", "example.com"),
            ("192.168.001.001", "IP:192.168.1.1", "192.168.1.1"),
            ("0xC0A80101", "IP:192.168.1.1", "192.168.1.1"),
            ("2001:DB8::1", "IP:2001:db8::1", "2001:db8::1"),
            ("xn--nxasmq6b.com", "DNS:xn--n3h.com", "xn--n3h.com"),
        ]
        for (cn, san, host) in cases {
            let leaf = try pki.leaf(issuer: root, commonName: cn, san: san)
            assertRejected(try evaluate(leaf.certificate, anchors: [root.certificate], host: host), "MTLS_WEBPKI_CN_NOT_IN_SAN", depth: 0)
        }
        for (cn, san, host) in [
            ("example.com", "DNS:example.com", "example.com"), ("192.168.1.1", "IP:192.168.1.1", "192.168.1.1"), ("Example Server", "DNS:example.com", "example.com"),
        ] {
            assertTrusted(try evaluate(pki.leaf(issuer: root, commonName: cn, san: san).certificate, anchors: [root.certificate], host: host))
        }
    }

    func testWildcardOnAPublicSuffixNeverMatches() throws {
        guard PublicSuffixList.system.isAvailable else { throw XCTSkip("no Public Suffix List on this system (Debian package publicsuffix)") }
        XCTAssertTrue(PublicSuffixList.system.isPublicSuffix("co.uk"))
        XCTAssertTrue(PublicSuffixList.system.isPublicSuffix("s3.amazonaws.com"))
        XCTAssertFalse(PublicSuffixList.system.isPublicSuffix("example.co.uk"))
        let pki = try MiniPKI(self)
        let root = try pki.root()
        let spanning = try pki.leaf(issuer: root, san: "DNS:*.co.uk")
        assertRejected(try evaluate(spanning.certificate, anchors: [root.certificate], host: "example.co.uk"), "MTLS_WEBPKI_PUBLIC_SUFFIX_WILDCARD", depth: 0)
        XCTAssertTrue(
            try opensslAccepts(leaf: spanning.path, caFile: root.path, untrusted: nil, ["-verify_hostname", "example.co.uk"]), "OpenSSL only refuses wildcards over one label")
        let alsoExact = try pki.leaf(issuer: root, commonName: "s3.amazonaws.com", san: "DNS:s3.amazonaws.com, DNS:*.s3.amazonaws.com")
        assertTrusted(try evaluate(alsoExact.certificate, anchors: [root.certificate], host: "s3.amazonaws.com"))
        assertRejected(try evaluate(alsoExact.certificate, anchors: [root.certificate], host: "bucket.s3.amazonaws.com"), "MTLS_WEBPKI_PUBLIC_SUFFIX_WILDCARD")
        assertTrusted(
            try evaluate(pki.leaf(issuer: root, commonName: "example.co.uk", san: "DNS:*.example.co.uk").certificate, anchors: [root.certificate], host: "www.example.co.uk"))
    }
}

// MARK: - A tiny PKI made with the openssl CLI

/// Makes keys and certificates with `openssl ca` in a temporary directory, with fixed validity
/// (2025-01-01 → 2035-01-01 unless asked otherwise) so that the fixed evaluation time works on any day.
private final class MiniPKI {
    enum KeyKind { case p256, secp256k1, rsa1024, dsa }

    struct Issued {
        let certificate: Certificate
        let path: String
        let keyPath: String
        let commonName: String
    }

    private let directory: URL
    private var counter = 0

    init(_ testCase: XCTestCase) throws {
        guard OpenSSLCLI.path != nil else { throw XCTSkip("the openssl command-line tool is not installed") }
        directory = try TestCertificates.temporaryDirectory(for: testCase)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("new"), withIntermediateDirectories: true)
        try write("index.txt", "")
        try write(
            "ca.cnf",
            """
            [ ca ]
            default_ca = CA_default
            [ CA_default ]
            database = \(directory.path)/index.txt
            new_certs_dir = \(directory.path)/new
            serial = \(directory.path)/serial
            default_md = sha256
            policy = policy_any
            unique_subject = no
            email_in_dn = no
            copy_extensions = none
            default_crl_days = 3650
            [ policy_any ]
            commonName = optional
            [ req ]
            distinguished_name = dn
            prompt = no
            [ dn ]
            CN = unused

            """)
    }

    private func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    private func next(_ stem: String) -> String {
        counter += 1
        return "\(stem)-\(counter)"
    }

    /// A new private key; returns its path.
    func key(_ kind: KeyKind) throws -> String {
        let path = file(next("key") + ".pem")
        switch kind {
        case .p256: try OpenSSLCLI.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
        case .secp256k1: try OpenSSLCLI.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:secp256k1", "-out", path])
        case .rsa1024: try OpenSSLCLI.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", path])
        case .dsa:
            let parameters = file(next("dsaparam") + ".pem")
            try OpenSSLCLI.run(["genpkey", "-genparam", "-algorithm", "DSA", "-pkeyopt", "dsa_paramgen_bits:1024", "-out", parameters])
            try OpenSSLCLI.run(["genpkey", "-paramfile", parameters, "-out", path])
        }
        return path
    }

    /// Issues a certificate; `issuer` nil makes it self-signed.
    func issue(
        commonName: String, issuer: Issued?, keyPath: String, extensions: String, serial: String? = nil,
        notAfter: String = "20350101000000Z", digest: String = "sha256"
    ) throws -> Issued {
        let stem = next("cert")
        let request = file(stem + ".csr")
        let output = file(stem + ".pem")
        let extensionFile = file(stem + ".ext")
        try write(stem + ".ext", "[ ext ]\n" + extensions)
        try write("serial", (serial ?? String(format: "%04X", 0x1000 + counter)) + "\n")
        try write("index.txt", "")  // the database only guards against repeated serials, which tests want
        try OpenSSLCLI.run(["req", "-new", "-config", file("ca.cnf"), "-key", keyPath, "-subj", "/CN=\(commonName)", "-out", request])
        var arguments = [
            "ca", "-batch", "-config", file("ca.cnf"), "-in", request, "-out", output, "-notext", "-preserveDN", "-md", digest,
            "-startdate", "20250101000000Z", "-enddate", notAfter, "-extfile", extensionFile, "-extensions", "ext",
        ]
        if let issuer {
            arguments += ["-cert", issuer.path, "-keyfile", issuer.keyPath]
        } else {
            arguments += ["-selfsign", "-keyfile", keyPath]
        }
        try OpenSSLCLI.run(arguments)
        let certificates = try Certificate.fromPEM(Array(Data(contentsOf: URL(fileURLWithPath: output))))
        return Issued(certificate: certificates[0], path: output, keyPath: keyPath, commonName: commonName)
    }

    func root(
        _ name: String = "Test Root", key: KeyKind = .p256, serial: String? = nil, extra: String = "", aki: String = "authorityKeyIdentifier = keyid:always\n",
        extensions: String? = nil
    ) throws -> Issued {
        let defaults = "basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n" + aki
        return try issue(commonName: name, issuer: nil, keyPath: self.key(key), extensions: (extensions ?? defaults) + extra, serial: serial)
    }

    func ca(
        _ name: String, issuer: Issued, key: KeyKind = .p256, keyPath: String? = nil, serial: String? = nil, digest: String = "sha256", extra: String = "",
        aki: String = "authorityKeyIdentifier = keyid:always\n"
    ) throws -> Issued {
        let extensions = "basicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n" + aki + extra
        return try issue(commonName: name, issuer: issuer, keyPath: keyPath ?? self.key(key), extensions: extensions, serial: serial, digest: digest)
    }

    func leaf(
        issuer: Issued, commonName: String = "example.com", san: String? = "DNS:example.com", key: KeyKind = .p256, serial: String? = nil,
        notAfter: String = "20350101000000Z", eku: String? = "serverAuth, clientAuth", basicConstraints: String = "critical, CA:FALSE",
        keyUsage: String = "critical, digitalSignature", aki: String = "authorityKeyIdentifier = keyid:always\n", extra: String = ""
    ) throws -> Issued {
        var extensions = "basicConstraints = \(basicConstraints)\nkeyUsage = \(keyUsage)\nsubjectKeyIdentifier = hash\n" + aki
        if let eku { extensions += "extendedKeyUsage = \(eku)\n" }
        if let san { extensions += "subjectAltName = \(san)\n" }
        return try issue(commonName: commonName, issuer: issuer, keyPath: self.key(key), extensions: extensions + extra, serial: serial, notAfter: notAfter)
    }

    /// A CRL of `issuer` revoking nothing, valid 2025-01-01 → 2035-01-01, with or without CRLNumber.
    func crl(issuer: Issued, number: Bool) throws -> CertificateRevocationList {
        let stem = next("crl")
        var configuration = try String(contentsOfFile: file("ca.cnf"), encoding: .utf8)
        if number {
            try write(stem + ".number", "01\n")
            configuration = configuration.replacingOccurrences(of: "default_crl_days = 3650", with: "default_crl_days = 3650\ncrlnumber = \(file(stem + ".number"))")
        }
        try write(stem + ".cnf", configuration)
        let output = file(stem + ".pem")
        try OpenSSLCLI.run([
            "ca", "-gencrl", "-batch", "-config", file(stem + ".cnf"), "-cert", issuer.path, "-keyfile", issuer.keyPath, "-out", output,
            "-crl_lastupdate", "20250101000000Z", "-crl_nextupdate", "20350101000000Z",
        ])
        return try CertificateLoader.crls(atPath: output)[0]
    }

    /// A PEM bundle of certificates; returns its path.
    func bundle(_ certificates: [Issued]) throws -> String {
        let name = next("bundle") + ".pem"
        try write(name, certificates.map(\.certificate.pemString).joined())
        return file(name)
    }
}

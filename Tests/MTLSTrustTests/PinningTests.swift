import Foundation
import XCTest

@testable import MTLSTrust

/// Pins (SPKI and whole-certificate), pin sets, and the evaluation modes of Alamofire
/// (`ServerTrustEvaluating`) and AFNetworking (`AFSecurityPolicy`) on the TestCerts fixtures, at the
/// fixed time 2026-06-01T00:00:00Z.
final class PinningTests: XCTestCase {
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    private func fixture(_ identity: TestCertificates.Identity) throws -> Certificate { try TestCertificates.certificate(identity) }

    /// The server chain as a server presents it (leaf + intermediate), trusting only the test root.
    private func serverTrust(
        _ leaf: TestCertificates.Identity = TestCertificates.server, anchors: [TestCertificates.Identity] = [TestCertificates.rootCA], crls: [CertificateRevocationList] = []
    ) throws -> ServerTrust {
        ServerTrust(
            certificates: [try fixture(leaf), try fixture(TestCertificates.intermediateCA)], anchors: try anchors.map(fixture),
            includesSystemRoots: false, evaluationTime: Self.fixedTime, crls: crls)
    }

    private func selfSignedTrust() throws -> ServerTrust {
        ServerTrust(
            certificates: [try fixture(TestCertificates.selfSigned)], anchors: [try fixture(TestCertificates.rootCA)], includesSystemRoots: false, evaluationTime: Self.fixedTime)
    }

    /// Asserts that `evaluator` rejects, and returns the failure for further checks.
    @discardableResult
    private func assertFails(_ evaluator: any ServerTrustEvaluating, _ trust: ServerTrust, host: String = "localhost", file: StaticString = #filePath, line: UInt = #line)
        -> ServerTrustFailure?
    {
        do {
            try evaluator.evaluate(trust, forHost: host)
            XCTFail("\(type(of: evaluator)) accepted", file: file, line: line)
            return nil
        } catch {
            XCTAssertTrue(error.message.contains(host), "the message names the host: \(error.message)", file: file, line: line)
            XCTAssertFalse(error.hint.isEmpty, "no hint for \(error.reason)", file: file, line: line)
            return error
        }
    }

    private func assertPasses(_ evaluator: any ServerTrustEvaluating, _ trust: ServerTrust, host: String = "localhost", file: StaticString = #filePath, line: UInt = #line) {
        do {
            try evaluator.evaluate(trust, forHost: host)
        } catch {
            XCTFail("\(type(of: evaluator)) rejected: \(error)", file: file, line: line)
        }
    }

    // MARK: Pins

    func testPublicKeyPinEqualsTheOpenSSLComputedPin() throws {
        for identity in [TestCertificates.server, TestCertificates.serverRSA2048, TestCertificates.serverEd25519, TestCertificates.rootCA] {
            let facts = try OpenSSLCertificateFacts.of(identity)
            XCTAssertEqual(Pin.publicKey(of: try fixture(identity)).description, "sha256/\(facts.spkiPinBase64)", "\(identity)")
        }
    }

    func testCertificatePinIsTheSHA256OfTheDER() throws {
        let certificate = try fixture(TestCertificates.server)
        let expected = try OpenSSLCLI.value(["x509", "-in", TestCertificates.url(TestCertificates.server.pem).path, "-noout", "-fingerprint", "-sha256"])
        let pin = Pin.certificate(certificate)
        XCTAssertEqual(pin.digest.colonHex, expected)
        XCTAssertTrue(pin.description.hasPrefix("cert-sha256/"))
        XCTAssertTrue(pin.matches(certificate))
        XCTAssertFalse(pin.matches(try fixture(TestCertificates.intermediateCA)))
    }

    func testEveryPinSpellingParses() throws {
        let server = try fixture(TestCertificates.server)
        let spki = Pin.publicKey(of: server)
        let base64 = spki.base64
        for text in ["sha256/\(base64)", "sha256//\(base64)", "pin-sha256=\"\(base64)\"", base64, "  sha256/\(base64)  ", "SHA256/\(base64)"] {
            XCTAssertEqual(try Pin(parsing: text), spki, text)
        }
        let whole = Pin.certificate(server)
        XCTAssertEqual(try Pin(parsing: "cert-sha256/\(whole.base64)"), whole)
        XCTAssertEqual(try Pin(parsing: "cert-sha256:\(whole.digest.colonHex)"), whole)
        XCTAssertEqual(try Pin(parsing: spki.description), spki, "description round-trips")
        XCTAssertEqual(try Pin(parsing: whole.description), whole, "description round-trips")
    }

    func testMalformedPinIsRejectedWithTheExpectedForm() {
        for text in ["sha256/tooShort", "md5/\(String(repeating: "A", count: 24))", "", "sha256/\(String(repeating: "!", count: 44))"] {
            let error = assertThrowsMTLSError(.invalidArgument, text) { try Pin(parsing: text) }
            XCTAssertTrue(error?.message.contains("sha256/") == true, error?.message ?? "")
        }
    }

    // MARK: Pin sets

    func testPinSetMatchesAnyCertificateOfTheChainAndSaysWhere() throws {
        let chain = [try fixture(TestCertificates.server), try fixture(TestCertificates.intermediateCA), try fixture(TestCertificates.rootCA)]
        let set = PinSet(pins: [Pin.publicKey(of: chain[2]), Pin.certificate(chain[1])])
        let match = set.check(chain, at: Self.fixedTime)
        XCTAssertTrue(match.isSatisfied)
        XCTAssertEqual(match.matched.map(\.depth), [1, 2])
        XCTAssertEqual(match.mismatchDescription, "")
        XCTAssertFalse(PinSet(pins: [Pin.publicKey(of: chain[2])], scope: .leafOnly).check(chain, at: Self.fixedTime).isSatisfied)
        XCTAssertTrue(PinSet(pins: [Pin.publicKey(of: chain[0])], scope: .leafOnly).check(chain, at: Self.fixedTime).isSatisfied)
    }

    func testPinMismatchListsExpectedAndPresentedPinsOfTheSameKind() throws {
        let chain = [try fixture(TestCertificates.server), try fixture(TestCertificates.intermediateCA)]
        let other = try fixture(TestCertificates.otherRootCA)
        let spkiSet = PinSet(pins: [Pin.publicKey(of: other)])
        let spkiMatch = spkiSet.check(chain, at: Self.fixedTime)
        XCTAssertFalse(spkiMatch.isSatisfied)
        XCTAssertEqual(spkiMatch.expected, [Pin.publicKey(of: other)])
        XCTAssertEqual(spkiMatch.presentedComparable, chain.map { Pin.publicKey(of: $0) })
        XCTAssertTrue(spkiMatch.mismatchDescription.contains("expected one of \(Pin.publicKey(of: other))"), spkiMatch.mismatchDescription)
        XCTAssertTrue(spkiMatch.mismatchDescription.contains("presented \(Pin.publicKey(of: chain[0])), \(Pin.publicKey(of: chain[1]))"), spkiMatch.mismatchDescription)
        let certificateMatch = PinSet(pins: [Pin.certificate(other)]).check(chain, at: Self.fixedTime)
        XCTAssertEqual(certificateMatch.presentedComparable, chain.map { Pin.certificate($0) })
    }

    func testExpiredPinSetIsNotEnforced() throws {
        let chain = [try fixture(TestCertificates.server)]
        let set = PinSet(pins: [Pin.publicKey(of: try fixture(TestCertificates.otherRootCA))], expiration: Self.fixedTime.addingTimeInterval(-1))
        let match = set.check(chain, at: Self.fixedTime)
        XCTAssertTrue(match.expired)
        XCTAssertTrue(match.isSatisfied)
    }

    func testPinFilesParseAsTextOrJSON() throws {
        let pin = Pin.publicKey(of: try fixture(TestCertificates.server))
        let text = "# pins for api\n\(pin)   # primary\n\nexpires 2027-01-01\n"
        let fromText = try PinSet.parse(Array(text.utf8), source: "pins.txt")
        XCTAssertEqual(fromText.pins, [pin])
        XCTAssertNotNil(fromText.expiration)
        let json = #"{"pins": ["\#(pin)", {"pin": "\#(pin.base64)"}], "expires": "2027-01-01"}"#
        let fromJSON = try PinSet.parse(Array(json.utf8), source: "pins.json")
        XCTAssertEqual(fromJSON.pins, [pin, pin])
        let empty = assertThrowsMTLSError(.malformedInput) { try PinSet.parse(Array("# nothing\n".utf8), source: "empty.txt") }
        XCTAssertTrue(empty?.message.contains("empty.txt") == true)
        assertThrowsMTLSError(.malformedInput) { try PinSet.parse(Array("sha256/nope\n".utf8), source: "bad.txt") }
    }

    // MARK: Alamofire evaluators

    func testDefaultTrustEvaluatorValidatesChainAndHost() throws {
        assertPasses(DefaultTrustEvaluator(), try serverTrust())
        assertPasses(DefaultTrustEvaluator(), try serverTrust(), host: "127.0.0.1")
        let wrongHost = assertFails(DefaultTrustEvaluator(), try serverTrust(), host: "api.example.com")
        guard case .hostValidationFailed = wrongHost?.reason else { return XCTFail("\(String(describing: wrongHost))") }
        XCTAssertTrue(wrongHost?.hint.contains("api.example.com") == true, wrongHost?.hint ?? "")
        assertPasses(DefaultTrustEvaluator(validateHost: false), try serverTrust(), host: "api.example.com")
        let expired = assertFails(DefaultTrustEvaluator(), try serverTrust(TestCertificates.serverExpired))
        guard case .defaultEvaluationFailed = expired?.reason else { return XCTFail("\(String(describing: expired))") }
        XCTAssertEqual(expired?.findings.first?.name, "X509_V_ERR_CERT_HAS_EXPIRED")
        let untrusted = assertFails(DefaultTrustEvaluator(), try serverTrust(anchors: [TestCertificates.otherRootCA]))
        guard case .defaultEvaluationFailed = untrusted?.reason else { return XCTFail("\(String(describing: untrusted))") }
        let nothing = assertFails(DefaultTrustEvaluator(), ServerTrust(certificates: [], anchors: [try fixture(TestCertificates.rootCA)]))
        guard case .noCertificatesFound = nothing?.reason else { return XCTFail("\(String(describing: nothing))") }
    }

    func testRevocationTrustEvaluatorChecksCRLs() throws {
        let crls = try CertificateLoader.crls(atPath: TestCertificates.url(TestCertificates.crls).path)
        assertPasses(RevocationTrustEvaluator(), try serverTrust(crls: crls))
        assertPasses(RevocationTrustEvaluator(crls: crls, options: .requirePositiveResponse), try serverTrust())
        let revoked = assertFails(RevocationTrustEvaluator(crls: crls), try serverTrust(TestCertificates.serverRevoked))
        guard case .revocationCheckFailed = revoked?.reason else { return XCTFail("\(String(describing: revoked))") }
        XCTAssertTrue(revoked?.findings.contains { $0.name == "X509_V_ERR_CERT_REVOKED" } == true)
        // Best attempt: no CRL at all is no verdict; requirePositiveResponse makes it a failure.
        assertPasses(RevocationTrustEvaluator(), try serverTrust(TestCertificates.serverRevoked))
        let unknown = assertFails(RevocationTrustEvaluator(options: .requirePositiveResponse), try serverTrust())
        guard case .revocationCheckFailed = unknown?.reason else { return XCTFail("\(String(describing: unknown))") }
        // Only the root's CRL: the intermediate's certificates are not covered.
        let rootOnly = crls.filter { $0.issuer.contains("Root") }
        XCTAssertEqual(rootOnly.count, 1)
        assertPasses(RevocationTrustEvaluator(crls: rootOnly), try serverTrust(TestCertificates.serverRevoked))
        assertFails(RevocationTrustEvaluator(crls: rootOnly, options: .requirePositiveResponse), try serverTrust(TestCertificates.serverRevoked))
    }

    func testPinnedCertificatesTrustEvaluatorNeedsAPinnedCertificateInTheChain() throws {
        assertPasses(PinnedCertificatesTrustEvaluator(certificates: [try fixture(TestCertificates.intermediateCA)]), try serverTrust())
        assertPasses(PinnedCertificatesTrustEvaluator(certificates: [try fixture(TestCertificates.rootCA)]), try serverTrust())
        let other = try fixture(TestCertificates.otherRootCA)
        let mismatch = assertFails(PinnedCertificatesTrustEvaluator(certificates: [other]), try serverTrust())
        guard case .certificatePinningFailed(let expected, let presented) = mismatch?.reason else { return XCTFail("\(String(describing: mismatch))") }
        XCTAssertEqual(expected, [Pin.certificate(other)])
        XCTAssertEqual(presented, try [TestCertificates.server, TestCertificates.intermediateCA].map { Pin.certificate(try fixture($0)) })
        XCTAssertTrue(mismatch?.description.contains(Pin.certificate(other).description) == true)
        XCTAssertTrue(mismatch?.description.contains(presented[0].description) == true)
        // A pinned self-signed certificate: only trusted when the pins are also anchors.
        let selfSigned = try fixture(TestCertificates.selfSigned)
        let strict = assertFails(PinnedCertificatesTrustEvaluator(certificates: [selfSigned]), try selfSignedTrust())
        guard case .defaultEvaluationFailed = strict?.reason else { return XCTFail("\(String(describing: strict))") }
        assertPasses(PinnedCertificatesTrustEvaluator(certificates: [selfSigned], acceptSelfSignedCertificates: true), try selfSignedTrust())
        assertFails(PinnedCertificatesTrustEvaluator(certificates: [selfSigned], acceptSelfSignedCertificates: true), try selfSignedTrust(), host: "other.example")
        let none = assertFails(PinnedCertificatesTrustEvaluator(certificates: []), try serverTrust())
        guard case .noPinsConfigured = none?.reason else { return XCTFail("\(String(describing: none))") }
    }

    func testPublicKeysTrustEvaluatorNeedsAPinnedKeyInTheChain() throws {
        let server = try fixture(TestCertificates.server)
        assertPasses(PublicKeysTrustEvaluator(keys: [server.publicKey]), try serverTrust())
        assertPasses(PublicKeysTrustEvaluator(pins: [Pin.publicKey(of: try fixture(TestCertificates.intermediateCA))]), try serverTrust())
        let backup = try PublicKey(spkiDER: PEM.parse(TestCertificates.bytes(TestCertificates.Keys.ecP256Public))[0].derBytes)
        let mismatch = assertFails(PublicKeysTrustEvaluator(keys: [backup]), try serverTrust())
        guard case .publicKeyPinningFailed(let expected, let presented) = mismatch?.reason else { return XCTFail("\(String(describing: mismatch))") }
        XCTAssertEqual(expected, [Pin.publicKey(of: backup)])
        XCTAssertEqual(presented, [Pin.publicKey(of: server), Pin.publicKey(of: try fixture(TestCertificates.intermediateCA))])
        XCTAssertEqual(mismatch?.expectedPins, expected)
        XCTAssertEqual(mismatch?.presentedPins, presented)
        XCTAssertTrue(mismatch?.message.contains("expected one of \(expected[0])") == true, mismatch?.message ?? "")
        // The key matches but the chain is expired: the default validation comes first.
        let expired = assertFails(PublicKeysTrustEvaluator(keys: [try fixture(TestCertificates.serverExpired).publicKey]), try serverTrust(TestCertificates.serverExpired))
        guard case .defaultEvaluationFailed = expired?.reason else { return XCTFail("\(String(describing: expired))") }
        assertPasses(
            PublicKeysTrustEvaluator(keys: [try fixture(TestCertificates.serverExpired).publicKey], performDefaultValidation: false, validateHost: false),
            try serverTrust(TestCertificates.serverExpired))
        let none = assertFails(PublicKeysTrustEvaluator(pins: [Pin.certificate(server)]), try serverTrust())
        guard case .noPinsConfigured = none?.reason else { return XCTFail("\(String(describing: none))") }
    }

    func testCompositeTrustEvaluatorThrowsTheFirstFailure() throws {
        let intermediate = try fixture(TestCertificates.intermediateCA)
        let composite = CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(), PinnedCertificatesTrustEvaluator(certificates: [intermediate])])
        assertPasses(composite, try serverTrust())
        let wrongHost = assertFails(composite, try serverTrust(), host: "api.example.com")
        guard case .hostValidationFailed = wrongHost?.reason else { return XCTFail("\(String(describing: wrongHost))") }
        let unpinned = CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(), PublicKeysTrustEvaluator(keys: [try fixture(TestCertificates.otherRootCA).publicKey])])
        let failure = assertFails(unpinned, try serverTrust())
        guard case .publicKeyPinningFailed = failure?.reason else { return XCTFail("\(String(describing: failure))") }
    }

    func testDisabledTrustEvaluatorAcceptsAnythingAsItsNameWarns() throws {
        let evaluator = DisabledTrustEvaluator()
        XCTAssertTrue(evaluator.isTrusted(try serverTrust(TestCertificates.serverExpired, anchors: [TestCertificates.otherRootCA]), forHost: "anything.example"))
        XCTAssertTrue(evaluator.isTrusted(try selfSignedTrust(), forHost: "localhost"))
        XCTAssertFalse(DefaultTrustEvaluator().isTrusted(try selfSignedTrust(), forHost: "localhost"))
    }

    // MARK: AFNetworking security policy

    func testAFSecurityPolicyWithoutPinningValidatesUnlessToldNotTo() throws {
        assertPasses(AFSecurityPolicy.defaultPolicy, try serverTrust())
        let wrongHost = assertFails(AFSecurityPolicy.defaultPolicy, try serverTrust(), host: "api.example.com")
        guard case .hostValidationFailed = wrongHost?.reason else { return XCTFail("\(String(describing: wrongHost))") }
        assertPasses(AFSecurityPolicy(validatesDomainName: false), try serverTrust(), host: "api.example.com")
        assertFails(AFSecurityPolicy.defaultPolicy, try serverTrust(TestCertificates.serverExpired))
        // allowInvalidCertificates without a domain check accepts anything (insecure, as AFNetworking).
        assertPasses(
            AFSecurityPolicy(allowInvalidCertificates: true, validatesDomainName: false), try serverTrust(TestCertificates.serverExpired, anchors: [TestCertificates.otherRootCA]))
        // allowInvalidCertificates with a domain check and no pins is refused outright.
        let refused = assertFails(AFSecurityPolicy(allowInvalidCertificates: true), try selfSignedTrust())
        guard case .domainValidationRequiresPinning = refused?.reason else { return XCTFail("\(String(describing: refused))") }
    }

    func testAFSecurityPolicyCertificatePinning() throws {
        let root = try fixture(TestCertificates.rootCA)
        let intermediate = try fixture(TestCertificates.intermediateCA)
        assertPasses(AFSecurityPolicy.policy(withPinningMode: .certificate, pinnedCertificates: [root]), try serverTrust())
        assertPasses(AFSecurityPolicy.policy(withPinningMode: .certificate, pinnedCertificates: [intermediate]), try serverTrust())
        let other = try fixture(TestCertificates.otherRootCA)
        let mismatch = assertFails(AFSecurityPolicy.policy(withPinningMode: .certificate, pinnedCertificates: [other]), try serverTrust())
        guard case .certificatePinningFailed(let expected, let presented) = mismatch?.reason else { return XCTFail("\(String(describing: mismatch))") }
        XCTAssertEqual(expected, [Pin.certificate(other)])
        XCTAssertEqual(presented.count, 2)
        // A self-signed server: AFNetworking needs allowInvalidCertificates plus the pin.
        let selfSigned = try fixture(TestCertificates.selfSigned)
        assertFails(AFSecurityPolicy.policy(withPinningMode: .certificate, pinnedCertificates: [selfSigned]), try selfSignedTrust())
        var lenient = AFSecurityPolicy.policy(withPinningMode: .certificate, pinnedCertificates: [selfSigned])
        lenient.allowInvalidCertificates = true
        assertPasses(lenient, try selfSignedTrust())
        assertFails(lenient, try selfSignedTrust(), host: "other.example")
        // Even with allowInvalidCertificates, the chain through the pin must be valid (not expired).
        var expiredPinned = AFSecurityPolicy.policy(withPinningMode: .certificate, pinnedCertificates: [root])
        expiredPinned.allowInvalidCertificates = true
        let expired = assertFails(expiredPinned, try serverTrust(TestCertificates.serverExpired))
        guard case .defaultEvaluationFailed = expired?.reason else { return XCTFail("\(String(describing: expired))") }
    }

    func testAFSecurityPolicyPublicKeyPinning() throws {
        let intermediate = try fixture(TestCertificates.intermediateCA)
        assertPasses(AFSecurityPolicy.policy(withPinningMode: .publicKey, pinnedCertificates: [intermediate]), try serverTrust())
        let other = try fixture(TestCertificates.otherRootCA)
        let mismatch = assertFails(AFSecurityPolicy.policy(withPinningMode: .publicKey, pinnedCertificates: [other]), try serverTrust())
        guard case .publicKeyPinningFailed(let expected, let presented) = mismatch?.reason else { return XCTFail("\(String(describing: mismatch))") }
        XCTAssertEqual(expected, [Pin.publicKey(of: other)])
        XCTAssertEqual(presented, try serverTrust().presentedPublicKeyPins)
        // allowInvalidCertificates skips the chain check: a pinned key on an expired chain passes.
        var lenient = AFSecurityPolicy.policy(withPinningMode: .publicKey, pinnedCertificates: [try fixture(TestCertificates.serverExpired)])
        assertFails(lenient, try serverTrust(TestCertificates.serverExpired))
        lenient.allowInvalidCertificates = true
        assertPasses(lenient, try serverTrust(TestCertificates.serverExpired))
        assertPasses(
            AFSecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [try fixture(TestCertificates.selfSigned)], allowInvalidCertificates: true), try selfSignedTrust())
    }

    func testEveryFailureReasonHasAMessageAndAHint() throws {
        let evaluation = TrustEvaluation(
            chain: [], findings: [TrustFinding(depth: 0, subject: "CN=x", code: 10, name: "X509_V_ERR_CERT_HAS_EXPIRED", reason: "expired", hint: "renew")], pathsTried: 1)
        let pin = Pin.publicKey(of: try fixture(TestCertificates.server))
        let reasons: [ServerTrustFailure.Reason] = [
            .noCertificatesFound, .noPinsConfigured, .defaultEvaluationFailed(evaluation), .hostValidationFailed(evaluation),
            .revocationCheckFailed(evaluation), .certificatePinningFailed(expected: [pin], presented: [pin]),
            .publicKeyPinningFailed(expected: [pin], presented: [pin]), .domainValidationRequiresPinning,
        ]
        for reason in reasons {
            let failure = ServerTrustFailure(host: "api.example.com", reason: reason)
            XCTAssertTrue(failure.message.contains("api.example.com"), failure.message)
            XCTAssertFalse(failure.hint.isEmpty, "\(reason)")
            XCTAssertTrue(failure.description.contains(failure.hint))
        }
    }
}

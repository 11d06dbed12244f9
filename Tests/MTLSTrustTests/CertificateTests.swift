import Foundation
import XCTest

@testable import MTLSTrust

/// `Certificate`: parsing, names, dates, extensions, fingerprints and pins — each value checked
/// against what the `openssl` CLI says about the same file.
final class CertificateTests: XCTestCase {
    typealias T = TestCertificates

    // MARK: Parsing PEM and DER

    func testSinglePEMBlockParsesToOneCertificateEqualToItsDERTwin() throws {
        for identity in T.allIdentities {
            let fromPEM = try Certificate.fromPEM(T.bytes(identity.pem))
            XCTAssertEqual(fromPEM.count, 1, "\(identity.pem)")
            let fromDER = try Certificate(derBytes: T.bytes(identity.der))
            XCTAssertEqual(fromPEM.first, fromDER, "\(identity)")
            XCTAssertEqual(fromPEM.first?.derBytes, try T.bytes(identity.der), "\(identity)")
        }
    }

    func testDERCopyWithCerExtensionParsesLikeTheDERFile() throws {
        let cer = try Certificate(derBytes: T.bytes(T.serverCER))
        XCTAssertEqual(cer, try T.certificate(T.server))
    }

    func testPEMBundlesParseEveryCertificateInFileOrder() throws {
        let server = try T.certificate(T.server)
        let intermediate = try T.certificate(T.intermediateCA)
        let root = try T.certificate(T.rootCA)
        let other = try T.certificate(T.otherRootCA)
        let alice = try T.certificate(T.clientAlice)

        XCTAssertEqual(try Certificate.fromPEM(T.bytes(T.serverChain)), [server, intermediate])
        XCTAssertEqual(try Certificate.fromPEM(T.bytes(T.serverFullChain)), [server, intermediate, root])
        XCTAssertEqual(try Certificate.fromPEM(T.bytes(T.clientAliceChain)), [alice, intermediate])
        XCTAssertEqual(try Certificate.fromPEM(T.bytes(T.anchors)), [root])
        XCTAssertEqual(try Certificate.fromPEM(T.bytes(T.allRoots)), [root, other])
    }

    func testTextBetweenPEMBlocksIsSkipped() throws {
        let bytes = try T.bytes(T.bundleWithText)
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).contains("Signature Algorithm"), "the fixture should carry text dumps")
        let certificates = try Certificate.fromPEM(bytes)
        XCTAssertEqual(certificates.map(\.commonName), ["localhost", "mtls Test Intermediate CA", "mtls Test Root CA"])
        XCTAssertEqual(certificates, [try T.certificate(T.server), try T.certificate(T.intermediateCA), try T.certificate(T.rootCA)])
    }

    func testPEMWithWindowsLineEndingsParses() throws {
        let text = String(decoding: try T.bytes(T.serverChain), as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n")
        let certificates = try Certificate.fromPEM(Array(text.utf8))
        XCTAssertEqual(certificates, try Certificate.fromPEM(T.bytes(T.serverChain)))
    }

    func testDERToPEMIsByteIdenticalToOpenSSLOutput() throws {
        for identity in [T.server, T.rootCA, T.serverRSA4096, T.serverEd25519, T.clientAlice] {
            let certificate = try Certificate(derBytes: T.bytes(identity.der))
            let expected = try OpenSSLCLI.run(["x509", "-inform", "DER", "-in", T.url(identity.der).path, "-outform", "PEM"])
            XCTAssertEqual(Array(certificate.pemString.utf8), expected, "\(identity)")
            XCTAssertEqual(Array(certificate.pemString.utf8), try T.bytes(identity.pem), "\(identity)")
        }
    }

    func testPEMToDERIsByteIdenticalToOpenSSLOutput() throws {
        for identity in [T.server, T.intermediateCA, T.serverRSA2048, T.serverP384, T.clientBobRSA] {
            let certificate = try T.certificate(identity)
            let expected = try OpenSSLCLI.run(["x509", "-in", T.url(identity.pem).path, "-outform", "DER"])
            XCTAssertEqual(certificate.derBytes, expected, "\(identity)")
        }
    }

    func testPEMRoundTripThroughTheLibraryIsLossless() throws {
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            let again = try Certificate.fromPEM(Array(certificate.pemString.utf8))
            XCTAssertEqual(again, [certificate], "\(identity)")
            XCTAssertEqual(try Certificate(derBytes: certificate.derBytes), certificate)
        }
    }

    func testTrustedCertificatePEMFromOpenSSLIsReadAsItsCertificate() throws {
        let trusted = try OpenSSLCLI.run(["x509", "-in", T.url(T.rootCA.pem).path, "-addtrust", "serverAuth", "-trustout"])
        XCTAssertTrue(String(decoding: trusted, as: UTF8.self).contains("BEGIN TRUSTED CERTIFICATE"))
        XCTAssertEqual(try Certificate.fromPEM(trusted), [try T.certificate(T.rootCA)])
    }

    func testEqualCertificatesHashAlikeAndDifferentOnesDiffer() throws {
        let a = try T.certificate(T.server)
        let b = try Certificate(derBytes: T.bytes(T.server.der))
        let c = try T.certificate(T.serverMulti)
        XCTAssertEqual(Set([a, b, c]).count, 2)
        XCTAssertNotEqual(a, c)
    }

    // MARK: Names, serial, dates

    func testSubjectAndIssuerAreRFC4514StringsEqualToOpenSSLs() throws {
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            let facts = try OpenSSLCertificateFacts.of(identity)
            XCTAssertEqual(certificate.subject, facts["subject"], "\(identity)")
            XCTAssertEqual(certificate.issuer, facts["issuer"], "\(identity)")
        }
    }

    func testKnownSubjectsAndIssuersReadAsDocumented() throws {
        let server = try T.certificate(T.server)
        XCTAssertEqual(server.subject, "CN=localhost,O=mtls test,C=US")
        XCTAssertEqual(server.issuer, "CN=mtls Test Intermediate CA,O=mtls test,C=US")
        XCTAssertEqual(server.commonName, "localhost")
        XCTAssertEqual(server.displayName, "CN=localhost")
        XCTAssertEqual(server.description, server.subject)
        XCTAssertEqual(server.version, 3)

        let other = try T.certificate(T.clientOther)
        XCTAssertEqual(other.issuer, "CN=mtls Other Root CA,O=mtls test,C=US")
        let root = try T.certificate(T.rootCA)
        XCTAssertEqual(root.subject, root.issuer)
        XCTAssertEqual(root.commonName, "mtls Test Root CA")
    }

    func testSubjectWithSpecialAndNonASCIICharactersIsEscapedPerRFC4514AndKeptAsUTF8() throws {
        let directory = try T.temporaryDirectory(for: self)
        let out = directory.appendingPathComponent("special.pem").path
        try OpenSSLCLI.run([
            "req", "-x509", "-key", T.url(T.server.key).path, "-utf8", "-subj", #"/C=DE/O=Smith, Jones \+ Co/CN=Zoë "Ü" <x>;y"#,
            "-days", "1", "-out", out,
        ])
        let certificate = try Certificate.fromPEM([UInt8](FileManager.default.contents(atPath: out)!))[0]
        XCTAssertEqual(certificate.subject, #"CN=Zoë \"Ü\" \<x\>\;y,O=Smith\, Jones \+ Co,C=DE"#)
        XCTAssertEqual(certificate.commonName, #"Zoë "Ü" <x>;y"#)
    }

    func testSerialNumbersAreUpperCaseHexEqualToOpenSSLs() throws {
        let documented: [String: String] = [
            "root-ca": "1000", "intermediate-ca": "1001", "server": "2001", "server-rsa2048": "2002", "server-revoked": "200C",
            "client-alice": "2101", "client-serverauth-only": "2104", "other-root-ca": "3000", "client-other": "3001",
            "self-signed": "4001",
        ]
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            XCTAssertEqual(certificate.serialNumberHex, try OpenSSLCertificateFacts.of(identity)["serial"], "\(identity)")
            if let known = documented[identity.basename] { XCTAssertEqual(certificate.serialNumberHex, known, "\(identity)") }
        }
    }

    func testValidityDatesEqualThoseOpenSSLPrints() throws {
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            let facts = try OpenSSLCertificateFacts.of(identity)
            let notBefore = try XCTUnwrap(facts["notBefore"].flatMap(OpenSSLCLI.parseDate), "\(identity)")
            let notAfter = try XCTUnwrap(facts["notAfter"].flatMap(OpenSSLCLI.parseDate), "\(identity)")
            XCTAssertEqual(certificate.notBefore, notBefore, "\(identity) notBefore")
            XCTAssertEqual(certificate.notAfter, notAfter, "\(identity) notAfter")
        }
    }

    func testValidityPeriodsMatchTheDocumentedFixedDates() throws {
        func date(_ iso: String) -> Date { ISO8601DateFormatter().date(from: iso)! }
        let fixedNow = Date(timeIntervalSince1970: 1_780_272_000)

        let server = try T.certificate(T.server)
        XCTAssertEqual(server.notBefore, date("2025-01-01T00:00:00Z"))
        XCTAssertEqual(server.notAfter, date("2035-01-01T00:00:00Z"))
        XCTAssertTrue(server.isValid(at: fixedNow))
        XCTAssertTrue(server.isValid(at: server.notBefore), "validity is inclusive at the start")
        XCTAssertTrue(server.isValid(at: server.notAfter), "validity is inclusive at the end")
        XCTAssertFalse(server.isValid(at: server.notAfter.addingTimeInterval(1)))

        let root = try T.certificate(T.rootCA)
        XCTAssertEqual(root.notAfter, date("2045-01-01T00:00:00Z"))

        let expired = try T.certificate(T.serverExpired)
        XCTAssertEqual(expired.notBefore, date("2020-01-01T00:00:00Z"))
        XCTAssertEqual(expired.notAfter, date("2021-01-01T00:00:00Z"))
        XCTAssertFalse(expired.isValid(at: fixedNow))

        let notYet = try T.certificate(T.serverNotYetValid)
        XCTAssertEqual(notYet.notBefore, date("2040-01-01T00:00:00Z"))
        XCTAssertEqual(notYet.notAfter, date("2041-01-01T00:00:00Z"))
        XCTAssertFalse(notYet.isValid(at: fixedNow))
    }

    // MARK: Subject alternative names

    func testSubjectAlternativeNamesReadAsDocumented() throws {
        let localhost: [SubjectAlternativeName] = [.dns("localhost"), .ip([127, 0, 0, 1]), .ip([UInt8](repeating: 0, count: 15) + [1])]
        let expected: [(T.Identity, [SubjectAlternativeName])] = [
            (T.server, localhost), (T.serverRSA2048, localhost), (T.serverRSA4096, localhost), (T.serverP384, localhost),
            (T.serverEd25519, localhost), (T.serverExpired, localhost), (T.serverNotYetValid, localhost),
            (T.serverClientAuthOnly, localhost), (T.serverRevoked, localhost),
            (T.serverWrongHost, [.dns("wrong.example.com")]),
            (T.serverMulti, [.dns("api.example.com"), .dns("www.example.com")]),
            (T.serverCNOnly, []),
            (T.selfSigned, [.dns("localhost"), .ip([127, 0, 0, 1])]),
            (T.clientAlice, [.email("alice@example.com")]), (T.clientAliceExpired, [.email("alice@example.com")]),
            (T.clientBobRSA, []), (T.clientOther, []), (T.clientServerAuthOnly, []),
            (T.rootCA, []), (T.intermediateCA, []), (T.otherRootCA, []),
        ]
        XCTAssertEqual(expected.count, T.allIdentities.count, "every fixture is listed")
        for (identity, names) in expected {
            XCTAssertEqual(try T.certificate(identity).subjectAlternativeNames, names, "\(identity)")
        }
        XCTAssertEqual(try T.certificate(T.serverMulti).dnsNames, ["api.example.com", "www.example.com"])
        XCTAssertEqual(try T.certificate(T.server).subjectAlternativeNames.map(\.description), ["DNS:localhost", "IP:127.0.0.1", "IP:::1"])
        XCTAssertEqual(try T.certificate(T.clientAlice).subjectAlternativeNames.map(\.description), ["email:alice@example.com"])
    }

    func testSubjectAlternativeNamesEqualThoseOpenSSLPrints() throws {
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            let openSSLNames = (try OpenSSLCertificateFacts.of(identity).extensions["Subject Alternative Name"] ?? "")
                .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let ours = certificate.subjectAlternativeNames.map { name -> String in
                switch name {
                case .dns(let value): return "DNS:\(value)"
                case .email(let value): return "email:\(value)"
                case .uri(let value): return "URI:\(value)"
                case .ip(let bytes) where bytes.count == 16:
                    // OpenSSL 3.0 prints IPv6 as eight unabbreviated upper-case groups.
                    let groups = stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16, uppercase: true) }
                    return "IP Address:" + groups.joined(separator: ":")
                case .ip(let bytes): return "IP Address:\(IPAddress.format(bytes))"
                default: return name.description
                }
            }
            XCTAssertEqual(ours, openSSLNames, "\(identity)")
        }
    }

    func testIPAddressHelpersFormatAndParseBothFamilies() {
        XCTAssertEqual(IPAddress.format([127, 0, 0, 1]), "127.0.0.1")
        XCTAssertEqual(IPAddress.format([UInt8](repeating: 0, count: 15) + [1]), "::1")
        XCTAssertEqual(IPAddress.format([0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]), "2001:db8::1")
        XCTAssertEqual(IPAddress.parse("127.0.0.1"), [127, 0, 0, 1])
        XCTAssertEqual(IPAddress.parse("[::1]"), [UInt8](repeating: 0, count: 15) + [1])
        XCTAssertNil(IPAddress.parse("localhost"))
        XCTAssertNil(IPAddress.parse("300.1.1.1"))
    }

    // MARK: Keys and algorithms

    func testPublicKeyAlgorithmsReadAsDocumented() throws {
        let p256 = KeyAlgorithm.ec(curve: "P-256", bits: 256)
        let expected: [(T.Identity, KeyAlgorithm, String)] = [
            (T.rootCA, p256, "ECDSA P-256"), (T.intermediateCA, p256, "ECDSA P-256"), (T.server, p256, "ECDSA P-256"),
            (T.serverRSA2048, .rsa(bits: 2048), "RSA 2048"), (T.serverRSA4096, .rsa(bits: 4096), "RSA 4096"),
            (T.serverP384, .ec(curve: "P-384", bits: 384), "ECDSA P-384"), (T.serverEd25519, .ed25519, "Ed25519"),
            (T.clientAlice, p256, "ECDSA P-256"), (T.clientBobRSA, .rsa(bits: 2048), "RSA 2048"),
        ]
        for (identity, algorithm, text) in expected {
            let key = try T.certificate(identity).publicKey
            XCTAssertEqual(key.algorithm, algorithm, "\(identity)")
            XCTAssertEqual(key.algorithm.description, text, "\(identity)")
        }
        XCTAssertEqual(KeyAlgorithm.ed25519.bits, 256)
        XCTAssertEqual(KeyAlgorithm.rsa(bits: 4096).typeName, "RSA")
    }

    func testKeySizesEqualThoseOpenSSLPrints() throws {
        for identity in T.allIdentities where identity.basename != T.serverEd25519.basename {
            let bits = try OpenSSLCertificateFacts.of(identity).publicKeyBits
            XCTAssertNotNil(bits, "\(identity)")
            XCTAssertEqual(try T.certificate(identity).publicKey.algorithm.bits, bits, "\(identity)")
        }
    }

    func testSubjectPublicKeyInfoIsTheDEROpenSSLExtracts() throws {
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            let pem = try OpenSSLCertificateFacts.of(identity).publicKeyPEM
            XCTAssertEqual(certificate.publicKey.pemString, pem, "\(identity)")
            let der = try XCTUnwrap(PEM.parse(Array(pem.utf8)).first?.derBytes)
            XCTAssertEqual(certificate.subjectPublicKeyInfoDER, der, "\(identity)")
            XCTAssertEqual(certificate.publicKey.spkiDER, der, "\(identity)")
            XCTAssertEqual(try PublicKey(spkiDER: der), certificate.publicKey)
        }
        // One independent check of the DER itself.
        let pem = try OpenSSLCLI.run(["x509", "-in", T.url(T.serverRSA2048.pem).path, "-pubkey", "-noout"])
        let der = try OpenSSLCLI.run(["pkey", "-pubin", "-outform", "DER"], stdin: pem)
        XCTAssertEqual(try T.certificate(T.serverRSA2048).subjectPublicKeyInfoDER, der)
    }

    func testSignatureAlgorithmEqualsOpenSSLsForEveryFixture() throws {
        for identity in T.allIdentities {
            let expected = try OpenSSLCertificateFacts.of(identity).signatureAlgorithm
            XCTAssertFalse(expected.isEmpty)
            XCTAssertEqual(try T.certificate(identity).signatureAlgorithm, expected, "\(identity)")
        }
        XCTAssertEqual(try T.certificate(T.server).signatureAlgorithm, "ecdsa-with-SHA256")
    }

    func testRSAAndEd25519SignaturesAreNamedAsOpenSSLNamesThem() throws {
        let directory = try T.temporaryDirectory(for: self)
        for (key, expected) in [(T.serverRSA2048.key, "sha256WithRSAEncryption"), (T.serverEd25519.key, "ED25519")] {
            let out = directory.appendingPathComponent("\(expected).pem").path
            try OpenSSLCLI.run(["req", "-x509", "-key", T.url(key).path, "-subj", "/CN=\(expected)", "-days", "1", "-out", out])
            let certificate = try Certificate.fromPEM([UInt8](FileManager.default.contents(atPath: out)!))[0]
            XCTAssertEqual(certificate.signatureAlgorithm, expected)
            XCTAssertTrue(certificate.isSelfSigned, "a freshly made openssl req -x509 certificate is self-signed")
        }
    }

    // MARK: Extensions

    func testCAExtensionsReadAsDocumented() throws {
        let root = try T.certificate(T.rootCA)
        XCTAssertEqual(root.keyUsage, [.keyCertSign, .cRLSign])
        XCTAssertEqual(root.basicConstraints, BasicConstraints(isCA: true, pathLengthConstraint: nil))
        XCTAssertNil(root.extendedKeyUsage)

        let intermediate = try T.certificate(T.intermediateCA)
        XCTAssertEqual(intermediate.keyUsage, [.keyCertSign, .cRLSign])
        XCTAssertEqual(intermediate.keyUsage?.names, ["keyCertSign", "cRLSign"])
        XCTAssertEqual(intermediate.basicConstraints, BasicConstraints(isCA: true, pathLengthConstraint: 0))
    }

    func testLeafExtensionsReadAsDocumented() throws {
        let server = try T.certificate(T.server)
        XCTAssertEqual(server.keyUsage, [.digitalSignature])
        XCTAssertEqual(server.extendedKeyUsage, ["serverAuth"])
        XCTAssertEqual(server.basicConstraints, BasicConstraints(isCA: false, pathLengthConstraint: nil))

        let rsa = try T.certificate(T.serverRSA2048)
        XCTAssertEqual(rsa.keyUsage, [.digitalSignature, .keyEncipherment])
        XCTAssertEqual(rsa.keyUsage?.description, "digitalSignature, keyEncipherment")

        XCTAssertEqual(try T.certificate(T.clientAlice).extendedKeyUsage, ["clientAuth"])
        XCTAssertEqual(try T.certificate(T.clientBobRSA).keyUsage, [.digitalSignature, .keyEncipherment])
        XCTAssertEqual(try T.certificate(T.serverClientAuthOnly).extendedKeyUsage, ["clientAuth"])
        XCTAssertEqual(try T.certificate(T.clientServerAuthOnly).extendedKeyUsage, ["serverAuth"])
        XCTAssertEqual(try T.certificate(T.selfSigned).basicConstraints?.isCA, false)
    }

    func testExtensionsEqualWhatOpenSSLPrintsForEveryFixture() throws {
        let kuNames: [String: KeyUsage] = [
            "Digital Signature": .digitalSignature, "Key Encipherment": .keyEncipherment,
            "Certificate Sign": .keyCertSign, "CRL Sign": .cRLSign,
        ]
        let ekuNames = ["TLS Web Server Authentication": "serverAuth", "TLS Web Client Authentication": "clientAuth"]
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            let values = try OpenSSLCertificateFacts.of(identity).extensions
            let ku = values["Key Usage"].map { text in
                KeyUsage(text.split(separator: ",").map { kuNames[$0.trimmingCharacters(in: .whitespaces)] ?? [] })
            }
            XCTAssertEqual(certificate.keyUsage, ku, "\(identity) keyUsage")
            let eku = values["Extended Key Usage"].map { text in
                text.split(separator: ",").map { ekuNames[$0.trimmingCharacters(in: .whitespaces)] ?? "?" }
            }
            XCTAssertEqual(certificate.extendedKeyUsage, eku, "\(identity) EKU")
            let bc = values["Basic Constraints"].map { text -> BasicConstraints in
                let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let pathLength = parts.first { $0.hasPrefix("pathlen:") }.flatMap { Int($0.dropFirst(8)) }
                return BasicConstraints(isCA: parts.contains("CA:TRUE"), pathLengthConstraint: pathLength)
            }
            XCTAssertNotNil(bc, "\(identity) every fixture has basic constraints")
            XCTAssertEqual(certificate.basicConstraints, bc, "\(identity) basicConstraints")
        }
    }

    func testOnlyRootsAndTheSelfSignedLeafAreSelfSigned() throws {
        let selfSigned: Set<String> = ["root-ca", "other-root-ca", "self-signed"]
        for identity in T.allIdentities {
            XCTAssertEqual(try T.certificate(identity).isSelfSigned, selfSigned.contains(identity.basename), "\(identity)")
        }
    }

    // MARK: Fingerprints and pins

    func testSHA256AndSHA1FingerprintsEqualOpenSSLs() throws {
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            let facts = try OpenSSLCertificateFacts.of(identity)
            XCTAssertEqual(certificate.sha256Fingerprint.colonHex, facts["sha256 Fingerprint"], "\(identity)")
            XCTAssertEqual(certificate.sha1Fingerprint.colonHex, facts["sha1 Fingerprint"], "\(identity)")
            XCTAssertEqual(certificate.sha256Fingerprint.count, 32)
            XCTAssertEqual(certificate.sha1Fingerprint.count, 20)
        }
        let server = try T.certificate(T.server)
        XCTAssertEqual(server.sha256Fingerprint.hex, server.sha256Fingerprint.colonHex.replacingOccurrences(of: ":", with: "").lowercased())
    }

    func testSPKIPinEqualsTheOpenSSLPipeline() throws {
        for identity in T.allIdentities {
            let certificate = try T.certificate(identity)
            // openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
            let base64 = try OpenSSLCertificateFacts.of(identity).spkiPinBase64
            XCTAssertEqual(base64.count, 44, "\(identity): \(base64)")
            XCTAssertEqual(certificate.spkiPin, "sha256/" + base64, "\(identity)")
            XCTAssertEqual(certificate.spkiSHA256, Data(base64Encoded: base64).map { [UInt8]($0) }, "\(identity)")
            XCTAssertEqual(certificate.publicKey.spkiPin, certificate.spkiPin, "\(identity)")
        }
    }

    func testCertificatesSharingAKeyShareTheirPinButNotTheirFingerprint() throws {
        // server-revoked and server have different keys; the pin follows the key, not the certificate.
        let server = try T.certificate(T.server)
        let copy = try Certificate(derBytes: T.bytes(T.serverCER))
        XCTAssertEqual(server.spkiPin, copy.spkiPin)
        XCTAssertNotEqual(server.spkiPin, try T.certificate(T.serverRevoked).spkiPin)
        XCTAssertNotEqual(server.sha256Fingerprint, try T.certificate(T.serverRevoked).sha256Fingerprint)
    }

    // MARK: Bad input

    func testEmptyInputIsReportedAsEmpty() throws {
        let empty = try T.bytes(T.Bad.empty)
        XCTAssertTrue(empty.isEmpty)
        assertThrowsMTLSError(.emptyInput) { try Certificate.fromPEM(empty) }
        assertThrowsMTLSError(.emptyInput) { try Certificate(derBytes: empty) }
        assertThrowsMTLSError(.emptyInput) { try Certificate.fromPEM(Array("\n  \n".utf8)) }
    }

    func testTruncatedDERIsMalformed() throws {
        let truncated = try T.bytes(T.Bad.truncatedDER)
        let error = assertThrowsMTLSError(.malformedInput) { try Certificate(derBytes: truncated) }
        XCTAssertFalse(error?.openSSLDetail.isEmpty ?? true, "the OpenSSL detail is kept for --verbose")
        assertThrowsMTLSError(.malformedInput) { try Certificate.fromPEM(truncated) }
    }

    func testDERWithTrailingBytesIsMalformed() throws {
        let der = try T.bytes(T.server.der)
        let error = assertThrowsMTLSError(.malformedInput) { try Certificate(derBytes: der + [0, 0, 0]) }
        XCTAssertTrue(error?.message.contains("3") ?? false, error?.message ?? "")
    }

    func testBrokenBase64IsMalformedAndNamesTheBlock() throws {
        let error = assertThrowsMTLSError(.malformedInput) { try Certificate.fromPEM(T.bytes(T.Bad.brokenBase64)) }
        XCTAssertTrue(error?.message.contains("block 1") ?? false, error?.message ?? "")
    }

    func testGarbageIsMalformedInBothFormats() throws {
        let garbage = try T.bytes(T.Bad.garbage)
        assertThrowsMTLSError(.malformedInput) { try Certificate(derBytes: garbage) }
        assertThrowsMTLSError(.malformedInput) { try Certificate.fromPEM(garbage) }
        assertThrowsMTLSError(.malformedInput) { try Certificate.fromPEM(T.bytes(T.Bad.notACert)) }
    }

    func testAPrivateKeyWhereACertificateIsExpectedIsTheWrongKindOfObject() throws {
        let error = assertThrowsMTLSError(.wrongObjectKind) { try Certificate.fromPEM(T.bytes(T.Bad.keyAsCert)) }
        XCTAssertTrue(error?.message.contains("PRIVATE KEY") ?? false, error?.message ?? "")
        assertThrowsMTLSError(.wrongObjectKind) { try Certificate(derBytes: T.bytes(T.Keys.rsaPKCS8DER)) }
        assertThrowsMTLSError(.wrongObjectKind) { try Certificate(derBytes: T.bytes(T.Keys.ecP256DER)) }
        assertThrowsMTLSError(.wrongObjectKind) { try Certificate(derBytes: T.bytes(T.P12.modern)) }
    }

    func testABundleWithoutCertificatesIsTheWrongKindOfObject() throws {
        let error = assertThrowsMTLSError(.wrongObjectKind) { try Certificate.fromPEM(T.bytes(T.Bad.noCertsBundle)) }
        XCTAssertTrue(error?.message.contains("X509 CRL") ?? false, error?.message ?? "")
    }

    func testAPEMBlockWithoutItsEndLineIsMalformed() throws {
        let text = String(decoding: try T.bytes(T.server.pem), as: UTF8.self)
        let cut = String(text.prefix(text.count / 2))
        let error = assertThrowsMTLSError(.malformedInput) { try Certificate.fromPEM(Array(cut.utf8)) }
        XCTAssertTrue(error?.message.contains("END") ?? false, error?.message ?? "")
    }

    func testACertificateBlockHoldingAKeyIsMalformedAndNamesTheBlock() throws {
        let key = try PEM.parse(T.bytes(T.server.key))[0].derBytes
        let bundle = try T.bytes(T.server.pem) + Array(PEM.encode(key, label: "CERTIFICATE").utf8)
        let error = assertThrowsMTLSError(.malformedInput) { try Certificate.fromPEM(bundle) }
        XCTAssertTrue(error?.message.contains("block 2") ?? false, error?.message ?? "")
    }

    func testAFiftyMegabyteRandomBufferFailsFastWithoutCrashing() throws {
        let random = try XCTUnwrap(FileHandle(forReadingAtPath: "/dev/urandom")).readData(ofLength: 50 << 20)
        var buffer = [UInt8](random)
        XCTAssertEqual(buffer.count, 50 << 20)
        buffer[0] = 0xFF  // never a DER SEQUENCE
        var timings: [String] = []
        func timed(_ label: String, _ body: () -> Void) {
            let start = Date()
            body()
            timings.append("\(label) \(String(format: "%.3f", Date().timeIntervalSince(start))) s")
        }
        let start = Date()
        timed("DER") { assertThrowsMTLSError(.malformedInput) { try Certificate(derBytes: buffer) } }
        timed("PEM") { assertThrowsMTLSError(.malformedInput) { try Certificate.fromPEM(buffer) } }
        timed("key") { assertThrowsMTLSError(.malformedInput) { try PrivateKey(bytes: buffer) } }
        timed("p12") { assertThrowsMTLSError(.malformedInput) { try PKCS12Bundle(derBytes: buffer, password: "x") } }
        buffer[0] = 0x30  // a SEQUENCE header followed by a random length
        timed("DER 0x30") { assertThrowsMTLSError(.malformedInput) { try Certificate(derBytes: buffer) } }
        timed("key 0x30") { assertThrowsMTLSError(.malformedInput) { try PrivateKey(bytes: buffer) } }
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertLessThan(elapsed, 3, "rejecting 50 MB of noise took too long: \(timings)")
    }

    /// Should the strict DER walk ever accept bytes that `d2i_X509` refuses, OpenSSL decides: the
    /// certificate becomes an empty one that nothing trusts, the disagreement is counted, and the
    /// process goes on (it used to stop with fatalError).
    func testADERReaderDisagreementIsCountedNotFatal() throws {
        let der = try T.bytes(T.server.der)
        let layout = try XCTUnwrap(CertificateLayout(der))
        let before = X509Reference.disagreements.load(ordering: .relaxed)
        var corrupted = der
        corrupted[corrupted.count / 2] ^= 0xFF
        corrupted[1] = 0x00  // not the DER length OpenSSL expects
        let reference = X509Reference(deferring: corrupted, layout: layout)
        let certificate = Certificate(borrowingX509: reference.pointer)
        XCTAssertEqual(X509Reference.disagreements.load(ordering: .relaxed), before + 1)
        XCTAssertEqual(certificate.subject, "")
        let evaluation = try TrustEvaluator(policy: TrustPolicy(anchors: [try T.certificate(T.rootCA)], evaluationTime: Date(timeIntervalSince1970: 1_780_272_000))).evaluate(
            certificate)
        XCTAssertFalse(evaluation.isTrusted)
    }

}

import Foundation
import XCTest

@testable import MTLSTrust

/// Certificate reading judged on files no one here wrote: every X.509 certificate of pyca/cryptography's
/// test vectors (`TestCerts/third-party/pyca-x509`, see its README), against what the openssl CLI
/// reads in them (`EXPECTED.tsv`, recorded by `scripts/gen-pyca-x509-expected.sh`; no openssl runs
/// here). Each file ends in exactly one of three outcomes, and the counts are asserted:
/// agreed (every field, of every certificate in the file), a deliberate difference (named below,
/// with the fields that differ and why), or refused by both. A disagreement not named below fails,
/// and so does a named one that no longer occurs.
final class PycaX509VectorsTests: XCTestCase {
    private typealias T = TestCertificates
    private static let corpus = "third-party/pyca-x509"

    /// Where mtls reads a file differently from openssl on purpose: the fields that differ
    /// (`refused`: mtls refuses what openssl reads) and why.
    static let deliberateDifferences: [String: (fields: Set<String>, reason: String)] = [
        "badasn1time.pem": (
            ["refused"],
            "its notAfter is a 14-digit UTCTime; openssl loads it and prints \"Bad time value\", mtls refuses the certificate "
                + "(its validity period cannot be read, so nothing can judge it; pyca refuses it too) instead of showing 1970-01-01"
        ),
        "custom/ec_no_named_curve.pem": (
            ["key"],
            "an EC key with explicit curve parameters: openssl prints the parameters, mtls names the curve they equal (P-256, as "
                + "OpenSSL's own group matching reports); verification flags such a key (rule rfc5280.explicit-curve)"
        ),
    ]
    static let expectedAgreed = 127
    static let expectedRefusedByBoth = 4

    // MARK: The data

    struct Expected {
        var refused: String?
        var fields: [String: String] = [:]
        subscript(_ field: String) -> String { fields[field] ?? "(openssl recorded no \(field))" }
    }

    private func manifest() throws -> [(file: String, sha256: String)] {
        try CorpusTally.manifest(Self.corpus).map { (file: $0[0], sha256: $0[3]) }
    }

    private func expectations() throws -> [String: [Int: Expected]] {
        let bytes = try T.bytes("\(Self.corpus)/EXPECTED.tsv")
        var result: [String: [Int: Expected]] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            let columns = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            guard columns.count == 4, let index = Int(columns[1]) else {
                XCTFail("EXPECTED.tsv: a line not of the form FILE INDEX FIELD VALUE: \(line)")
                continue
            }
            let value = Self.unescape(columns[3])
            if columns[2] == "refused" {
                result[columns[0], default: [:]][index, default: Expected()].refused = value
            } else {
                result[columns[0], default: [:]][index, default: Expected()].fields[columns[2]] = value
            }
        }
        return result
    }

    static func unescape(_ text: String) -> String {
        var out = ""
        var escaping = false
        for character in text {
            if escaping {
                out.append(character == "n" ? "\n" : character == "t" ? "\t" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    // MARK: The test

    func testEveryCertificateReadsAsOpenSSLReadsIt() throws {
        let files = try manifest()
        let expected = try expectations()
        XCTAssertEqual(files.count, 133, "the corpus is the 133 certificate files of MANIFEST.tsv")
        XCTAssertEqual(Set(expected.keys), Set(files.map(\.file)), "EXPECTED.tsv covers exactly the files of MANIFEST.tsv")
        var tally = CorpusTally(deliberate: Self.deliberateDifferences)
        for (file, sha256) in files {
            let bytes = try T.bytes("\(Self.corpus)/\(file)")
            XCTAssertEqual(Digest.sha256(bytes).hex, sha256, "\(file): not the bytes MANIFEST.tsv records")
            let certificates = expected[file] ?? [:]
            let opensslRefuses = !certificates.isEmpty && certificates.values.allSatisfy { $0.refused != nil }
            let read: [Certificate]
            do {
                read = try CertificateLoader.certificates(from: bytes, source: file).certificates
            } catch {
                XCTAssertEqual(error.source, file, "\(file): the error names the file")
                XCTAssertTrue([.malformedInput, .wrongObjectKind, .corruptInput].contains(error.reason), "\(file): \(error.reason)")
                XCTAssertFalse(error.message.isEmpty)
                if opensslRefuses {
                    tally.refusedByBoth.append(file)
                } else {
                    tally.differing[file] = ["refused"]
                }
                continue
            }
            if opensslRefuses {
                XCTFail("\(file): openssl refuses it, mtls reads \(read.map(\.subject))")
                tally.differing[file, default: []].insert("accepted")
                continue
            }
            XCTAssertEqual(read.count, certificates.count, "\(file): the number of certificates")
            var fields = Set<String>()
            for (offset, certificate) in read.enumerated() {
                guard let one = certificates[offset + 1] else { continue }
                fields.formUnion(tally.differences(in: compare(certificate, one), of: file, label: "\(file) [\(offset + 1)]"))
            }
            tally.record(file, fields: fields)
        }
        for file in tally.differing.keys where Self.deliberateDifferences[file] == nil {
            XCTFail("\(file): differs from openssl in \(tally.differing[file]!.sorted()) and is not a named deliberate difference")
        }
        tally.assertCounts(agreed: Self.expectedAgreed, refusedByBoth: Self.expectedRefusedByBoth, of: files.count)
    }

    /// The pin fast path (`CertificateLoader.summaries`, a DER walk without OpenSSL's X.509 parse)
    /// gives what the full parse gives, or refuses alike, for every file.
    func testPinSummariesMatchTheFullParse() throws {
        var compared = 0
        var refusedAlike: [String] = []
        for (file, _) in try manifest() {
            let path = T.url("\(Self.corpus)/\(file)").path
            let full: [Certificate]
            do {
                full = try CertificateLoader.certificates(atPath: path)
            } catch {
                XCTAssertThrowsError(try CertificateLoader.summaries(atPath: path), "\(file): refused by the full parse (\(error.message))")
                refusedAlike.append(file)
                continue
            }
            let summaries: [CertificateSummary]
            do {
                summaries = try CertificateLoader.summaries(atPath: path)
            } catch {
                // Pin refuses files that hold a private key block; only those may differ.
                XCTAssertEqual(error.reason, .wrongObjectKind, "\(file): \(error.message)")
                XCTAssertTrue(error.message.contains("private key"), "\(file): \(error.message)")
                refusedAlike.append(file)
                continue
            }
            XCTAssertEqual(
                summaries,
                full.map {
                    CertificateSummary(
                        spkiSHA256: $0.spkiSHA256, subject: $0.subject, notAfter: $0.notAfter, isCA: $0.basicConstraints?.isCA ?? false,
                        mayBeSelfSigned: $0.isSelfSigned)
                }, file)
            compared += 1
        }
        XCTAssertEqual(compared, 125, "files read by both")
        XCTAssertEqual(
            refusedAlike.count, 8,
            "\(refusedAlike): files refused (4 by openssl too, badasn1time.pem, and 3 that hold a private key block, which summaries leave to the full reader)")
    }

    // MARK: Mapping mtls's reading to openssl's text

    /// (field, mtls in openssl's form, openssl) for every field recorded.
    private func compare(_ certificate: Certificate, _ expected: Expected) -> [(String, String, String)] {
        var result: [(String, String, String)] = [
            ("subject", certificate.subject, expected["subject"]),
            ("issuer", certificate.issuer, expected["issuer"]),
            ("serial", certificate.serialNumberHex, expected["serial"]),
            ("notBefore", Self.opensslTime(certificate.notBefore), expected["notBefore"]),
            ("notAfter", Self.opensslTime(certificate.notAfter), expected["notAfter"]),
            ("sigalg", certificate.signatureAlgorithm, expected["sigalgOuter"]),
            ("spki", Data(certificate.spkiSHA256).base64EncodedString(), expected["spki"]),
        ]
        let problems = certificate.problems
        // The TBSCertificate's algorithm (what openssl -text prints first) differs: mtls says so.
        if expected["sigalg"] != expected["sigalgOuter"] {
            let said = problems.contains { $0.contains("is not the one its TBSCertificate names (\(expected["sigalg"]))") }
            result.append(("sigalg-mismatch", said ? "reported" : "not reported", "reported"))
        }
        // The key as openssl re-encodes it is the pin's key, unless openssl cannot decode it.
        if expected["pubkey"] != "unreadable" {
            result.append(("pubkey", Data(certificate.spkiSHA256).base64EncodedString(), expected["pubkey"]))
        }
        result.append(("key", Self.opensslKey(certificate), Self.opensslKey(expected)))
        result.append(
            Self.extensionField(
                "san", "subjectAltName", expected["san"], problems, decoded: Self.generalNamePrefixes.contains { expected["san"].hasPrefix($0) },
                ours: certificate.subjectAlternativeNames.isEmpty ? nil : certificate.subjectAlternativeNames.map(Self.opensslName).joined(separator: ", ")))
        result.append(
            Self.extensionField(
                "bc", "basicConstraints", expected["bc"], problems, decoded: expected["bc"].hasPrefix("CA:"),
                ours: certificate.basicConstraints.map { "CA:\($0.isCA ? "TRUE" : "FALSE")" + ($0.pathLengthConstraint.map { ", pathlen:\($0)" } ?? "") }))
        result.append(
            Self.extensionField(
                "ku", "keyUsage", expected["ku"], problems, decoded: Self.isList(expected["ku"], of: Set(Self.keyUsageNames.values)),
                ours: certificate.keyUsage.map { $0.names.map { Self.keyUsageNames[$0] ?? $0 }.joined(separator: ", ") }))
        let eku = certificate.extendedKeyUsage
        result.append(
            Self.extensionField(
                "eku", "extendedKeyUsage", expected["eku"], problems, decoded: Self.isList(expected["eku"], of: Set(Self.purposeNames.values)),
                ours: eku.flatMap { $0.isEmpty ? nil : $0.map { Self.purposeNames[$0] ?? $0 }.joined(separator: ", ") }))
        return result
    }

    /// One of the four extensions: openssl's value lines, "-" when absent, several blocks when the
    /// extension is repeated, or its raw bytes (printed with dots) when it could not decode it.
    /// mtls must give the same value, nil when absent, and nil with a problem naming the extension
    /// when it is repeated or undecodable.
    static func extensionField(
        _ field: String, _ name: String, _ theirs: String, _ problems: [String], decoded: Bool, ours: String?
    ) -> (String, String, String) {
        if theirs == "-" { return (field, ours ?? "-", "-") }
        if theirs.contains("\nX509v3 ") {
            let said = problems.contains { $0.hasPrefix("the \(name) extension appears") }
            return (field, ours == nil && said ? "repeated, none read" : "\(ours ?? "-") (problem reported: \(said))", "repeated, none read")
        }
        if !decoded {
            let said = problems.contains { $0.hasPrefix("the \(name) extension") }
            return (field, ours == nil && said ? "not decodable" : "\(ours ?? "-") (problem reported: \(said))", "not decodable")
        }
        return (field, ours ?? "-", theirs)
    }

    /// True when every item of openssl's comma-separated list is one of `names` or a dotted OID:
    /// a value openssl decoded, not the dotted print of raw bytes.
    static func isList(_ text: String, of names: Set<String>) -> Bool {
        text.components(separatedBy: ", ").allSatisfy { item in
            names.contains(item)
                || (item.split(separator: ".", omittingEmptySubsequences: false).count > 1
                    && item.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) })
        }
    }

    static let generalNamePrefixes = [
        "DNS:", "IP Address:", "email:", "URI:", "DirName:", "othername:", "Registered ID:", "X400Name:", "EdiPartyName:",
    ]

    /// A subject alternative name as openssl's GENERAL_NAME_print writes it.
    static func opensslName(_ name: SubjectAlternativeName) -> String {
        switch name {
        case .dns(let text): return "DNS:\(text)"
        case .email(let text): return "email:\(text)"
        case .uri(let text): return "URI:\(text)"
        case .ip(let bytes) where bytes.count == 16:
            // Eight groups of upper-case hex without leading zeros, nothing compressed.
            return "IP Address:"
                + stride(from: 0, to: 16, by: 2).map { String(Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]), radix: 16, uppercase: true) }
                .joined(separator: ":")
        case .ip(let bytes): return "IP Address:\(IPAddress.format(bytes))"
        case .directoryName(let rfc4514):
            // openssl prints X509_NAME_oneline: /-separated, in DER order (RFC 4514 text is reversed).
            return "DirName:/" + rfc4514.split(separator: ",").reversed().joined(separator: "/")
        case .otherName(let type, let value): return "othername: \(type)::\(value ?? "<unsupported>")"
        case .registeredID(let oid): return "Registered ID:\(oid)"
        case .other: return name.description
        }
    }

    static let keyUsageNames = [
        "digitalSignature": "Digital Signature", "nonRepudiation": "Non Repudiation", "keyEncipherment": "Key Encipherment",
        "dataEncipherment": "Data Encipherment", "keyAgreement": "Key Agreement", "keyCertSign": "Certificate Sign", "cRLSign": "CRL Sign",
        "encipherOnly": "Encipher Only", "decipherOnly": "Decipher Only",
    ]

    /// The purposes in the corpus: mtls's short names, openssl's long ones.
    static let purposeNames = [
        "serverAuth": "TLS Web Server Authentication", "clientAuth": "TLS Web Client Authentication", "codeSigning": "Code Signing",
        "emailProtection": "E-mail Protection", "OCSPSigning": "OCSP Signing", "timeStamping": "Time Stamping",
        "anyExtendedKeyUsage": "Any Extended Key Usage", "nsSGC": "Netscape Server Gated Crypto", "msCodeCom": "Microsoft Commercial Code Signing",
    ]

    /// openssl's key facts in one line: algorithm, bits ("-" where -text shows none), curve.
    static func opensslKey(_ expected: Expected) -> String { "\(expected["keyalg"]) \(expected["keybits"]) \(expected["curve"])" }

    /// mtls's key in the same form: the name of the SPKI's algorithm, and size and curve from the
    /// key OpenSSL decoded.
    static func opensslKey(_ certificate: Certificate) -> String {
        let name = certificate.keyAlgorithmName
        switch certificate.keyAlgorithm {
        case .rsa(let bits), .rsaPSS(let bits): return "\(name) \(bits) -"
        case .ec(let curve, let bits): return "\(name) \(bits) \(curve)"
        case .ed25519, .ed448: return "\(name) - -"
        case .dsa(let bits): return "\(name) \(bits) -"
        case .other(let other, _):
            // X25519/X448: openssl -text shows no size; mtls keeps OpenSSL's EVP_PKEY_get_bits.
            return "\(other) - -"
        }
    }

    /// "2015-04-29 20:35:35Z": openssl -dateopt iso_8601.
    static func opensslTime(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour),
            Int(parts.tm_min), Int(parts.tm_sec))
    }
}

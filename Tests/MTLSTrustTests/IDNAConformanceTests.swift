import Foundation
import XCTest

@testable import MTLSTrust

/// `IDNA` against Unicode's own conformance file for UTS 46, `IdnaTestV2.txt` 17.0.0
/// (TestCerts/third-party/unicode-idna: origin and licence in its README): every line, through
/// toUnicode, toASCII and transitional toASCII with all of UTS 46's checks on, as the file asks,
/// and through toASCII with the URL Standard's flags, ignoring the status codes those flags turn
/// off, as the file's header says to.
final class IDNAConformanceTests: XCTestCase {
    private struct Case {
        let line: Int
        let source: String
        let toUnicode: String
        let toUnicodeStatus: Set<String>
        let toASCIIN: String
        let toASCIINStatus: Set<String>
        let toASCIIT: String
        let toASCIITStatus: Set<String>
    }

    /// The cases of the file; lines with unpaired surrogates (which a Swift string cannot hold)
    /// are counted apart, as the file's header allows.
    private static let cases: (cases: [Case], skipped: Int) = {
        let url = TestCertificates.url("third-party/unicode-idna/IdnaTestV2.txt")
        let text = try! String(contentsOf: url, encoding: .utf8)
        var cases: [Case] = []
        var skipped = 0
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            guard !rawLine.hasPrefix("#"), !rawLine.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            var fields = rawLine.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 7 else { continue }
            if let hash = fields[6].firstIndex(of: "#") { fields[6] = String(fields[6][..<hash]) }
            fields = fields.prefix(7).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let values = try? fields.map(unescape) else {
                skipped += 1
                continue
            }
            func status(_ text: String) -> Set<String>? {
                guard !text.isEmpty else { return nil }
                return Set(text.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            }
            let source = values[0]
            let toUnicode = fields[1].isEmpty ? source : values[1]
            let toUnicodeStatus = status(fields[2]) ?? []
            let toASCIIN = fields[3].isEmpty ? toUnicode : values[3]
            let toASCIINStatus = status(fields[4]) ?? toUnicodeStatus
            let toASCIIT = fields[5].isEmpty ? toASCIIN : values[5]
            let toASCIITStatus = status(fields[6]) ?? toASCIINStatus
            cases.append(
                Case(
                    line: index + 1, source: source, toUnicode: toUnicode, toUnicodeStatus: toUnicodeStatus, toASCIIN: toASCIIN,
                    toASCIINStatus: toASCIINStatus, toASCIIT: toASCIIT, toASCIITStatus: toASCIITStatus))
        }
        return (cases, skipped)
    }()

    private struct Unpaired: Error {}

    /// `\uXXXX` and `\x{XXXX}` escapes, and `""` for the empty string.
    private static func unescape(_ field: String) throws -> String {
        if field == "\"\"" { return "" }
        var out = String.UnicodeScalarView()
        let scalars = Array(field.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "\\", index + 1 < scalars.count {
                var hex = ""
                if scalars[index + 1] == "u", index + 5 < scalars.count + 0 {
                    hex = String(String.UnicodeScalarView(scalars[(index + 2)..<(index + 6)]))
                    index += 6
                } else if scalars[index + 1] == "x", index + 2 < scalars.count, scalars[index + 2] == "{",
                    let close = scalars[index...].firstIndex(of: "}")
                {
                    hex = String(String.UnicodeScalarView(scalars[(index + 3)..<close]))
                    index = close + 1
                }
                if !hex.isEmpty {
                    guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else { throw Unpaired() }
                    out.append(scalar)
                    continue
                }
            }
            out.append(scalars[index])
            index += 1
        }
        return String(out)
    }

    private func outcome(_ body: () throws(IDNA.Failure) -> String) -> String? {
        do { return try body() } catch { return nil }
    }

    func testTheFileIsTheOneDescribed() {
        XCTAssertEqual(Self.cases.cases.count, 6_389)
        XCTAssertEqual(Self.cases.skipped, 2, "lines with unpaired surrogates")
        XCTAssertEqual(IDNA.unicodeVersion, "17.0.0")
    }

    /// toUnicode with every check on: the same string, and an error exactly when the file has one
    /// (X4_2, an empty label, is the DNS-length check, which toUnicode does not make).
    func testToUnicode() {
        var disagreements: [String] = []
        for test in Self.cases.cases {
            let processed = IDNA.process(test.source, options: .hostName)
            let expectsError = !test.toUnicodeStatus.subtracting(["X4_2"]).isEmpty
            if processed.text != test.toUnicode || processed.failures.isEmpty == expectsError {
                disagreements.append("line \(test.line): \(processed.text) \(processed.failures.map(\.description))")
            }
        }
        XCTAssertEqual(disagreements.count, 0, disagreements.prefix(20).joined(separator: "\n"))
    }

    func testToASCIINontransitional() {
        var disagreements: [String] = []
        for test in Self.cases.cases {
            let result = outcome { () throws(IDNA.Failure) in try IDNA.toASCII(test.source, options: .hostName) }
            let expected = test.toASCIINStatus.isEmpty ? test.toASCIIN : nil
            if result != expected { disagreements.append("line \(test.line): \(result ?? "error"), expected \(expected ?? "error \(test.toASCIINStatus.sorted())")") }
        }
        XCTAssertEqual(disagreements.count, 0, disagreements.prefix(20).joined(separator: "\n"))
    }

    func testToASCIITransitional() {
        var options = IDNA.Options.hostName
        options.transitionalProcessing = true
        var disagreements: [String] = []
        for test in Self.cases.cases {
            let result = outcome { () throws(IDNA.Failure) in try IDNA.toASCII(test.source, options: options) }
            let expected = test.toASCIITStatus.isEmpty ? test.toASCIIT : nil
            if result != expected { disagreements.append("line \(test.line): \(result ?? "error"), expected \(expected ?? "error \(test.toASCIITStatus.sorted())")") }
        }
        XCTAssertEqual(disagreements.count, 0, disagreements.prefix(20).joined(separator: "\n"))
    }

    /// The URL Standard's flags: CheckHyphens, UseSTD3ASCIIRules and VerifyDnsLength off, so the
    /// file's V2, V3, U1, A4_1, A4_2 and X4_2 are ignored.
    func testToASCIIWithTheURLStandardsFlags() {
        let ignored: Set<String> = ["V2", "V3", "U1", "A4_1", "A4_2", "X4_2"]
        var disagreements: [String] = []
        var accepted = 0
        for test in Self.cases.cases {
            let result = outcome { () throws(IDNA.Failure) in try IDNA.toASCII(test.source, options: .url) }
            let expected = test.toASCIINStatus.subtracting(ignored).isEmpty ? test.toASCIIN : nil
            if result != nil { accepted += 1 }
            if result != expected { disagreements.append("line \(test.line): \(result ?? "error"), expected \(expected ?? "error \(test.toASCIINStatus.sorted())")") }
        }
        XCTAssertEqual(disagreements.count, 0, disagreements.prefix(20).joined(separator: "\n"))
        XCTAssertEqual(accepted, 838, "names the URL Standard accepts")
    }

    /// RFC 3492's own samples (section 7.1), encoded and decoded.
    func testPunycodeSamplesOfRFC3492() {
        let samples: [(String, [UInt32])] = [
            ("egbpdaj6bu4bxfgehfvwxn", [0x644, 0x64A, 0x647, 0x645, 0x627, 0x628, 0x62A, 0x643, 0x644, 0x645, 0x648, 0x634, 0x639, 0x631, 0x628, 0x64A, 0x61F]),
            ("ihqwcrb4cv8a8dqg056pqjye", [0x4ED6, 0x4EEC, 0x4E3A, 0x4EC0, 0x4E48, 0x4E0D, 0x8BF4, 0x4E2D, 0x6587]),
            ("3B-ww4c5e180e575a65lsy2b", [0x33, 0x5E74, 0x42, 0x7D44, 0x91D1, 0x516B, 0x5148, 0x751F]),
            ("-> $1.00 <--", [0x2D, 0x3E, 0x20, 0x24, 0x31, 0x2E, 0x30, 0x30, 0x20, 0x3C, 0x2D]),
        ]
        for (encoded, values) in samples {
            let scalars = values.map { Unicode.Scalar($0)! }
            XCTAssertEqual(Punycode.encode(scalars), encoded)
            XCTAssertEqual(Punycode.decodeScalars(encoded[...]), scalars, encoded)
        }
        XCTAssertNil(Punycode.decodeScalars("-"), "a lone delimiter is a digit to the decoder, and not one")
        XCTAssertNil(Punycode.decode("abc-"), "decodes, but to ASCII only")
    }

    func testMessagesNameTheLabelAndTheFault() {
        func message(_ name: String, _ options: IDNA.Options = .url) -> String {
            do {
                return try IDNA.toASCII(name, options: options)
            } catch { return error.description }
        }
        XCTAssertEqual(message("a\u{2488}.example"), "the label \"a⒈\" of \"a⒈.example\" contains U+2488 (⒈), which a domain name cannot have")
        XCTAssertEqual(message("xn--0.example"), "the label \"xn--0\" of \"xn--0.example\" starts with xn-- but is not valid Punycode of a non-ASCII label")
        XCTAssertEqual(message("xn--a.example"), "the label \"\\u{80}\" of \"xn--a.example\" contains U+0080, which a domain name cannot have")
        XCTAssertEqual(message("a\u{200C}b.example"), "the label \"a\\u{200C}b\" of \"a\\u{200C}b.example\" has U+200C where the joiner rule of RFC 5892 does not allow it")
        XCTAssertEqual(message("\u{0301}a.example"), "the label \"\u{0301}a\" of \"\u{0301}a.example\" starts with the combining mark U+0301")
        XCTAssertEqual(message("-a.example", .hostName), "the label \"-a\" of \"-a.example\" starts or ends with a hyphen")
        XCTAssertEqual(message("a_b.example", .hostName), "the label \"a_b\" of \"a_b.example\" contains U+005F (_), which a domain name cannot have")
        XCTAssertEqual(message("a_b.example"), "a_b.example", "the URL Standard does not apply STD 3's rules")
        XCTAssertEqual(message("1.\u{05D0}"), "the label \"1\" of \"1.\u{05D0}\" mixes right-to-left and left-to-right text against rule 1 of RFC 5893")
    }

    func testUnicodeFormIsForNamesWithXNLabelsOnly() {
        XCTAssertEqual(IDNA.unicodeForm(of: "xn--bcher-kva.example"), "bücher.example")
        XCTAssertEqual(IDNA.unicodeForm(of: "*.XN--NXASMM1C.com"), "*.βόλος.com")
        XCTAssertNil(IDNA.unicodeForm(of: "example.com"))
        XCTAssertNil(IDNA.unicodeForm(of: "xn--a.example"), "not valid: nothing to show")
        XCTAssertEqual(try IDNA.toUnicode("xn--bcher-kva.example"), "bücher.example")
    }

    /// A certificate's dNSName is ASCII: the issuer writes a Unicode name in its xn-- form.
    func testAnIssuedCertificateCarriesTheASCIIForm() throws {
        let key = try CertificateIssuer.generateKey()
        let now = Date(timeIntervalSince1970: 1_780_272_000)
        let profile = CertificateIssuer.Profile(
            role: .server, commonName: "IDN", dnsNames: ["Bücher.example", "*.βόλος.com"], notBefore: now, notAfter: now.addingTimeInterval(86_400))
        let certificate = try CertificateIssuer.issue(profile, key: key, issuer: nil, serial: 1)
        XCTAssertEqual(certificate.dnsNames, ["xn--bcher-kva.example", "*.xn--nxasmm1c.com"])
        var bad = profile
        bad.dnsNames = ["a\u{2488}.example"]
        XCTAssertThrowsError(try CertificateIssuer.issue(bad, key: key, issuer: nil, serial: 2)) { error in
            XCTAssertTrue("\(error)".contains("cannot go in a certificate"), "\(error)")
        }
    }

    /// Hostile lengths stay linear: a label far past any DNS limit is refused, not worked through
    /// RFC 3492's quadratic steps.
    func testLongLabelsAreRefusedQuickly() {
        let long = String(repeating: "\u{00FC}", count: 60_000) + ".example"
        XCTAssertThrowsError(try IDNA.toASCII(long)) { error in
            XCTAssertTrue("\(error)".contains("longer than 63 octets"), "\(error)")
        }
        let encoded = "xn--" + String(repeating: "a", count: 60_000) + "-kva.example"
        XCTAssertThrowsError(try IDNA.toASCII(encoded))
        // Past DNS's 63 octets but within the bound: the URL Standard checks no length.
        let twoHundred = String(repeating: "\u{00FC}", count: 200)
        let ascii = try? IDNA.toASCII(twoHundred)
        XCTAssertEqual(ascii.flatMap { try? IDNA.toUnicode($0) }, twoHundred)
    }
}

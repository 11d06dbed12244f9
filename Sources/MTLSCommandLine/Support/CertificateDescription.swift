#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// Human and JSON descriptions of certificates, shared by `verify`, `inspect`, `import` and `pin`.
enum CertificateDescription {
    static func json(_ certificate: Certificate, depth: Int? = nil, extra: [(String, JSON)] = []) -> JSON {
        var pairs: [(String, JSON)] = []
        if let depth { pairs.append(("depth", .int(depth))) }
        pairs += [
            ("subject", .string(certificate.subject)),
            ("issuer", .string(certificate.issuer)),
            ("serial", .string(certificate.serialNumberHex)),
            ("notBefore", .string(Timestamp.rfc3339(certificate.notBefore))),
            ("notAfter", .string(Timestamp.rfc3339(certificate.notAfter))),
            ("subjectAltNames", .strings(certificate.subjectAlternativeNames.map(\.description))),
            ("key", .string(certificate.keyAlgorithm.description)),
            ("signatureAlgorithm", .string(certificate.signatureAlgorithm)),
            ("keyUsage", certificate.keyUsage.map { .strings($0.names) } ?? .null),
            ("extendedKeyUsage", certificate.extendedKeyUsage.map { .strings($0) } ?? .null),
            ("isCA", .bool(certificate.basicConstraints?.isCA ?? false)),
            ("pathLength", certificate.basicConstraints?.pathLengthConstraint.map { .int($0) } ?? .null),
            ("selfSigned", .bool(certificate.isSelfSigned)),
            ("sha256", .string(certificate.sha256Fingerprint.colonHex)),
            ("sha1", .string(certificate.sha1Fingerprint.colonHex)),
            ("spkiSHA256", .string(certificate.spkiPin)),
        ]
        let problems = certificate.problems
        if !problems.isEmpty { pairs.append(("problems", .strings(problems))) }
        if let settings = certificate.trustSettings {
            pairs.append(
                (
                    "trustSettings",
                    .object([
                        ("trusted", .strings(settings.trusted.map(CertificateTrustSettings.name(of:)))),
                        ("rejected", .strings(settings.rejected.map(CertificateTrustSettings.name(of:)))), ("alias", JSON.optional(settings.alias)),
                    ])
                ))
        }
        return .object(pairs + extra)
    }

    /// ` (bücher.example)` after a name with `xn--` labels, empty otherwise: what it spells is what
    /// a person compares.
    static func spelled(_ name: String) -> String { IDNA.unicodeForm(of: name).map { " (\($0))" } ?? "" }

    /// The full block printed by `inspect`.
    static func detailed(_ certificate: Certificate, console: Console, indent: String = "  ") -> [String] {
        var lines: [String] = []
        // Names and alternative names are the issuer's choice: one row each, whatever they hold.
        func row(_ label: String, _ value: String) {
            lines.append(indent + label.padded(to: 20) + DisplayText.escaped(value))
        }
        row("Subject", certificate.subject)
        row("Issuer", certificate.issuer)
        row("Serial", certificate.serialNumberHex)
        row("Valid from", Timestamp.rfc3339(certificate.notBefore))
        row("Valid until", Timestamp.rfc3339(certificate.notAfter))
        let sans = certificate.subjectAlternativeNames
        let sanTexts = sans.map { name -> String in
            guard case .dns(let dns) = name else { return name.description }
            return name.description + spelled(dns)
        }
        row("Alt names", sans.isEmpty ? "(none)" : sanTexts.joined(separator: ", "))
        row("Key", certificate.keyAlgorithm.description)
        row("Signature", certificate.signatureAlgorithm)
        if let usage = certificate.keyUsage { row("Key usage", usage.description) }
        if let eku = certificate.extendedKeyUsage { row("Extended key usage", eku.joined(separator: ", ")) }
        if let constraints = certificate.basicConstraints {
            row("Basic constraints", constraints.isCA ? "CA" + (constraints.pathLengthConstraint.map { ", path length \($0)" } ?? "") : "not a CA")
        }
        if certificate.isSelfSigned { row("Self-signed", "yes") }
        if let settings = certificate.trustSettings {
            // OpenSSL's TRUSTED CERTIFICATE: as an anchor, only for what these allow.
            row("Trusted for", settings.trusted.isEmpty ? "(no list: any purpose not rejected)" : settings.trusted.map(CertificateTrustSettings.name(of:)).joined(separator: ", "))
            if !settings.rejected.isEmpty { row("Rejected for", settings.rejected.map(CertificateTrustSettings.name(of:)).joined(separator: ", ")) }
            if let alias = settings.alias { row("Alias", alias) }
        }
        for problem in certificate.problems { row("Problem", problem) }
        row("SHA-256", certificate.sha256Fingerprint.colonHex)
        row("SHA-1", certificate.sha1Fingerprint.colonHex)
        row("SPKI pin", certificate.spkiPin)
        return lines
    }

    /// The compact block printed per chain element by `verify`.
    static func chainEntry(_ certificate: Certificate, depth: Int, role: String?, console: Console) -> [String] {
        let marker = role.map { " (\($0))" } ?? ""
        return [
            "  \(depth)  \(console.paint(certificate.subject.isEmpty ? "(empty subject)" : certificate.subject, .bold))\(marker)",
            "     issuer   \(certificate.issuer)",
            "     valid    \(Timestamp.rfc3339(certificate.notBefore)) to \(Timestamp.rfc3339(certificate.notAfter))",
            "     key      \(certificate.keyAlgorithm)   \(certificate.spkiPin)",
        ]
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One rule of the trust-rule table (`docs/TRUST-RULES.md`): what is checked, under which
/// profile, on whose authority, the code a violation reports, and what proves it.
public struct TrustRuleEntry: Sendable, Equatable {
    /// A stable identifier, also the fixture directory under `TestCerts/rules/` (`webpki.ee.eku-missing`).
    public var id: String
    /// The profiles (or platforms) the rule belongs to: `rfc5280`, `webpki`, `apple` …
    public var profiles: [String]
    /// The source and section: `RFC 5280 §4.2.1.10`, `CABF BR §7.1.2.7.10`, a platform's document and date.
    public var source: String
    /// The code a violation reports: an `X509_V_ERR_*` name (OpenSSL's own check) or an `MTLS_*` name.
    public var code: String
    /// The rule in one line.
    public var summary: String
    /// True when `TestCerts/rules/<id>/` holds a violating and a compliant fixture.
    public var hasFixture: Bool
    /// The test that proves the rule.
    public var test: String

    /// Creates an entry.
    public init(id: String, profiles: [String], source: String, code: String, summary: String, hasFixture: Bool, test: String) {
        self.id = id
        self.profiles = profiles
        self.source = source
        self.code = code
        self.summary = summary
        self.hasFixture = hasFixture
        self.test = test
    }
}

/// A titled group of rules; `docs/TRUST-RULES.md` is ``TrustRuleCatalogue/markdown(_:)`` of
/// ``TrustRuleCatalogue/all``. Another group (platform rules, say) is added by appending it there.
public struct TrustRuleCatalogue: Sendable {
    /// The section title.
    public var title: String
    /// A paragraph under the title.
    public var introduction: String
    /// The rules, in table order.
    public var rules: [TrustRuleEntry]

    /// Creates a catalogue.
    public init(title: String, introduction: String, rules: [TrustRuleEntry]) {
        self.title = title
        self.introduction = introduction
        self.rules = rules
    }

    /// Every catalogue, in document order.
    public static var all: [TrustRuleCatalogue] { [rfc5280, webPKI, platforms] }

    /// The test that runs every fixture pair.
    static let fixtureTest = "TrustRuleFixtureTests.testEveryRuleFixturePair"

    /// The table as Markdown, exactly as committed in `docs/TRUST-RULES.md`.
    public static func markdown(_ catalogues: [TrustRuleCatalogue]) -> String {
        var lines: [String] = [
            "# Trust rules",
            "",
            "<!-- Generated from Sources/MTLSTrust/Trust/Rules/TrustRuleCatalogue.swift by scripts/gen-trust-rules.sh;",
            "     TrustRuleTableTests fails when this file and the catalogue differ. Do not edit by hand. -->",
            "",
            "What `mtls verify` (and `TrustEvaluator`) checks beyond building a path. Every rule names the",
            "profile it belongs to (`--profile rfc5280` or `--profile webpki`; the default, `clients`, fails",
            "the rfc5280 rules and the public-suffix wildcard, and reports the other webpki rules as warnings",
            "for `--purpose server`), its source, the code a violation reports in text and",
            "JSON (`X509_V_ERR_*` when OpenSSL's own check finds it, `MTLS_*` for the rules mtls adds), and",
            "the test that proves it. A rule with a fixture has a violating certificate refused with that",
            "code and a compliant twin accepted, both under `TestCerts/rules/<rule>/`, made by",
            "`scripts/make-trust-rule-certs.sh`.",
            "",
        ]
        let total = catalogues.reduce(0) { $0 + $1.rules.count }
        let fixtures = catalogues.reduce(0) { $0 + $1.rules.filter(\.hasFixture).count }
        let platformRules = catalogues.filter { $0.title == platforms.title }.reduce(0) { $0 + $1.rules.count }
        lines.append("\(total) rules: \(fixtures) with a fixture pair under `TestCerts/rules/`, \(platformRules) platform rules proven as their section says.")
        lines.append("")
        for catalogue in catalogues {
            lines.append("## \(catalogue.title)")
            lines.append("")
            lines.append(catalogue.introduction)
            lines.append("")
            lines.append("| Rule | Profiles | Source | Code | What is refused | Proof |")
            lines.append("|---|---|---|---|---|---|")
            for rule in catalogue.rules {
                let proof = rule.hasFixture ? "`\(rule.test)`, `TestCerts/rules/\(rule.id)/`" : "`\(rule.test)` (no fixture pair yet)"
                let cells = [
                    "`\(rule.id)`", rule.profiles.joined(separator: ", "), rule.source, "`\(rule.code)`", rule.summary.replacingAll("|", with: "\\|"), proof,
                ]
                lines.append("| " + cells.joined(separator: " | ") + " |")
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    private static func rule(
        _ id: String, _ profiles: [String], _ source: String, _ code: String, _ summary: String, fixture: Bool = true, test: String = fixtureTest
    ) -> TrustRuleEntry {
        TrustRuleEntry(id: id, profiles: profiles, source: source, code: code, summary: summary, hasFixture: fixture, test: test)
    }

    private static let both = ["rfc5280", "webpki"]

    /// RFC 5280, enforced under both profiles (OpenSSL's X509_STRICT checks and the ones mtls adds).
    public static let rfc5280 = TrustRuleCatalogue(
        title: "RFC 5280 (both profiles)",
        introduction:
            "Path validation itself (signatures, validity, basicConstraints, path length, name constraints, policies, purpose through the extended key usage) is OpenSSL's, with `X509_V_FLAG_X509_STRICT`. The rules below are the certificate-profile checks: those OpenSSL makes in strict mode, and those mtls adds because OpenSSL 3.0 leaves them unchecked. Rules marked *anchor* also hold for a trust anchor, as x509-limbo expects with `--partial-chain`.",
        rules: [
            rule(
                "rfc5280.serial", both, "RFC 5280 §4.1.2.2", "MTLS_RFC5280_SERIAL_INVALID",
                "A serial number that is zero, negative or longer than 20 octets (the leaf is judged even when it is its own anchor)."),
            rule(
                "rfc5280.validity-encoding", both, "RFC 5280 §4.1.2.5", "MTLS_RFC5280_VALIDITY_ENCODING",
                "notBefore/notAfter not UTCTime `YYMMDDHHMMSSZ` for 1950–2049 and GeneralizedTime `YYYYMMDDHHMMSSZ` otherwise."),
            rule("rfc5280.unknown-critical-extension", both, "RFC 5280 §4.2", "X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION", "A critical extension the verifier does not know."),
            rule(
                "rfc5280.aki-missing", both, "RFC 5280 §4.2.1.1", "X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER",
                "A certificate other than the anchor without an authorityKeyIdentifier keyIdentifier."),
            rule(
                "rfc5280.anchor-aki-missing", both, "RFC 5280 §4.2.1.1 (anchor)", "X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER",
                "A trust anchor that another key signed (not self-issued, not self-signed) without an authorityKeyIdentifier keyIdentifier."),
            rule(
                "rfc5280.aki-critical", both, "RFC 5280 §4.2.1.1", "X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION",
                "A critical authorityKeyIdentifier (OpenSSL 3.0 reports it as an unhandled critical extension)."),
            rule("rfc5280.ski-missing", both, "RFC 5280 §4.2.1.2", "X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER", "A CA certificate without subjectKeyIdentifier."),
            rule(
                "rfc5280.ski-critical", both, "RFC 5280 §4.2.1.2", "X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION",
                "A critical subjectKeyIdentifier (OpenSSL 3.0 reports it as an unhandled critical extension)."),
            rule("rfc5280.ku-empty", both, "RFC 5280 §4.2.1.3", "MTLS_RFC5280_KU_EMPTY", "A keyUsage extension with no bit set."),
            rule("rfc5280.ca-ku-missing", both, "RFC 5280 §4.2.1.3", "X509_V_ERR_CA_CERT_MISSING_KEY_USAGE", "An intermediate CA certificate without keyUsage."),
            rule(
                "rfc5280.ku-certsign-non-ca", ["rfc5280"], "RFC 5280 §4.2.1.3", "X509_V_ERR_KU_KEY_CERT_SIGN_INVALID_FOR_NON_CA", "keyCertSign in a certificate that is not a CA."),
            rule(
                "rfc5280.key-usage-required", both, "RFC 5280 §4.2.1.3", "MTLS_KEY_USAGE_NOT_ALLOWED",
                "`--key-usage LIST`: the leaf's keyUsage does not allow a required usage (no keyUsage allows all)."),
            rule(
                "rfc5280.policies-syntax", both, "RFC 5280 §4.2.1.4", "MTLS_RFC5280_POLICIES_MALFORMED", "certificatePolicies that is empty, unreadable or names one policy twice."),
            rule(
                "rfc5280.policies-critical-qualifier", both, "RFC 5280 §4.2, §4.2.1.4", "X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION",
                "A critical certificatePolicies with a policy qualifier other than a CPS pointer or a user notice."),
            rule(
                "rfc5280.policy-processing", both, "RFC 5280 §6.1.3 (d)–(f), §6.1.4, §6.1.5 (g)", "X509_V_ERR_NO_EXPLICIT_POLICY",
                "No valid certificate policy where a CA's policyConstraints requires one (from user-initial-policy-set {anyPolicy}, with its policyMappings and inhibitAnyPolicy)."),
            rule(
                "rfc5280.anchor-policy-constraints", both, "RFC 5937 §3; RFC 5280 §6.1", "X509_V_ERR_NO_EXPLICIT_POLICY",
                "The same with the trust anchor's certificatePolicies, policyConstraints, policyMappings and inhibitAnyPolicy applied (an anchor without certificatePolicies allows any policy)."
            ),
            rule("rfc5280.san-empty", both, "RFC 5280 §4.2.1.6", "X509_V_ERR_EMPTY_SUBJECT_ALT_NAME", "A subjectAltName extension with no entry."),
            rule(
                "rfc5280.san-dns-syntax", both, "RFC 5280 §4.2.1.6", "MTLS_RFC5280_SAN_MALFORMED_DNS",
                "A leaf dNSName that is not a preferred-syntax DNS name or `*.` wildcard, or an iPAddress not 4 or 16 octets."),
            rule("rfc5280.san-email-syntax", both, "RFC 5280 §4.2.1.6", "MTLS_RFC5280_SAN_MALFORMED_EMAIL", "A leaf rfc822Name that is not a mailbox `local@domain`."),
            rule("rfc5280.bc-not-critical", both, "RFC 5280 §4.2.1.9", "X509_V_ERR_CA_BCONS_NOT_CRITICAL", "An intermediate CA whose basicConstraints is not critical."),
            rule(
                "rfc5280.anchor-bc-not-critical", both, "RFC 5280 §4.2.1.9 (anchor)", "X509_V_ERR_CA_BCONS_NOT_CRITICAL",
                "A CA trust anchor whose basicConstraints is not critical."),
            rule("rfc5280.ca-bit-missing", both, "RFC 5280 §4.2.1.9, §6.1.4 (k)", "X509_V_ERR_INVALID_CA", "An intermediate without basicConstraints cA:TRUE."),
            rule("rfc5280.pathlen-non-ca", both, "RFC 5280 §4.2.1.9", "X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA", "pathLenConstraint in a certificate that is not a CA."),
            rule(
                "rfc5280.path-length", both, "RFC 5280 §4.2.1.9, §6.1.4 (m)", "X509_V_ERR_PATH_LENGTH_EXCEEDED",
                "More intermediates below a CA than its pathLenConstraint allows (the leaf not counted)."),
            rule(
                "rfc5280.nc-not-critical", ["rfc5280"], "RFC 5280 §4.2.1.10", "MTLS_RFC5280_NC_NOT_CRITICAL",
                "A non-critical nameConstraints (the webpki profile allows it, BR §7.1.2.10.8)."),
            rule("rfc5280.nc-in-ee", both, "RFC 5280 §4.2.1.10", "MTLS_RFC5280_NC_IN_EE", "nameConstraints in an end-entity certificate."),
            rule("rfc5280.nc-empty", both, "RFC 5280 §4.2.1.10", "MTLS_RFC5280_NC_EMPTY", "nameConstraints with neither permitted nor excluded subtrees."),
            rule(
                "rfc5280.nc-dns-syntax", both, "RFC 5280 §4.2.1.10", "MTLS_RFC5280_NC_MALFORMED_NAME", "A dNSName constraint with a leading period, a wildcard or bad characters."),
            rule(
                "rfc5280.nc-address-syntax", both, "RFC 5280 §4.2.1.10", "MTLS_RFC5280_NC_MALFORMED_ADDRESS",
                "An iPAddress constraint not 8/32 octets with a contiguous mask, or an email constraint not a mailbox, host or .domain."),
            rule(
                "rfc5280.nc-violation", both, "RFC 5280 §4.2.1.10, §6.1.3 (b)", "X509_V_ERR_PERMITTED_VIOLATION",
                "A leaf name outside a CA's permitted subtrees (a leaf without subjectAltName: its CN)."),
            rule(
                "rfc5280.nc-wildcard-excluded", both, "RFC 5280 §4.2.1.10; CVE-2025-61727", "MTLS_NC_WILDCARD_EXCLUDED",
                "A wildcard dNSName that can match a name a CA above excludes."),
            rule("rfc5280.pc-not-critical", both, "RFC 5280 §4.2.1.11", "MTLS_RFC5280_PC_NOT_CRITICAL", "A non-critical policyConstraints."),
            rule("rfc5280.eku-syntax", both, "RFC 5280 §4.2.1.12", "MTLS_RFC5280_EKU_MALFORMED", "An extKeyUsage with no purpose or that cannot be read."),
            rule(
                "rfc5280.eku-purpose", both, "RFC 5280 §4.2.1.12", "X509_V_ERR_INVALID_PURPOSE",
                "A leaf whose extKeyUsage lacks the purpose (`--purpose server` → serverAuth, `client` → clientAuth)."),
            rule(
                "rfc5280.eku-sgc-not-server", both, "RFC 5280 §4.2.1.12", "X509_V_ERR_INVALID_PURPOSE",
                "`--purpose server`: a certificate of the chain whose extKeyUsage names Server Gated Cryptography but not serverAuth (OpenSSL counts SGC as serverAuth)."),
            rule(
                "rfc5280.crldp-syntax", both, "RFC 5280 §4.2.1.13", "MTLS_RFC5280_CRLDP_MALFORMED",
                "cRLDistributionPoints that is empty, unreadable, or has a point with neither name nor cRLIssuer."),
            rule("rfc5280.aia-critical", both, "RFC 5280 §4.2.2.1", "MTLS_RFC5280_AIA_CRITICAL", "A critical authorityInfoAccess."),
            rule("rfc5280.aia-syntax", both, "RFC 5280 §4.2.2.1", "MTLS_RFC5280_AIA_MALFORMED", "authorityInfoAccess that is not a non-empty list of (method, location) pairs."),
            rule(
                "rfc5280.explicit-curve", both, "RFC 5480 §2.1.1; RFC 5280 §4.1.2.7", "X509_V_ERR_EC_KEY_EXPLICIT_PARAMS",
                "An EC key with explicit curve parameters instead of a named curve."),
            rule(
                "rfc5280.crl-number", both, "RFC 5280 §5.2.3", "MTLS_RFC5280_CRL_NUMBER_MISSING", "With `--crl`: a CRL without CRLNumber."),
            rule(
                "rfc5280.email", both, "RFC 5280 §4.2.1.6, §7.5", "X509_V_ERR_EMAIL_MISMATCH",
                "`--email ADDRESS`: no rfc822Name equals it (local part exactly, domain ignoring case)."),
        ])

    /// The CA/Browser Forum Baseline Requirements profiles, enforced under `--profile webpki`.
    public static let webPKI = TrustRuleCatalogue(
        title: "Web PKI: CA/Browser Forum Baseline Requirements (webpki profile)",
        introduction:
            "Section numbers are those of the Baseline Requirements 2.x certificate profiles: subscriber (§7.1.2.7), subordinate CA (§7.1.2.2–§7.1.2.6, §7.1.2.10), root (§7.1.2.1), common extensions (§7.1.2.8–§7.1.2.11), algorithms (§7.1.3), names (§7.1.4). OpenSSL's security level 2 refuses RSA under 2048 bits, P-192 and SHA-1/MD5 signatures (`X509_V_ERR_CA_KEY_TOO_SMALL`, `X509_V_ERR_EE_KEY_TOO_SMALL`, `X509_V_ERR_CA_MD_TOO_WEAK`). Not enforced, because private PKIs do not meet them and browsers do not ask it of them: the presence of authorityInfoAccess and certificatePolicies, a critical CA keyUsage with cRLSign, the 398-day validity limit and 64 bits of serial entropy (publicly-trusted certificates only; see the platform verdicts).",
        rules: [
            rule(
                "webpki.version", ["webpki"], "CABF BR §7.1.1", "MTLS_WEBPKI_NOT_V3", "A certificate other than the anchor that is not X.509 version 3."),
            rule(
                "webpki.key-algorithm", ["webpki"], "CABF BR §6.1.5, §7.1.3.1", "MTLS_WEBPKI_WEAK_KEY",
                "A DSA key, an RSA modulus not a multiple of 8, or a curve other than P-256/P-384/P-521 (Ed25519/Ed448 allowed), at any position."),
            rule(
                "webpki.signature-algorithm", ["webpki"], "CABF BR §7.1.3.2", "MTLS_WEBPKI_SIGNATURE_ALGORITHM",
                "A signature other than RSA PKCS#1 v1.5 (NULL parameters) or PSS, or ECDSA, with SHA-256/384/512 (Ed25519/Ed448 allowed)."),
            rule("webpki.ee.eku-missing", ["webpki"], "CABF BR §7.1.2.7.10", "MTLS_WEBPKI_EE_EKU_MISSING", "A subscriber certificate without extKeyUsage."),
            rule("webpki.ee.eku-any", ["webpki"], "CABF BR §7.1.2.7.10", "MTLS_WEBPKI_EE_ANY_EKU", "anyExtendedKeyUsage in a subscriber certificate."),
            rule(
                "webpki.ee.eku-forbidden", ["webpki"], "CABF BR §7.1.2.7.10", "MTLS_WEBPKI_EE_EKU_FORBIDDEN",
                "A subscriber extKeyUsage purpose other than serverAuth and clientAuth."),
            rule("webpki.ee.eku-critical", ["webpki"], "CABF BR §7.1.2.7.6", "MTLS_WEBPKI_EE_EKU_CRITICAL", "A critical subscriber extKeyUsage."),
            rule(
                "webpki.ca.eku-forbidden", ["webpki"], "CABF BR §7.1.2.10.6", "MTLS_WEBPKI_CA_EKU_FORBIDDEN",
                "A subordinate CA extKeyUsage combining serverAuth with codeSigning, emailProtection, timeStamping, OCSPSigning or anyExtendedKeyUsage."),
            rule("webpki.root.eku", ["webpki"], "CABF BR §7.1.2.1.2", "MTLS_WEBPKI_ROOT_HAS_EKU", "A root CA certificate with extKeyUsage."),
            rule("webpki.ee.is-ca", ["webpki"], "CABF BR §7.1.2.7.8", "MTLS_WEBPKI_EE_IS_CA", "A CA certificate (cA:TRUE) as the leaf (RFC 5280 allows it)."),
            rule(
                "webpki.ee.key-usage", ["webpki"], "CABF BR §7.1.2.7.11", "MTLS_WEBPKI_EE_KEY_USAGE",
                "keyCertSign/cRLSign in a subscriber keyUsage, or a usage its key type cannot have (keyEncipherment with ECDSA)."),
            rule(
                "webpki.ca.key-usage", ["webpki"], "CABF BR §7.1.2.10.7, §7.1.2.1", "MTLS_WEBPKI_CA_KEY_USAGE",
                "A CA (anchor included) without keyUsage keyCertSign, or with bits beyond keyCertSign, cRLSign, digitalSignature."),
            rule("webpki.ee.san-missing", ["webpki"], "CABF BR §7.1.2.7.12", "MTLS_WEBPKI_EE_SAN_MISSING", "A subscriber certificate without subjectAltName."),
            rule("webpki.ee.san-type", ["webpki"], "CABF BR §7.1.2.7.12", "MTLS_WEBPKI_EE_SAN_TYPE", "A subscriber subjectAltName entry other than dNSName and iPAddress."),
            rule("webpki.ee.san-critical", ["webpki"], "CABF BR §7.1.2.7.12", "MTLS_WEBPKI_SAN_CRITICAL", "A critical subjectAltName while the subject is not empty."),
            rule(
                "webpki.ee.cn", ["webpki"], "CABF BR §7.1.4.3", "MTLS_WEBPKI_CN_NOT_IN_SAN",
                "A subject CN that is not a copy of a subjectAltName entry (other case or IP spelling, unlisted DNS or IDN name)."),
            rule(
                "webpki.ee.public-suffix-wildcard", ["webpki"], "CABF BR §3.2.2.6", "MTLS_WEBPKI_PUBLIC_SUFFIX_WILDCARD",
                "A host matched only by a wildcard on a public suffix (`*.co.uk`)."),
            rule(
                "webpki.aki.key-id", ["webpki"], "CABF BR §7.1.2.11.1, §7.1.2.1.3", "MTLS_WEBPKI_AKI_WITHOUT_KEY_ID",
                "An authorityKeyIdentifier without keyIdentifier, at any position."),
            rule(
                "webpki.aki.content", ["webpki"], "CABF BR §7.1.2.11.1, §7.1.2.1.3", "MTLS_WEBPKI_AKI_CONTENT",
                "An authorityKeyIdentifier with authorityCertIssuer/SerialNumber, or a root's keyIdentifier not its own subjectKeyIdentifier."),
            rule(
                "webpki.aia.content", ["webpki"], "CABF BR §7.1.2.7.7, §7.1.2.10.3", "MTLS_WEBPKI_AIA_CONTENT",
                "An authorityInfoAccess entry that is not OCSP or caIssuers with an http:// URI."),
            rule(
                "webpki.crldp.content", ["webpki"], "CABF BR §7.1.2.11.2", "MTLS_WEBPKI_CRLDP_CONTENT",
                "Critical cRLDistributionPoints, or a point that is not a fullName of http:// URIs, or has reasons or cRLIssuer."),
            rule(
                "webpki.policies.content", ["webpki"], "CABF BR §7.1.2.7.9, §7.1.2.10.5, §7.1.2.11.6", "MTLS_WEBPKI_POLICIES_CONTENT",
                "Critical certificatePolicies, anyPolicy in a subscriber certificate, or a qualifier other than an http(s) CPS URI or a user notice."),
            rule(
                "webpki.issuer-name", ["webpki"], "CABF BR §7.1.4.1", "MTLS_WEBPKI_ISSUER_NAME_ENCODING", "An issuer name that is not byte for byte the issuing CA's subject."),
            rule(
                "webpki.subject-encoding", ["webpki"], "CABF BR §7.1.4.2", "MTLS_WEBPKI_SUBJECT_ENCODING",
                "A multi-valued RDN, a countryName not two letters in a PrintableString, or more than one CN."),
        ])
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A rule mtls enforces beyond what OpenSSL checks, named in findings like an `X509_V_ERR_*` code.
///
/// Codes start at 1000 so that they never collide with OpenSSL's `X509_V_ERR_*` values. Where an
/// OpenSSL code says the same thing (a chain too long, a name-constraint violation) the policies use
/// that code instead.
public struct TrustRule: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code (1000 and up), as findings carry it.
    public let rawValue: Int32
    /// The stable name (`MTLS_WEBPKI_WEAK_KEY`), as `--json` and the rule catalogue show it.
    public let name: String

    init(_ code: Int32, _ name: String) {
        rawValue = code
        self.name = name
    }

    /// The rule with this code, among those this release knows; nil for any other.
    public init?(rawValue: Int32) {
        guard let rule = TrustRule.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = rule
    }

    public static func == (lhs: TrustRule, rhs: TrustRule) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    // MARK: Web PKI (CA/Browser Forum Baseline Requirements), enforced for `server` by default

    /// A key the Web PKI does not allow: DSA, or an elliptic curve other than P-256, P-384, P-521.
    public static let webPKIWeakKey = TrustRule(1000, "MTLS_WEBPKI_WEAK_KEY")
    /// The leaf's extended key usage contains `anyExtendedKeyUsage` (BR 7.1.2.7.10).
    public static let webPKILeafAnyExtendedKeyUsage = TrustRule(1001, "MTLS_WEBPKI_EE_ANY_EKU")
    /// The leaf's extended key usage extension is critical (BR 7.1.2.7.6).
    public static let webPKILeafExtendedKeyUsageCritical = TrustRule(1002, "MTLS_WEBPKI_EE_EKU_CRITICAL")
    /// A root CA certificate carries an extended key usage extension (BR 7.1.2.1.2).
    public static let webPKIRootHasExtendedKeyUsage = TrustRule(1003, "MTLS_WEBPKI_ROOT_HAS_EKU")
    /// The leaf says `basicConstraints cA:TRUE` (BR 7.1.2.7.8).
    public static let webPKILeafIsCA = TrustRule(1004, "MTLS_WEBPKI_EE_IS_CA")
    /// An authorityKeyIdentifier without its keyIdentifier (BR 7.1.2.1.3, 7.1.2.11.1).
    public static let webPKIAuthorityKeyIdentifierWithoutKeyID = TrustRule(1005, "MTLS_WEBPKI_AKI_WITHOUT_KEY_ID")
    /// A critical subjectAltName on a certificate whose subject is not empty (BR 7.1.2.7.12).
    public static let webPKISubjectAltNameCritical = TrustRule(1006, "MTLS_WEBPKI_SAN_CRITICAL")
    /// The subject CN is a different spelling of a subjectAltName entry, or an IDN that none copies (BR 7.1.4.3).
    public static let webPKICommonNameNotInSubjectAltName = TrustRule(1007, "MTLS_WEBPKI_CN_NOT_IN_SAN")
    /// A wildcard whose base is a public suffix (`*.co.uk`, `*.s3.amazonaws.com`) (BR 3.2.2.6).
    public static let webPKIPublicSuffixWildcard = TrustRule(1008, "MTLS_WEBPKI_PUBLIC_SUFFIX_WILDCARD")

    // MARK: RFC 5280 profile, always enforced

    /// A nameConstraints extension that is not critical (RFC 5280 4.2.1.10).
    public static let nameConstraintsNotCritical = TrustRule(1020, "MTLS_RFC5280_NC_NOT_CRITICAL")
    /// A nameConstraints extension in an end-entity certificate (RFC 5280 4.2.1.10).
    public static let nameConstraintsInEndEntity = TrustRule(1021, "MTLS_RFC5280_NC_IN_EE")
    /// A nameConstraints extension with neither permitted nor excluded subtrees (RFC 5280 4.2.1.10).
    public static let nameConstraintsEmpty = TrustRule(1022, "MTLS_RFC5280_NC_EMPTY")
    /// A dNSName constraint that is not a valid DNS name (leading period, wildcard, bad characters).
    public static let nameConstraintsMalformedName = TrustRule(1023, "MTLS_RFC5280_NC_MALFORMED_NAME")
    /// A policyConstraints extension that is not critical (RFC 5280 4.2.1.11).
    public static let policyConstraintsNotCritical = TrustRule(1024, "MTLS_RFC5280_PC_NOT_CRITICAL")
    /// A serial number that is zero, negative or longer than 20 octets (RFC 5280 4.1.2.2).
    public static let serialNumberInvalid = TrustRule(1025, "MTLS_RFC5280_SERIAL_INVALID")
    /// A dNSName in the subjectAltName that is not a valid DNS name or wildcard (RFC 5280 4.2.1.6).
    public static let subjectAltNameMalformedDNSName = TrustRule(1026, "MTLS_RFC5280_SAN_MALFORMED_DNS")
    /// A wildcard dNSName that can match a name a CA above has excluded (CVE-2025-61727).
    public static let nameConstraintsWildcardExcluded = TrustRule(1027, "MTLS_NC_WILDCARD_EXCLUDED")
    /// A CRL without the CRLNumber extension (RFC 5280 5.2.3).
    public static let crlNumberMissing = TrustRule(1028, "MTLS_RFC5280_CRL_NUMBER_MISSING")
    /// The leaf's keyUsage does not allow a usage the caller requires (`--key-usage`, RFC 5280 4.2.1.3).
    public static let requiredKeyUsageMissing = TrustRule(1029, "MTLS_KEY_USAGE_NOT_ALLOWED")
    /// An authorityInfoAccess extension marked critical (RFC 5280 4.2.2.1).
    public static let authorityInfoAccessCritical = TrustRule(1040, "MTLS_RFC5280_AIA_CRITICAL")
    /// An authorityInfoAccess that is not a non-empty SEQUENCE of AccessDescription (RFC 5280 4.2.2.1).
    public static let authorityInfoAccessMalformed = TrustRule(1041, "MTLS_RFC5280_AIA_MALFORMED")
    /// A cRLDistributionPoints that is empty or has a point with neither name nor cRLIssuer (RFC 5280 4.2.1.13).
    public static let crlDistributionPointsMalformed = TrustRule(1042, "MTLS_RFC5280_CRLDP_MALFORMED")
    /// A certificatePolicies that is empty, unreadable or names one policy twice (RFC 5280 4.2.1.4).
    public static let certificatePoliciesMalformed = TrustRule(1043, "MTLS_RFC5280_POLICIES_MALFORMED")
    /// notBefore/notAfter in the wrong ASN.1 time type or format (RFC 5280 4.1.2.5).
    public static let validityEncodingInvalid = TrustRule(1044, "MTLS_RFC5280_VALIDITY_ENCODING")
    /// A keyUsage extension with no bit set (RFC 5280 4.2.1.3).
    public static let keyUsageEmpty = TrustRule(1045, "MTLS_RFC5280_KU_EMPTY")
    /// An extKeyUsage extension with no purpose, or one that cannot be read (RFC 5280 4.2.1.12).
    public static let extendedKeyUsageMalformed = TrustRule(1046, "MTLS_RFC5280_EKU_MALFORMED")
    /// An rfc822Name in the leaf's subjectAltName that is not a mailbox `local@domain` (RFC 5280 4.2.1.6).
    public static let subjectAltNameMalformedEmail = TrustRule(1047, "MTLS_RFC5280_SAN_MALFORMED_EMAIL")
    /// An iPAddress name constraint that is not an address and a contiguous mask, or an email
    /// constraint that is not a mailbox, host or domain (RFC 5280 4.2.1.10).
    public static let nameConstraintsMalformedAddress = TrustRule(1048, "MTLS_RFC5280_NC_MALFORMED_ADDRESS")

    // MARK: Web PKI, the CA/Browser Forum Baseline Requirements certificate profiles (BR 7.1)

    /// A subscriber certificate without extKeyUsage (BR 7.1.2.7.10).
    public static let webPKILeafExtendedKeyUsageMissing = TrustRule(1100, "MTLS_WEBPKI_EE_EKU_MISSING")
    /// A subscriber extKeyUsage with a purpose other than serverAuth and clientAuth (BR 7.1.2.7.10).
    public static let webPKILeafExtendedKeyUsageForbidden = TrustRule(1101, "MTLS_WEBPKI_EE_EKU_FORBIDDEN")
    /// A TLS subordinate CA's extKeyUsage mixing serverAuth with forbidden purposes (BR 7.1.2.10.6).
    public static let webPKICAExtendedKeyUsageForbidden = TrustRule(1102, "MTLS_WEBPKI_CA_EKU_FORBIDDEN")
    /// A subscriber certificate without subjectAltName (BR 7.1.2.7.12).
    public static let webPKILeafSubjectAltNameMissing = TrustRule(1103, "MTLS_WEBPKI_EE_SAN_MISSING")
    /// A subscriber subjectAltName with entries other than dNSName and iPAddress (BR 7.1.2.7.12).
    public static let webPKILeafSubjectAltNameType = TrustRule(1104, "MTLS_WEBPKI_EE_SAN_TYPE")
    /// An authorityInfoAccess with a method other than OCSP/caIssuers or a location that is not an http URI (BR 7.1.2.7.7, 7.1.2.10.3).
    public static let webPKIAuthorityInfoAccessContent = TrustRule(1105, "MTLS_WEBPKI_AIA_CONTENT")
    /// A critical cRLDistributionPoints, or a point that is not a plain http URI (BR 7.1.2.11.2).
    public static let webPKICRLDistributionPointsContent = TrustRule(1106, "MTLS_WEBPKI_CRLDP_CONTENT")
    /// certificatePolicies that are critical, anyPolicy in a subscriber certificate, or unknown qualifiers (BR 7.1.2.7.9, 7.1.2.10.5).
    public static let webPKICertificatePoliciesContent = TrustRule(1107, "MTLS_WEBPKI_POLICIES_CONTENT")
    /// A subscriber keyUsage with CA bits, or with bits its key type cannot use (BR 7.1.2.7.11).
    public static let webPKILeafKeyUsage = TrustRule(1108, "MTLS_WEBPKI_EE_KEY_USAGE")
    /// A CA certificate whose keyUsage is absent, not critical, or not keyCertSign+cRLSign (BR 7.1.2.10.7, 7.1.2.1).
    public static let webPKICAKeyUsage = TrustRule(1109, "MTLS_WEBPKI_CA_KEY_USAGE")
    /// An authorityKeyIdentifier with authorityCertIssuer or authorityCertSerialNumber, or a root's
    /// keyIdentifier that differs from its subjectKeyIdentifier (BR 7.1.2.11.1, 7.1.2.1.3).
    public static let webPKIAuthorityKeyIdentifierContent = TrustRule(1111, "MTLS_WEBPKI_AKI_CONTENT")
    /// A signature algorithm outside BR 7.1.3.2 (RSA PKCS#1 v1.5 or PSS, ECDSA, with SHA-256/384/512; NULL RSA parameters).
    public static let webPKISignatureAlgorithm = TrustRule(1112, "MTLS_WEBPKI_SIGNATURE_ALGORITHM")
    /// An issuer name not byte-for-byte the issuing CA's subject (BR 7.1.4.1).
    public static let webPKIIssuerNameEncoding = TrustRule(1113, "MTLS_WEBPKI_ISSUER_NAME_ENCODING")
    /// A multi-valued RDN, a countryName that is not two letters, or a repeated CN (BR 7.1.4.2).
    public static let webPKISubjectEncoding = TrustRule(1114, "MTLS_WEBPKI_SUBJECT_ENCODING")
    /// A certificate that is not X.509 version 3 (BR 7.1.1).
    public static let webPKINotVersion3 = TrustRule(1115, "MTLS_WEBPKI_NOT_V3")

    /// Every rule this release knows, in code order. New rules are added as static members, so a
    /// `switch` over rules has a `default` and keeps compiling when one is added.
    public static let allCases: [TrustRule] = [
        .webPKIWeakKey,
        .webPKILeafAnyExtendedKeyUsage,
        .webPKILeafExtendedKeyUsageCritical,
        .webPKIRootHasExtendedKeyUsage,
        .webPKILeafIsCA,
        .webPKIAuthorityKeyIdentifierWithoutKeyID,
        .webPKISubjectAltNameCritical,
        .webPKICommonNameNotInSubjectAltName,
        .webPKIPublicSuffixWildcard,
        .nameConstraintsNotCritical,
        .nameConstraintsInEndEntity,
        .nameConstraintsEmpty,
        .nameConstraintsMalformedName,
        .policyConstraintsNotCritical,
        .serialNumberInvalid,
        .subjectAltNameMalformedDNSName,
        .nameConstraintsWildcardExcluded,
        .crlNumberMissing,
        .requiredKeyUsageMissing,
        .authorityInfoAccessCritical,
        .authorityInfoAccessMalformed,
        .crlDistributionPointsMalformed,
        .certificatePoliciesMalformed,
        .validityEncodingInvalid,
        .keyUsageEmpty,
        .extendedKeyUsageMalformed,
        .subjectAltNameMalformedEmail,
        .nameConstraintsMalformedAddress,
        .webPKILeafExtendedKeyUsageMissing,
        .webPKILeafExtendedKeyUsageForbidden,
        .webPKICAExtendedKeyUsageForbidden,
        .webPKILeafSubjectAltNameMissing,
        .webPKILeafSubjectAltNameType,
        .webPKIAuthorityInfoAccessContent,
        .webPKICRLDistributionPointsContent,
        .webPKICertificatePoliciesContent,
        .webPKILeafKeyUsage,
        .webPKICAKeyUsage,
        .webPKIAuthorityKeyIdentifierContent,
        .webPKISignatureAlgorithm,
        .webPKIIssuerNameEncoding,
        .webPKISubjectEncoding,
        .webPKINotVersion3,
    ]

    public var isWebPKI: Bool { rawValue < 1020 || rawValue >= 1100 }

    public var description: String { name }
}

extension TrustFinding {
    /// Creates a finding for one of the rules mtls enforces beyond OpenSSL.
    public init(rule: TrustRule, depth: Int, subject: String, reason: String, hint: Hint) {
        self.init(depth: depth, subject: subject, code: rule.rawValue, name: rule.name, reason: reason, hint: hint)
    }

    /// The mtls rule behind this finding, or nil when it is one of OpenSSL's codes.
    public var rule: TrustRule? { TrustRule(rawValue: code) }
}

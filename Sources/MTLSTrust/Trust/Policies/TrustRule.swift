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
public enum TrustRule: Int32, Sendable, CaseIterable, CustomStringConvertible {
    // MARK: Web PKI (CA/Browser Forum Baseline Requirements), enforced for `server` by default

    /// A key the Web PKI does not allow: DSA, or an elliptic curve other than P-256, P-384, P-521.
    case webPKIWeakKey = 1000
    /// The leaf's extended key usage contains `anyExtendedKeyUsage` (BR 7.1.2.7.10).
    case webPKILeafAnyExtendedKeyUsage = 1001
    /// The leaf's extended key usage extension is critical (BR 7.1.2.7.6).
    case webPKILeafExtendedKeyUsageCritical = 1002
    /// A root CA certificate carries an extended key usage extension (BR 7.1.2.1.2).
    case webPKIRootHasExtendedKeyUsage = 1003
    /// The leaf says `basicConstraints cA:TRUE` (BR 7.1.2.7.8).
    case webPKILeafIsCA = 1004
    /// An authorityKeyIdentifier without its keyIdentifier (BR 7.1.2.1.3, 7.1.2.11.1).
    case webPKIAuthorityKeyIdentifierWithoutKeyID = 1005
    /// A critical subjectAltName on a certificate whose subject is not empty (BR 7.1.2.7.12).
    case webPKISubjectAltNameCritical = 1006
    /// The subject CN is a different spelling of a subjectAltName entry, or an IDN that none copies (BR 7.1.4.3).
    case webPKICommonNameNotInSubjectAltName = 1007
    /// A wildcard whose base is a public suffix (`*.co.uk`, `*.s3.amazonaws.com`) (BR 3.2.2.6).
    case webPKIPublicSuffixWildcard = 1008

    // MARK: RFC 5280 profile, always enforced

    /// A nameConstraints extension that is not critical (RFC 5280 4.2.1.10).
    case nameConstraintsNotCritical = 1020
    /// A nameConstraints extension in an end-entity certificate (RFC 5280 4.2.1.10).
    case nameConstraintsInEndEntity = 1021
    /// A nameConstraints extension with neither permitted nor excluded subtrees (RFC 5280 4.2.1.10).
    case nameConstraintsEmpty = 1022
    /// A dNSName constraint that is not a valid DNS name (leading period, wildcard, bad characters).
    case nameConstraintsMalformedName = 1023
    /// A policyConstraints extension that is not critical (RFC 5280 4.2.1.11).
    case policyConstraintsNotCritical = 1024
    /// A serial number that is zero, negative or longer than 20 octets (RFC 5280 4.1.2.2).
    case serialNumberInvalid = 1025
    /// A dNSName in the subjectAltName that is not a valid DNS name or wildcard (RFC 5280 4.2.1.6).
    case subjectAltNameMalformedDNSName = 1026
    /// A wildcard dNSName that can match a name a CA above has excluded (CVE-2025-61727).
    case nameConstraintsWildcardExcluded = 1027
    /// A CRL without the CRLNumber extension (RFC 5280 5.2.3).
    case crlNumberMissing = 1028
    /// The leaf's keyUsage does not allow a usage the caller requires (`--key-usage`, RFC 5280 4.2.1.3).
    case requiredKeyUsageMissing = 1029
    /// An authorityInfoAccess extension marked critical (RFC 5280 4.2.2.1).
    case authorityInfoAccessCritical = 1040
    /// An authorityInfoAccess that is not a non-empty SEQUENCE of AccessDescription (RFC 5280 4.2.2.1).
    case authorityInfoAccessMalformed = 1041
    /// A cRLDistributionPoints that is empty or has a point with neither name nor cRLIssuer (RFC 5280 4.2.1.13).
    case crlDistributionPointsMalformed = 1042
    /// A certificatePolicies that is empty, unreadable or names one policy twice (RFC 5280 4.2.1.4).
    case certificatePoliciesMalformed = 1043
    /// notBefore/notAfter in the wrong ASN.1 time type or format (RFC 5280 4.1.2.5).
    case validityEncodingInvalid = 1044
    /// A keyUsage extension with no bit set (RFC 5280 4.2.1.3).
    case keyUsageEmpty = 1045
    /// An extKeyUsage extension with no purpose, or one that cannot be read (RFC 5280 4.2.1.12).
    case extendedKeyUsageMalformed = 1046
    /// An rfc822Name in the leaf's subjectAltName that is not a mailbox `local@domain` (RFC 5280 4.2.1.6).
    case subjectAltNameMalformedEmail = 1047
    /// An iPAddress name constraint that is not an address and a contiguous mask, or an email
    /// constraint that is not a mailbox, host or domain (RFC 5280 4.2.1.10).
    case nameConstraintsMalformedAddress = 1048

    // MARK: Web PKI, the CA/Browser Forum Baseline Requirements certificate profiles (BR 7.1)

    /// A subscriber certificate without extKeyUsage (BR 7.1.2.7.10).
    case webPKILeafExtendedKeyUsageMissing = 1100
    /// A subscriber extKeyUsage with a purpose other than serverAuth and clientAuth (BR 7.1.2.7.10).
    case webPKILeafExtendedKeyUsageForbidden = 1101
    /// A TLS subordinate CA's extKeyUsage mixing serverAuth with forbidden purposes (BR 7.1.2.10.6).
    case webPKICAExtendedKeyUsageForbidden = 1102
    /// A subscriber certificate without subjectAltName (BR 7.1.2.7.12).
    case webPKILeafSubjectAltNameMissing = 1103
    /// A subscriber subjectAltName with entries other than dNSName and iPAddress (BR 7.1.2.7.12).
    case webPKILeafSubjectAltNameType = 1104
    /// An authorityInfoAccess with a method other than OCSP/caIssuers or a location that is not an http URI (BR 7.1.2.7.7, 7.1.2.10.3).
    case webPKIAuthorityInfoAccessContent = 1105
    /// A critical cRLDistributionPoints, or a point that is not a plain http URI (BR 7.1.2.11.2).
    case webPKICRLDistributionPointsContent = 1106
    /// certificatePolicies that are critical, anyPolicy in a subscriber certificate, or unknown qualifiers (BR 7.1.2.7.9, 7.1.2.10.5).
    case webPKICertificatePoliciesContent = 1107
    /// A subscriber keyUsage with CA bits, or with bits its key type cannot use (BR 7.1.2.7.11).
    case webPKILeafKeyUsage = 1108
    /// A CA certificate whose keyUsage is absent, not critical, or not keyCertSign+cRLSign (BR 7.1.2.10.7, 7.1.2.1).
    case webPKICAKeyUsage = 1109
    /// An authorityKeyIdentifier with authorityCertIssuer or authorityCertSerialNumber, or a root's
    /// keyIdentifier that differs from its subjectKeyIdentifier (BR 7.1.2.11.1, 7.1.2.1.3).
    case webPKIAuthorityKeyIdentifierContent = 1111
    /// A signature algorithm outside BR 7.1.3.2 (RSA PKCS#1 v1.5 or PSS, ECDSA, with SHA-256/384/512; NULL RSA parameters).
    case webPKISignatureAlgorithm = 1112
    /// An issuer name not byte-for-byte the issuing CA's subject (BR 7.1.4.1).
    case webPKIIssuerNameEncoding = 1113
    /// A multi-valued RDN, a countryName that is not two letters, or a repeated CN (BR 7.1.4.2).
    case webPKISubjectEncoding = 1114
    /// A certificate that is not X.509 version 3 (BR 7.1.1).
    case webPKINotVersion3 = 1115

    /// The name printed in findings, in the style of OpenSSL's `X509_V_ERR_*`.
    public var name: String {
        switch self {
        case .webPKIWeakKey: "MTLS_WEBPKI_WEAK_KEY"
        case .webPKILeafAnyExtendedKeyUsage: "MTLS_WEBPKI_EE_ANY_EKU"
        case .webPKILeafExtendedKeyUsageCritical: "MTLS_WEBPKI_EE_EKU_CRITICAL"
        case .webPKIRootHasExtendedKeyUsage: "MTLS_WEBPKI_ROOT_HAS_EKU"
        case .webPKILeafIsCA: "MTLS_WEBPKI_EE_IS_CA"
        case .webPKIAuthorityKeyIdentifierWithoutKeyID: "MTLS_WEBPKI_AKI_WITHOUT_KEY_ID"
        case .webPKISubjectAltNameCritical: "MTLS_WEBPKI_SAN_CRITICAL"
        case .webPKICommonNameNotInSubjectAltName: "MTLS_WEBPKI_CN_NOT_IN_SAN"
        case .webPKIPublicSuffixWildcard: "MTLS_WEBPKI_PUBLIC_SUFFIX_WILDCARD"
        case .nameConstraintsNotCritical: "MTLS_RFC5280_NC_NOT_CRITICAL"
        case .nameConstraintsInEndEntity: "MTLS_RFC5280_NC_IN_EE"
        case .nameConstraintsEmpty: "MTLS_RFC5280_NC_EMPTY"
        case .nameConstraintsMalformedName: "MTLS_RFC5280_NC_MALFORMED_NAME"
        case .policyConstraintsNotCritical: "MTLS_RFC5280_PC_NOT_CRITICAL"
        case .serialNumberInvalid: "MTLS_RFC5280_SERIAL_INVALID"
        case .subjectAltNameMalformedDNSName: "MTLS_RFC5280_SAN_MALFORMED_DNS"
        case .nameConstraintsWildcardExcluded: "MTLS_NC_WILDCARD_EXCLUDED"
        case .crlNumberMissing: "MTLS_RFC5280_CRL_NUMBER_MISSING"
        case .requiredKeyUsageMissing: "MTLS_KEY_USAGE_NOT_ALLOWED"
        case .authorityInfoAccessCritical: "MTLS_RFC5280_AIA_CRITICAL"
        case .authorityInfoAccessMalformed: "MTLS_RFC5280_AIA_MALFORMED"
        case .crlDistributionPointsMalformed: "MTLS_RFC5280_CRLDP_MALFORMED"
        case .certificatePoliciesMalformed: "MTLS_RFC5280_POLICIES_MALFORMED"
        case .validityEncodingInvalid: "MTLS_RFC5280_VALIDITY_ENCODING"
        case .keyUsageEmpty: "MTLS_RFC5280_KU_EMPTY"
        case .extendedKeyUsageMalformed: "MTLS_RFC5280_EKU_MALFORMED"
        case .subjectAltNameMalformedEmail: "MTLS_RFC5280_SAN_MALFORMED_EMAIL"
        case .nameConstraintsMalformedAddress: "MTLS_RFC5280_NC_MALFORMED_ADDRESS"
        case .webPKILeafExtendedKeyUsageMissing: "MTLS_WEBPKI_EE_EKU_MISSING"
        case .webPKILeafExtendedKeyUsageForbidden: "MTLS_WEBPKI_EE_EKU_FORBIDDEN"
        case .webPKICAExtendedKeyUsageForbidden: "MTLS_WEBPKI_CA_EKU_FORBIDDEN"
        case .webPKILeafSubjectAltNameMissing: "MTLS_WEBPKI_EE_SAN_MISSING"
        case .webPKILeafSubjectAltNameType: "MTLS_WEBPKI_EE_SAN_TYPE"
        case .webPKIAuthorityInfoAccessContent: "MTLS_WEBPKI_AIA_CONTENT"
        case .webPKICRLDistributionPointsContent: "MTLS_WEBPKI_CRLDP_CONTENT"
        case .webPKICertificatePoliciesContent: "MTLS_WEBPKI_POLICIES_CONTENT"
        case .webPKILeafKeyUsage: "MTLS_WEBPKI_EE_KEY_USAGE"
        case .webPKICAKeyUsage: "MTLS_WEBPKI_CA_KEY_USAGE"
        case .webPKIAuthorityKeyIdentifierContent: "MTLS_WEBPKI_AKI_CONTENT"
        case .webPKISignatureAlgorithm: "MTLS_WEBPKI_SIGNATURE_ALGORITHM"
        case .webPKIIssuerNameEncoding: "MTLS_WEBPKI_ISSUER_NAME_ENCODING"
        case .webPKISubjectEncoding: "MTLS_WEBPKI_SUBJECT_ENCODING"
        case .webPKINotVersion3: "MTLS_WEBPKI_NOT_V3"
        }
    }

    /// True for the rules of the Web PKI profile (as opposed to RFC 5280 itself).
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

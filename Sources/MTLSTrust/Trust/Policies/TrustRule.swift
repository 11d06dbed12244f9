import Foundation

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
        }
    }

    /// True for the rules of the Web PKI profile (as opposed to RFC 5280 itself).
    public var isWebPKI: Bool { rawValue < 1020 }

    public var description: String { name }
}

extension TrustFinding {
    /// Creates a finding for one of the rules mtls enforces beyond OpenSSL.
    public init(rule: TrustRule, depth: Int, subject: String, reason: String, hint: String) {
        self.init(depth: depth, subject: subject, code: rule.rawValue, name: rule.name, reason: reason, hint: hint)
    }

    /// The mtls rule behind this finding, or nil when it is one of OpenSSL's codes.
    public var rule: TrustRule? { TrustRule(rawValue: code) }
}

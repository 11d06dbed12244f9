internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// RFC 5280 rules on extensions OpenSSL 3.0 does not parse for path validation (authority
// information access, CRL distribution points, certificate policies), on encodings it accepts, and
// the checks OpenSSL's X509_STRICT mode makes on every certificate but the trust anchor, which
// x509-limbo (as pyca/cryptography) also applies to an anchor that is not self-issued.

/// The RFC 5280 policies of this file, in reporting order.
enum RFC5280ExtensionRules {
    static let policies: [any ChainPolicy] = [
        RequiredKeyUsagePolicy(), AuthorityInfoAccessSyntaxPolicy(), CRLDistributionPointsSyntaxPolicy(),
        CertificatePoliciesSyntaxPolicy(), ValidityEncodingPolicy(), KeyUsageSyntaxPolicy(), ExtendedKeyUsageSyntaxPolicy(),
        SubjectAltNameEmailSyntaxPolicy(), NameConstraintsAddressSyntaxPolicy(), AnchorStrictChecksPolicy(),
        CriticalPolicyQualifierPolicy(), AnchorPolicyConstraintsPolicy(), ServerGatedCryptoPolicy(),
    ]
}

/// `--key-usage`: every usage the caller requires is allowed by the leaf's keyUsage (a leaf without
/// the extension allows every usage, RFC 5280 4.2.1.3).
struct RequiredKeyUsagePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        let required = context.policy.requiredKeyUsage
        guard !required.isEmpty, let usage = context.leaf.keyUsage else { return [] }
        let missing = KeyUsage(rawValue: required.rawValue & ~usage.rawValue)
        guard !missing.isEmpty else { return [] }
        return [
            context.finding(
                .requiredKeyUsageMissing, depth: 0,
                reason: "the keyUsage of \(context.label(0)) (\(usage.names.joined(separator: ", "))) does not allow \(missing.names.joined(separator: ", ")), which was required",
                hint: "use a certificate issued for this usage, or check without \(setting: .requiredKeyUsage) \(missing.names.joined(separator: ","))")
        ]
    }
}

/// RFC 5280 4.2.2.1: authorityInfoAccess is non-critical and a SEQUENCE SIZE (1..MAX) of
/// AccessDescription { accessMethod OID, accessLocation GeneralName }.
struct AuthorityInfoAccessSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        var findings: [TrustFinding] = []
        for (depth, facts) in context.facts.enumerated() {
            guard let raw = facts.extension(CertificateFacts.OID.authorityInfoAccess) else { continue }
            if raw.critical {
                findings.append(
                    context.finding(
                        .authorityInfoAccessCritical, depth: depth,
                        reason: "the authorityInfoAccess extension of \(context.label(depth)) is critical; RFC 5280 4.2.2.1 requires it non-critical",
                        hint: "the issuing CA is not conforming; have the certificate reissued with a non-critical authorityInfoAccess"))
            }
            if CertificateFacts.accessDescriptions(raw.value) == nil {
                findings.append(
                    context.finding(
                        .authorityInfoAccessMalformed, depth: depth,
                        reason: "the authorityInfoAccess extension of \(context.label(depth)) is not a non-empty list of (access method, location) pairs",
                        hint: "the issuing CA is not conforming; have the certificate reissued with a well-formed authorityInfoAccess"))
            }
        }
        return findings
    }
}

/// RFC 5280 4.2.1.13: cRLDistributionPoints is a SEQUENCE SIZE (1..MAX) of DistributionPoint, and
/// a point holds a distributionPoint or a cRLIssuer (never only reasons).
struct CRLDistributionPointsSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard let raw = facts.extension(CertificateFacts.OID.crlDistributionPoints), CertificateFacts.distributionPoints(raw.value) == nil else { return nil }
            return context.finding(
                .crlDistributionPointsMalformed, depth: depth,
                reason: "the cRLDistributionPoints extension of \(context.label(depth)) is empty, unreadable, or has a point with neither a name nor a CRL issuer",
                hint: "the issuing CA is not conforming; have the certificate reissued with well-formed CRL distribution points")
        }
    }
}

/// RFC 5280 4.2.1.4: certificatePolicies is a SEQUENCE SIZE (1..MAX) of PolicyInformation, and a
/// policy OID appears at most once.
struct CertificatePoliciesSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard let raw = facts.extension(CertificateFacts.OID.certificatePolicies) else { return nil }
            let problem: String?
            if let policies = CertificatePoliciesSyntaxPolicy.policies(raw.value) {
                let oids = policies.map(\.oid)
                problem = Set(oids).count == oids.count ? nil : "names a policy more than once"
            } else {
                problem = "is empty or unreadable"
            }
            guard let problem else { return nil }
            return context.finding(
                .certificatePoliciesMalformed, depth: depth,
                reason: "the certificatePolicies extension of \(context.label(depth)) \(problem) (RFC 5280 4.2.1.4)",
                hint: "the issuing CA is not conforming; have the certificate reissued with well-formed certificate policies")
        }
    }

    /// Each PolicyInformation: its OID and qualifiers (qualifier OID, the qualifier's DER), or nil.
    static func policies(_ value: [UInt8]) -> [(oid: String, qualifiers: [(oid: String, element: DER.Element)])]? {
        guard let entries = CertificateFacts.sequence(value), !entries.isEmpty else { return nil }
        var result: [(String, [(String, DER.Element)])] = []
        for entry in entries {
            guard entry.tag == 0x30, let parts = CertificateFacts.elements(value, from: entry.contentStart, to: entry.contentEnd),
                (1...2).contains(parts.count), parts[0].tag == 0x06
            else { return nil }
            var qualifiers: [(String, DER.Element)] = []
            if parts.count == 2 {
                guard parts[1].tag == 0x30, let infos = CertificateFacts.elements(value, from: parts[1].contentStart, to: parts[1].contentEnd), !infos.isEmpty
                else { return nil }
                for info in infos {
                    guard info.tag == 0x30, let pair = CertificateFacts.elements(value, from: info.contentStart, to: info.contentEnd), pair.count == 2,
                        pair[0].tag == 0x06
                    else { return nil }
                    qualifiers.append((CertificateFacts.dotted(value[pair[0].contentStart..<pair[0].contentEnd]), pair[1]))
                }
            }
            result.append((CertificateFacts.dotted(value[parts[0].contentStart..<parts[0].contentEnd]), qualifiers))
        }
        return result
    }
}

/// RFC 5280 4.1.2.5: dates from 1950 through 2049 are UTCTime `YYMMDDHHMMSSZ`, others
/// GeneralizedTime `YYYYMMDDHHMMSSZ`; seconds are present, no fractions, always Zulu.
struct ValidityEncodingPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard facts.isReadable else { return nil }
            let bad = [("notBefore", facts.notBefore), ("notAfter", facts.notAfter)].filter { !ValidityEncodingPolicy.isValid(tag: $0.1.tag, text: $0.1.text) }
            guard !bad.isEmpty else { return nil }
            return context.finding(
                .validityEncodingInvalid, depth: depth,
                reason:
                    "the \(bad.map { "\($0.0) (\($0.1.tag == 0x17 ? "UTCTime" : "GeneralizedTime") \($0.1.text))" }.joined(separator: " and ")) of \(context.label(depth)) is not encoded as RFC 5280 4.1.2.5 requires (UTCTime YYMMDDHHMMSSZ through 2049, GeneralizedTime YYYYMMDDHHMMSSZ from 2050)",
                hint: "the issuing CA is not conforming; have the certificate reissued")
        }
    }

    static func isValid(tag: UInt8, text: String) -> Bool {
        let digits = text.dropLast()
        guard text.hasSuffix("Z"), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        switch tag {
        case 0x17:
            return digits.count == 12
        case 0x18:
            guard digits.count == 14, let year = Int(digits.prefix(4)) else { return false }
            return year < 1950 || year >= 2050
        default:
            return false
        }
    }
}

/// RFC 5280 4.2.1.3: when keyUsage is present, at least one bit is set.
struct KeyUsageSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.chain.enumerated().compactMap { depth, certificate in
            guard context.facts[depth].extension(CertificateFacts.OID.keyUsage) != nil, certificate.keyUsage?.isEmpty ?? true else { return nil }
            return context.finding(
                .keyUsageEmpty, depth: depth,
                reason: "the keyUsage extension of \(context.label(depth)) has no bit set; RFC 5280 4.2.1.3 requires at least one",
                hint: "the issuing CA is not conforming; have the certificate reissued with the usages it needs")
        }
    }
}

/// RFC 5280 4.2.1.12: extKeyUsage is a SEQUENCE SIZE (1..MAX) OF KeyPurposeId.
struct ExtendedKeyUsageSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard let raw = facts.extension(CertificateFacts.OID.extendedKeyUsage) else { return nil }
            if let purposes = CertificateFacts.sequence(raw.value), !purposes.isEmpty, purposes.allSatisfy({ $0.tag == 0x06 }) { return nil }
            return context.finding(
                .extendedKeyUsageMalformed, depth: depth,
                reason: "the extKeyUsage extension of \(context.label(depth)) lists no purpose or cannot be read (RFC 5280 4.2.1.12 requires at least one)",
                hint: "the issuing CA is not conforming; have the certificate reissued with the purposes it needs")
        }
    }
}

/// RFC 5280 4.2.1.6: an rfc822Name is a mailbox `local-part@domain` (RFC 5321), the domain a DNS name.
struct SubjectAltNameEmailSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard let names = context.facts[0].subjectAlternativeNames else { return [] }
        let bad = names.compactMap { name -> String? in
            guard case .email(let bytes) = name else { return nil }
            return SubjectAltNameEmailSyntaxPolicy.isMailbox(bytes) ? nil : String(decoding: bytes, as: UTF8.self)
        }
        guard !bad.isEmpty else { return [] }
        return [
            context.finding(
                .subjectAltNameMalformedEmail, depth: 0,
                reason:
                    "the subjectAltName of \(context.label(0)) holds email \(bad.map { "'\(DisplayText.escaped($0))'" }.joined(separator: ", ")), which is not a mailbox local@domain",
                hint: "reissue the certificate with well-formed email addresses")
        ]
    }

    static func isMailbox(_ bytes: [UInt8]) -> Bool {
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), let at = bytes.lastIndex(of: UInt8(ascii: "@")), at > 0 else { return false }
        let local = bytes[..<at]
        let domain = String(decoding: bytes[(at + 1)...], as: UTF8.self)
        // A quoted local part may hold '@'; an unquoted one may not.
        if local.contains(UInt8(ascii: "@")) && !(local.first == UInt8(ascii: "\"") && local.last == UInt8(ascii: "\"")) { return false }
        return DNSNameSyntax.isValidHostname(domain)
    }
}

/// RFC 5280 4.2.1.10: an iPAddress constraint is an address and a mask (8 or 32 octets) whose mask
/// is contiguous; an rfc822Name constraint is a mailbox, a host, or a domain with a leading period.
struct NameConstraintsAddressSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard let constraints = facts.nameConstraints else { return nil }
            var bad: [String] = []
            for name in (constraints.permitted ?? []) + (constraints.excluded ?? []) {
                switch name {
                case .ip(let bytes) where !NameConstraintsAddressSyntaxPolicy.isAddressAndMask(bytes):
                    bad.append("IP constraint of \(bytes.count) octets")
                case .email(let bytes) where !NameConstraintsAddressSyntaxPolicy.isEmailConstraint(bytes):
                    bad.append("email constraint '\(DisplayText.escaped(String(decoding: bytes, as: UTF8.self)))'")
                default:
                    break
                }
            }
            guard !bad.isEmpty else { return nil }
            return context.finding(
                .nameConstraintsMalformedAddress, depth: depth,
                reason: "the name constraints of \(context.label(depth)) hold \(bad.joined(separator: ", ")), which RFC 5280 4.2.1.10 does not allow",
                hint: "an IP constraint is an address and a contiguous mask (10.0.0.0/255.0.0.0); an email constraint is a mailbox, a host or .domain")
        }
    }

    static func isAddressAndMask(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 8 || bytes.count == 32 else { return false }
        let mask = bytes[(bytes.count / 2)...]
        var seenZero = false
        for byte in mask {
            for bit in (0..<8).reversed() {
                let set = byte & (1 << bit) != 0
                if set && seenZero { return false }
                if !set { seenZero = true }
            }
        }
        return true
    }

    static func isEmailConstraint(_ bytes: [UInt8]) -> Bool {
        if bytes.contains(UInt8(ascii: "@")) { return SubjectAltNameEmailSyntaxPolicy.isMailbox(bytes) }
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix(".") { text.removeFirst() }
        return DNSNameSyntax.isValidHostname(text)
    }
}

/// OpenSSL's X509_STRICT checks skip the last certificate of the chain for the authority key
/// identifier (RFC 5280 4.2.1.1: every certificate but a self-signed one carries it) and accept a
/// non-critical basicConstraints in it. With `--partial-chain` that certificate is an anchor that
/// another CA issued; x509-limbo (as pyca/cryptography) holds it to the same rules as any CA
/// certificate, and so does mtls: a trust anchor another key signed (neither self-issued nor
/// self-signed) must have an
/// authorityKeyIdentifier with a keyIdentifier, and any CA anchor a critical basicConstraints
/// (RFC 5280 4.2.1.9).
struct AnchorStrictChecksPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        let last = context.chain.count - 1
        guard last > 0, context.isAnchor(last), context.facts[last].isReadable else { return [] }
        let facts = context.facts[last]
        let certificate = context.chain[last]
        var findings: [TrustFinding] = []
        if !ChainDepthPolicy.isSelfIssued(certificate), !AnchorStrictChecksPolicy.isSignedByOwnKey(certificate), facts.authorityKeyIdentifierHasKeyID != true {
            findings.append(
                context.finding(
                    code: X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER, depth: last,
                    reason:
                        "the anchor \(context.label(last)) was issued by another CA (\(Certificate.shortName(certificate.issuer))) but has no authorityKeyIdentifier with a keyIdentifier, which RFC 5280 4.2.1.1 requires",
                    hint: "trust the self-signed root instead, or a version of this CA certificate issued with an authority key identifier"))
        }
        if facts.isCA, facts.extension(CertificateFacts.OID.basicConstraints)?.critical == false {
            findings.append(
                context.finding(
                    code: X509_V_ERR_CA_BCONS_NOT_CRITICAL, depth: last,
                    reason: "the basicConstraints extension of the anchor \(context.label(last)) is not critical; RFC 5280 4.2.1.9 requires it critical in CA certificates",
                    hint: "trust a CA certificate issued with a critical basicConstraints"))
        }
        return findings
    }

    /// True when the certificate's signature verifies with its own key: a root, even when its
    /// issuer name is not its subject name (RFC 5280 exempts self-signed certificates).
    static func isSignedByOwnKey(_ certificate: Certificate) -> Bool {
        guard let key = X509_get0_pubkey(certificate.reference.pointer) else { return false }  // get0: borrowed
        let verified = X509_verify(certificate.reference.pointer, key) == 1
        OpenSSLErrorQueue.clear()
        return verified
    }
}

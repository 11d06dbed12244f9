#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The CA/Browser Forum Baseline Requirements certificate profiles (section 7.1), rule by rule,
// where OpenSSL does not already enforce them. Subscriber certificate: 7.1.2.7; subordinate CA:
// 7.1.2.2–7.1.2.6 and 7.1.2.10; root: 7.1.2.1; the common field and extension rules 7.1.2.8–
// 7.1.2.11; algorithms 7.1.3; names 7.1.4.
//
// Presence requirements that private PKIs (the usual mTLS deployment) do not meet and that
// browsers do not enforce for them (authorityInfoAccess, certificatePolicies, cRLSign, a critical
// CA keyUsage) are not rules here; the content of those extensions is, whenever they are present.

/// The Web PKI policies of this file, in reporting order.
enum WebPKIProfileRules {
    static let policies: [any ChainPolicy] = [
        WebPKILeafExtendedKeyUsageContentPolicy(), WebPKICAExtendedKeyUsagePolicy(), WebPKILeafSubjectAltNameContentPolicy(),
        WebPKIAuthorityInfoAccessPolicy(), WebPKICRLDistributionPointsPolicy(), WebPKICertificatePoliciesPolicy(),
        WebPKILeafKeyUsagePolicy(), WebPKICAKeyUsagePolicy(), WebPKIAuthorityKeyIdentifierContentPolicy(),
        WebPKISignatureAlgorithmPolicy(), WebPKIIssuerNamePolicy(), WebPKISubjectEncodingPolicy(), WebPKIVersionPolicy(),
    ]

    static let serverAuth = CertificateFacts.OID.serverAuth
    static let clientAuth = CertificateFacts.OID.clientAuth

    /// The purposes a TLS certificate may not combine with serverAuth (BR 7.1.2.7.10, 7.1.2.10.6).
    static let forbiddenPurposes: Set<String> = [
        "1.3.6.1.5.5.7.3.3", "1.3.6.1.5.5.7.3.4", "1.3.6.1.5.5.7.3.8", "1.3.6.1.5.5.7.3.9", CertificateFacts.OID.anyExtendedKeyUsage,
    ]
}

/// BR 7.1.2.7.10: a subscriber certificate has extKeyUsage, with serverAuth and optionally
/// clientAuth and nothing else (anyExtendedKeyUsage has its own rule).
struct WebPKILeafExtendedKeyUsageContentPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard !context.leafIsAnchor, context.facts[0].isReadable else { return [] }
        guard let purposes = context.facts[0].extendedKeyUsage else {
            return [
                context.finding(
                    .webPKILeafExtendedKeyUsageMissing, depth: 0,
                    reason: "\(context.label(0)) has no extKeyUsage extension; the Baseline Requirements (7.1.2.7.10) require one with serverAuth",
                    hint: "reissue the certificate with extendedKeyUsage = serverAuth (and clientAuth if needed), or check with \(setting: .profile) rfc5280")
            ]
        }
        let others = purposes.filter { $0 != WebPKIProfileRules.serverAuth && $0 != WebPKIProfileRules.clientAuth && $0 != CertificateFacts.OID.anyExtendedKeyUsage }
        guard !others.isEmpty else { return [] }
        return [
            context.finding(
                .webPKILeafExtendedKeyUsageForbidden, depth: 0,
                reason:
                    "the extKeyUsage of \(context.label(0)) contains \(others.map(CertificateFacts.purposeName).joined(separator: ", ")); a TLS server certificate may only carry serverAuth and clientAuth (BR 7.1.2.7.10)",
                hint: "reissue the certificate with serverAuth (and clientAuth) only; use separate certificates for other purposes")
        ]
    }
}

/// BR 7.1.2.10.6: a subordinate CA whose extKeyUsage includes serverAuth does not also include
/// codeSigning, emailProtection, timeStamping, OCSPSigning or anyExtendedKeyUsage.
struct WebPKICAExtendedKeyUsagePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard context.chain.count > 1 else { return [] }
        return (1..<context.chain.count).compactMap { depth in
            guard !context.isAnchor(depth) || !ChainDepthPolicy.isSelfIssued(context.chain[depth]),
                let purposes = context.facts[depth].extendedKeyUsage, purposes.contains(WebPKIProfileRules.serverAuth)
            else { return nil }
            let forbidden = purposes.filter(WebPKIProfileRules.forbiddenPurposes.contains).map(CertificateFacts.purposeName)
            guard !forbidden.isEmpty else { return nil }
            return context.finding(
                .webPKICAExtendedKeyUsageForbidden, depth: depth,
                reason: "the extKeyUsage of the CA \(context.label(depth)) combines serverAuth with \(forbidden.joined(separator: ", ")), which BR 7.1.2.10.6 forbids",
                hint: "a TLS issuing CA carries serverAuth (and clientAuth) only; the CA certificate must be reissued")
        }
    }
}

/// BR 7.1.2.7.12: a subscriber certificate has a subjectAltName, holding only dNSName and
/// iPAddress entries.
struct WebPKILeafSubjectAltNameContentPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard !context.leafIsAnchor, context.facts[0].isReadable else { return [] }
        guard context.facts[0].extension(CertificateFacts.OID.subjectAltName) != nil else {
            return [
                context.finding(
                    .webPKILeafSubjectAltNameMissing, depth: 0,
                    reason:
                        "\(context.label(0)) has no subjectAltName extension; the Baseline Requirements (7.1.2.7.12) require the server's names there (the subject CN is never used)",
                    hint: "reissue the certificate with subjectAltName = DNS:name (openssl: -addext subjectAltName=DNS:host.example)")
            ]
        }
        let others = (context.facts[0].subjectAlternativeNames ?? []).compactMap { name -> String? in
            switch name {
            case .dns, .ip: nil
            case .email: "rfc822Name"
            case .uri: "uniformResourceIdentifier"
            case .directoryName: "directoryName"
            case .otherName: "otherName"
            case .registeredID: "registeredID"
            case .unknown(let tag): "a name with tag \(tag)"
            }
        }
        guard !others.isEmpty else { return [] }
        return [
            context.finding(
                .webPKILeafSubjectAltNameType, depth: 0,
                reason:
                    "the subjectAltName of \(context.label(0)) holds \(Array(Set(others)).sorted().joined(separator: ", ")); a TLS server certificate may only hold dNSName and iPAddress entries (BR 7.1.2.7.12)",
                hint: "reissue the certificate with DNS and IP names only, or check with \(setting: .profile) rfc5280")
        ]
    }
}

/// BR 7.1.2.7.7, 7.1.2.10.3: authorityInfoAccess holds only id-ad-ocsp and id-ad-caIssuers
/// entries, each an `http://` URI.
struct WebPKIAuthorityInfoAccessPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard !context.isAnchor(depth), let raw = facts.extension(CertificateFacts.OID.authorityInfoAccess),
                let entries = CertificateFacts.accessDescriptions(raw.value)
            else { return nil }
            let bad = entries.filter { entry in
                (entry.method != CertificateFacts.OID.ocsp && entry.method != CertificateFacts.OID.caIssuers) || !entry.location.isHTTPURI
            }
            guard !bad.isEmpty else { return nil }
            return context.finding(
                .webPKIAuthorityInfoAccessContent, depth: depth,
                reason:
                    "the authorityInfoAccess of \(context.label(depth)) has \(bad.count) entr\(bad.count == 1 ? "y" : "ies") that \(bad.count == 1 ? "is" : "are") not an OCSP or caIssuers http:// URI (BR 7.1.2.7.7)",
                hint: "the issuing CA is not conforming; have the certificate reissued")
        }
    }
}

/// BR 7.1.2.11.2: cRLDistributionPoints is not critical, and each point is a fullName of
/// `http://` URIs, without reasons or cRLIssuer.
struct WebPKICRLDistributionPointsPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard !context.isAnchor(depth), let raw = facts.extension(CertificateFacts.OID.crlDistributionPoints),
                let points = CertificateFacts.distributionPoints(raw.value)
            else { return nil }
            var problems: [String] = []
            if raw.critical { problems.append("it is critical") }
            for point in points {
                if point[0x81] != nil || point[0xA2] != nil { problems.append("a point has reasons or a cRLIssuer") }
                guard let name = point[0xA0], let full = DER.element(in: raw.value, at: name.contentStart, limit: name.contentEnd), full.tag == 0xA0 else {
                    problems.append("a point has no fullName")
                    continue
                }
                let uris = CertificateFacts.generalNames(raw.value, from: full.contentStart, to: full.contentEnd)
                if uris.isEmpty || !uris.allSatisfy(\.isHTTPURI) { problems.append("a point is not an http:// URI") }
            }
            guard !problems.isEmpty else { return nil }
            return context.finding(
                .webPKICRLDistributionPointsContent, depth: depth,
                reason: "the cRLDistributionPoints of \(context.label(depth)) break BR 7.1.2.11.2: \(Array(Set(problems)).sorted().joined(separator: "; "))",
                hint: "the issuing CA is not conforming; have the certificate reissued with non-critical http:// CRL URLs")
        }
    }
}

/// BR 7.1.2.7.9, 7.1.2.10.5, 7.1.2.11: certificatePolicies is not critical, a subscriber
/// certificate does not assert anyPolicy, and the only qualifiers are a CPS URI (http or https)
/// and a user notice.
struct WebPKICertificatePoliciesPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard !context.isAnchor(depth), let raw = facts.extension(CertificateFacts.OID.certificatePolicies),
                let policies = CertificatePoliciesSyntaxPolicy.policies(raw.value)
            else { return nil }
            var problems: [String] = []
            if raw.critical { problems.append("the extension is critical") }
            if depth == 0 && policies.contains(where: { $0.oid == CertificateFacts.OID.anyPolicy }) {
                problems.append("a subscriber certificate asserts anyPolicy")
            }
            for qualifier in policies.flatMap(\.qualifiers) {
                switch qualifier.oid {
                case CertificateFacts.OID.cpsQualifier:
                    let element = qualifier.element
                    let text = String(decoding: raw.value[element.contentStart..<element.contentEnd], as: UTF8.self).lowercased()
                    if element.tag != 0x16 || !(text.hasPrefix("http://") || text.hasPrefix("https://")) {
                        problems.append("a CPS qualifier is not an http(s) URI in an IA5String")
                    }
                case CertificateFacts.OID.userNoticeQualifier:
                    break
                default:
                    problems.append("a qualifier of unknown type \(qualifier.oid)")
                }
            }
            guard !problems.isEmpty else { return nil }
            return context.finding(
                .webPKICertificatePoliciesContent, depth: depth,
                reason: "the certificatePolicies of \(context.label(depth)) break the Baseline Requirements: \(Array(Set(problems)).sorted().joined(separator: "; "))",
                hint: "the issuing CA is not conforming; have the certificate reissued")
        }
    }
}

/// BR 7.1.2.7.11: a subscriber keyUsage has no CA bits (keyCertSign, cRLSign), and an ECDSA or
/// EdDSA key is not used for key encipherment or data encipherment.
struct WebPKILeafKeyUsagePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard !context.leafIsAnchor, let usage = context.leaf.keyUsage else { return [] }
        var forbidden: KeyUsage = [.keyCertSign, .cRLSign]
        switch context.leaf.keyAlgorithm {
        case .rsa, .rsaPSS: forbidden.formUnion([.keyAgreement, .encipherOnly, .decipherOnly])
        case .ec: forbidden.formUnion([.keyEncipherment, .dataEncipherment])
        default: forbidden.formUnion([.keyEncipherment, .dataEncipherment, .keyAgreement, .encipherOnly, .decipherOnly])
        }
        let bad = usage.intersection(forbidden)
        guard !bad.isEmpty else { return [] }
        return [
            context.finding(
                .webPKILeafKeyUsage, depth: 0,
                reason:
                    "the keyUsage of \(context.label(0)) (\(context.leaf.keyAlgorithm)) includes \(bad.names.joined(separator: ", ")), which BR 7.1.2.7.11 forbids in a TLS server certificate with this key type",
                hint: "reissue the certificate with keyUsage digitalSignature (RSA: and keyEncipherment)")
        ]
    }
}

/// BR 7.1.2.10.7, 7.1.2.1 (root): a CA certificate has keyUsage with keyCertSign, and no bits
/// beyond keyCertSign, cRLSign and digitalSignature.
///
/// The requirement that CA keyUsage be critical and include cRLSign is not enforced: x509-limbo's
/// valid Web PKI chains (as many private CAs) carry a non-critical keyCertSign alone.
struct WebPKICAKeyUsagePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard context.chain.count > 1 else { return [] }
        return (1..<context.chain.count).compactMap { depth in
            guard context.facts[depth].isReadable else { return nil }
            let usage = context.chain[depth].keyUsage
            let problem: String
            if let usage {
                let extra = usage.subtracting([.keyCertSign, .cRLSign, .digitalSignature])
                if !usage.contains(.keyCertSign) {
                    problem = "its keyUsage (\(usage.names.joined(separator: ", "))) lacks keyCertSign"
                } else if !extra.isEmpty {
                    problem = "its keyUsage includes \(extra.names.joined(separator: ", ")), which a CA certificate may not carry"
                } else {
                    return nil
                }
            } else {
                problem = "it has no keyUsage extension"
            }
            return context.finding(
                .webPKICAKeyUsage, depth: depth,
                reason: "\(context.role(depth)) CA \(context.label(depth)) breaks BR 7.1.2.10.7: \(problem)",
                hint: "a CA certificate needs keyUsage = critical, keyCertSign, cRLSign; it must be reissued (or check with \(setting: .profile) rfc5280)")
        }
    }
}

/// BR 7.1.2.11.1: an authorityKeyIdentifier holds the keyIdentifier only (no authorityCertIssuer
/// or authorityCertSerialNumber); BR 7.1.2.1.3: a root's keyIdentifier equals its own
/// subjectKeyIdentifier. (A missing keyIdentifier is ``TrustRule/webPKIAuthorityKeyIdentifierWithoutKeyID``.)
struct WebPKIAuthorityKeyIdentifierContentPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard let fields = facts.authorityKeyIdentifierFields else { return nil }
            var problems: [String] = []
            if fields[0xA1] != nil { problems.append("authorityCertIssuer") }
            if fields[0x82] != nil { problems.append("authorityCertSerialNumber") }
            var mismatch = false
            if let keyID = fields[0x80], depth == context.chain.count - 1, ChainDepthPolicy.isSelfIssued(context.chain[depth]),
                let own = facts.subjectKeyIdentifier, own != keyID
            {
                mismatch = true
            }
            guard !problems.isEmpty || mismatch else { return nil }
            var reason = "the authorityKeyIdentifier of \(context.label(depth))"
            if !problems.isEmpty { reason += " carries \(problems.joined(separator: " and ")), which BR 7.1.2.11.1 forbids" }
            if mismatch { reason += (problems.isEmpty ? "" : ", and") + " names a key other than its own subjectKeyIdentifier although it is self-issued (BR 7.1.2.1.3)" }
            return context.finding(
                .webPKIAuthorityKeyIdentifierContent, depth: depth, reason: reason,
                hint: "the Baseline Requirements allow only the keyIdentifier (the issuer's subjectKeyIdentifier); the certificate must be reissued")
        }
    }
}

/// BR 7.1.3.2: signatures are RSASSA-PKCS1-v1_5 with SHA-256/384/512 (parameters NULL),
/// RSASSA-PSS with SHA-256/384/512, or ECDSA with SHA-256/384/512 (no parameters). Ed25519 and
/// Ed448 are also accepted, as their keys are (see ``WebPKIKeyPolicy``). SHA-1 and MD5 are
/// already refused by OpenSSL's security level 2. The anchor's own signature is not judged.
struct WebPKISignatureAlgorithmPolicy: ChainPolicy {
    static let rsaPKCS1 = [
        "1.2.840.113549.1.1.11": "sha256WithRSAEncryption", "1.2.840.113549.1.1.12": "sha384WithRSAEncryption", "1.2.840.113549.1.1.13": "sha512WithRSAEncryption",
    ]
    static let noParameters = [
        "1.2.840.10045.4.3.2": "ecdsa-with-SHA256", "1.2.840.10045.4.3.3": "ecdsa-with-SHA384", "1.2.840.10045.4.3.4": "ecdsa-with-SHA512", "1.3.101.112": "Ed25519",
        "1.3.101.113": "Ed448",
    ]
    static let pss = "1.2.840.113549.1.1.10"

    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard facts.isReadable, !context.isAnchor(depth) else { return nil }
            let (oid, parameters) = facts.signatureAlgorithm
            let problem: String
            if WebPKISignatureAlgorithmPolicy.rsaPKCS1[oid] != nil {
                if parameters == [0x05, 0x00] { return nil }
                problem = "RSA parameters that are not NULL"
            } else if WebPKISignatureAlgorithmPolicy.noParameters[oid] != nil {
                if parameters.isEmpty { return nil }
                problem = "parameters where none are allowed"
            } else if oid == WebPKISignatureAlgorithmPolicy.pss {
                return nil
            } else {
                problem = "the algorithm \(context.chain[depth].signatureAlgorithm) (\(oid))"
            }
            return context.finding(
                .webPKISignatureAlgorithm, depth: depth,
                reason: "the signature of \(context.label(depth)) uses \(problem), outside BR 7.1.3.2 (RSA or ECDSA with SHA-256, SHA-384 or SHA-512)",
                hint: "the issuing CA must sign with SHA-256 or stronger in the encodings of BR 7.1.3.2; have the certificate reissued")
        }
    }
}

/// BR 7.1.4.1: the issuer field is byte for byte the issuing CA's subject.
struct WebPKIIssuerNamePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard context.chain.count > 1 else { return [] }
        return (0..<context.chain.count - 1).compactMap { depth in
            let subject = context.facts[depth]
            let issuer = context.facts[depth + 1]
            guard subject.isReadable, issuer.isReadable, subject.issuerDER != issuer.subjectDER else { return nil }
            return context.finding(
                .webPKIIssuerNameEncoding, depth: depth,
                reason:
                    "the issuer name of \(context.label(depth)) matches the subject of \(context.label(depth + 1)) only after normalisation, not byte for byte as BR 7.1.4.1 requires",
                hint: "the issuing CA must copy its subject name exactly; have the certificate reissued")
        }
    }
}

/// BR 7.1.4.2: every RelativeDistinguishedName holds one attribute, countryName is two letters
/// (a PrintableString), and commonName appears at most once. The anchor is the caller's choice
/// and is not judged.
struct WebPKISubjectEncodingPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard facts.isReadable, !context.isAnchor(depth), let problem = WebPKISubjectEncodingPolicy.problem(facts.subjectDER) else { return nil }
            return context.finding(
                .webPKISubjectEncoding, depth: depth,
                reason: "the subject of \(context.label(depth)) breaks BR 7.1.4.2: \(problem)",
                hint: "the issuing CA is not conforming; have the certificate reissued")
        }
    }

    static func problem(_ name: [UInt8]) -> String? {
        guard let sets = CertificateFacts.sequence(name) else { return "it cannot be read" }
        var commonNames = 0
        for set in sets {
            guard set.tag == 0x31, let attributes = CertificateFacts.elements(name, from: set.contentStart, to: set.contentEnd) else { return "it cannot be read" }
            if attributes.count != 1 { return "a relative distinguished name holds \(attributes.count) attributes (one is allowed)" }
            guard let parts = CertificateFacts.elements(name, from: attributes[0].contentStart, to: attributes[0].contentEnd), parts.count == 2, parts[0].tag == 0x06
            else { return "it cannot be read" }
            let oid = CertificateFacts.dotted(name[parts[0].contentStart..<parts[0].contentEnd])
            let value = Array(name[parts[1].contentStart..<parts[1].contentEnd])
            if oid == "2.5.4.3" { commonNames += 1 }
            if oid == "2.5.4.6" && (parts[1].tag != 0x13 || value.count != 2 || !value.allSatisfy({ (0x41...0x5A).contains($0) })) {
                return "countryName '\(DisplayText.escaped(String(decoding: value, as: UTF8.self)))' is not a two-letter ISO 3166 code in a PrintableString"
            }
        }
        return commonNames > 1 ? "it holds \(commonNames) commonName attributes (at most one is allowed)" : nil
    }
}

/// BR 7.1.1: certificates are X.509 version 3. The anchor is the caller's choice and is not judged.
struct WebPKIVersionPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard facts.isReadable, !context.isAnchor(depth), facts.version != 2 else { return nil }
            return context.finding(
                .webPKINotVersion3, depth: depth,
                reason: "\(context.label(depth)) is an X.509 version \(facts.version + 1) certificate; the Baseline Requirements (7.1.1) require version 3",
                hint: "have the certificate reissued as version 3 (openssl adds the extensions that make it one)")
        }
    }
}

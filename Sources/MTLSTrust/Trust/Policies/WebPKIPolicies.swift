internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The CA/Browser Forum Baseline Requirements rules that OpenSSL does not check, enforced when
// `TrustPolicy.enforcesWebPKI` (`--profile webpki`; warnings only under the default profile). OpenSSL's own security level 2
// (`X509_VERIFY_PARAM_set_auth_level`) covers RSA keys under 2048 bits, P-192 and SHA-1 or MD5
// signatures; these policies cover the rest.

/// BR 6.1.5 / 7.1.3.1: keys are RSA (2048+ bits, checked by OpenSSL's security level, and a
/// multiple of 8) or ECDSA on P-256, P-384 or P-521. DSA and other curves (P-224, secp256k1,
/// brainpool …) are refused at any position, the root included.
///
/// Ed25519 and Ed448 are accepted: the Baseline Requirements do not list them, but they are not
/// weak, and private PKIs (the usual mTLS deployment) use them.
struct WebPKIKeyPolicy: ChainPolicy {
    static let allowedCurves: Set<String> = ["P-256", "P-384", "P-521"]

    func check(_ context: ChainContext) -> [TrustFinding] {
        var findings: [TrustFinding] = []
        for (depth, certificate) in context.chain.enumerated() {
            let algorithm = certificate.keyAlgorithm
            let problem: String?
            switch algorithm {
            case .dsa: problem = "DSA keys are not allowed"
            case .rsa(let bits) where bits % 8 != 0, .rsaPSS(let bits) where bits % 8 != 0: problem = "an RSA modulus of \(bits) bits is not a multiple of 8"
            case .ec(let curve, _) where !WebPKIKeyPolicy.allowedCurves.contains(curve):
                problem = "the curve \(curve) is not one of P-256, P-384, P-521"
            case .other(let name, _): problem = "\(name) keys are not allowed"
            default: problem = nil
            }
            if let problem {
                findings.append(
                    context.finding(
                        .webPKIWeakKey, depth: depth,
                        reason: "the key of \(context.label(depth)) (\(algorithm)) is not allowed in the Web PKI: \(problem)",
                        hint: depth == 0
                            ? "reissue the certificate with an RSA 2048+ or ECDSA P-256/P-384 key"
                            : "\(context.role(depth)) CA must use an RSA 2048+ or ECDSA P-256/P-384/P-521 key"))
            }
        }
        return findings
    }
}

/// BR 7.1.2.7.10 and 7.1.2.7.6: the leaf's extended key usage does not contain anyExtendedKeyUsage
/// and is not critical; BR 7.1.2.1.2: a root CA has no extended key usage at all.
struct WebPKIExtendedKeyUsagePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        var findings: [TrustFinding] = []
        let leaf = context.facts[0]
        if !context.leafIsAnchor, let ekus = leaf.extendedKeyUsage {
            if ekus.contains(CertificateFacts.OID.anyExtendedKeyUsage) {
                findings.append(
                    context.finding(
                        .webPKILeafAnyExtendedKeyUsage, depth: 0,
                        reason: "the extended key usage of \(context.label(0)) contains anyExtendedKeyUsage, which the Baseline Requirements forbid in subscriber certificates",
                        hint: "reissue the certificate with serverAuth (and clientAuth if needed) only"))
            }
            if leaf.extension(CertificateFacts.OID.extendedKeyUsage)?.critical == true {
                findings.append(
                    context.finding(
                        .webPKILeafExtendedKeyUsageCritical, depth: 0,
                        reason: "the extended key usage extension of \(context.label(0)) is critical, which the Baseline Requirements forbid",
                        hint: "reissue the certificate with a non-critical extKeyUsage"))
            }
        }
        let last = context.chain.count - 1
        if last > 0, context.isAnchor(last), ChainDepthPolicy.isSelfIssued(context.chain[last]),
            context.facts[last].extension(CertificateFacts.OID.extendedKeyUsage) != nil
        {
            findings.append(
                context.finding(
                    .webPKIRootHasExtendedKeyUsage, depth: last,
                    reason: "the root \(context.label(last)) carries an extended key usage extension, which the Baseline Requirements forbid in root CA certificates",
                    hint: "trust a root without extKeyUsage; constrain usage in the intermediates instead"))
        }
        return findings
    }
}

/// BR 7.1.2.7.8: a subscriber certificate has `cA:FALSE`; a CA certificate cannot serve as the leaf.
struct WebPKILeafBasicConstraintsPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard !context.leafIsAnchor, context.facts[0].isCA else { return [] }
        return [
            context.finding(
                .webPKILeafIsCA, depth: 0,
                reason: "\(context.label(0)) is presented as the leaf but is a CA certificate (basicConstraints cA:TRUE)",
                hint: "a server must present an end-entity certificate (cA:FALSE) issued by the CA, not a CA certificate")
        ]
    }
}

/// BR 7.1.2.1.3 and 7.1.2.11.1: an authorityKeyIdentifier, when present, carries the keyIdentifier.
struct WebPKIAuthorityKeyIdentifierPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard facts.authorityKeyIdentifierHasKeyID == false else { return nil }
            return context.finding(
                .webPKIAuthorityKeyIdentifierWithoutKeyID, depth: depth,
                reason: "the authorityKeyIdentifier of \(context.label(depth)) has no keyIdentifier field",
                hint: "the Baseline Requirements require the keyIdentifier; reissue the certificate")
        }
    }
}

/// BR 7.1.2.7.12: the subjectAltName is critical only when the subject is empty.
struct WebPKISubjectAltNamePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        let leaf = context.facts[0]
        guard !context.leafIsAnchor, leaf.isReadable, !leaf.subjectIsEmpty,
            leaf.extension(CertificateFacts.OID.subjectAltName)?.critical == true
        else { return [] }
        return [
            context.finding(
                .webPKISubjectAltNameCritical, depth: 0,
                reason: "the subjectAltName of \(context.label(0)) is critical although its subject is not empty",
                hint: "reissue the certificate with a non-critical subjectAltName")
        ]
    }
}

/// BR 7.1.4.3: a subject CN, when present, is a character-for-character copy of a subjectAltName
/// entry (an IPv4 address in dotted decimal, an IPv6 address in RFC 5952 form).
///
/// The CN is never used to match a host name; it is judged because clients and people display it.
/// mtls rejects a CN that names an entry in another spelling (other case, IP address in hex, octal,
/// with leading zeros, upper-case or uncompressed IPv6), an internationalized name (an `xn--`
/// A-label or raw UTF-8) that is not one of the dNSNames, and a DNS name that is not one of the
/// dNSNames. Left alone: a CN that is not a DNS name (`CN=Example Server`), a CN when the
/// subjectAltName has no dNSName, and a CN that is the base of a wildcard entry (`example.com`
/// beside `*.example.com`), which x509-limbo's valid Web PKI chains carry. The rfc5280 profile
/// has no such rule.
struct WebPKICommonNamePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard !context.leafIsAnchor, let cn = context.leaf.commonName, !cn.isEmpty,
            let names = context.facts[0].subjectAlternativeNames
        else { return [] }
        let dnsNames = names.compactMap(\.dnsText)
        let addresses = names.compactMap(\.ipBytes)
        let problem: String?
        if dnsNames.contains(cn) || addresses.contains(where: { IPAddress.format($0) == cn }) {
            problem = nil
        } else if let address = WebPKICommonNamePolicy.looseAddress(cn), addresses.contains(address) {
            problem = "names the address \(IPAddress.format(address)) in a non-canonical form"
        } else if !cn.unicodeScalars.allSatisfy(\.isASCII), cn.contains(".") {
            problem = "is an internationalized name in Unicode, where the Baseline Requirements need the A-label (xn--) copy of a dNSName"
        } else if dnsNames.contains(where: { DNSNameSyntax.lowercased($0) == DNSNameSyntax.lowercased(cn) }) {
            problem = "differs from a dNSName only in letter case"
        } else if DNSNameSyntax.lowercased(cn).split(separator: ".").contains(where: { $0.hasPrefix("xn--") }) {
            problem = "is an internationalized (xn--) name that none of the dNSNames carries"
        } else if !dnsNames.isEmpty, IPAddress.parse(cn) == nil, DNSNameSyntax.isValidHostname(cn),
            !dnsNames.contains(where: { DNSNameSyntax.wildcardBase($0).map(DNSNameSyntax.lowercased) == DNSNameSyntax.lowercased(cn) })
        {
            problem = "is a DNS name that is not a copy of any dNSName entry"
        } else {
            problem = nil
        }
        guard let problem else { return [] }
        let listed = (dnsNames + addresses.map(IPAddress.format)).joined(separator: ", ")
        return [
            context.finding(
                .webPKICommonNameNotInSubjectAltName, depth: 0,
                reason: "the subject CN '\(DisplayText.escaped(cn))' of \(context.label(0)) \(problem) (subjectAltName: \(DisplayText.escaped(listed)))",
                hint: "the CN must be an exact copy of a subjectAltName entry; reissue the certificate")
        ]
    }

    /// An IPv4 address in any notation `inet_aton` accepts (hex, octal, fewer parts), in dotted
    /// decimal with leading zeros, or an IPv6 address in any case or compression.
    static func looseAddress(_ text: String) -> [UInt8]? {
        if let address = IPAddress.parse(text) { return address }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) {
            let octets = parts.compactMap { UInt8($0) }
            if octets.count == 4 { return octets }
        }
        var address = in_addr()
        if inet_aton(text, &address) != 0 { return withUnsafeBytes(of: &address) { Array($0) } }
        return nil
    }
}

/// BR 3.2.2.6: a wildcard directly on a public suffix (`*.com`, `*.co.uk`, `*.s3.amazonaws.com`),
/// judged against the Public Suffix List with its private section, never matches a host name.
///
/// As in Chromium, such a wildcard is ignored rather than fatal: a certificate that also names the
/// host exactly (Amazon's `s3.amazonaws.com` next to `*.s3.amazonaws.com`) stays valid for it.
struct WebPKIPublicSuffixWildcardPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard !context.leafIsAnchor, let host = context.policy.hostname, IPAddress.parse(host) == nil,
            let names = context.facts[0].subjectAlternativeNames
        else { return [] }
        let reference = DNSNameSyntax.lowercased(host.hasSuffix(".") ? String(host.dropLast()) : host)
        let patterns = names.compactMap(\.dnsText).map(DNSNameSyntax.lowercased)
        let spanning = patterns.filter { pattern in
            guard let base = DNSNameSyntax.wildcardBase(pattern) else { return pattern == "*" }
            return PublicSuffixList.system.isPublicSuffix(base)
        }
        guard !spanning.isEmpty else { return [] }
        let matchedOtherwise = patterns.contains { !spanning.contains($0) && DNSNameSyntax.matches(pattern: $0, host: reference) }
        let matchedBySpanning = spanning.filter { DNSNameSyntax.matches(pattern: $0, host: reference) }
        guard !matchedOtherwise, !matchedBySpanning.isEmpty else { return [] }
        return [
            context.finding(
                .webPKIPublicSuffixWildcard, depth: 0,
                reason:
                    "\(context.label(0)) matches \(host) only through the wildcard \(matchedBySpanning.joined(separator: ", ")), which spans a public suffix and so names of unrelated owners",
                hint: "CAs must not issue wildcards on a public suffix; the server needs a certificate that names \(host) or a wildcard under a registrable domain")
        ]
    }
}

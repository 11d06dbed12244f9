internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The RFC 5280 rules OpenSSL 3.0 leaves unchecked (even with X509_V_FLAG_X509_STRICT), enforced
// for every purpose.

/// `--max-depth N`: at most N intermediates, not counting self-issued ones (RFC 5280 6.1.4 (l):
/// a re-keyed CA certificate issued by the same CA is not a new step in the path).
///
/// OpenSSL counts every certificate, so the evaluator gives it room for the self-issued ones and
/// this policy applies the exact limit.
struct ChainDepthPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard let maximum = context.policy.maximumDepth, context.chain.count > 2 else { return [] }
        let end = context.isAnchored ? context.chain.count - 1 : context.chain.count
        var counted = 0
        for depth in 1..<max(end, 1) where !ChainDepthPolicy.isSelfIssued(context.chain[depth]) {
            counted += 1
            if counted > maximum {
                return [
                    context.finding(
                        code: X509_V_ERR_CERT_CHAIN_TOO_LONG, depth: depth,
                        reason: "the chain needs \(ChainDepthPolicy.count(context)) intermediate CAs (self-issued ones not counted), more than the maximum depth \(maximum)",
                        hint: "raise \(setting: .maximumDepth) if this chain is expected")
                ]
            }
        }
        return []
    }

    static func count(_ context: ChainContext) -> Int {
        let end = context.isAnchored ? context.chain.count - 1 : context.chain.count
        guard end > 1 else { return 0 }
        return (1..<end).filter { !isSelfIssued(context.chain[$0]) }.count
    }

    /// Subject and issuer names are equal (OpenSSL's `EXFLAG_SI`).
    static func isSelfIssued(_ certificate: Certificate) -> Bool {
        X509_get_extension_flags(certificate.reference.pointer) & UInt32(EXFLAG_SI) != 0
    }
}

/// RFC 5280 4.1.2.2: the serial number is a positive integer of at most 20 octets.
struct SerialNumberPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        var findings: [TrustFinding] = []
        // The leaf is judged even when it is the anchor (a pinned certificate is still one a CA or
        // a tool issued); a CA anchor is the caller's choice and is not.
        for (depth, facts) in context.facts.enumerated() where facts.isReadable && (depth == 0 || !context.isAnchor(depth)) {
            var octets = facts.serial[...]
            let problem: String?
            if octets.isEmpty {
                problem = "is empty"
            } else if octets.first! & 0x80 != 0 {
                problem = "is negative"
            } else {
                if octets.first == 0, octets.count > 1 { octets = octets.dropFirst() }
                if octets.allSatisfy({ $0 == 0 }) {
                    problem = "is zero"
                } else if octets.count > 20 {
                    problem = "is \(octets.count) octets long (at most 20 are allowed)"
                } else {
                    problem = nil
                }
            }
            if let problem {
                findings.append(
                    context.finding(
                        .serialNumberInvalid, depth: depth,
                        reason: "the serial number of \(context.label(depth)) \(problem); RFC 5280 requires a positive integer of at most 20 octets",
                        hint: "the issuing CA is not conforming; have it reissue the certificate with a proper serial number"))
            }
        }
        return findings
    }
}

/// RFC 5280 4.2.1.10: name constraints appear only in CA certificates, are critical, hold at least
/// one subtree, and their dNSName bases are DNS names (no leading period, no wildcard).
///
/// Criticality: RFC 5280 requires it critical, which the rfc5280 profile enforces; the CA/Browser
/// Forum allows a non-critical nameConstraints for legacy clients (BR 7.1.2.10.8), so the webpki
/// profile does not (x509-limbo lists the two cases as conflicting, one per profile). The
/// constraints themselves are enforced either way.
struct NameConstraintsProfilePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        var findings: [TrustFinding] = []
        for (depth, facts) in context.facts.enumerated() {
            guard let raw = facts.extension(CertificateFacts.OID.nameConstraints) else { continue }
            let label = context.label(depth)
            if depth == 0 && !facts.isCA && context.chain.count > 1 {
                findings.append(
                    context.finding(
                        .nameConstraintsInEndEntity, depth: depth,
                        reason: "\(label) is an end-entity certificate with a nameConstraints extension, which only CA certificates may carry",
                        hint: "the certificate is misissued; reissue it without nameConstraints"))
            }
            if !raw.critical && !context.enforcesWebPKI {
                findings.append(
                    context.finding(
                        .nameConstraintsNotCritical, depth: depth,
                        reason: "the nameConstraints extension of \(label) is not marked critical, as RFC 5280 4.2.1.10 requires",
                        hint: "reissue the CA certificate with critical name constraints (clients that ignore them would accept any name)"))
            }
            guard let constraints = facts.nameConstraints else { continue }
            let permitted = constraints.permitted ?? []
            let excluded = constraints.excluded ?? []
            if permitted.isEmpty && excluded.isEmpty {
                findings.append(
                    context.finding(
                        .nameConstraintsEmpty, depth: depth,
                        reason: "the nameConstraints extension of \(label) has neither permitted nor excluded subtrees",
                        hint: "RFC 5280 requires at least one of them; the CA certificate is malformed"))
            }
            let bad = (permitted + excluded).compactMap(\.dnsText).filter { !$0.isEmpty && !DNSNameSyntax.isValidHostname($0) }
            if !bad.isEmpty {
                findings.append(
                    context.finding(
                        .nameConstraintsMalformedName, depth: depth,
                        reason:
                            "the name constraints of \(label) hold dNSName \(bad.map { "'\(DisplayText.escaped($0))'" }.joined(separator: ", ")), which is not a DNS name (no leading period or wildcard is allowed)",
                        hint: "a dNSName constraint `example.com` already covers every subdomain; reissue the CA certificate with that form"))
            }
        }
        return findings
    }
}

/// RFC 5280 4.2.1.11: conforming CAs mark policyConstraints critical.
struct PolicyConstraintsProfilePolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        context.facts.enumerated().compactMap { depth, facts in
            guard let raw = facts.extension(CertificateFacts.OID.policyConstraints), !raw.critical else { return nil }
            return context.finding(
                .policyConstraintsNotCritical, depth: depth,
                reason: "the policyConstraints extension of \(context.label(depth)) is not marked critical, as RFC 5280 4.2.1.11 requires",
                hint: "reissue the CA certificate with critical policy constraints")
        }
    }
}

/// RFC 5280 4.2.1.6: every dNSName of the leaf is a DNS name in preferred name syntax (optionally a
/// `*.` wildcard); IP addresses are 4 or 16 octets.
struct SubjectAltNameSyntaxPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard let names = context.facts[0].subjectAlternativeNames else { return [] }
        var bad: [String] = []
        for name in names {
            switch name {
            case .dns(let bytes):
                let text = String(decoding: bytes, as: UTF8.self)
                if !bytes.allSatisfy({ $0 >= 0x21 && $0 < 0x7F }) || !DNSNameSyntax.isValidPattern(text) { bad.append("DNS:'\(DisplayText.escaped(text))'") }
            case .ip(let bytes) where bytes.count != 4 && bytes.count != 16:
                bad.append("IP:\(bytes.count) octets")
            default:
                break
            }
        }
        guard !bad.isEmpty else { return [] }
        return [
            context.finding(
                .subjectAltNameMalformedDNSName, depth: 0,
                reason:
                    "the subjectAltName of \(context.label(0)) holds \(bad.joined(separator: ", ")), which is not a valid DNS name or address (letters, digits and hyphens only; a wildcard only as a whole leftmost `*.` label)",
                hint: "reissue the certificate with well-formed names; underscores, empty labels and partial wildcards are not allowed")
        ]
    }
}

/// A wildcard `*.example.com` also stands for `bar.example.com`: when a CA above excludes
/// `bar.example.com`, the wildcard can match an excluded name and the chain is rejected
/// (RFC 5280 and RFC 9525 disagree here; OpenSSL compares the pattern as a string: CVE-2025-61727).
struct WildcardExclusionPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard context.chain.count > 1, let names = context.facts[0].subjectAlternativeNames else { return [] }
        let bases = names.compactMap(\.dnsText).compactMap(DNSNameSyntax.wildcardBase).map(DNSNameSyntax.lowercased)
        guard !bases.isEmpty else { return [] }
        var findings: [TrustFinding] = []
        for depth in 1..<context.chain.count {
            guard let excluded = context.facts[depth].nameConstraints?.excluded else { continue }
            for subtree in excluded.compactMap(\.dnsText).map(DNSNameSyntax.lowercased) where !subtree.hasPrefix(".") {
                for base in bases where subtree.hasSuffix("." + base) && !subtree.dropLast(base.count + 1).contains(".") {
                    findings.append(
                        context.finding(
                            .nameConstraintsWildcardExcluded, depth: 0,
                            reason: "the wildcard *.\(base) of \(context.label(0)) also matches \(subtree), which \(context.label(depth)) excludes by its name constraints",
                            hint: "the CA may not issue a wildcard that covers an excluded name; reissue the certificate with explicit names"))
                }
            }
        }
        return findings
    }
}

/// A leaf without any subjectAltName is named by its subject CN alone: the name constraints of the
/// CAs above apply to that CN (OpenSSL's own check, `NAME_CONSTRAINTS_check_CN`, which the evaluator
/// otherwise turns off with `X509_CHECK_FLAG_NEVER_CHECK_SUBJECT` so that a CN is never a name).
struct SubjectCommonNameConstraintsPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard context.chain.count > 1, context.facts[0].isReadable,
            context.facts[0].extension(CertificateFacts.OID.subjectAltName) == nil
        else { return [] }
        var findings: [TrustFinding] = []
        for depth in 1..<context.chain.count where context.facts[depth].extension(CertificateFacts.OID.nameConstraints) != nil {
            // get_ext_d2i returns a new NAME_CONSTRAINTS that this scope owns and frees.
            guard let raw = X509_get_ext_d2i(context.chain[depth].reference.pointer, NID_name_constraints, nil, nil) else { continue }
            let constraints = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
            defer { NAME_CONSTRAINTS_free(constraints) }
            let result = NAME_CONSTRAINTS_check_CN(context.leaf.reference.pointer, constraints)
            if result != X509_V_OK {
                findings.append(
                    context.finding(
                        code: result, depth: 0,
                        reason:
                            "\(context.label(0)) has no subjectAltName, and its subject CN (\(context.leaf.commonName ?? "")) is outside the name constraints of \(context.label(depth))",
                        hint: "the CA is not allowed to issue for this name"))
            }
        }
        OpenSSLErrorQueue.clear()
        return findings
    }
}

/// RFC 5280 5.2.3: conforming CRL issuers include the CRLNumber extension in every CRL.
struct CRLNumberPolicy: ChainPolicy {
    func check(_ context: ChainContext) -> [TrustFinding] {
        guard !context.policy.crls.isEmpty else { return [] }
        var findings: [TrustFinding] = []
        for crl in context.policy.crls where X509_CRL_get_ext_by_NID(crl.reference.pointer, NID_crl_number, -1) < 0 {
            let issuer = X509_CRL_get_issuer(crl.reference.pointer)  // get0-style: borrowed from the CRL
            guard let depth = context.chain.indices.first(where: { X509_NAME_cmp(issuer, X509_get_subject_name(context.chain[$0].reference.pointer)) == 0 }) else { continue }
            findings.append(
                context.finding(
                    .crlNumberMissing, depth: depth,
                    reason: "the CRL issued by \(context.label(depth)) has no CRLNumber extension, which RFC 5280 5.2.3 requires",
                    hint: "the CRL is not conforming; fetch a proper CRL from the CA"))
        }
        return findings
    }
}

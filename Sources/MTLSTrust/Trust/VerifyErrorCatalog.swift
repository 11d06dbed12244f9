internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Plain reasons, hints and severities for OpenSSL's `X509_V_ERR_*` codes.
enum VerifyErrorCatalog {
    static func name(_ code: Int32) -> String { TrustRule(rawValue: code)?.name ?? VerifyErrorNames.byCode[code] ?? "X509_V_ERR_\(code)" }

    /// Failures that no user should override (`kSecTrustResultFatalTrustFailure`).
    static func isFatal(_ code: Int32) -> Bool {
        // Every mtls rule is about a misissued certificate or CRL: never to be overridden.
        if TrustRule(rawValue: code) != nil { return true }
        let fatal: Set<Int32> = [
            X509_V_ERR_CERT_REVOKED, X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_CRL_SIGNATURE_FAILURE,
            X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE, X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY,
            X509_V_ERR_INVALID_CA, X509_V_ERR_PATH_LENGTH_EXCEEDED, X509_V_ERR_INVALID_PURPOSE,
            X509_V_ERR_INVALID_EXTENSION, X509_V_ERR_INVALID_POLICY_EXTENSION, X509_V_ERR_NO_EXPLICIT_POLICY,
            X509_V_ERR_PERMITTED_VIOLATION, X509_V_ERR_EXCLUDED_VIOLATION, X509_V_ERR_SUBTREE_MINMAX,
            X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE, X509_V_ERR_UNSUPPORTED_CONSTRAINT_SYNTAX,
            X509_V_ERR_UNSUPPORTED_NAME_SYNTAX, X509_V_ERR_CERT_REJECTED, X509_V_ERR_KEYUSAGE_NO_CERTSIGN,
            X509_V_ERR_KEYUSAGE_NO_CRL_SIGN, X509_V_ERR_KEYUSAGE_NO_DIGITAL_SIGNATURE, X509_V_ERR_EE_KEY_TOO_SMALL,
            X509_V_ERR_CA_KEY_TOO_SMALL, X509_V_ERR_CA_MD_TOO_WEAK, X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION,
            X509_V_ERR_UNHANDLED_CRITICAL_CRL_EXTENSION, X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD,
            X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD, X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA,
            X509_V_ERR_CA_BCONS_NOT_CRITICAL, X509_V_ERR_ISSUER_NAME_EMPTY, X509_V_ERR_SUBJECT_NAME_EMPTY,
            X509_V_ERR_EMPTY_SUBJECT_ALT_NAME, X509_V_ERR_EMPTY_SUBJECT_SAN_NOT_CRITICAL,
            X509_V_ERR_CA_CERT_MISSING_KEY_USAGE, X509_V_ERR_EXTENSIONS_REQUIRE_VERSION_3,
            X509_V_ERR_AUTHORITY_KEY_IDENTIFIER_CRITICAL, X509_V_ERR_SUBJECT_KEY_IDENTIFIER_CRITICAL,
            X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER, X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER,
            X509_V_ERR_SIGNATURE_ALGORITHM_MISMATCH, X509_V_ERR_SIGNATURE_ALGORITHM_INCONSISTENCY,
            X509_V_ERR_INVALID_CALL, X509_V_ERR_STORE_LOOKUP, X509_V_ERR_NO_VALID_SCTS,
        ]
        return fatal.contains(code)
    }

    private static func format(_ date: Date) -> String { RFC3339.string(date) }

    private static func nameList(_ certificate: Certificate) -> String {
        let names = certificate.subjectAlternativeNames.compactMap { name -> String? in
            switch name {
            case .dns(let dns): return dns
            case .ip(let bytes): return IPAddress.format(bytes)
            default: return nil
            }
        }
        return names.isEmpty ? "no DNS or IP name at all" : DisplayText.escaped(names.joined(separator: ", "))
    }

    /// Builds the finding for one error: the rule in plain words and what to do.
    static func finding(code: Int32, depth: Int, certificate: Certificate?, chain: [Certificate], policy: TrustPolicy) -> TrustFinding {
        let subject = certificate?.subject ?? ""
        let label = certificate?.displayName ?? "the certificate"
        let time = policy.evaluationTime ?? Date()
        let (reason, hint) = explain(code: code, depth: depth, certificate: certificate, label: label, chain: chain, policy: policy, time: time)
        return TrustFinding(depth: depth, subject: subject, code: code, name: name(code), reason: reason, hint: hint)
    }

    private static func explain(code: Int32, depth: Int, certificate: Certificate?, label: String, chain: [Certificate], policy: TrustPolicy, time: Date) -> (String, Hint) {
        let issuerName = certificate.map { Certificate.shortName($0.issuer) } ?? "its issuer"
        let reissue: Hint = "the issuing CA is not conforming; have the certificate reissued (or trust a conforming one)"
        switch code {
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
            return (
                "\(label) is self-signed and not among the anchors",
                "pass it with \(setting: .anchors) (or pin it) if you expect this server to use a self-signed certificate"
            )
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
            return (
                "the chain ends at the root \(label), which is not among the anchors",
                "pass that root with \(setting: .anchors), or add \(setting: .systemRoots) if it is a public CA"
            )
        case X509_V_ERR_CERT_REJECTED, X509_V_ERR_CERT_UNTRUSTED:
            // An anchor read from a TRUSTED CERTIFICATE whose trust settings do not allow the purpose.
            let purpose = policy.purpose.extendedKeyUsageOID.map(CertificateTrustSettings.name(of:)) ?? "anyExtendedKeyUsage"
            let settings = certificate?.trustSettings
            let rejected = settings?.rejected.map(CertificateTrustSettings.name(of:)) ?? []
            let trusted = settings?.trusted.map(CertificateTrustSettings.name(of:)) ?? []
            var why: String
            if !rejected.isEmpty, rejected.contains(purpose) || rejected.contains("anyExtendedKeyUsage") {
                why = "its trust settings reject it for \(rejected.joined(separator: ", "))"
            } else if !trusted.isEmpty {
                why = "its trust settings trust it only for \(trusted.joined(separator: ", "))"
            } else {
                why = "its trust settings do not allow it"
            }
            return (
                "the anchor \(label) may not be used for \(purpose): \(why) (it was given as a TRUSTED CERTIFICATE)",
                "if you do trust it for \(purpose), give it as a plain CERTIFICATE, or change its settings (`openssl x509 -in FILE -trustout -clrreject -addtrust \(purpose)`); a bundle that marks it so (p11-kit's ca-bundle.trust.crt) means it is not a TLS anchor"
            )
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            let anchorsHint: Hint =
                policy.anchors.isEmpty && !policy.includesSystemRoots
                ? "no anchors were given: pass the CA that issued it with \(setting: .anchors)"
                : "pass the intermediate \(issuerName) with \(setting: .intermediates), or its root with \(setting: .anchors)"
            return ("the issuer of \(label) (\(issuerName)) was not found among the intermediates and anchors", anchorsHint)
        case X509_V_ERR_CERT_HAS_EXPIRED:
            let notAfter = certificate?.notAfter ?? time
            let days = Int(time.timeIntervalSince(notAfter) / 86400)
            return (
                "\(label) expired on \(format(notAfter)) (\(days) days before the evaluation time \(format(time)))",
                depth == 0 ? "renew the certificate on the server" : "the CA certificate must be replaced by a current one"
            )
        case X509_V_ERR_CERT_NOT_YET_VALID:
            let notBefore = certificate?.notBefore ?? time
            return (
                "\(label) is not valid before \(format(notBefore)); the evaluation time is \(format(time))",
                "check the clock of this machine, or evaluate at another time with \(setting: .evaluationTime)"
            )
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            let host = policy.hostname ?? "?"
            guard let leaf = chain.first ?? certificate else { return ("the name \(host) does not match", "") }
            let cnOnly = leaf.subjectAlternativeNames.isEmpty && leaf.commonName != nil
            if cnOnly {
                return (
                    "\(label) has no subjectAltName; its subject CN (\(leaf.commonName ?? "")) is not used for name checks",
                    "reissue the certificate with a subjectAltName for \(host), or skip the check with \(setting: .hostnameCheck)"
                )
            }
            return (
                "\(label) is valid for \(nameList(leaf)), not for \(host)",
                "connect with a name the certificate carries, or reissue it with a subjectAltName for \(host)"
            )
        case X509_V_ERR_EMAIL_MISMATCH:
            let leaf = chain.first ?? certificate
            let emails =
                leaf?.subjectAlternativeNames.compactMap { name -> String? in
                    if case .email(let address) = name { return address }
                    return nil
                } ?? []
            let wanted = policy.email ?? "the expected address"
            return (
                "\(label) is valid for \(emails.isEmpty ? "no email address at all" : emails.joined(separator: ", ")), not for \(wanted) (rfc822Name subjectAltName entries are compared, the local part exactly)",
                "check the address, or have the certificate reissued with subjectAltName email:\(wanted)"
            )
        case X509_V_ERR_INVALID_PURPOSE:
            let eku = certificate?.extendedKeyUsage.map { $0.joined(separator: ", ") } ?? "none"
            let wanted = policy.purpose == .client ? "clientAuth" : "serverAuth"
            return (
                "\(label) is not allowed for \(policy.purpose.rawValue) authentication (extended key usage: \(eku))",
                "a \(policy.purpose.rawValue) certificate needs \(wanted) in its extended key usage, and so does every CA above it that has one; reissue it, or check with \(setting: .purpose) any"
            )
        case X509_V_ERR_CERT_REVOKED:
            return ("\(label) has been revoked by \(issuerName)", "the certificate must be replaced; do not trust it")
        case X509_V_ERR_UNABLE_TO_GET_CRL:
            return ("no CRL from \(issuerName) covers \(label)", "pass the issuer's current CRL with \(setting: .crls)")
        case X509_V_ERR_CRL_HAS_EXPIRED:
            return ("the CRL of \(issuerName) is out of date at the evaluation time", "fetch the current CRL")
        case X509_V_ERR_CRL_NOT_YET_VALID:
            return ("the CRL of \(issuerName) is not yet valid at the evaluation time", "check the clock or \(setting: .evaluationTime)")
        case X509_V_ERR_CRL_SIGNATURE_FAILURE:
            return ("the CRL of \(issuerName) has a signature that does not verify", "the CRL is damaged or not from that issuer")
        case X509_V_ERR_INVALID_CA:
            return (
                "\(label) is used as a CA but is not one (basicConstraints CA:TRUE and keyCertSign are required)",
                "the chain is wrong: a leaf certificate cannot issue other certificates"
            )
        case X509_V_ERR_PATH_LENGTH_EXCEEDED:
            return ("the path length constraint of \(label) is exceeded", "there are more CAs below it than it allows")
        case X509_V_ERR_CERT_CHAIN_TOO_LONG:
            return (
                "the chain is longer than the maximum depth (\(policy.maximumDepth.map { "\($0)" } ?? "100, OpenSSL's default"))",
                "raise \(setting: .maximumDepth) if this chain is expected"
            )
        case X509_V_ERR_CERT_SIGNATURE_FAILURE:
            return (
                "the signature on \(label) does not verify with the key of \(issuerName)",
                "the certificate was altered, or a different certificate with the same issuer name was given"
            )
        case X509_V_ERR_EE_KEY_TOO_SMALL, X509_V_ERR_CA_KEY_TOO_SMALL:
            return (
                "the key of \(label) (\(certificate?.keyAlgorithm.description ?? "?")) is too weak (below 112-bit security: RSA under 2048 bits, P-192)",
                depth == 0 ? "reissue it with RSA 2048+ or ECDSA P-256+" : "the CA must use RSA 2048+ or ECDSA P-256+; a chain through a weak key is refused"
            )
        case X509_V_ERR_CA_MD_TOO_WEAK:
            return (
                "\(label) is signed with a weak digest (\(certificate?.signatureAlgorithm ?? "?")); SHA-1 and MD5 signatures are refused",
                "the issuer must sign it again with SHA-256 or better (a chain through another, SHA-256 signed copy of the CA is tried automatically)"
            )
        case X509_V_ERR_PERMITTED_VIOLATION, X509_V_ERR_EXCLUDED_VIOLATION:
            return ("a name of \(label) is outside the name constraints of a CA above it", "the CA is not allowed to issue for this name")
        case X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION:
            return ("\(label) has a critical extension this verifier does not understand", "clients must reject it; reissue without that extension")
        case X509_V_ERR_KEYUSAGE_NO_CERTSIGN:
            return ("\(label) issued a certificate but its key usage lacks keyCertSign", "the CA certificate is misconfigured")
        case let code where TrustRule(rawValue: code) != nil:
            return ("\(label) breaks the rule \(name(code))", "see the rule's documentation in TrustRule")
        case X509_V_ERR_UNSPECIFIED
        where depth + 1 < chain.count && chain[(depth + 1)...].contains(where: { CertificateFacts($0).extension(CertificateFacts.OID.nameConstraints) != nil }):
            // NAME_CONSTRAINTS_check gives up, with this code, past 2^20 name-by-constraint
            // comparisons (a guard against quadratic work; Chromium has a like limit).
            return (
                "\(label) carries too many names to check against the name constraints of the CAs above it (OpenSSL stops past 1,048,576 name-by-constraint comparisons, a guard against denial of service)",
                "reissue the certificate with fewer subjectAltName entries, or have the CA use fewer name constraints"
            )
        case X509_V_ERR_NO_EXPLICIT_POLICY:
            let requiring = chain.filter { CertificateFacts($0).extension(CertificateFacts.OID.policyConstraints) != nil }.map(\.displayName)
            let by = requiring.isEmpty ? "a CA of the chain" : requiring.joined(separator: ", ")
            return (
                "no certificate policy is valid along the whole path to \(label), and \(by) requires one (policyConstraints requireExplicitPolicy; RFC 5280 6.1.5 (g))",
                "have the certificate issued under a policy that every CA above it asserts (or maps to it), or use a chain whose CAs do not require an explicit policy"
            )
        case X509_V_ERR_INVALID_POLICY_EXTENSION:
            return (
                "the certificatePolicies, policyMappings, policyConstraints or inhibitAnyPolicy extension of \(label) is unreadable or inconsistent (RFC 5280 4.2.1.4, 4.2.1.5, 4.2.1.11, 4.2.1.14)",
                reissue
            )
        case X509_V_ERR_CA_CERT_MISSING_KEY_USAGE:
            return ("the CA certificate \(label) has no keyUsage extension (RFC 5280 4.2.1.3: a CA certificate carries keyCertSign)", reissue)
        case X509_V_ERR_KU_KEY_CERT_SIGN_INVALID_FOR_NON_CA:
            return ("\(label) sets keyCertSign in its keyUsage but is not a CA (basicConstraints cA:FALSE or absent), which RFC 5280 4.2.1.3 forbids", reissue)
        case X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA:
            return ("\(label) has a pathLenConstraint but is not a CA, which RFC 5280 4.2.1.9 forbids", reissue)
        case X509_V_ERR_PATHLEN_WITHOUT_KU_KEY_CERT_SIGN:
            return ("\(label) has a pathLenConstraint without keyCertSign in its keyUsage (RFC 5280 4.2.1.9)", reissue)
        case X509_V_ERR_CA_BCONS_NOT_CRITICAL:
            return ("the basicConstraints extension of the CA certificate \(label) is not critical; RFC 5280 4.2.1.9 requires it critical", reissue)
        case X509_V_ERR_EMPTY_SUBJECT_ALT_NAME:
            return ("the subjectAltName extension of \(label) holds no name (RFC 5280 4.2.1.6 requires at least one)", reissue)
        case X509_V_ERR_EMPTY_SUBJECT_SAN_NOT_CRITICAL:
            return ("\(label) has an empty subject and a non-critical subjectAltName; RFC 5280 4.2.1.6 requires it critical then", reissue)
        case X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER:
            return ("\(label) has no authorityKeyIdentifier with a keyIdentifier, which RFC 5280 4.2.1.1 requires of every certificate but a self-signed one", reissue)
        case X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER:
            return ("the CA certificate \(label) has no subjectKeyIdentifier, which RFC 5280 4.2.1.2 requires", reissue)
        case X509_V_ERR_AUTHORITY_KEY_IDENTIFIER_CRITICAL, X509_V_ERR_SUBJECT_KEY_IDENTIFIER_CRITICAL:
            return ("a key identifier extension of \(label) is critical; RFC 5280 4.2.1.1 and 4.2.1.2 require it non-critical", reissue)
        case X509_V_ERR_ISSUER_NAME_EMPTY, X509_V_ERR_SUBJECT_NAME_EMPTY:
            return ("\(label) has an empty \(code == X509_V_ERR_ISSUER_NAME_EMPTY ? "issuer" : "subject") name where RFC 5280 4.1.2.4/4.1.2.6 require one", reissue)
        case X509_V_ERR_SIGNATURE_ALGORITHM_INCONSISTENCY:
            return ("the two signature algorithm fields of \(label) differ (RFC 5280 4.1.1.2 requires them equal)", reissue)
        case X509_V_ERR_EXTENSIONS_REQUIRE_VERSION_3:
            return ("\(label) has extensions but is not an X.509 version 3 certificate", reissue)
        case X509_V_ERR_EC_KEY_EXPLICIT_PARAMS:
            return (
                "the EC key of \(label) spells out its curve parameters instead of naming the curve (RFC 5480 2.1.1)",
                "reissue the certificate with a named-curve key (openssl genpkey -pkeyopt ec_param_enc:named_curve)"
            )
        default:
            let text = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "verification error \(code)"
            return ("\(label): \(text)", "compare with `openssl verify -x509_strict`; the certificate or its chain does not follow RFC 5280")
        }
    }
}

extension Certificate {
    /// `CN=…` when the RFC 4514 name has one, else the whole name: the short label used in messages.
    public static func shortName(_ rfc4514: String) -> String {
        for part in rfc4514.split(separator: ",") where part.hasPrefix("CN=") { return String(part) }
        return rfc4514.isEmpty ? "(empty name)" : rfc4514
    }
}

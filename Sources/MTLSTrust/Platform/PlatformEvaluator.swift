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

/// Applies each platform's published certificate rules (``PlatformRules``) to a chain that
/// ``TrustEvaluator`` has built and checked.
///
/// Every rule that fails is reported, not just the first; the verdict is ``PlatformVerdict/Outcome/refused``
/// when any rule refuses, ``PlatformVerdict/Outcome/conditional`` when the only obstacles are ones
/// the app can configure away.
public enum PlatformEvaluator {
    /// Digests with practical collisions, refused for signatures by Apple (iOS 13), Chrome and Conscrypt.
    static let collisionDigests: Set<String> = ["MD2", "MD4", "MD5", "SHA1"]

    /// The verdicts, in the order of `platforms`.
    public static func evaluate(_ input: PlatformInput, platforms: [Platform] = Platform.allCases) -> [PlatformVerdict] {
        let facts = input.evaluation.chain.map(ChainCertificate.init)
        return platforms.map { platform in
            var failures = chainFailures(input, facts: facts, platform: platform)
            var notes: [String] = []
            switch platform {
            case .apple: failures += apple(input, facts)
            case .android: failures += android(input, facts, notes: &notes)
            case .java: failures += java(input, facts)
            case .chrome: failures += chrome(input, facts)
            }
            failures += revocation(input, facts, platform: platform, notes: &notes)
            let outcome: PlatformVerdict.Outcome =
                failures.isEmpty ? .accepted : (failures.allSatisfy(\.isConfigurable) ? .conditional : .refused)
            return PlatformVerdict(platform: platform, outcome: outcome, failures: failures, notes: notes)
        }
    }

    /// Validates `leaf` under `policy` with the RFC 5280 profile (the platforms' own key and
    /// algorithm rules take the place of the Web PKI profile), then applies each platform's rules.
    ///
    /// - Parameters:
    ///   - leaf: The server (or client) certificate.
    ///   - extraIntermediates: Intermediates as the peer sent them, beside `policy.intermediates`.
    ///   - policy: Anchors, time and host name; its profile and algorithm checks are replaced.
    ///   - anchorKind: Public or private anchor; nil decides from the chain: an anchor among
    ///     `policy.anchors` is private, a system root is public.
    ///   - pinning: Pins to check (an Android `<pin-set>` read with `PinDocument(contentsOf:)`), for
    ///     the policy's host; a ``PinSet`` converts with `PinDocument(_:)`.
    ///   - javaConstraints: The JDK's `jdk.certpath.disabledAlgorithms` for the Java verdict.
    ///   - platforms: The platforms to judge, in the order of the verdicts.
    ///   - fetchIssuer: Fetches what an authorityInfoAccess caIssuers URL serves (the network is
    ///     the caller's: MTLSHTTP's `IssuerFetch`). When the chain stops short of an anchor, the
    ///     platforms that fetch missing intermediates (``Platform/fetchesMissingIssuers``) are judged
    ///     with what it brings, up to three levels; the others on the chain as sent. Nil: nothing
    ///     is fetched, and those platforms' verdicts say where they would look.
    /// - Throws: What ``TrustEvaluator/init(policy:)`` throws.
    public static func evaluate(
        _ leaf: Certificate, extraIntermediates: [Certificate] = [], policy: TrustPolicy, anchorKind: PlatformAnchorKind? = nil,
        pinning: PinDocument? = nil, javaConstraints: JavaAlgorithmConstraints = .openJDK17Default, platforms: [Platform] = Platform.allCases,
        fetchIssuer: ((String) -> FetchedIssuer)? = nil
    ) throws(MTLSTrustError) -> (evaluation: TrustEvaluation, verdicts: [PlatformVerdict]) {
        var platformPolicy = policy
        platformPolicy.profile = .rfc5280
        platformPolicy.enforcesAlgorithmStrength = false
        // The revocation status is fetched once per chain below and applied as each platform does
        // (PlatformRules.revocation), not as the plain verdict's mode would.
        platformPolicy.revocation = .off
        let evaluator = try TrustEvaluator(policy: platformPolicy)
        let time = policy.evaluationTime ?? Date()
        let checker =
            policy.revocation == .off
            ? nil
            : RevocationChecker(
                mode: policy.revocation, fetcher: policy.revocationFetcher, localCRLs: policy.crls, timeoutPerURL: policy.revocationTimeouts.perURL,
                totalTimeout: policy.revocationTimeouts.total)
        func checked(_ evaluation: TrustEvaluation) -> TrustEvaluation {
            guard let checker, evaluation.chain.count > 1 else { return evaluation }
            var evaluation = evaluation
            evaluation.revocation = checker.check(evaluation.chain, at: time)
            return evaluation
        }
        let evaluation = checked(evaluator.evaluate(leaf, extraIntermediates: extraIntermediates))
        func input(_ evaluation: TrustEvaluation) -> PlatformInput {
            let kind = anchorKind ?? self.anchorKind(of: evaluation, policy: policy)
            let pins = pinning?.evaluate(evaluation.chain, host: policy.hostname, at: time)
            return PlatformInput(
                evaluation: evaluation, anchorKind: kind, hostname: policy.hostname, evaluationTime: time,
                pinMatch: pins?.summary, pinExpiration: pins?.domain?.enforcedUntil, javaConstraints: javaConstraints)
        }
        let sent = input(evaluation)
        let missing = reachesAnchor(evaluation) ? [] : (evaluation.chain.last?.caIssuersURLs ?? [])
        guard !missing.isEmpty, platforms.contains(where: \.fetchesMissingIssuers) else { return (evaluation, evaluate(sent, platforms: platforms)) }

        // Chase the missing issuers as the fetching platforms do, then judge each platform on its chain.
        var fetched: [FetchedIssuer] = []
        var completed = evaluation
        if let fetchIssuer {
            var pool = extraIntermediates
            var tried = Set<String>()
            while fetched.count < 3, !reachesAnchor(completed), let url = completed.chain.last?.caIssuersURLs.first(where: { !tried.contains($0) }) {
                tried.insert(url)
                let result = fetchIssuer(url)
                fetched.append(result)
                guard !result.certificates.isEmpty else { break }
                pool += result.certificates
                completed = evaluator.evaluate(leaf, extraIntermediates: pool)
            }
            if completed.chain != evaluation.chain { completed = checked(completed) }
        }
        let afterFetch = input(completed)
        let missingName = evaluation.chain.last.map { "the issuer of \($0.displayName)" } ?? "the issuer"
        return (
            evaluation,
            platforms.map { platform in
                guard platform.fetchesMissingIssuers else {
                    var verdict = evaluate(sent, platforms: [platform])[0]
                    if fetchIssuer != nil, reachesAnchor(completed) {
                        verdict.notes.append(
                            "\(platform.displayName) does not fetch \(missingName) from its authorityInfoAccess (\(missing[0])), as iOS and Chrome do: the server has to send it")
                    }
                    return verdict
                }
                var verdict = evaluate(afterFetch, platforms: [platform])[0]
                verdict.fetchedIssuers = fetched
                if fetchIssuer == nil {
                    verdict.notes.append(
                        "\(platform.displayName) fetches \(missingName) from its authorityInfoAccess caIssuers URL \(missing[0]); this verdict is for the chain as sent, without it"
                    )
                } else {
                    for item in fetched {
                        if let failure = item.failure {
                            verdict.notes.append("fetched nothing from \(item.url), as \(platform.displayName) would: \(failure)")
                        } else {
                            let names = item.certificates.map(\.displayName).joined(separator: ", ")
                            verdict.notes.append("\(names) fetched from \(item.url) (authorityInfoAccess caIssuers), as \(platform.displayName) fetches a missing intermediate")
                        }
                    }
                }
                return verdict
            }
        )
    }

    /// Public or private, as a platform would see the chain's anchor: one of `policy.anchors` is
    /// private (user- or app-supplied); a system root that ends a trusted chain is public. A chain
    /// that reaches no anchor counts as private when anchors were given, else as public.
    public static func anchorKind(of evaluation: TrustEvaluation, policy: TrustPolicy) -> PlatformAnchorKind {
        if let last = evaluation.chain.last, policy.anchors.contains(last) { return .privateAnchor }
        if policy.includesSystemRoots && evaluation.isTrusted { return .publicRoot }
        return policy.anchors.isEmpty ? .publicRoot : .privateAnchor
    }

    // MARK: Facts

    /// What the rules read from one certificate.
    struct ChainCertificate {
        let certificate: Certificate
        let key: KeyAlgorithm
        /// The signature's digest, upper-case without dash (`SHA1`, `SHA256`, `MD5`), or nil (Ed25519).
        let digest: String?
        let validity: TimeInterval
        init(_ certificate: Certificate) {
            self.certificate = certificate
            self.key = certificate.keyAlgorithm
            self.digest = ChainCertificate.digest(of: certificate.signatureAlgorithm)
            self.validity = certificate.notAfter.timeIntervalSince(certificate.notBefore)
        }
        static func digest(of algorithm: String) -> String? {
            let name = algorithm.lowercased().replacingAll("-", with: "")
            // OpenSSL's names (sha1WithRSAEncryption, ecdsa-with-SHA384, dsaWithSHA1, md5WithRSAEncryption):
            // no digest name is a substring of another's spelling in them.
            for digest in ["md2", "md4", "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3"] where name.contains(digest) {
                return digest.uppercased()
            }
            if name.contains("pss") { return "SHA256" }  // RSASSA-PSS: the hash is in the parameters; OpenSSL's default
            return nil
        }
        var name: String { certificate.displayName }
        var days: Int { Int((validity / 86_400).rounded(.up)) }
    }

    /// The depths whose signature counts: all but a root anchor's self-signature.
    static func signedDepths(_ facts: [ChainCertificate]) -> Range<Int> { 0..<(facts.count > 1 ? facts.count - 1 : facts.count) }

    static func utc(_ year: Int, _ month: Int, _ day: Int) -> Date {
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    static let july2019 = utc(2019, 7, 1)
    static let september2020 = utc(2020, 9, 1)

    static func grouped(_ number: Int) -> String {
        let digits = String(number)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }

    static func failure(_ rule: PlatformRule, _ fact: ChainCertificate, depth: Int, _ reason: String, fix: Hint, configurable: Bool = false) -> PlatformFailure {
        PlatformFailure(rule: rule, depth: depth, subject: fact.certificate.subject, reason: reason, fix: fix, isConfigurable: configurable)
    }

    static func role(_ depth: Int, _ facts: [ChainCertificate]) -> String {
        depth == 0 ? "the server certificate" : (depth == facts.count - 1 ? "the root" : "the intermediate")
    }

    static func isHostError(_ code: Int32) -> Bool { code == X509_V_ERR_HOSTNAME_MISMATCH || code == X509_V_ERR_IP_ADDRESS_MISMATCH }

    static func hasSANName(_ certificate: Certificate) -> Bool {
        certificate.subjectAlternativeNames.contains { if case .dns = $0 { true } else if case .ip = $0 { true } else { false } }
    }

    // MARK: Path validation, shared by all

    /// Whether the chain was built up to an anchor (whatever else is wrong with it).
    package static func reachesAnchor(_ evaluation: TrustEvaluation) -> Bool {
        let unanchored: Set<Int32> = [
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
            X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_CERT_UNTRUSTED,
        ]
        return !evaluation.findings.contains { unanchored.contains($0.code) }
    }

    static func chainFailures(_ input: PlatformInput, facts: [ChainCertificate], platform: Platform) -> [PlatformFailure] {
        var failures: [PlatformFailure] = []
        for finding in input.evaluation.findings {
            if isHostError(finding.code), let leaf = facts.first {
                // Apple and Chrome report the name only in the CN as their own rule (below).
                if (platform == .apple || platform == .chrome) && !hasSANName(leaf.certificate) { continue }
                // Java's HTTPS hostname check falls back to the CN when the SAN has no dNSName
                // (sun.security.util.HostnameChecker), as RFC 2818 allowed.
                if platform == .java, let host = input.hostname?.lowercased(), leaf.certificate.dnsNames.isEmpty, IPAddress.parse(host) == nil,
                    let cn = leaf.certificate.commonName?.lowercased(), DNSNameSyntax.matches(pattern: cn, host: host)
                {
                    continue
                }
            }
            failures.append(
                PlatformFailure(
                    rule: PlatformRules.chainNotTrusted, depth: finding.depth, subject: finding.subject,
                    reason: "\(finding.reason) (\(finding.name))",
                    fix: finding.hint.isEmpty ? "fix the chain first: see `mtls verify` without --platform" : finding.hint,
                    isConfigurable: false))
        }
        return failures
    }

    // MARK: Apple

    static func apple(_ input: PlatformInput, _ facts: [ChainCertificate]) -> [PlatformFailure] {
        guard let leaf = facts.first else { return [] }
        var failures: [PlatformFailure] = []
        failures += rsaKeys(
            facts, PlatformRules.appleRSA2048, minimum: 2048, "iOS 13 and macOS 10.15 need 2048 or more",
            fix: "reissue with a 2048-bit key or larger (`openssl req -newkey rsa:2048`)")
        failures += collisionSignatures(
            facts, PlatformRules.appleSHA2, "; iOS 13 and macOS 10.15 need a SHA-2 signature", fix: "re-sign with SHA-256 (`openssl x509 -req -sha256`)")
        if !hasSANName(leaf.certificate) {
            let name = leaf.certificate.commonName ?? input.hostname ?? "HOST"
            failures.append(
                failure(
                    PlatformRules.appleSAN, leaf, depth: 0,
                    "\(leaf.name) names its server only in the subject CN; iOS 13 and macOS 10.15 read names from the subjectAltName only",
                    fix: "reissue with `-addext \"subjectAltName=DNS:\(name)\"`"))
        }
        if leaf.certificate.notBefore >= july2019 {
            if !(leaf.certificate.extendedKeyUsage ?? []).contains("serverAuth") {
                let has = leaf.certificate.extendedKeyUsage.map { "its extendedKeyUsage is \($0.joined(separator: ", "))" } ?? "it has no extendedKeyUsage"
                failures.append(
                    failure(
                        PlatformRules.appleEKU, leaf, depth: 0,
                        "\(leaf.name) was issued after 2019-07-01 and \(has); iOS 13 and macOS 10.15 need id-kp-serverAuth",
                        fix: "reissue with `-addext extendedKeyUsage=serverAuth`"))
            }
            if leaf.validity > 825 * 86_400 {
                failures.append(
                    failure(
                        PlatformRules.appleValidity825, leaf, depth: 0,
                        "valid \(grouped(leaf.days)) days, more than 825 for a certificate issued after 2019-07-01",
                        fix: "reissue with `-days 825`"))
            }
        }
        failures += publicValidity398(input, leaf, PlatformRules.appleValidity398)
        // App Transport Security on top (the server certificate only).
        switch leaf.key {
        case .rsa, .rsaPSS: break  // the 2048-bit rule above is the same
        case .ec(let curve, let bits) where bits < 256:
            failures.append(
                failure(
                    PlatformRules.appleATSKey, leaf, depth: 0, "\(leaf.name) has an ECC key of \(bits) bits (\(curve)); App Transport Security needs 256 or more",
                    fix: "reissue with a P-256 key (`openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256`)"))
        case .ec: break
        default:
            failures.append(
                failure(
                    PlatformRules.appleATSKey, leaf, depth: 0, "\(leaf.name) has a \(leaf.key) key; App Transport Security accepts RSA (2048+) or ECC (256+) keys",
                    fix: "reissue with a P-256 or RSA 2048 key"))
        }
        if leaf.digest == "SHA224" {
            failures.append(
                failure(
                    PlatformRules.appleATSHash, leaf, depth: 0,
                    "\(leaf.name) is signed with \(leaf.certificate.signatureAlgorithm); App Transport Security needs SHA-256 or stronger",
                    fix: "re-sign with SHA-256 (`-sha256`)"))
        }
        return failures
    }

    // MARK: Android

    static func android(_ input: PlatformInput, _ facts: [ChainCertificate], notes: inout [String]) -> [PlatformFailure] {
        var failures: [PlatformFailure] = []
        for depth in signedDepths(facts) {
            let fact = facts[depth]
            let weak: String? =
                switch fact.key {
                case .rsa(let bits) where bits < 1024, .rsaPSS(let bits) where bits < 1024: "an RSA key of \(bits) bits (Conscrypt needs 1024 or more)"
                case .dsa(let bits) where bits < 1024: "a DSA key of \(bits) bits (Conscrypt needs 1024 or more)"
                case .ec(_, let bits) where bits < 160: "an EC key of \(bits) bits (Conscrypt needs 160 or more)"
                default: nil
                }
            if let weak {
                failures.append(
                    failure(PlatformRules.androidWeakKey, fact, depth: depth, "\(fact.name) (\(role(depth, facts))) has \(weak)", fix: "reissue with an RSA 2048 or P-256 key"))
            }
        }
        failures += collisionSignatures(facts, PlatformRules.androidWeakSignature, ", which Conscrypt refuses", fix: "re-sign with SHA-256 (`-sha256`)")
        // Only a chain that reached its anchor ends at one; an unfinished chain says so above.
        if input.anchorKind == .privateAnchor, reachesAnchor(input.evaluation), let anchor = facts.last {
            failures.append(
                failure(
                    PlatformRules.androidUserCA, anchor, depth: facts.count - 1,
                    "the chain ends at \(anchor.name), a private anchor; apps targeting API 24+ trust only the system CAs by default",
                    fix: Hint(
                        verbatim: "ship the anchor in the app as res/raw/ca.pem and trust it in res/xml/network_security_config.xml: "
                            + "<trust-anchors><certificates src=\"@raw/ca\"/></trust-anchors> (or <certificates src=\"user\"/> to trust "
                            + "user-installed CAs), referenced by android:networkSecurityConfig"),
                    configurable: true))
        }
        if let match = input.pinMatch {
            if match.expired {
                let when = input.pinExpiration.map { " on \(RFC3339.string($0))" } ?? ""
                notes.append("the <pin-set> expired\(when); Android no longer enforces its pins")
            } else if !match.isSatisfied, let leaf = facts.first {
                failures.append(
                    failure(
                        PlatformRules.androidPinSet, leaf, depth: 0,
                        "no certificate of the chain matches the <pin-set> (presented: \(match.presented.map(\.description).joined(separator: ", ")))",
                        fix: "add the presented SPKI pin (`mtls pin`) to the <pin-set>, with a backup pin"))
            }
        }
        return failures
    }

    // MARK: Java

    static func java(_ input: PlatformInput, _ facts: [ChainCertificate]) -> [PlatformFailure] {
        var failures: [PlatformFailure] = []
        let jdkRoot = input.anchorKind == .publicRoot
        let constraints = input.javaConstraints
        for depth in signedDepths(facts) {
            let fact = facts[depth]
            if let digest = fact.digest, let entry = constraints.disablingSignature(digest: digest, anchorIsJDKRoot: jdkRoot, at: input.evaluationTime) {
                failures.append(
                    failure(
                        PlatformRules.javaDisabledSignature, fact, depth: depth,
                        "\(fact.name) (\(role(depth, facts))) is signed with \(fact.certificate.signatureAlgorithm), disabled by jdk.certpath.disabledAlgorithms \"\(entry.text)\" (\(constraints.origin))",
                        fix: "re-sign with SHA-256 (`-sha256`)"))
            }
        }
        // Key constraints apply to every certificate, the anchor's key included.
        for (depth, fact) in facts.enumerated() {
            let type: String
            switch fact.key {
            case .rsa, .rsaPSS: type = "RSA"
            case .ec: type = "EC"
            case .dsa: type = "DSA"
            default: continue
            }
            if let entry = constraints.disablingKey(type: type, bits: fact.key.bits, anchorIsJDKRoot: jdkRoot, at: input.evaluationTime) {
                failures.append(
                    failure(
                        PlatformRules.javaDisabledKey, fact, depth: depth,
                        "\(fact.name) (\(role(depth, facts))) has \(type == "DSA" ? "a" : "an") \(type) key of \(fact.key.bits) bits, disabled by jdk.certpath.disabledAlgorithms \"\(entry.text)\" (\(constraints.origin))",
                        fix: "reissue with an RSA 2048 or P-256 key"))
            }
        }
        return failures
    }

    // MARK: Chrome

    static func chrome(_ input: PlatformInput, _ facts: [ChainCertificate]) -> [PlatformFailure] {
        guard let leaf = facts.first else { return [] }
        var failures: [PlatformFailure] = []
        if !hasSANName(leaf.certificate) {
            let name = leaf.certificate.commonName ?? input.hostname ?? "HOST"
            failures.append(
                failure(
                    PlatformRules.chromeSAN, leaf, depth: 0, "\(leaf.name) names its server only in the subject CN; Chrome 58+ matches the subjectAltName only",
                    fix: "reissue with `-addext \"subjectAltName=DNS:\(name)\"`"))
        }
        failures += collisionSignatures(facts, PlatformRules.chromeSHA1, "; Chrome refuses SHA-1 and MD5", fix: "re-sign with SHA-256 (`-sha256`)")
        let publicRoot = input.anchorKind == .publicRoot
        failures += rsaKeys(
            facts, PlatformRules.chromeWeakKey, minimum: publicRoot ? 2048 : 1024, "Chrome needs \(publicRoot ? "2048 under a public root" : "1024 or more")",
            fix: "reissue with a 2048-bit key or larger")
        failures += publicValidity398(input, leaf, PlatformRules.chromeValidity398)
        return failures
    }

    // MARK: Rules several platforms share, as data

    /// Every certificate below the anchor signed with a collision-prone digest (SHA-1, MD5 …);
    /// `says` ends the sentence the platform's way.
    static func collisionSignatures(_ facts: [ChainCertificate], _ rule: PlatformRule, _ says: String, fix: Hint) -> [PlatformFailure] {
        signedDepths(facts).compactMap { depth in
            let fact = facts[depth]
            guard let digest = fact.digest, collisionDigests.contains(digest) else { return nil }
            return failure(rule, fact, depth: depth, "\(fact.name) (\(role(depth, facts))) is signed with \(fact.certificate.signatureAlgorithm)\(says)", fix: fix)
        }
    }

    /// Every certificate of the chain, the anchor included, with an RSA key under `minimum` bits.
    static func rsaKeys(_ facts: [ChainCertificate], _ rule: PlatformRule, minimum: Int, _ needs: String, fix: Hint) -> [PlatformFailure] {
        facts.enumerated().compactMap { depth, fact in
            guard let bits = fact.key.rsaBits, bits < minimum else { return nil }
            return failure(rule, fact, depth: depth, "\(fact.name) (\(role(depth, facts))) has an RSA key of \(bits) bits; \(needs)", fix: fix)
        }
    }

    /// A publicly trusted leaf issued from 2020-09-01 and valid more than 398 days (Apple's and
    /// Chrome's root programs).
    static func publicValidity398(_ input: PlatformInput, _ leaf: ChainCertificate, _ rule: PlatformRule) -> [PlatformFailure] {
        guard input.anchorKind == .publicRoot, leaf.certificate.notBefore >= september2020, leaf.validity > 398 * 86_400 else { return [] }
        return [
            failure(
                rule, leaf, depth: 0, "valid \(grouped(leaf.days)) days, more than 398 for a publicly trusted certificate issued from 2020-09-01",
                fix: "have the CA reissue it for 398 days or fewer (397 leaves a margin)")
        ]
    }
}

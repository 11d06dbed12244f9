#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A client platform whose published certificate rules mtls can apply.
public enum Platform: String, Sendable, CaseIterable, CustomStringConvertible {
    /// iOS 13+ and macOS 10.15+ (Security framework and App Transport Security).
    case apple
    /// Android 7.0+ (apps targeting API level 24 and up, Conscrypt's trust manager).
    case android
    /// OpenJDK 17's PKIX trust manager (`jdk.certpath.disabledAlgorithms`).
    case java
    /// Google Chrome (its own verifier and root program).
    case chrome

    /// The name printed in verdicts.
    public var displayName: String {
        switch self {
        case .apple: "iOS 13+ / macOS 10.15+"
        case .android: "Android 7+ (API 24+)"
        case .java: "Java (OpenJDK 17)"
        case .chrome: "Chrome"
        }
    }

    public var description: String { displayName }
}

/// One published platform requirement that mtls checks: the data behind a row of the rule table.
public struct PlatformRule: Sendable, Hashable, Identifiable {
    /// A stable identifier (`apple.validity-825`).
    public var id: String
    /// The platform that enforces it.
    public var platform: Platform
    /// The code reported in verdicts (`MTLS_APPLE_VALIDITY_825`).
    public var code: String
    /// The rule in one line.
    public var summary: String
    /// The published source: title, date and address.
    public var source: String
    /// The source's address.
    public var url: String
    /// The fixture pair (violating / compliant) under `TestCerts/platform/` that proves it, and the test.
    public var proof: String
}

/// The catalogue of platform rules, one entry per rule that ``PlatformEvaluator`` applies.
///
/// Kept as plain data: the rule table (`docs/TRUST-RULES.md`) renders it as
/// ``TrustRuleCatalogue/platforms``, and a test checks that every verdict code comes from here.
public enum PlatformRules {
    static let ht210176 = "Apple HT210176 \"Requirements for trusted certificates in iOS 13 and macOS 10.15\" (2019-06)"
    static let ht210176URL = "https://support.apple.com/en-us/HT210176"
    static let ht211025 = "Apple HT211025 \"About upcoming limits on trusted certificates\" (2020-03)"
    static let ht211025URL = "https://support.apple.com/en-us/HT211025"
    static let ats = "Apple, NSAppTransportSecurity: Requirements for Connecting Using ATS (iOS 9+, 2015)"
    static let atsURL = "https://developer.apple.com/documentation/bundleresources/information_property_list/nsapptransportsecurity"
    static let nsc = "Android Developers, \"Network security configuration\" (Android 7.0, 2016)"
    static let nscURL = "https://developer.android.com/privacy-and-security/security-config"
    static let conscrypt = "AOSP Conscrypt ChainStrengthAnalyzer.java (RSA/DSA < 1024, EC < 160, MD2/MD4/MD5/SHA-1 OIDs)"
    static let conscryptURL = "https://android.googlesource.com/platform/external/conscrypt/+/refs/heads/main/common/src/main/java/org/conscrypt/ChainStrengthAnalyzer.java"
    static let javaSecurity = "OpenJDK 17 conf/security/java.security, jdk.certpath.disabledAlgorithms (17.0.x, 2021-09)"
    static let javaSecurityURL = "https://github.com/openjdk/jdk17u/blob/master/src/java.base/share/conf/security/java.security"
    static let chrome58 = "Chrome 58 \"Remove support for commonName matching in certificates\" (2017-04)"
    static let chrome58URL = "https://chromestatus.com/feature/4981025180483584"
    static let chromeSHA1Source = "Google Security Blog \"SHA-1 Certificates in Chrome\" (2016-11-16; Chrome 56/57)"
    static let chromeSHA1SourceURL = "https://security.googleblog.com/2016/11/sha-1-certificates-in-chrome.html"
    static let chromeLifetimes = "Chromium net/docs/certificate_lifetimes.md (Chrome 85, 2020-09-01)"
    static let chromeLifetimesURL = "https://chromium.googlesource.com/chromium/src/+/main/net/docs/certificate_lifetimes.md"
    static let chromeWeakKeySource = "Chromium net/cert/cert_verify_proc.cc, IsWeakKey: RSA < 1024 refused (ERR_CERT_WEAK_KEY)"
    static let chromeWeakKeySourceURL = "https://chromium.googlesource.com/chromium/src/+/main/net/cert/cert_verify_proc.cc"

    static let tests = "PlatformVerdictTests"

    /// The chain itself fails path validation (expired, unknown issuer, bad signature, wrong name):
    /// every platform refuses it.
    public static let chainNotTrusted = PlatformRule(
        id: "all.chain", platform: .apple, code: "MTLS_PLATFORM_CHAIN_NOT_TRUSTED",
        summary: "The chain must validate (RFC 5280 path validation, host name in the SAN) before any platform rule applies",
        source: "RFC 5280 §6; RFC 6125 §6.4", url: "https://www.rfc-editor.org/rfc/rfc5280#section-6",
        proof: "platform/compliant.pem at 2030-01-01 (expired); \(tests).testAChainThatDoesNotValidateIsRefusedEverywhere")

    public static let appleRSA2048 = PlatformRule(
        id: "apple.rsa-2048", platform: .apple, code: "MTLS_APPLE_RSA_2048",
        summary: "RSA keys of the server certificate and its issuing CAs must be at least 2048 bits",
        source: ht210176, url: ht210176URL, proof: "platform/rsa1024.pem / platform/compliant.pem; \(tests)")
    public static let appleSHA2 = PlatformRule(
        id: "apple.sha2", platform: .apple, code: "MTLS_APPLE_SHA1_SIGNATURE",
        summary: "The server certificate and its issuing CAs must be signed with a SHA-2 hash (SHA-1, MD5 refused)",
        source: ht210176, url: ht210176URL, proof: "platform/sha1.pem, platform/md5.pem / platform/compliant.pem; \(tests)")
    public static let appleSAN = PlatformRule(
        id: "apple.san", platform: .apple, code: "MTLS_APPLE_SAN_REQUIRED",
        summary: "The server's DNS name must be in the subjectAltName; a name only in the CN is not trusted",
        source: ht210176, url: ht210176URL, proof: "platform/cn-only.pem / platform/compliant.pem; \(tests)")
    public static let appleEKU = PlatformRule(
        id: "apple.eku", platform: .apple, code: "MTLS_APPLE_EKU_SERVERAUTH",
        summary: "Issued after 2019-07-01 (notBefore): an extendedKeyUsage extension with id-kp-serverAuth is required",
        source: ht210176, url: ht210176URL, proof: "platform/no-eku.pem / platform/no-eku-2019.pem, platform/compliant.pem; \(tests)")
    public static let appleValidity825 = PlatformRule(
        id: "apple.validity-825", platform: .apple, code: "MTLS_APPLE_VALIDITY_825",
        summary: "Issued after 2019-07-01 (notBefore): validity of 825 days or fewer",
        source: ht210176, url: ht210176URL, proof: "platform/days-826.pem / platform/compliant.pem (825 days); \(tests)")
    public static let appleValidity398 = PlatformRule(
        id: "apple.validity-398", platform: .apple, code: "MTLS_APPLE_VALIDITY_398",
        summary: "Under a root of Apple's root store, issued on or after 2020-09-01: validity of 398 days or fewer (user/admin-added roots exempt)",
        source: ht211025, url: ht211025URL, proof: "platform/public-399.pem / platform/public-398.pem (under platform/public-root-ca.pem); \(tests)")
    public static let appleATSKey = PlatformRule(
        id: "apple.ats-key", platform: .apple, code: "MTLS_APPLE_ATS_KEY",
        summary: "ATS: the server certificate's key must be RSA of 2048 bits or more, or ECC of 256 bits or more",
        source: ats, url: atsURL, proof: "platform/ec-p224.pem / platform/ec-p256.pem; \(tests)")
    public static let appleATSHash = PlatformRule(
        id: "apple.ats-hash", platform: .apple, code: "MTLS_APPLE_ATS_SIGNATURE_HASH",
        summary: "ATS: the server certificate must be signed with SHA-256 or stronger (SHA-224 refused)",
        source: ats, url: atsURL, proof: "platform/sha224.pem / platform/compliant.pem; \(tests)")

    public static let appleATSTLSVersion = PlatformRule(
        id: "apple.ats-tls", platform: .apple, code: "MTLS_APPLE_ATS_TLS_VERSION",
        summary: "ATS (live server, `mtls probe --platform apple`): TLS 1.2 or later; else the app needs NSExceptionMinimumTLSVersion",
        source: ats, url: atsURL, proof: "openssl s_server -tls1_1 / default; ProbeATSTests")
    public static let appleATSForwardSecrecy = PlatformRule(
        id: "apple.ats-fs", platform: .apple, code: "MTLS_APPLE_ATS_FORWARD_SECRECY",
        summary: "ATS (live server): an ECDHE cipher suite from Apple's list (or TLS 1.3); else the app needs NSExceptionRequiresForwardSecrecy = NO",
        source: ats, url: atsURL, proof: "openssl s_server -cipher AES128-GCM-SHA256 / default; ProbeATSTests")

    public static let androidUserCA = PlatformRule(
        id: "android.user-ca", platform: .android, code: "MTLS_ANDROID_USER_CA",
        summary: "Apps targeting API 24+ trust only system CAs; a private anchor needs <certificates src=\"user\"/> or src=\"@raw/…\" in the network security config",
        source: nsc, url: nscURL, proof: "platform/compliant.pem under platform/root-ca.pem (private) / platform/public-398.pem (public); \(tests)")
    public static let androidWeakKey = PlatformRule(
        id: "android.weak-key", platform: .android, code: "MTLS_ANDROID_WEAK_KEY",
        summary: "Keys in the chain: RSA and DSA of at least 1024 bits, EC of at least 160 bits",
        source: conscrypt, url: conscryptURL, proof: "platform/rsa768.pem / platform/rsa1024.pem; \(tests)")
    public static let androidWeakSignature = PlatformRule(
        id: "android.weak-signature", platform: .android, code: "MTLS_ANDROID_WEAK_SIGNATURE",
        summary: "No certificate of the chain below the anchor signed with MD2, MD4, MD5 or SHA-1",
        source: conscrypt, url: conscryptURL, proof: "platform/sha1.pem, platform/md5.pem / platform/compliant.pem; \(tests)")
    public static let androidPinSet = PlatformRule(
        id: "android.pin-set", platform: .android, code: "MTLS_ANDROID_PIN_MISMATCH",
        summary: "A <pin-set> must match a chain certificate's SPKI until its expiration date; after it, pins are not enforced",
        source: nsc, url: nscURL, proof: "\(tests).testAndroidEnforcesPinsUntilThePinSetExpires")

    public static let javaDisabledSignature = PlatformRule(
        id: "java.disabled-signature", platform: .java, code: "MTLS_JAVA_DISABLED_SIGNATURE",
        summary: "jdk.certpath.disabledAlgorithms: MD2 and MD5 signatures refused; SHA-1 refused for TLS servers chaining to a JDK cacerts root (jdkCA)",
        source: javaSecurity, url: javaSecurityURL, proof: "platform/md5.pem / platform/sha1.pem (private anchor: accepted); JDKJudgeTests")
    public static let javaDisabledKey = PlatformRule(
        id: "java.disabled-key", platform: .java, code: "MTLS_JAVA_DISABLED_KEY",
        summary: "jdk.certpath.disabledAlgorithms: RSA keySize < 1024, DSA keySize < 1024, EC keySize < 224 refused",
        source: javaSecurity, url: javaSecurityURL, proof: "platform/rsa768.pem / platform/rsa1024.pem; JDKJudgeTests")

    public static let chromeSAN = PlatformRule(
        id: "chrome.san", platform: .chrome, code: "MTLS_CHROME_SAN_REQUIRED",
        summary: "Host names are matched against the subjectAltName only (NET::ERR_CERT_COMMON_NAME_INVALID)",
        source: chrome58, url: chrome58URL, proof: "platform/cn-only.pem / platform/compliant.pem; \(tests)")
    public static let chromeSHA1 = PlatformRule(
        id: "chrome.sha1", platform: .chrome, code: "MTLS_CHROME_SHA1_SIGNATURE",
        summary: "No SHA-1 (or MD5) signature in the chain, the root's self-signature excepted, public or local anchor (ERR_CERT_WEAK_SIGNATURE_ALGORITHM)",
        source: chromeSHA1Source, url: chromeSHA1SourceURL, proof: "platform/sha1.pem / platform/compliant.pem; \(tests)")
    public static let chromeValidity398 = PlatformRule(
        id: "chrome.validity-398", platform: .chrome, code: "MTLS_CHROME_VALIDITY_398",
        summary: "Under a publicly trusted root, issued on or after 2020-09-01: at most 398 days of 86,400 s (ERR_CERT_VALIDITY_TOO_LONG); local roots exempt",
        source: chromeLifetimes, url: chromeLifetimesURL, proof: "platform/public-399.pem / platform/public-398.pem; \(tests)")
    public static let chromeWeakKey = PlatformRule(
        id: "chrome.weak-key", platform: .chrome, code: "MTLS_CHROME_WEAK_KEY",
        summary: "RSA keys under 1024 bits refused anywhere in the chain, under 2048 bits under a public root (ERR_CERT_WEAK_KEY)",
        source: chromeWeakKeySource, url: chromeWeakKeySourceURL, proof: "platform/rsa768.pem / platform/rsa1024.pem; \(tests)")

    static let appleRevocationSource =
        "Apple Developer Documentation, SecPolicyCreateRevocation (no CRL or OCSP fetch by default; stapled OCSP and Apple's aggregated revocation of publicly trusted CAs, valid.apple.com)"
    static let appleRevocationSourceURL = "https://developer.apple.com/documentation/security/1397939-secpolicycreaterevocation"
    static let androidRevocationSource = "AOSP Conscrypt TrustManagerImpl.java (PKIX revocation checking disabled: no CRL or OCSP fetch)"
    static let androidRevocationSourceURL =
        "https://android.googlesource.com/platform/external/conscrypt/+/refs/heads/main/common/src/main/java/org/conscrypt/TrustManagerImpl.java"
    static let javaRevocationSource =
        "JSSE Reference Guide, OpenJDK 17: com.sun.net.ssl.checkRevocation (default false), ocsp.enable, com.sun.security.enableCRLDP; PKIXRevocationChecker hard-fails without SOFT_FAIL"
    static let javaRevocationSourceURL = "https://docs.oracle.com/en/java/javase/17/security/java-secure-socket-extension-jsse-reference-guide.html"
    static let chromeRevocationSource =
        "Chromium cert_verify_proc_builtin.cc: CRLSet only; online checks only with the EnableOnlineRevocationChecks (soft-fail) or RequireOnlineRevocationChecksForLocalAnchors (hard-fail) policies, both off by default"
    static let chromeRevocationSourceURL = "https://chromium.googlesource.com/chromium/src/+/main/net/cert/cert_verify_proc_builtin.cc"

    /// A certificate of the chain is revoked and the platform learns it its own way (Apple:
    /// its aggregated revocation of publicly trusted CAs). The other platforms' revocation
    /// behaviour (``PlatformRevocationPolicy``) only ever adds notes by default.
    public static let appleRevoked = PlatformRule(
        id: "apple.revoked", platform: .apple, code: "MTLS_APPLE_REVOKED",
        summary:
            "Under a publicly trusted root, a revoked certificate is refused (Apple aggregates public CAs' revocations); no CRL or OCSP is fetched, so an undeterminable status passes; under a private anchor revocation is not checked",
        source: appleRevocationSource, url: appleRevocationSourceURL,
        proof: "\(tests).testRevocationIsAppliedAsEachPlatformChecksIt; RevocationCommandTests.testPlatformVerdictsApplyRevocationAsEachPlatformDoes")

    /// Every rule, in table order.
    public static let all: [PlatformRule] = [
        chainNotTrusted,
        appleRSA2048, appleSHA2, appleSAN, appleEKU, appleValidity825, appleValidity398, appleATSKey, appleATSHash, appleATSTLSVersion,
        appleATSForwardSecrecy, appleRevoked,
        androidUserCA, androidWeakKey, androidWeakSignature, androidPinSet,
        javaDisabledSignature, javaDisabledKey,
        chromeSAN, chromeSHA1, chromeValidity398, chromeWeakKey,
    ]

    /// The rule with this code, if any.
    public static func rule(code: String) -> PlatformRule? { all.first { $0.code == code } }

    /// How each platform checks revocation by default (`verify --platform … --revocation`), as data.
    public static let revocation: [PlatformRevocationPolicy] = [
        PlatformRevocationPolicy(
            platform: .apple, privateAnchor: .none, publicRoot: .softFail,
            summary:
                "fetches no CRL and asks no OCSP responder by default; it refuses a revoked certificate of a publicly trusted CA (Apple's aggregated revocation data) and a stapled revoked answer",
            enable: "an app opts in with SecPolicyCreateRevocation(kSecRevocationRequirePositiveResponse) for hard-fail",
            source: appleRevocationSource, url: appleRevocationSourceURL),
        PlatformRevocationPolicy(
            platform: .android, privateAnchor: .none, publicRoot: .none,
            summary: "checks no revocation: its default TrustManager fetches no CRL and asks no OCSP responder",
            enable: "an app must add its own PKIXRevocationChecker to check revocation",
            source: androidRevocationSource, url: androidRevocationSourceURL),
        PlatformRevocationPolicy(
            platform: .java, privateAnchor: .none, publicRoot: .none,
            summary: "checks no revocation by default (com.sun.net.ssl.checkRevocation=false)",
            enable: "-Dcom.sun.net.ssl.checkRevocation=true -Dcom.sun.security.enableCRLDP=true -Docsp.enable=true makes it hard-fail, as --revocation hard does",
            source: javaRevocationSource, url: javaRevocationSourceURL),
        PlatformRevocationPolicy(
            platform: .chrome, privateAnchor: .none, publicRoot: .none,
            summary: "makes no online revocation check by default; it refuses only what its CRLSet lists (selected revocations of publicly trusted CAs)",
            enable: "the EnableOnlineRevocationChecks policy makes it soft-fail; RequireOnlineRevocationChecksForLocalAnchors hard-fails under a private anchor",
            source: chromeRevocationSource, url: chromeRevocationSourceURL),
    ]
}

/// How a platform treats a certificate's revocation status by default: the data behind the
/// revocation part of a platform verdict.
public struct PlatformRevocationPolicy: Sendable {
    /// What a platform does with the status it could learn.
    public enum Check: String, Sendable {
        /// Not checked: a revoked or undeterminable status changes nothing.
        case none
        /// A revoked certificate is refused; an undeterminable status passes (browsers).
        case softFail = "soft-fail"
        /// A status that cannot be determined is refused too (IIS, Windows' CertCheckMode 0).
        case hardFail = "hard-fail"
    }

    /// The platform.
    public var platform: Platform
    /// Under an anchor the user, administrator or app supplies.
    public var privateAnchor: Check
    /// Under a root of the platform's store.
    public var publicRoot: Check
    /// What the platform does, as the end of a sentence that starts with its name.
    public var summary: String
    /// How an app or user makes it check more.
    public var enable: String
    /// The published source and its address.
    public var source: String
    public var url: String

    /// The check under `anchor`.
    public func check(_ anchor: PlatformAnchorKind) -> Check { anchor == .publicRoot ? publicRoot : privateAnchor }

    /// The policy of `platform`.
    public static func of(_ platform: Platform) -> PlatformRevocationPolicy {
        PlatformRules.revocation.first { $0.platform == platform }
            ?? PlatformRevocationPolicy(
                platform: platform, privateAnchor: .none, publicRoot: .none, summary: "checks no revocation", enable: "", source: "", url: "")
    }
}

extension TrustRuleCatalogue {
    /// The platform rules as a section of the one rule table (`docs/TRUST-RULES.md`).
    public static let platforms = TrustRuleCatalogue(
        title: "Platforms (`verify --platform`, `probe --platform apple`)",
        introduction: """
            What iOS/macOS, Android, Java and Chrome refuse beyond path validation, from each platform's \
            published requirement (with its date). Not a profile: `--platform` judges a chain as each \
            platform would, whatever `--profile` says. Each rule's violating certificate and compliant twin \
            are under `TestCerts/platform/` (made by `scripts/make-platform-certs.sh`); the Java verdicts are \
            also checked against the JDK's own PKIX validator (JDKJudgeTests), the live-server ATS rules \
            against `openssl s_server` (ProbeATSTests). A chain that stops short of its anchor is judged \
            for iOS/macOS and Chrome on what they would fetch from the authorityInfoAccess caIssuers URL \
            (with `--fetch-aia`; without it, as sent, and their verdicts say where they would look), for \
            Android and Java as sent, as neither fetches (IssuerFetchTests).
            """,
        rules: PlatformRules.all.map { rule in
            TrustRuleEntry(
                id: rule.id, profiles: [rule.id.hasPrefix("all.") ? "all platforms" : rule.platform.displayName],
                source: "[\(rule.source)](\(rule.url))", code: rule.code, summary: rule.summary, hasFixture: false, test: rule.proof)
        })
}

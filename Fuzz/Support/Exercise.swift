import Foundation
import MTLSTrust

/// Reads every property of parsed objects, so that lazily decoded fields are fuzzed too.
enum Exercise {
    static let fixedTime = Date(timeIntervalSince1970: 1_780_272_000)

    static func certificate(_ certificate: Certificate, evaluate: Bool = false) {
        _ = certificate.subject
        _ = certificate.issuer
        _ = certificate.commonName
        _ = certificate.displayName
        _ = certificate.serialNumberHex
        _ = certificate.notBefore
        _ = certificate.notAfter
        _ = certificate.isValid(at: fixedTime)
        _ = certificate.subjectAlternativeNames.map(\.description)
        _ = certificate.dnsNames
        _ = certificate.publicKey
        _ = certificate.subjectPublicKeyInfoDER
        _ = certificate.signatureAlgorithm
        _ = certificate.keyUsage?.description
        _ = certificate.extendedKeyUsage
        _ = certificate.basicConstraints
        _ = certificate.isSelfSigned
        _ = certificate.version
        _ = certificate.sha256Fingerprint
        _ = certificate.sha1Fingerprint
        _ = certificate.spkiPin
        _ = certificate.pemString
        _ = Pin.publicKey(of: certificate).matches(certificate)
        _ = DER.subjectPublicKeyInfoRange(inCertificate: certificate.derBytes)
        if evaluate, let evaluator = try? TrustEvaluator(policy: TrustPolicy(anchors: [certificate], evaluationTime: fixedTime, hostname: "localhost")) {
            let evaluation = evaluator.evaluate(certificate)
            _ = evaluation.findings.map { "\($0.reason) \($0.name)" }
        }
    }
}

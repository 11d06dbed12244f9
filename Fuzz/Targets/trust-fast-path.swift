// The trust evaluator's fast path against its reference path (`TrustFastPath.swift`). Oracle: the
// fast path accepts ⇒ the reference path (`X509_verify_cert` on the whole chain, then the Swift
// policies) accepts the same chain. Each input is tried as a leaf as it is and, so that mutations
// get past the signature check into the extension, name and policy checks, with its TBSCertificate
// re-signed by the test intermediate CA's key — under four policies whose fast path was armed by a
// good leaf first; both of the fast path's routes (the check on the undecoded DER, OpenSSL's check of
// leaf → intermediate). Also checked: when `Certificate(derBytes:)` defers `d2i_X509`
// (`CertificateLayout`), `d2i_X509` accepts the input, `i2d_X509` gives it back, and the answers
// read from the DER equal OpenSSL's; when it keeps the input bytes as `derBytes`
// (`CertificateSummaryReader.reencodesVerbatim`), `i2d_X509` gives exactly those bytes; and for every
// input `d2i_X509` accepts, the one certificate walk (`CertificateFacts`) reads what OpenSSL reads.
import COpenSSL
import Foundation
@testable import MTLSTrust

private let testCerts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("TestCerts")

private func fixture(_ name: String) -> Certificate {
    guard let bytes = try? Array(Data(contentsOf: testCerts.appendingPathComponent(name))), let certificate = try? Certificate(derBytes: bytes) else {
        fatalError("fixture \(name) missing (run from the repository with TestCerts/)")
    }
    return certificate
}

private struct Setup: @unchecked Sendable {
    // @unchecked Sendable: built once, only read afterwards (libFuzzer runs one input at a time).
    let evaluators: [TrustEvaluator]
    let signingKey: OpaquePointer
}

private let setup: Setup = {
    let time = Date(timeIntervalSince1970: 1_780_272_000)
    let root = fixture("root-ca.der")
    let intermediate = fixture("intermediate-ca.der")
    let policies = [
        TrustPolicy(anchors: [root], intermediates: [intermediate], evaluationTime: time, purpose: .server, hostname: "localhost"),
        TrustPolicy(anchors: [root], intermediates: [intermediate], evaluationTime: time, purpose: .server, profile: .rfc5280),
        TrustPolicy(anchors: [root], intermediates: [intermediate], evaluationTime: time, purpose: .client, email: "alice@example.com"),
        TrustPolicy(anchors: [root], intermediates: [intermediate], evaluationTime: time, purpose: .any, hostname: "127.0.0.1", maximumDepth: 1),
    ]
    var evaluators: [TrustEvaluator] = []
    for policy in policies {
        guard let evaluator = try? TrustEvaluator(policy: policy) else { fatalError("evaluator") }
        // Arm the fast path with a good leaf of the policy's purpose.
        let good = fixture(policy.purpose == .client ? "client-alice.der" : "server.der")
        check(evaluator.evaluate(good).isTrusted || policy.purpose == .any, "the arming leaf was refused")
        evaluators.append(evaluator)
    }
    guard let keyBytes = try? Array(Data(contentsOf: testCerts.appendingPathComponent("intermediate-ca.key"))),
        let key = try? PrivateKey(bytes: keyBytes)
    else { fatalError("intermediate-ca.key") }
    EVP_PKEY_up_ref(key.reference.pointer)
    return Setup(evaluators: evaluators, signingKey: key.reference.pointer)
}()

/// DER header for `tag` and `length`.
private func header(_ tag: UInt8, _ length: Int) -> [UInt8] {
    if length < 0x80 { return [tag, UInt8(length)] }
    var octets: [UInt8] = []
    var rest = length
    while rest > 0 {
        octets.insert(UInt8(rest & 0xFF), at: 0)
        rest >>= 8
    }
    return [tag, 0x80 | UInt8(octets.count)] + octets
}

/// The input's first element (its TBSCertificate when it is a certificate) signed with ECDSA-SHA256
/// by the intermediate's key, as a whole certificate.
private func resigned(_ bytes: [UInt8]) -> [UInt8]? {
    guard let outer = DER.element(in: bytes, at: 0), outer.tag == 0x30,
        let tbs = DER.element(in: bytes, at: outer.contentStart, limit: outer.contentEnd)
    else { return nil }
    let body = Array(bytes[tbs.headerStart..<tbs.contentEnd])
    guard let context = EVP_MD_CTX_new() else { return nil }
    defer { EVP_MD_CTX_free(context) }
    guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, setup.signingKey) == 1 else { return nil }
    var length = 0
    guard EVP_DigestSign(context, nil, &length, body, body.count) == 1 else { return nil }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(context, &signature, &length, body, body.count) == 1 else { return nil }
    signature.removeLast(signature.count - length)
    let algorithm: [UInt8] = [0x30, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]
    let bitString = header(0x03, signature.count + 1) + [0] + signature
    let content = body + algorithm + bitString
    return header(0x30, content.count) + content
}

/// The input, parsed, made a child of the test intermediate CA: its issuer name set to the
/// intermediate's subject, its authorityKeyIdentifier replaced by the one a good leaf carries, and
/// signed with the intermediate's key. Mutated extensions, names, keys and validity then reach
/// every check of both paths.
private let arming = fixture("server.der")
private let intermediateSubject = fixture("intermediate-ca.der")
private func fixedUp(_ bytes: [UInt8]) -> [UInt8]? {
    guard let parsed = try? Certificate(derBytes: bytes), let copy = X509_dup(parsed.reference.pointer) else { return nil }
    defer { X509_free(copy) }
    _ = X509_set_issuer_name(copy, X509_get_subject_name(intermediateSubject.reference.pointer))
    let index = X509_get_ext_by_NID(copy, NID_authority_key_identifier, -1)
    if index >= 0, let removed = X509_delete_ext(copy, index) { X509_EXTENSION_free(removed) }
    let good = X509_get_ext_by_NID(arming.reference.pointer, NID_authority_key_identifier, -1)
    if good >= 0 { _ = X509_add_ext(copy, X509_get_ext(arming.reference.pointer, good), -1) }
    guard X509_sign(copy, setup.signingKey, EVP_sha256()) > 0 else {
        ERR_clear_error()
        return nil
    }
    let length = i2d_X509(copy, nil)
    guard length > 0 else { return nil }
    var encoded = [UInt8](repeating: 0, count: Int(length))
    encoded.withUnsafeMutableBufferPointer { buffer in
        var cursor = buffer.baseAddress
        _ = i2d_X509(copy, &cursor)
    }
    return encoded
}

/// Inputs tried, certificates parsed, fast-path acceptances (each checked against the reference),
/// of those on the DER alone: printed every 20,000 inputs, so that a run shows the fast path was reached.
nonisolated(unsafe) private var tally = (inputs: 0, parsed: 0, fastAccepted: 0, onDER: 0)

/// `i2d_X509` of a decoded certificate.
private func encoded(_ pointer: OpaquePointer) -> [UInt8] {
    let length = i2d_X509(pointer, nil)
    var encoded = [UInt8](repeating: 0, count: Int(max(length, 0)))
    encoded.withUnsafeMutableBufferPointer { buffer in
        var cursor = buffer.baseAddress
        _ = i2d_X509(pointer, &cursor)
    }
    return encoded
}

private func differential(_ bytes: [UInt8]) {
    guard let leaf = try? Certificate(derBytes: bytes) else { return }
    tally.parsed += 1
    // The one certificate walk (`CertificateStructure`, read as `CertificateFacts`) against
    // OpenSSL's decode of the same bytes, on a copy so that `leaf` stays undecoded.
    bytes.withUnsafeBufferPointer { buffer in
        var cursor = buffer.baseAddress
        guard let decoded = d2i_X509(nil, &cursor, buffer.count) else { return }
        defer { X509_free(decoded) }
        let facts = CertificateFacts(der: encoded(decoded))
        guard facts.isReadable else { return }  // BER that OpenSSL tolerates: the walk declines it
        let differences = facts.differences(from: decoded)
        check(differences.isEmpty, "the certificate walk and OpenSSL read different facts: \(differences)")
    }
    for evaluator in setup.evaluators {
        // A fresh copy for each policy: the reference path below decodes the leaf it is given,
        // and the fast path checks an undecoded leaf on its DER.
        guard let fastPath = evaluator.fastPath, let candidate = try? Certificate(derBytes: bytes),
            let fast = evaluator.fastEvaluationWithRoute(candidate, fastPath: fastPath)
        else { continue }
        if fast.onDER { check(candidate.reference.decodedPointer == nil, "accepted on the DER, but the leaf was decoded") }
        let reference = evaluator.referenceEvaluation(candidate, extraIntermediates: [])
        check(reference.isTrusted, "the fast path (on the DER: \(fast.onDER)) accepted a chain the reference path rejects: \(reference.findings) (policy \(evaluator.policy))")
        check(reference.chain == fast.evaluation.chain, "the fast path's chain differs from the reference path's")
        tally.fastAccepted += 1
        if fast.onDER { tally.onDER += 1 }
    }
    if leaf.reference.layout != nil {
        // The strict walk's claims: what the undecoded certificate answers is what the decoded one
        // answers, d2i_X509 accepts the DER (else decoding would stop the process), and i2d_X509
        // gives the input back.
        let answers = (leaf.subject, leaf.commonName, leaf.keyAlgorithm, leaf.keyUsage)
        // A plain leaf answers all four without decoding, unless its EC point is off the curve
        // (then OpenSSL's decoder, which refuses the key, must answer the key algorithm).
        let layout = leaf.reference.layout
        check(layout?.plainLeaf == nil || leaf.reference.decodedPointer == nil || layout?.keyAlgorithm(bytes) == nil, "an accessor decoded a plain leaf")
        var cursor: UnsafePointer<UInt8>? = nil
        let decoded = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let decoded else { return check(false, "the strict walk accepted DER that d2i_X509 refuses") }
        defer { X509_free(decoded) }
        check(encoded(decoded) == bytes, "the strict walk accepted DER that i2d_X509 does not give back")
        let full = Certificate(borrowing: decoded)
        check(answers.0 == full.subject && answers.1 == full.commonName, "subject or CN differ between the walk and OpenSSL")
        check(answers.2 == full.keyAlgorithm && answers.3 == full.keyUsage, "key algorithm or key usage differ between the walk and OpenSSL")
    } else if CertificateSummaryReader.reencodesVerbatim(bytes) {
        check(encoded(leaf.reference.pointer) == bytes, "reencodesVerbatim, but i2d_X509 gives other bytes")
    }
    ERR_clear_error()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let bytes = input.all
        tally.inputs += 1
        if tally.inputs % 20_000 == 0 {
            let counts = "\(tally.inputs) inputs, \(tally.parsed) certificates parsed, \(tally.fastAccepted) fast-path acceptances (\(tally.onDER) on the DER)"
            FileHandle.standardError.write(Data("trust-fast-path: \(counts), each also accepted by the reference path\n".utf8))
        }
        differential(bytes)
        if let signed = resigned(bytes) { differential(signed) }
        if let child = fixedUp(bytes) { differential(child) }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// A client identity: a certificate, its private key and the chain to send with it.
public struct ClientIdentity: Sendable {
    public var certificate: Certificate
    public var privateKey: PrivateKey
    public var chain: [Certificate]
    /// Where it came from, for reports (`alice.p12`).
    public var label: String

    /// Creates an identity; the key must match the certificate.
    public init(certificate: Certificate, privateKey: PrivateKey, chain: [Certificate] = [], label: String? = nil) throws(MTLSTrustError) {
        guard privateKey.matches(certificate) else {
            throw MTLSTrustError(.keyMismatch, "the private key does not belong to the client certificate \(certificate.displayName)")
        }
        self.certificate = certificate
        self.privateKey = privateKey
        self.chain = chain
        self.label = label ?? certificate.displayName
    }

    /// Makes an identity from a PKCS#12 bundle already read (for example one kept in a keychain-like
    /// store): its leaf, the key that matches it and the chain certificates that are not self-signed
    /// roots (a server has those already).
    ///
    /// - Parameters:
    ///   - bundle: The bundle, from `PKCS12Bundle(derBytes:password:)`.
    ///   - label: Where it came from, for reports; defaults to the leaf's subject.
    /// - Throws: `MTLSTrustError` `.wrongObjectKind` when the bundle holds no private key with its
    ///   certificate, `.invalidArgument` when it holds several identities (which one is not guessed).
    public init(_ bundle: PKCS12Bundle, label: String? = nil) throws(MTLSTrustError) {
        // A client presents one identity: picking the first of several would drop the others unseen.
        if bundle.identities.count > 1 {
            let names = bundle.identities.enumerated().map { identity in
                "\(identity.offset + 1): " + (identity.element.friendlyName.map { DisplayText.quoted($0) } ?? identity.element.certificate?.certificate.subject ?? "key only")
            }
            throw MTLSTrustError(
                .invalidArgument,
                "\(label ?? "the PKCS#12 bundle") holds \(bundle.identities.count) identities (\(names.joined(separator: ", "))); which one to present is not guessed",
                source: label, hint: "pick the one to use with \(setting: .pkcs12IdentitySelection) and give it on its own")
        }
        guard let leaf = bundle.leaf, let key = bundle.privateKey else {
            let what = label.map { "\($0) holds" } ?? "the PKCS#12 bundle holds"
            throw MTLSTrustError(.wrongObjectKind, "\(what) no identity (no private key with its certificate)", source: label)
        }
        try self.init(certificate: leaf.certificate, privateKey: key, chain: bundle.chain.map(\.certificate).filter { !$0.isSelfSigned }, label: label)
    }

    /// Loads an identity from a PKCS#12 file (modern or legacy).
    public static func pkcs12(path: String, password: Secret?) throws(MTLSTrustError) -> ClientIdentity {
        let bytes = try CertificateLoader.readFile(path)
        let bundle: PKCS12Bundle
        do throws(MTLSTrustError) {
            bundle = try PKCS12Bundle(derBytes: bytes, password: password)
        } catch {
            throw error.attributed(to: path)
        }
        return try ClientIdentity(bundle, label: path)
    }

    /// Loads an identity from PEM/DER certificate and key files (the certificate file may hold the chain).
    public static func files(certificatePath: String, keyPath: String, keyPassword: Secret? = nil) throws(MTLSTrustError) -> ClientIdentity {
        let certificates = try CertificateLoader.certificates(atPath: certificatePath)
        let keyBytes = try CertificateLoader.readFile(keyPath)
        let key: PrivateKey
        do throws(MTLSTrustError) {
            key = try PrivateKey(bytes: keyBytes, password: keyPassword)
        } catch {
            throw error.attributed(to: keyPath)
        }
        guard let leaf = certificates.first(where: { key.matches($0) }) else {
            throw MTLSTrustError(.keyMismatch, "the key in \(keyPath) does not belong to any certificate in \(certificatePath)", source: keyPath)
        }
        return try ClientIdentity(certificate: leaf, privateKey: key, chain: certificates.filter { $0 != leaf }, label: certificatePath)
    }

    /// True when the server's accepted CA names include an issuer on this identity's path.
    public func fits(acceptedCANames names: [String]) -> Bool {
        if names.isEmpty { return true }
        let ours = Set([certificate.issuer] + chain.flatMap { [$0.subject, $0.issuer] })
        return names.contains { ours.contains($0) }
    }
}

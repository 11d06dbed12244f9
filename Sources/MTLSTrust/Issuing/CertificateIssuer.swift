internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Makes keys and certificates for test PKIs (`mtls serve`, `mtls demo`): a CA, a server
/// certificate for loopback names, and client identities. Not a production CA.
public enum CertificateIssuer {
    /// What to put in a new certificate.
    public struct Profile: Sendable {
        public enum Role: Sendable { case rootCA, server, client }
        public var role: Role
        public var commonName: String
        public var organization: String
        public var dnsNames: [String]
        public var ipAddresses: [String]
        public var notBefore: Date
        public var notAfter: Date

        public init(role: Role, commonName: String, organization: String = "mtls test", dnsNames: [String] = [], ipAddresses: [String] = [], notBefore: Date, notAfter: Date) {
            self.role = role
            self.commonName = commonName
            self.organization = organization
            self.dnsNames = dnsNames
            self.ipAddresses = ipAddresses
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }

    /// Generates an ECDSA P-256 key.
    public static func generateKey() throws(MTLSTrustError) -> PrivateKey {
        OpenSSLErrorQueue.clear()
        guard let key = EVP_EC_gen_shim() else {
            throw MTLSTrustError(.internalFailure, "OpenSSL could not generate an EC key: \(OpenSSLErrorQueue.describe(OpenSSLErrorQueue.drain()))")
        }
        return PrivateKey(taking: key, format: .pkcs8)
    }

    private static func EVP_EC_gen_shim() -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { return nil }
        guard EVP_PKEY_CTX_set_group_name(context, "P-256") == 1 else { return nil }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &key) == 1 else { return nil }
        return key
    }

    /// Issues a certificate for `key` from `profile`, signed by `issuer` (nil: self-signed).
    public static func issue(_ profile: Profile, key: PrivateKey, issuer: (certificate: Certificate, key: PrivateKey)?, serial: UInt64) throws(MTLSTrustError) -> Certificate {
        OpenSSLErrorQueue.clear()
        guard let x509 = X509_new() else { throw MTLSTrustError(.internalFailure, "out of memory") }
        var owned = true
        defer { if owned { X509_free(x509) } }
        X509_set_version(x509, 2)
        let serialNumber = ASN1_INTEGER_new()
        ASN1_INTEGER_set_uint64(serialNumber, serial)
        X509_set_serialNumber(x509, serialNumber)
        ASN1_INTEGER_free(serialNumber)
        X509_time_adj_ex(X509_getm_notBefore(x509), 0, 0, nil)
        ASN1_TIME_set(X509_getm_notBefore(x509), time_t(profile.notBefore.timeIntervalSince1970))
        ASN1_TIME_set(X509_getm_notAfter(x509), time_t(profile.notAfter.timeIntervalSince1970))
        guard let name = X509_NAME_new() else { throw MTLSTrustError(.internalFailure, "out of memory") }
        defer { X509_NAME_free(name) }
        X509_NAME_add_entry_by_txt(name, "C", MBSTRING_UTF8, "US", -1, -1, 0)
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, profile.organization, -1, -1, 0)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, profile.commonName, -1, -1, 0)
        X509_set_subject_name(x509, name)
        X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.certificate.reference.pointer) } ?? name)
        X509_set_pubkey(x509, key.reference.pointer)
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate.reference.pointer ?? x509, x509, nil, nil, 0)
        var extensions: [(Int32, String)] = []
        switch profile.role {
        case .rootCA:
            extensions = [(NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"), (NID_subject_key_identifier, "hash")]
        case .server:
            extensions = [
                (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"), (NID_ext_key_usage, "serverAuth"), (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ]
        case .client:
            extensions = [
                (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"), (NID_ext_key_usage, "clientAuth"), (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ]
        }
        // A dNSName is ASCII (an IA5String): a Unicode name goes in its xn-- form (UTS 46).
        var dnsNames: [String] = []
        for name in profile.dnsNames {
            do { dnsNames.append(try IDNA.toASCII(name)) } catch {
                throw MTLSTrustError(.invalidArgument, "The DNS name \(DisplayText.quoted(name)) cannot go in a certificate: \(error.description).")
            }
        }
        let sans = dnsNames.map { "DNS:\($0)" } + profile.ipAddresses.map { "IP:\($0)" }
        if !sans.isEmpty { extensions.append((NID_subject_alt_name, sans.joined(separator: ","))) }
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw MTLSTrustError(.internalFailure, "OpenSSL refused the extension \(value): \(OpenSSLErrorQueue.describe(OpenSSLErrorQueue.drain()))")
            }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        let signingKey = issuer?.key.reference.pointer ?? key.reference.pointer
        guard X509_sign(x509, signingKey, EVP_sha256()) > 0 else {
            throw MTLSTrustError(.internalFailure, "OpenSSL could not sign the certificate: \(OpenSSLErrorQueue.describe(OpenSSLErrorQueue.drain()))")
        }
        owned = false
        return Certificate(taking: x509)
    }
}

internal import COpenSSL
internal import COpenSSLShims
#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Owns one `X509_STORE`.
final class X509StoreReference: @unchecked Sendable {
    // @unchecked Sendable: the store is filled once at construction and only read afterwards;
    // OpenSSL locks its internal caches.
    let pointer: OpaquePointer
    init?(anchors: [Certificate], crls: [CertificateRevocationList]) {
        guard let store = X509_STORE_new() else { return nil }
        pointer = store
        for anchor in anchors { _ = X509_STORE_add_cert(store, anchor.reference.pointer) }  // add_cert takes its own reference
        for crl in crls { _ = X509_STORE_add_crl(store, crl.reference.pointer) }
        ERR_clear_error()  // duplicates are harmless
    }
    deinit { X509_STORE_free(pointer) }
}

/// Owns a `STACK_OF(X509)` that borrows its certificates from Swift values kept alive alongside.
final class X509StackReference: @unchecked Sendable {
    // @unchecked Sendable: never mutated after construction.
    let pointer: OpaquePointer
    private let certificates: [Certificate]
    init?(_ certificates: [Certificate]) {
        guard let stack = mtls_sk_X509_new_null() else { return nil }
        pointer = stack
        self.certificates = certificates
        for certificate in certificates { _ = mtls_sk_X509_push(stack, certificate.reference.pointer) }
    }
    deinit { mtls_sk_X509_free(pointer) }  // the certificates belong to `certificates`
}

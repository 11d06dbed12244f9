internal import COpenSSL

/// Owns one `X509*` and frees it in `deinit`.
final class X509Reference: @unchecked Sendable {
    // @unchecked Sendable: the certificate is never mutated after construction, and OpenSSL's
    // reference counting is thread-safe.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer` (one reference).
    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    /// Takes a new reference to a borrowed (`get0`) pointer.
    init(borrowing pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }
}

/// Owns one `EVP_PKEY*`.
final class EVPKeyReference: @unchecked Sendable {
    // @unchecked Sendable: keys are immutable once loaded; EVP_PKEY reference counting is thread-safe.
    let pointer: OpaquePointer
    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    init(borrowing pointer: OpaquePointer) {
        EVP_PKEY_up_ref(pointer)
        self.pointer = pointer
    }
    deinit { EVP_PKEY_free(pointer) }
}

/// Owns one `X509_CRL*`.
final class CRLReference: @unchecked Sendable {
    // @unchecked Sendable: never mutated after parsing; verification only reads it.
    let pointer: OpaquePointer
    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_CRL_free(pointer) }
}

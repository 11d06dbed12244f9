internal import COpenSSL

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

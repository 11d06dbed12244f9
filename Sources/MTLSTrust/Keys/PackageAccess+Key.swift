/// Access to the `EVP_PKEY*` behind ``PrivateKey``, for the other modules of this package (the
/// HTTPS transport). Not public API: the C types never appear outside the package.
extension PrivateKey {
    /// The `EVP_PKEY*`, borrowed for as long as this value lives.
    package var evpPointer: OpaquePointer { reference.pointer }
}

/// Access to the OpenSSL objects behind the value types, for the other modules of this package
/// (the HTTPS transport). Not public API: the C types never appear outside the package.
extension Certificate {
    /// The `X509*`, borrowed for as long as this value lives.
    package var x509Pointer: OpaquePointer { reference.pointer }
    /// Wraps a borrowed `X509*`, taking a reference of its own.
    package init(borrowingX509 pointer: OpaquePointer) { self.init(borrowing: pointer) }
    /// Wraps an `X509*` whose reference the caller hands over.
    package init(takingX509 pointer: OpaquePointer) { self.init(taking: pointer) }
}

extension Certificate {
    /// The RFC 4514 form of an `X509_NAME*`.
    package static func nameString(_ name: OpaquePointer?) -> String { rfc4514(name) }
}

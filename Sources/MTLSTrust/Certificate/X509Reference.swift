internal import COpenSSL
import Synchronization

/// Owns one `X509*` and frees it in `deinit`.
///
/// A certificate read from DER that the strict walk accepts (``CertificateLayout``) is decoded by
/// `d2i_X509` only when something first asks for its `X509` (``pointer``): the trust fast path and
/// the accessors that can answer from the layout never do, and `d2i_X509` — which in OpenSSL 3.0
/// decodes the public key through the provider decoders — is then never paid.
final class X509Reference: @unchecked Sendable {
    // @unchecked Sendable: the certificate is never mutated after construction, OpenSSL's reference
    // counting is thread-safe, and the deferred decoding is published once through `decoded`.
    private let decoded: Atomic<Int>
    /// The DER to decode on first use, and where its parts lie (nil once decoded eagerly).
    private let deferredDER: [UInt8]?
    let layout: CertificateLayout?

    /// Takes ownership of `pointer` (one reference).
    init(taking pointer: OpaquePointer) {
        decoded = Atomic(Int(bitPattern: pointer))
        deferredDER = nil
        layout = nil
    }

    /// Takes a new reference to a borrowed (`get0`) pointer.
    init(borrowing pointer: OpaquePointer) {
        X509_up_ref(pointer)
        decoded = Atomic(Int(bitPattern: pointer))
        deferredDER = nil
        layout = nil
    }

    /// Defers `d2i_X509` of `der`, which `layout` has accepted, until ``pointer`` is first read.
    init(deferring der: [UInt8], layout: CertificateLayout) {
        decoded = Atomic(0)
        deferredDER = der
        self.layout = layout
    }

    /// The `X509*`, decoded now if it was deferred.
    var pointer: OpaquePointer {
        if let pointer = decodedPointer { return pointer }
        return decode()
    }

    /// The `X509*` when it exists already (never decodes).
    var decodedPointer: OpaquePointer? { OpaquePointer(bitPattern: decoded.load(ordering: .acquiring)) }

    /// Certificates the strict DER walk accepted and `d2i_X509` then refused: a disagreement between
    /// the two readers, which the differential fuzz targets look for and have not found. OpenSSL's
    /// decode decides: such a certificate gets an empty `X509` (no name, key or signature), so it is
    /// never trusted and no accessor crashes; the count is for tests and `--verbose`.
    static let disagreements = Atomic<Int>(0)

    private func decode() -> OpaquePointer {
        let parsed = deferredDER.flatMap { der in
            der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_X509(nil, &cursor, buffer.count)
            }
        }
        guard let parsed = parsed ?? X509Reference.refused() else {
            fatalError("mtls: out of memory")  // X509_new failed: nothing can go on
        }
        let (won, current) = decoded.compareExchange(expected: 0, desired: Int(bitPattern: parsed), ordering: .acquiringAndReleasing)
        if won { return parsed }
        X509_free(parsed)  // another thread decoded it first
        return OpaquePointer(bitPattern: current)!
    }

    private static func refused() -> OpaquePointer? {
        X509Reference.disagreements.add(1, ordering: .relaxed)
        return X509_new()
    }

    deinit { if let pointer = decodedPointer { X509_free(pointer) } }
}

/// Owns one `X509_CRL*`.
final class CRLReference: @unchecked Sendable {
    // @unchecked Sendable: never mutated after parsing; verification only reads it.
    let pointer: OpaquePointer
    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_CRL_free(pointer) }
}

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

    private func decode() -> OpaquePointer {
        guard let der = deferredDER,
            let parsed = der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_X509(nil, &cursor, buffer.count)
            })
        else {
            // CertificateLayout accepts only DER that d2i_X509 accepts (fuzzed on every input).
            let digest = deferredDER.map { Digest.sha256($0).hex } ?? "?"
            fatalError("mtls: OpenSSL refused a certificate (SHA-256 \(digest)) that mtls's DER reader had accepted: please report it with that certificate")
        }
        let (won, current) = decoded.compareExchange(expected: 0, desired: Int(bitPattern: parsed), ordering: .acquiringAndReleasing)
        if won { return parsed }
        X509_free(parsed)  // another thread decoded it first
        return OpaquePointer(bitPattern: current)!
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

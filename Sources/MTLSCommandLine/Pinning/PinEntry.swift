#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// Where a pinned key sits: what every platform's pinning rules care about.
enum PinRole: String, Sendable, CaseIterable {
    /// The server's own certificate.
    case leaf
    /// A CA certificate between the leaf and the root.
    case intermediate
    /// A self-signed CA certificate (the trust anchor).
    case root
    /// A key with no certificate yet (a public key, a CSR or a private key given as a source):
    /// the key the server will move to, pinned before its certificate exists.
    case backup

    /// True for the CA roles.
    var isCA: Bool { self == .intermediate || self == .root }
}

/// One pin with what it was made from.
struct PinEntry: Sendable {
    /// The pin (SPKI SHA-256, or whole-certificate SHA-256 for `--format cert`).
    var pin: Pin
    /// Leaf, intermediate, root or backup.
    var role: PinRole
    /// The certificate's subject, or for a backup key a description of its source.
    var label: String
    /// The file or URL the pin came from.
    var source: String
    /// The certificate, when the pin is of one and it was parsed (not for summaries).
    var certificate: Certificate?
    /// The notAfter of a certificate read as a `CertificateSummary` (no `Certificate` then).
    var summaryNotAfter: Date? = nil

    /// The certificate's notAfter.
    var notAfter: Date? { certificate?.notAfter ?? summaryNotAfter }

    /// The SPKI digest in base64 (every platform format but `cert` and `der` uses it).
    var base64: String { pin.base64 }
}

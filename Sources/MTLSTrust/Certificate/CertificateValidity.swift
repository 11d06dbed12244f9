internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Certificate {
    // MARK: Serial and validity

    /// The serial number in upper-case hex, as `openssl x509 -serial` prints it.
    public var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(reference.pointer), let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { mtls_OPENSSL_free(hex) }
        return String(cString: hex)
    }

    /// The start of the validity period.
    public var notBefore: Date {
        if reference.decodedPointer == nil, let layout = reference.layout { return Date(timeIntervalSince1970: TimeInterval(layout.notBefore)) }
        return Certificate.date(X509_get0_notBefore(reference.pointer))
    }
    /// The end of the validity period.
    public var notAfter: Date {
        if reference.decodedPointer == nil, let layout = reference.layout { return Date(timeIntervalSince1970: TimeInterval(layout.notAfter)) }
        return Certificate.date(X509_get0_notAfter(reference.pointer))
    }

    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        guard let time else { return Date(timeIntervalSince1970: 0) }
        var tm = tm()
        guard ASN1_TIME_to_tm(time, &tm) == 1 else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&tm)))
    }

    /// True when `date` lies within the validity period (inclusive).
    public func isValid(at date: Date) -> Bool { date >= notBefore && date <= notAfter }

}

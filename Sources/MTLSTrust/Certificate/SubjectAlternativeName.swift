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

/// One subject alternative name.
public enum SubjectAlternativeName: Sendable, Hashable, CustomStringConvertible {
    case dns(String)
    case ip([UInt8])
    case email(String)
    case uri(String)
    case directoryName(String)
    /// An otherName: its type (a short name such as `msUPN`, or a dotted OID) and its value when
    /// that is a string.
    case otherName(type: String, value: String?)
    /// A registeredID: the dotted OID.
    case registeredID(String)
    /// A name of a kind not read here (x400Address, ediPartyName): the GeneralName tag number.
    case other(Int)

    public var description: String {
        switch self {
        case .dns(let name): "DNS:\(name)"
        case .ip(let bytes): "IP:\(IPAddress.format(bytes))"
        case .email(let address): "email:\(address)"
        case .uri(let uri): "URI:\(uri)"
        case .directoryName(let name): "DirName:\(name)"
        case .otherName(let type, let value): "othername:\(type):\(value ?? "<unsupported>")"
        case .registeredID(let oid): "RID:\(oid)"
        case .other(let type):
            switch Int32(type) {
            case GEN_X400: "X400Name:<unsupported>"
            case GEN_EDIPARTY: "EdiPartyName:<unsupported>"
            default: "GeneralName[\(type)]:<unsupported>"
            }
        }
    }
}

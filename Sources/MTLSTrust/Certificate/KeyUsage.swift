#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension KeyUsage {
    /// The RFC 5280 4.2.1.3 name of every bit, in the order of the standard.
    public static var allNames: [String] { names.map(\.1) }

    /// The bit named `name` (`digitalSignature`, `keyEncipherment` …, ASCII case ignored), or nil.
    public init?(name: String) {
        guard let match = KeyUsage.names.first(where: { $0.1.lowercased() == name.lowercased() }) else { return nil }
        self = match.0
    }
}

/// Key usage bits as OpenSSL reports them (`KU_*`).
public struct KeyUsage: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let digitalSignature = KeyUsage(rawValue: 0x0080)
    public static let nonRepudiation = KeyUsage(rawValue: 0x0040)
    public static let keyEncipherment = KeyUsage(rawValue: 0x0020)
    public static let dataEncipherment = KeyUsage(rawValue: 0x0010)
    public static let keyAgreement = KeyUsage(rawValue: 0x0008)
    public static let keyCertSign = KeyUsage(rawValue: 0x0004)
    public static let cRLSign = KeyUsage(rawValue: 0x0002)
    public static let encipherOnly = KeyUsage(rawValue: 0x0001)
    public static let decipherOnly = KeyUsage(rawValue: 0x8000)

    static let names: [(KeyUsage, String)] = [
        (.digitalSignature, "digitalSignature"), (.nonRepudiation, "nonRepudiation"),
        (.keyEncipherment, "keyEncipherment"), (.dataEncipherment, "dataEncipherment"),
        (.keyAgreement, "keyAgreement"), (.keyCertSign, "keyCertSign"), (.cRLSign, "cRLSign"),
        (.encipherOnly, "encipherOnly"), (.decipherOnly, "decipherOnly"),
    ]
    /// The names of the bits that are set.
    public var names: [String] { KeyUsage.names.filter { contains($0.0) }.map(\.1) }
    public var description: String { names.joined(separator: ", ") }
}

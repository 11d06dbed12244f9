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

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JDK's `jdk.certpath.disabledAlgorithms` security property, parsed: which signature and key
/// algorithms a Java TLS client refuses in a server's certificate chain.
///
/// Read it from the installed JDK (``installed(javaHome:)``) to be exact; ``openJDK17Default`` is
/// the value OpenJDK 17 ships.
public struct JavaAlgorithmConstraints: Sendable, Equatable {
    /// One comma-separated entry: an algorithm and the conditions under which it is disabled.
    public struct Entry: Sendable, Equatable {
        /// The algorithm, upper-case (`MD5`, `SHA1`, `RSA`, `EC`, `DSA`).
        public var algorithm: String
        /// `keySize < 1024` and the like: the operator and the size.
        public var keySize: (op: String, bits: Int)?
        /// `jdkCA`: only when the chain ends at a root of the JDK's own cacerts.
        public var jdkCA: Bool
        /// `usage TLSServer …`: only for these uses (nil: every use).
        public var usages: [String]?
        /// `denyAfter YYYY-MM-DD`: only after this date.
        public var denyAfter: Date?
        /// The entry as written.
        public var text: String

        public static func == (lhs: Entry, rhs: Entry) -> Bool { lhs.text == rhs.text }
    }

    /// The entries, in property order (`include` entries expanded where the file defines them).
    public var entries: [Entry]
    /// Where the value came from (a java.security path, or "OpenJDK 17 default").
    public var origin: String

    /// OpenJDK 17's shipped value of `jdk.certpath.disabledAlgorithms`.
    public static let openJDK17DefaultValue =
        "MD2, MD5, SHA1 jdkCA & usage TLSServer, RSA keySize < 1024, DSA keySize < 1024, EC keySize < 224, SHA1 usage SignedJAR & denyAfter 2019-01-01"

    /// The constraints OpenJDK 17 ships with.
    public static let openJDK17Default = JavaAlgorithmConstraints(value: openJDK17DefaultValue, origin: "OpenJDK 17 default")

    /// Parses a property value.
    ///
    /// - Parameters:
    ///   - value: The value of `jdk.certpath.disabledAlgorithms` (continuations already joined).
    ///   - origin: Where it came from, for messages.
    ///   - properties: Other properties of the same file, for `include NAME` entries.
    public init(value: String, origin: String, properties: [String: String] = [:]) {
        self.origin = origin
        var entries: [Entry] = []
        for raw in value.split(separator: ",") {
            let text = raw.trimmingWhitespace()
            if text.isEmpty { continue }
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if words.first == "include", words.count == 2 {
                if let included = properties[words[1]] {
                    entries += JavaAlgorithmConstraints(value: included, origin: origin).entries
                }
                continue
            }
            guard let algorithm = words.first else { continue }
            var entry = Entry(algorithm: algorithm.uppercased(), keySize: nil, jdkCA: false, usages: nil, denyAfter: nil, text: text)
            // The constraints after the algorithm, joined by '&'.
            let rest = words.dropFirst().joined(separator: " ")
            for part in rest.split(separator: "&") {
                let tokens = part.split(separator: " ").map(String.init)
                guard let head = tokens.first else { continue }
                switch head {
                case "keySize" where tokens.count == 3:
                    if let bits = Int(tokens[2]) { entry.keySize = (tokens[1], bits) }
                case "jdkCA":
                    entry.jdkCA = true
                case "usage":
                    entry.usages = Array(tokens.dropFirst())
                case "denyAfter" where tokens.count == 2:
                    let ymd = tokens[1].split(separator: "-").compactMap { Int($0) }
                    if ymd.count == 3 { entry.denyAfter = PlatformEvaluator.utc(ymd[0], ymd[1], ymd[2]) }
                default:
                    break
                }
            }
            entries.append(entry)
        }
        self.entries = entries
    }

    /// The constraints of the JDK at `javaHome` (default: `$JAVA_HOME`, else the JDK of the `java`
    /// on the system's default path `/usr/lib/jvm/default-java`, else OpenJDK 17's), read from its
    /// `conf/security/java.security`; nil when that file cannot be read or lacks the property.
    public static func installed(javaHome: String? = nil) -> JavaAlgorithmConstraints? {
        var homes: [String] = []
        if let javaHome { homes.append(javaHome) }
        if javaHome == nil {
            if let env = ProcessInfo.processInfo.environment["JAVA_HOME"], !env.isEmpty { homes.append(env) }
            homes += ["/usr/lib/jvm/default-java", "/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/java-17-openjdk-arm64"]
        }
        for home in homes {
            let path = home + "/conf/security/java.security"
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { continue }
            let properties = parseProperties(text)
            if let value = properties["jdk.certpath.disabledAlgorithms"] {
                return JavaAlgorithmConstraints(value: value, origin: path, properties: properties)
            }
        }
        return nil
    }

    /// A `java.security` file's properties: `key=value` lines, `#` comments, `\` continuations.
    static func parseProperties(_ text: String) -> [String: String] {
        var properties: [String: String] = [:]
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = line.trimmingWhitespace()
            if pending.isEmpty && (current.hasPrefix("#") || current.isEmpty) { continue }
            let continues = current.hasSuffix("\\")
            if continues { current.removeLast() }
            pending += current
            if continues {
                pending += " "
                continue
            }
            if let equals = pending.firstIndex(of: "=") {
                let key = pending[..<equals].trimmingWhitespace()
                let value = pending[pending.index(after: equals)...].trimmingWhitespace()
                properties[key] = value
            }
            pending = ""
        }
        return properties
    }

    /// The entry that disables a signature whose digest is `digest` (`SHA1`, `MD5`) for a TLS
    /// server's chain, or nil.
    func disablingSignature(digest: String, anchorIsJDKRoot: Bool, at time: Date) -> Entry? {
        entries.first { entry in
            entry.keySize == nil && entry.algorithm == digest && applies(entry, anchorIsJDKRoot: anchorIsJDKRoot, at: time)
        }
    }

    /// The entry that disables a key of this type (`RSA`, `EC`, `DSA`) and size, or nil.
    func disablingKey(type: String, bits: Int, anchorIsJDKRoot: Bool, at time: Date) -> Entry? {
        entries.first { entry in
            guard entry.algorithm == type, applies(entry, anchorIsJDKRoot: anchorIsJDKRoot, at: time) else { return false }
            guard let keySize = entry.keySize else { return true }
            switch keySize.op {
            case "<": return bits < keySize.bits
            case "<=": return bits <= keySize.bits
            case ">": return bits > keySize.bits
            case ">=": return bits >= keySize.bits
            case "==": return bits == keySize.bits
            case "!=": return bits != keySize.bits
            default: return false
            }
        }
    }

    private func applies(_ entry: Entry, anchorIsJDKRoot: Bool, at time: Date) -> Bool {
        if entry.jdkCA && !anchorIsJDKRoot { return false }
        if let usages = entry.usages, !usages.contains("TLSServer") { return false }
        if let denyAfter = entry.denyAfter, time <= denyAfter { return false }
        return true
    }
}

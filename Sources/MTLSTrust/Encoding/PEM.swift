import Foundation

/// One PEM block: `-----BEGIN LABEL-----`, optional RFC 1421 headers, base64 body, `-----END LABEL-----`.
public struct PEMBlock: Sendable, Equatable {
    /// The label, e.g. `CERTIFICATE`, `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`.
    public var label: String
    /// RFC 1421 headers such as `Proc-Type: 4,ENCRYPTED` (traditional encrypted keys).
    public var headers: [(String, String)]
    /// The decoded body.
    public var derBytes: [UInt8]
    /// The block's original text, from BEGIN to END inclusive (for OpenSSL readers that need it).
    public var text: String

    public static func == (lhs: PEMBlock, rhs: PEMBlock) -> Bool {
        lhs.label == rhs.label && lhs.derBytes == rhs.derBytes && lhs.text == rhs.text
            && lhs.headers.map { "\($0.0):\($0.1)" } == rhs.headers.map { "\($0.0):\($0.1)" }
    }

    /// True for the traditional `Proc-Type: 4,ENCRYPTED` form.
    public var isTraditionallyEncrypted: Bool {
        headers.contains { $0.0.lowercased() == "proc-type" && $0.1.uppercased().contains("ENCRYPTED") }
    }
}

/// PEM parsing and writing, byte-compatible with OpenSSL's output (64-column base64, LF endings).
public enum PEM {
    /// True when `bytes` contains a PEM BEGIN marker.
    public static func looksLikePEM(_ bytes: [UInt8]) -> Bool {
        firstBeginLine(in: bytes) != nil
    }

    /// The offset of the start of the first line that holds `-----BEGIN `, found with `memchr` and
    /// `memcmp` so that large binary input (which has no marker) is rejected in one fast pass.
    static func firstBeginLine(in bytes: [UInt8]) -> Int? {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return nil }
        let found: Int? = bytes.withUnsafeBytes { haystack in
            marker.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress, let needleBase = needle.baseAddress else { return nil }
                let last = haystack.count - needle.count
                var offset = 0
                while offset <= last {
                    guard let hit = memchr(base + offset, 0x2D, last - offset + 1) else { return nil }
                    let position = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(hit, needleBase, needle.count) == 0 { return position }
                    offset = position + 1
                }
                return nil
            }
        }
        guard var start = found else { return nil }
        while start > 0, bytes[start - 1] != 0x0A { start -= 1 }
        return start
    }

    /// Parses every PEM block in `bytes`; text between blocks is ignored.
    ///
    /// - Throws: ``MTLSTrustError`` `.malformedInput` naming the block whose base64 is damaged or
    ///   whose END line is missing.
    public static func parse(_ bytes: [UInt8]) throws(MTLSTrustError) -> [PEMBlock] {
        // Text before the first BEGIN line can hold no block: skip it without decoding it.
        guard let start = firstBeginLine(in: bytes) else { return [] }
        let bytes = start == 0 ? bytes : Array(bytes[start...])
        guard let text = String(bytes: bytes, encoding: .utf8) ?? String(bytes: bytes, encoding: .isoLatin1) else {
            throw MTLSTrustError(.malformedInput, "the PEM text is not valid UTF-8")
        }
        var blocks: [PEMBlock] = []
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })[...]
        var blockIndex = 0
        while let line = lines.popFirst() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("-----BEGIN "), trimmed.hasSuffix("-----"), trimmed.count > 16 else { continue }
            blockIndex += 1
            let label = String(trimmed.dropFirst(11).dropLast(5))
            let endLine = "-----END \(label)-----"
            var headers: [(String, String)] = []
            var body = ""
            var original = [trimmed]
            var ended = false
            var inHeaders = true
            while let next = lines.popFirst() {
                let t = next.trimmingCharacters(in: .whitespaces)
                original.append(t)
                if t == endLine {
                    ended = true
                    break
                }
                if t.hasPrefix("-----BEGIN ") {
                    throw MTLSTrustError(.malformedInput, "PEM block \(blockIndex) (\(label)) has no END line before the next BEGIN")
                }
                if inHeaders, let colon = t.firstIndex(of: ":"), !t.isEmpty {
                    headers.append((String(t[..<colon]), t[t.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                    continue
                }
                if t.isEmpty {
                    inHeaders = false
                    continue
                }
                inHeaders = false
                body += t.filter { !$0.isWhitespace }
            }
            guard ended else {
                throw MTLSTrustError(.malformedInput, "PEM block \(blockIndex) (\(label)) is cut short: its END line is missing")
            }
            guard let data = Data(base64Encoded: body), !body.isEmpty else {
                throw MTLSTrustError(.malformedInput, "PEM block \(blockIndex) (\(label)) has damaged base64 text")
            }
            blocks.append(PEMBlock(label: label, headers: headers, derBytes: [UInt8](data), text: original.joined(separator: "\n") + "\n"))
        }
        return blocks
    }

    /// Encodes DER bytes as a PEM block exactly as OpenSSL writes it.
    public static func encode(_ der: [UInt8], label: String) -> String {
        let base64 = Data(der).base64EncodedString()
        var out = "-----BEGIN \(label)-----\n"
        out.reserveCapacity(base64.count + base64.count / 64 + 64)
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            out += base64[index..<end]
            out += "\n"
            index = end
        }
        out += "-----END \(label)-----\n"
        return out
    }
}

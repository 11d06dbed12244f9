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

    /// Where a PEM block stands in its input, found without decoding it or copying its text.
    package struct BlockLocation {
        /// The label, e.g. `PRIVATE KEY`.
        package var label: String
        /// From the BEGIN marker to the end of the END line (its line break included).
        package var range: Range<Int>
        /// True when a `Proc-Type:` header says `ENCRYPTED` (traditional encrypted keys).
        package var isTraditionallyEncrypted: Bool
    }

    /// The complete blocks of `bytes` (a BEGIN line, then its END line), in order, found by comparing
    /// bytes: no `String` is made of anything but the labels, so a private key's text is not copied
    /// into memory that cannot be wiped. Blocks without their END line are left out; ``parse(_:)``
    /// reports those.
    package static func blockLocations(in bytes: [UInt8]) -> [BlockLocation] {
        guard let first = firstBeginLine(in: bytes) else { return [] }
        return bytes.withUnsafeBufferPointer { raw -> [BlockLocation] in
            // Lines as [start, end) without the line break and the spaces and CRs around them.
            func trimmed(_ start: Int, _ end: Int) -> Range<Int> {
                var lower = start
                var upper = end
                while lower < upper, raw[lower] == 0x20 || raw[lower] == 0x09 { lower += 1 }
                while upper > lower, raw[upper - 1] == 0x20 || raw[upper - 1] == 0x09 || raw[upper - 1] == 0x0D { upper -= 1 }
                return lower..<upper
            }
            func hasPrefix(_ line: Range<Int>, _ prefix: [UInt8]) -> Bool {
                line.count >= prefix.count && prefix.indices.allSatisfy { raw[line.lowerBound + $0] == prefix[$0] }
            }
            func equals(_ line: Range<Int>, _ text: [UInt8]) -> Bool { line.count == text.count && hasPrefix(line, text) }
            let begin = Array("-----BEGIN ".utf8)
            let dashes = Array("-----".utf8)
            let procType = Array("proc-type:".utf8)
            var lines: [(content: Range<Int>, end: Int)] = []  // `end`: after the line break
            var start = first
            while start < raw.count {
                let newline = raw[start...].firstIndex(of: 0x0A)
                let end = newline ?? raw.count
                lines.append((trimmed(start, end), newline.map { $0 + 1 } ?? raw.count))
                start = end + 1
            }
            var found: [BlockLocation] = []
            var index = 0
            while index < lines.count {
                let line = lines[index].content
                index += 1
                guard hasPrefix(line, begin), line.count > 16, raw[(line.upperBound - 5)..<line.upperBound].elementsEqual(dashes) else { continue }
                let labelBytes = raw[(line.lowerBound + begin.count)..<(line.upperBound - dashes.count)]
                let label = String(decoding: labelBytes, as: UTF8.self)
                let endLine = Array("-----END ".utf8) + Array(labelBytes) + dashes
                var encrypted = false
                var cursor = index
                while cursor < lines.count {
                    let candidate = lines[cursor].content
                    if equals(candidate, endLine) {
                        found.append(BlockLocation(label: label, range: lines[index - 1].content.lowerBound..<lines[cursor].end, isTraditionallyEncrypted: encrypted))
                        break
                    }
                    if hasPrefix(candidate, begin) { break }
                    // Header lines: compare "Proc-Type:" without case, then look for ENCRYPTED.
                    if candidate.count > procType.count,
                        procType.indices.allSatisfy({ raw[candidate.lowerBound + $0] | 0x20 == procType[$0] | 0x20 }),
                        String(decoding: raw[candidate], as: UTF8.self).uppercased().contains("ENCRYPTED")
                    {
                        encrypted = true
                    }
                    cursor += 1
                }
                index = cursor
            }
            return found
        }
    }

    /// A block of ``parseKeepingKeysInPlace(_:)``: parsed, or a private key left where it stands.
    package enum Element {
        case parsed(PEMBlock)
        case privateKey(BlockLocation)
    }

    /// Every block like ``parse(_:)``, except that private key blocks are not decoded or copied:
    /// they are returned as their place in `bytes`, for the caller to hand to ``PrivateKey`` and wipe.
    /// When some BEGIN line has no block (a damaged file), this is ``parse(_:)``, which says what is wrong.
    package static func parseKeepingKeysInPlace(_ bytes: [UInt8]) throws(MTLSTrustError) -> [Element] {
        // Files without a key (most: certificate bundles) go to the parser after one memchr pass.
        guard occurrences(of: "PRIVATE KEY-----", in: bytes) > 0 else { return try parse(bytes).map { .parsed($0) } }
        let located = blockLocations(in: bytes)
        guard located.contains(where: { $0.label.hasSuffix("PRIVATE KEY") }), located.count == occurrences(of: "-----BEGIN ", in: bytes) else {
            return try parse(bytes).map { .parsed($0) }
        }
        var elements: [Element] = []
        for location in located {
            if location.label.hasSuffix("PRIVATE KEY") {
                elements.append(.privateKey(location))
            } else if let block = try? parse(Array(bytes[location.range])).first {
                elements.append(.parsed(block))
            } else {
                return try parse(bytes).map { .parsed($0) }  // its error names the block by number
            }
        }
        return elements
    }

    /// How many times `marker` (which starts with `-`) occurs in `bytes`, without overlaps;
    /// searched in place with `memchr` and `memcmp`, nothing copied.
    static func occurrences(of marker: String, in bytes: [UInt8]) -> Int {
        let marker = Array(marker.utf8)
        guard bytes.count >= marker.count else { return 0 }
        return bytes.withUnsafeBytes { haystack in
            marker.withUnsafeBytes { needle in
                guard let base = haystack.baseAddress, let needleBase = needle.baseAddress else { return 0 }
                let last = haystack.count - needle.count
                var count = 0
                var offset = 0
                while offset <= last {
                    guard let hit = memchr(base + offset, Int32(marker[0]), last - offset + 1) else { break }
                    let position = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(hit, needleBase, needle.count) == 0 {
                        count += 1
                        offset = position + needle.count
                    } else {
                        offset = position + 1
                    }
                }
                return count
            }
        }
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
            let trimmed = line.trimmingWhitespace()
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
                let t = next.trimmingWhitespace()
                original.append(t)
                if t == endLine {
                    ended = true
                    break
                }
                if t.hasPrefix("-----BEGIN ") {
                    throw MTLSTrustError(.malformedInput, "PEM block \(blockIndex) (\(label)) has no END line before the next BEGIN")
                }
                if inHeaders, let colon = t.firstIndex(of: ":"), !t.isEmpty {
                    headers.append((String(t[..<colon]), t[t.index(after: colon)...].trimmingWhitespace()))
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

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

/// The Japanese encodings where iconv and the WHATWG Encoding Standard part ways: Shift_JIS's
/// error handling, EUC-JP and ISO-2022-JP, decoded and encoded as browsers do.
extension TextCharset {
    /// What the WHATWG Shift_JIS decoder (Encoding Standard 13.3.1) makes of a sequence CP932
    /// cannot decode, so that a page reads as in a browser: 0x80 is U+0080; a lead byte and the
    /// byte after it that map to nothing are one U+FFFD, and when that byte is ASCII it is read
    /// again as itself; any other byte is U+FFFD. (iconv would resume one byte on, turning a
    /// bad pair's trail byte into a katakana of its own.) Every pair that maps decodes as the
    /// standard's index has it, which `CharsetWHATWGTests` checks pair by pair.
    static func shiftJISError(_ remaining: UnsafeBufferPointer<UInt8>) -> (output: [UInt8], skip: Int) {
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        let lead = remaining[0]
        if lead == 0x80 { return ([0xC2, 0x80], 1) }
        guard (0x81...0x9F).contains(lead) || (0xE0...0xFC).contains(lead), remaining.count > 1 else { return (replacement, 1) }
        return (replacement, remaining[1] < 0x80 ? 1 : 2)
    }

    /// Text built from JIS X 0208 index pointers, half-width katakana, ASCII, errors and other
    /// characters, for the EUC-JP and ISO-2022-JP decoders. Their two-byte codes index the same
    /// JIS X 0208 table as Shift_JIS, where CP932 decodes every entry as the WHATWG standard does
    /// (`CharsetWHATWGTests`), so each pointer is written as the Shift_JIS pair of the same index
    /// and CP932 decodes the run: iconv's own EUC-JP-MS and ISO-2022-JP would put the IBM
    /// extension rows (0xF9–0xFC, kanji such as 髙 and 﨑 in family names) in the private use
    /// area or refuse them.
    struct JIS0208Text {
        private(set) var text = ""
        private var shiftJIS: [UInt8] = []

        mutating func ascii(_ byte: UInt8) { shiftJIS.append(byte) }
        /// U+FF61–U+FF9F, given as its Shift_JIS byte (0xA1–0xDF).
        mutating func katakana(_ byte: UInt8) { shiftJIS.append(byte) }
        mutating func error() { shiftJIS.append(0xFF) }  // a byte Shift_JIS decodes as one U+FFFD
        mutating func pointer(_ pointer: Int) {
            let row = pointer / 188
            let cell = pointer % 188
            shiftJIS.append(UInt8(row + (row < 0x1F ? 0x81 : 0xC1)))
            shiftJIS.append(UInt8(cell + (cell < 0x3F ? 0x40 : 0x41)))
        }
        mutating func scalar(_ text: String) {
            flush()
            self.text += text
        }

        /// A pair CP932 cannot decode stands for one two-byte code of the source, so the error
        /// takes both rewritten bytes, whatever the second is.
        private static func pairError(_ remaining: UnsafeBufferPointer<UInt8>) -> (output: [UInt8], skip: Int) {
            let isLead = (0x81...0x9F).contains(remaining[0]) || (0xE0...0xFC).contains(remaining[0])
            return ([0xEF, 0xBF, 0xBD], isLead && remaining.count > 1 ? 2 : 1)
        }

        mutating func flush() {
            if !shiftJIS.isEmpty, let decoded = Iconv.convert(shiftJIS, from: "CP932", to: "UTF-8", onInvalid: .resynchronize(Self.pairError)) {
                text += String(decoding: decoded, as: UTF8.self)
            }
            shiftJIS.removeAll(keepingCapacity: true)
        }
    }

    /// The WHATWG EUC-JP decoder (Encoding Standard 13.1.1), over ``JIS0208Text``. JIS X 0212
    /// (0x8F, three bytes) is decoded by glibc's plain EUC-JP, whose table is the standard's
    /// (EUC-JP-MS adds rows the standard does not have). Errors are U+FFFD, the byte after a bad
    /// lead read again when it is ASCII, as the standard says.
    static func decodeEUCJP(_ bytes: [UInt8]) -> String {
        var out = JIS0208Text()
        /// An error at a lead byte: the byte after it is consumed with it unless it is ASCII.
        func error(after index: Int) -> Int {
            out.error()
            return index < bytes.count && bytes[index] >= 0x80 ? index + 1 : index
        }
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let next: UInt8? = index + 1 < bytes.count ? bytes[index + 1] : nil
            switch lead {
            case 0x00...0x7F:
                out.ascii(lead)
                index += 1
            case 0x8E:
                if let next, (0xA1...0xDF).contains(next) {
                    out.katakana(next)
                    index += 2
                } else {
                    index = error(after: index + 1)
                }
            case 0x8F:
                guard let next, (0xA1...0xFE).contains(next) else {
                    index = error(after: index + 1)
                    continue
                }
                guard index + 2 < bytes.count, (0xA1...0xFE).contains(bytes[index + 2]) else {
                    index = error(after: index + 2)
                    continue
                }
                let decoded = Iconv.convert(Array(bytes[index...(index + 2)]), from: "EUC-JP", to: "UTF-8", onInvalid: .fail).map { String(decoding: $0, as: UTF8.self) }
                out.scalar(decoded.flatMap { $0.unicodeScalars.count == 1 ? $0 : nil } ?? "\u{FFFD}")
                index += 3
            case 0xA1...0xFE:
                guard let next, (0xA1...0xFE).contains(next) else {
                    index = error(after: index + 1)
                    continue
                }
                out.pointer((Int(lead) - 0xA1) * 94 + Int(next) - 0xA1)
                index += 2
            default:
                out.error()
                index += 1
            }
        }
        out.flush()
        return out.text
    }

    /// The WHATWG ISO-2022-JP decoder (Encoding Standard 13.2.1), over ``JIS0208Text``: ASCII,
    /// Roman (`ESC ( J`: 0x5C is ¥, 0x7E is ‾), half-width katakana (`ESC ( I`) and JIS X 0208
    /// (`ESC $ @`, `ESC $ B`); an escape sequence followed at once by another is an error, and
    /// so is every byte a state does not take. glibc's ISO-2022-JP refuses `ESC ( I` and the NEC
    /// and IBM rows the standard's index has.
    static func decodeISO2022JP(_ bytes: [UInt8]) -> String {
        enum State { case ascii, roman, katakana, leadByte, trailByte, escapeStart, escape }
        var out = JIS0208Text()
        var state = State.ascii
        var outputState = State.ascii
        var lead: UInt8 = 0
        var outputFlag = false
        var index = 0
        while true {
            let byte: UInt8? = index < bytes.count ? bytes[index] : nil
            index += 1
            switch state {
            case .ascii, .roman, .katakana, .leadByte:
                guard let byte else { return finish(&out) }
                if byte == 0x1B {
                    state = .escapeStart
                    continue
                }
                outputFlag = false
                switch state {
                case .ascii where byte < 0x80 && byte != 0x0E && byte != 0x0F: out.ascii(byte)
                case .roman where byte == 0x5C: out.scalar("\u{00A5}")
                case .roman where byte == 0x7E: out.scalar("\u{203E}")
                case .roman where byte < 0x80 && byte != 0x0E && byte != 0x0F: out.ascii(byte)
                case .katakana where (0x21...0x5F).contains(byte): out.katakana(byte + 0x80)
                case .leadByte where (0x21...0x7E).contains(byte):
                    lead = byte
                    state = .trailByte
                default: out.error()
                }
            case .trailByte:
                guard let byte else {
                    out.error()
                    return finish(&out)
                }
                if byte == 0x1B {
                    state = .escapeStart
                    out.error()
                    continue
                }
                state = .leadByte
                if (0x21...0x7E).contains(byte) {
                    out.pointer((Int(lead) - 0x21) * 94 + Int(byte) - 0x21)
                } else {
                    out.error()
                }
            case .escapeStart:
                if byte == 0x24 || byte == 0x28 {
                    lead = byte!
                    state = .escape
                    continue
                }
                index -= 1  // read again in the state before the escape
                outputFlag = false
                state = outputState
                out.error()
            case .escape:
                let escapeLead = lead
                lead = 0
                var next: State? = nil
                switch (escapeLead, byte) {
                case (0x28, 0x42): next = .ascii
                case (0x28, 0x4A): next = .roman
                case (0x28, 0x49): next = .katakana
                case (0x24, 0x40), (0x24, 0x42): next = .leadByte
                default: break
                }
                if let next {
                    state = next
                    outputState = next
                    if outputFlag { out.error() }
                    outputFlag = true
                    continue
                }
                index -= 2  // the escape's lead and this byte are read again
                outputFlag = false
                state = outputState
                out.error()
            }
        }

        func finish(_ out: inout JIS0208Text) -> String {
            out.flush()
            return out.text
        }
    }

    /// The WHATWG EUC-JP encoder (13.1.2) for one code point; nil when it has no EUC-JP form. The
    /// standard takes a character's first place in the JIS X 0208 index. CP932 gives its first
    /// place outside the NEC-selected IBM rows (pointers 8272–8835), as the Shift_JIS encoder
    /// does; the rows themselves come from ``necSelectedRows``. (iconv's EUC-JP-MS wrote the IBM
    /// extension kanji as JIS X 0212 and the private use area as user-defined rows.)
    static func encodeEUCJP(_ scalar: Unicode.Scalar) -> [UInt8]? {
        switch scalar.value {
        case 0x00...0x7F: return [UInt8(scalar.value)]
        case 0xA5: return [0x5C]
        case 0x203E: return [0x7E]
        case 0xFF61...0xFF9F: return [0x8E, UInt8(scalar.value - 0xFF61 + 0xA1)]
        default: break
        }
        guard let pointer = jis0208Pointer(scalar.value == 0x2212 ? Unicode.Scalar(0xFF0D)! : scalar) else { return nil }
        return [UInt8(pointer / 94 + 0xA1), UInt8(pointer % 94 + 0xA1)]
    }

    /// A code point's first pointer in the JIS X 0208 index ("index pointer"), for the EUC-JP
    /// and ISO-2022-JP encoders; nil when it has none below 94 × 94.
    static func jis0208Pointer(_ code: Unicode.Scalar) -> Int? {
        var pointer: Int? = nil
        if let bytes = Iconv.convert(Array(String(code).utf8), from: "UTF-8", to: "CP932", onInvalid: .fail), bytes.count == 2 {
            let lead = Int(bytes[0])
            let trail = Int(bytes[1])
            pointer = (lead - (lead < 0xA0 ? 0x81 : 0xC1)) * 188 + trail - (trail < 0x7F ? 0x40 : 0x41)
        }
        if let nec = necSelectedRows[code.value], pointer.map({ nec < $0 }) ?? true { pointer = nec }
        guard let pointer, pointer < 94 * 94 else { return nil }
        return pointer
    }

    /// The WHATWG ISO-2022-JP encoder (13.2.2), in the HTML error mode of form submission: ASCII,
    /// then `ESC ( J` for ¥ and ‾, `ESC $ B` for JIS X 0208 (half-width katakana written as
    /// full-width, − as －), `ESC ( B` back to ASCII before a character it cannot write (as
    /// `&#N;`) and at the end; SO, SI and ESC themselves are errors (`&#65533;`). glibc's
    /// converter refused the half-width katakana and the NEC and IBM rows.
    static func encodeISO2022JP(_ text: String) -> [UInt8] {
        enum State { case ascii, roman, jis0208 }
        var state = State.ascii
        var out: [UInt8] = []
        func switchTo(_ next: State) {
            state = next
            switch next {
            case .ascii: out += [0x1B, 0x28, 0x42]
            case .roman: out += [0x1B, 0x28, 0x4A]
            case .jis0208: out += [0x1B, 0x24, 0x42]
            }
        }
        for scalar in text.unicodeScalars {
            var code = scalar.value
            if state != .jis0208 && (code == 0x0E || code == 0x0F || code == 0x1B) {
                out += Array("&#65533;".utf8)
                continue
            }
            if code < 0x80 && (state == .ascii || (state == .roman && code != 0x5C && code != 0x7E)) {
                out.append(UInt8(code))
                continue
            }
            if state == .roman && (code == 0xA5 || code == 0x203E) {
                out.append(code == 0xA5 ? 0x5C : 0x7E)
                continue
            }
            if code < 0x80 {
                switchTo(.ascii)
                out += code == 0x0E || code == 0x0F || code == 0x1B ? Array("&#65533;".utf8) : [UInt8(code)]
                continue
            }
            if code == 0xA5 || code == 0x203E {
                switchTo(.roman)
                out.append(code == 0xA5 ? 0x5C : 0x7E)
                continue
            }
            if code == 0x2212 { code = 0xFF0D }
            if (0xFF61...0xFF9F).contains(code) { code = halfWidthKatakanaAsFullWidth[Int(code - 0xFF61)].value }
            guard let pointer = jis0208Pointer(Unicode.Scalar(code)!) else {
                if state == .jis0208 { switchTo(.ascii) }
                out += Array("&#\(scalar.value);".utf8)
                continue
            }
            if state != .jis0208 { switchTo(.jis0208) }
            out += [UInt8(pointer / 94 + 0x21), UInt8(pointer % 94 + 0x21)]
        }
        if state != .ascii { switchTo(.ascii) }
        return out
    }

    /// The index ISO-2022-JP katakana: U+FF61–U+FF9F as the full-width forms JIS X 0208 has.
    private static let halfWidthKatakanaAsFullWidth = Array("。「」、・ヲァィゥェォャュョッーアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン゛゜".unicodeScalars)

    /// The characters of the index's NEC-selected IBM extension rows (pointers 8272–8835), each
    /// at its first pointer there, read once from CP932 (whose table is the index's).
    static let necSelectedRows: [UInt32: Int] = {
        var rows: [UInt32: Int] = [:]
        for pointer in 8272...8835 {
            let row = pointer / 188
            let cell = pointer % 188
            let pair = [UInt8(row + (row < 0x1F ? 0x81 : 0xC1)), UInt8(cell + (cell < 0x3F ? 0x40 : 0x41))]
            guard let decoded = Iconv.convert(pair, from: "CP932", to: "UTF-8", onInvalid: .fail),
                let scalar = String(decoding: decoded, as: UTF8.self).unicodeScalars.first, rows[scalar.value] == nil
            else { continue }
            rows[scalar.value] = pointer
        }
        return rows
    }()
}

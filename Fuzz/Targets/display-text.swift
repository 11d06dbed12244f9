// `DisplayText` and every way text a peer chose reaches a person or a file: the console's lines
// (with and without colour), JSON, generated string literals and comments.
import Foundation
@testable import MTLSCommandLine
import MTLSTrust

/// The characters left after the console: the layout's newlines and tabs.
private func unsafeScalars(_ text: String) -> [UInt32] {
    text.unicodeScalars.filter { DisplayText.isUnsafe($0) && $0 != "\n" && $0 != "\t" }.map(\.value)
}

/// Reads a Swift string literal's body back (the escapes `quoted` writes).
private func unquote(_ literal: String) -> String? {
    var scalars = Array(literal.unicodeScalars)
    guard scalars.count >= 2, scalars.first == "\"", scalars.last == "\"" else { return nil }
    scalars = Array(scalars[1..<(scalars.count - 1)])
    var out = String.UnicodeScalarView()
    var index = 0
    while index < scalars.count {
        let scalar = scalars[index]
        index += 1
        guard scalar == "\\" else {
            out.append(scalar)
            continue
        }
        guard index < scalars.count else { return nil }
        let kind = scalars[index]
        index += 1
        switch kind {
        case "\\", "\"": out.append(kind)
        case "n": out.append("\n")
        case "r": out.append("\r")
        case "t": out.append("\t")
        case "0": out.append("\0")
        case "u":
            guard index < scalars.count, scalars[index] == "{", let close = scalars[index...].firstIndex(of: "}") else { return nil }
            let hex = String(String.UnicodeScalarView(scalars[(index + 1)..<close]))
            guard let value = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(value) else { return nil }
            out.append(decoded)
            index = close + 1
        default: return nil
        }
    }
    return String(out)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let text = FuzzedData.text(input.rest())

        let escaped = DisplayText.escaped(text)
        check(unsafeScalars(escaped).isEmpty && !escaped.contains("\n") && !escaped.contains("\t"), "escaped lets through \(unsafeScalars(escaped))")
        if !text.unicodeScalars.contains(where: DisplayText.isUnsafe) { check(escaped == text, "escaped changed safe text") }
        let quoted = DisplayText.quoted(text)
        check(unsafeScalars(quoted).isEmpty, "quoted lets through \(unsafeScalars(quoted))")
        check(unquote(quoted) == text, "quoted does not read back: \(quoted.debugDescription)")

        // The console: without colour no ESC at all; with colour only the two sequences of this
        // console's own paint, whatever colour sequences or marks the text holds.
        for terminal in [false, true] {
            let console = Console(stdout: { _ in }, stderr: { _ in }, stdoutIsTerminal: terminal)
            let shown = console.shown(console.paint("ok", .green) + text)
            let pieces = shown.components(separatedBy: "\u{1B}")
            check(pieces.count == (terminal ? 3 : 1), "\(pieces.count - 1) ESC where paint wrote \(terminal ? 2 : 0)")
            for piece in pieces.dropFirst() {
                // By scalars: a combining mark that follows a sequence joins its `m` in one Character.
                let allowed = ["[0m", "[1m", "[2m", "[31m", "[32m", "[33m"]
                check(allowed.contains { piece.unicodeScalars.starts(with: $0.unicodeScalars) }, "an ESC that paint did not write: \(piece.prefix(8).debugDescription)")
            }
            check(unsafeScalars(shown.replacingOccurrences(of: "\u{1B}", with: "")).isEmpty, "the console lets through \(unsafeScalars(shown))")
        }

        // JSON: inert on a terminal, exact for a parser.
        let json = JSON.array([.string(text)]).serialized()
        check(unsafeScalars(json).isEmpty && !json.contains("\n"), "JSON lets through \(unsafeScalars(json))")
        let parsed = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String]
        check(parsed == [text], "JSON does not read back")

        // Generated sources: no unsafe character, one line, no comment terminator.
        for syntax in [PinWriter.LiteralSyntax.swift, .javaKotlin, .objectiveC] {
            let literal = PinWriter.quoted(text, syntax)
            check(unsafeScalars(literal).isEmpty && !literal.contains("\n"), "\(syntax) literal lets through \(unsafeScalars(literal))")
        }
        check(unquote(PinWriter.quoted(text, .swift)) == text, "the Swift literal does not read back")
        let comment = PinWriter.commentSafe(text)
        check(unsafeScalars(comment).isEmpty && !comment.contains("\n") && !comment.contains("*/"), "comment: \(comment.debugDescription)")
        let xml = XMLText.escape(text)
        check(unsafeScalars(xml).isEmpty && !xml.contains("<") && !xml.contains("\n"), "XML: \(xml.debugDescription)")
    }
}

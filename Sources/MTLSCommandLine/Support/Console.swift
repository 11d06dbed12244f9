#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where a command writes: injected so that tests run commands in-process.
public final class Console: @unchecked Sendable {
    // @unchecked Sendable: the injected sinks are not @Sendable closures; every call to them is made
    // under `lock`. `readStandardInput(Secret)` is called only by the thread running the command.
    private let lock = Locked(())
    private let stdoutSink: (String) -> Void
    private let stderrSink: (String) -> Void
    /// True when standard output is a terminal (colour and progress only then).
    public let stdoutIsTerminal: Bool
    /// True when standard input is a terminal (password prompts only then).
    public let stdinIsTerminal: Bool
    /// The environment (for `env:` secrets and `NO_COLOR`).
    public let environment: Environment
    /// Reads standard input to its end (for `stdin` secrets and `-`).
    public let readStandardInput: () -> [UInt8]
    /// Non-nil for the process's own standard input: `stdin` secrets are then read from descriptor
    /// 0 by `SecretSpec`'s one reader (bounded, wiped); nil for consoles with injected input
    /// (their bytes come from ``readStandardInput``).
    let readStandardInputSecret: (() -> Secret?)?
    /// Writes raw bytes to standard output (DER); nil sends them to the text sink as ISO 8859-1,
    /// which maps every byte to one character and back.
    private let stdoutBytesSink: (([UInt8]) -> Void)?
    /// What ``paint(_:_:)`` writes in place of ESC when colour is on; nil when it is off. Random
    /// for each console, so that no text from a peer or a file can carry it: only this console's
    /// own colours become escape sequences (``shown(_:)``), and a peer's `ESC [ 32 m` is escaped
    /// like any other control rather than painting a forged "trusted" green.
    private let styleMark: String?
    /// False for a console ``init(within:stdout:stderr:environment:)``, whose lines its parent shows.
    private let showsLines: Bool

    /// A console over the process's standard streams.
    ///
    /// Writes go straight to descriptors 1 and 2 and the environment is read from `environ`:
    /// Foundation's `FileHandle` and `ProcessInfo.environment` initialise CoreFoundation, a third
    /// of the start-up time of a short command such as `mtls --version`.
    public static func standard() -> Console {
        Console(
            stdout: { text in writeAll(1, Array(text.utf8)) },
            stderr: { text in writeAll(2, Array(text.utf8)) },
            stdoutIsTerminal: isatty(1) == 1, stdinIsTerminal: isatty(0) == 1,
            environment: .process,
            readStandardInput: { readAll(0) },
            // Not FileHandle: its Data grows by copying, leaving unwiped copies behind.
            readStandardInputSecret: { Secret.readFirstLine(from: 0) },
            stdoutBytes: { bytes in writeAll(1, bytes) })
    }

    /// Writes every byte to `fd`, retrying after signals and short writes; stops on an error (a
    /// closed pipe: the reader has gone).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// Reads `fd` to its end, retrying after signals; stops at an error as at the end, and after
    /// one byte more than ``CertificateLoader/maximumInputSize`` (the reader refuses that much:
    /// `cat /dev/zero | mtls inspect -` stops at 64 MiB instead of growing without end).
    static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= CertificateLoader.maximumInputSize {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count > 0 {
                bytes += chunk[0..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return bytes
            }
        }
        return bytes
    }

    /// A console with custom sinks.
    public convenience init(
        stdout: @escaping (String) -> Void, stderr: @escaping (String) -> Void, stdoutIsTerminal: Bool = false,
        stdinIsTerminal: Bool = false, environment: [String: String] = [:], readStandardInput: @escaping () -> [UInt8] = { [] },
        stdoutBytes: (([UInt8]) -> Void)? = nil
    ) {
        self.init(
            stdout: stdout, stderr: stderr, stdoutIsTerminal: stdoutIsTerminal, stdinIsTerminal: stdinIsTerminal, environment: Environment(environment),
            readStandardInput: readStandardInput, readStandardInputSecret: nil, stdoutBytes: stdoutBytes)
    }

    /// A console with custom sinks over an ``Environment`` (such as the process's, with overrides).
    public convenience init(
        stdout: @escaping (String) -> Void, stderr: @escaping (String) -> Void, stdoutIsTerminal: Bool = false, environment: Environment
    ) {
        self.init(
            stdout: stdout, stderr: stderr, stdoutIsTerminal: stdoutIsTerminal, stdinIsTerminal: false, environment: environment, readStandardInput: { [] },
            readStandardInputSecret: nil, stdoutBytes: nil)
    }

    /// A console for a command run inside another (the demo's tour), whose lines the caller shows
    /// later through `parent`'s ``out(_:)``: they reach `stdout` and `stderr` as built, with
    /// `parent`'s colour marks, and are made safe once, by `parent`.
    convenience init(within parent: Console, stdout: @escaping (String) -> Void, stderr: @escaping (String) -> Void, environment: Environment) {
        self.init(
            stdout: stdout, stderr: stderr, stdoutIsTerminal: parent.stdoutIsTerminal, stdinIsTerminal: false, environment: environment,
            readStandardInput: { [] }, readStandardInputSecret: nil, stdoutBytes: nil, within: parent)
    }

    private init(
        stdout: @escaping (String) -> Void, stderr: @escaping (String) -> Void, stdoutIsTerminal: Bool, stdinIsTerminal: Bool, environment: Environment,
        readStandardInput: @escaping () -> [UInt8], readStandardInputSecret: (() -> Secret?)?, stdoutBytes: (([UInt8]) -> Void)?, within parent: Console? = nil
    ) {
        self.readStandardInputSecret = readStandardInputSecret
        self.stdoutBytesSink = stdoutBytes
        self.stdoutSink = stdout
        self.stderrSink = stderr
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stdinIsTerminal = stdinIsTerminal
        self.environment = environment
        self.readStandardInput = readStandardInput
        if let parent {
            self.styleMark = parent.styleMark
            self.showsLines = false
        } else {
            self.styleMark = Console.usesColor(stdoutIsTerminal: stdoutIsTerminal, environment: environment) ? Console.makeStyleMark() : nil
            self.showsLines = true
        }
    }

    /// The first scalar of every style mark, U+FDD0 (a noncharacter: Swift has no literal for it).
    static let markStart = Unicode.Scalar(0xFDD0 as UInt32)!

    /// U+FDD0 and eleven noncharacters of U+FDD1…U+FDEF chosen at random (54 bits). Noncharacters
    /// are never printed as they are (``DisplayText/isUnsafe(_:)``), so a mark that ``shown(_:)``
    /// does not recognise whole is escaped, not shown.
    static func makeStyleMark() -> String {
        var generator = SystemRandomNumberGenerator()
        var mark = String.UnicodeScalarView()
        mark.append(markStart)
        for _ in 0..<11 { mark.append(Unicode.Scalar(UInt32.random(in: 0xFDD1...0xFDEF, using: &generator))!) }
        return String(mark)
    }

    /// Writes a line for people to standard output, made safe to show (``shown(_:)``).
    public func out(_ text: String = "") {
        let line = (showsLines ? shown(text) : text) + "\n"
        lock.withLock { _ in
            stdoutSink(line)
        }
    }

    /// Writes a document exactly as given (PEM, a pin file, a completion script: made safe by
    /// its format) to standard output.
    public func write(_ text: String) {
        lock.withLock { _ in
            stdoutSink(text)
        }
    }

    /// Writes raw bytes (binary output such as DER) to standard output.
    public func writeBytes(_ bytes: [UInt8]) {
        lock.withLock { _ in
            if let stdoutBytesSink {
                stdoutBytesSink(bytes)
            } else {
                stdoutSink(String(bytes.map { Character(Unicode.Scalar($0)) }))
            }
        }
    }

    /// Writes a line for people to standard error, made safe to show (``shown(_:)``).
    public func err(_ text: String) {
        let line = (showsLines ? shown(text) : text) + "\n"
        lock.withLock { _ in
            stderrSink(line)
        }
    }

    /// `text` as it may reach a terminal. Lines for people carry names, headers and titles that a
    /// peer or a file chose, and a terminal acts on control characters in them; escaping here, where
    /// every line passes, covers every message, whoever built it. Kept: newlines and tabs (the
    /// layout of the output itself). Colours are this console's own only: ``paint(_:_:)`` marks
    /// them with ``styleMark``, which becomes `ESC [ <style> m` here; every other ESC, and any
    /// colour sequence a peer wrote, is escaped (`\u{1B}`) with everything else
    /// ``DisplayText/isUnsafe(_:)`` names.
    func shown(_ text: String) -> String {
        let layout: (Unicode.Scalar) -> Bool = { $0 == "\n" || $0 == "\t" }
        guard let styleMark, text.unicodeScalars.contains(Console.markStart) else { return DisplayText.escaped(text, keeping: layout, quoting: false) }
        let scalars = text.unicodeScalars
        var out = ""
        var pieceStart = scalars.startIndex
        var index = scalars.startIndex
        while index < scalars.endIndex {
            if scalars[index] == Console.markStart, let (style, end) = Console.style(scalars, at: index, mark: styleMark) {
                out += DisplayText.escaped(String(scalars[pieceStart..<index]), keeping: layout, quoting: false)
                out += "\u{1B}[\(style)m"
                index = end
                pieceStart = end
            } else {
                index = scalars.index(after: index)
            }
        }
        return out + DisplayText.escaped(String(scalars[pieceStart...]), keeping: layout, quoting: false)
    }

    /// The style code of the marked colour `paint` wrote at `start` (`mark <style or 0> m`) and
    /// where it ends, or nil when the text there is not one.
    static func style(
        _ scalars: String.UnicodeScalarView, at start: String.UnicodeScalarView.Index, mark: String
    ) -> (code: String, end: String.UnicodeScalarView.Index)? {
        var index = start
        for expected in mark.unicodeScalars {
            guard index < scalars.endIndex, scalars[index] == expected else { return nil }
            index = scalars.index(after: index)
        }
        var code = ""
        while index < scalars.endIndex, code.utf8.count < 2, ("0"..."9").contains(scalars[index]) {
            code.unicodeScalars.append(scalars[index])
            index = scalars.index(after: index)
        }
        guard index < scalars.endIndex, scalars[index] == "m", code == "0" || Style(rawValue: code) != nil else { return nil }
        return (code, scalars.index(after: index))
    }

    /// True when colour may be used on standard output.
    public var usesColor: Bool { styleMark != nil }

    static func usesColor(stdoutIsTerminal: Bool, environment: Environment) -> Bool {
        stdoutIsTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }

    /// Paints `text` when colour is on. The colour becomes an escape sequence only in a line
    /// written by ``out(_:)`` or ``err(_:)`` of this console.
    func paint(_ text: String, _ style: Style) -> String {
        guard let styleMark else { return text }
        return "\(styleMark)\(style.rawValue)m\(text)\(styleMark)0m"
    }

    enum Style: String {
        case green = "32"
        case red = "31"
        case yellow = "33"
        case bold = "1"
        case dim = "2"
    }
}

/// A failure that ends a command with an exit code of the contract.
struct CommandFailure: Error {
    /// The exit code: 1 no, 2 usage, 3 bad input, 4 network/TLS.
    var exitCode: Int32
    /// One sentence.
    var message: String
    /// A short hint, printed after the message.
    var hint: String?

    init(_ exitCode: Int32, _ message: String, hint: String? = nil) {
        self.exitCode = exitCode
        self.message = message
        self.hint = hint
    }

    static func usage(_ message: String, command: String) -> CommandFailure {
        CommandFailure(ExitCode.usage, message, hint: "See 'mtls \(command) --help' for more information.")
    }
}

/// The exit codes of the CLI contract.
enum ExitCode {
    static let success: Int32 = 0
    static let no: Int32 = 1
    static let usage: Int32 = 2
    static let badInput: Int32 = 3
    static let network: Int32 = 4
}

extension CommandFailure {
    /// Maps a library error to the contract's exit code (3, bad input) and its sentence.
    init(_ error: MTLSTrustError) {
        self.init(ExitCode.badInput, error.message, hint: error.hint?.commandLine)
    }
}

/// Environment variables, looked up by name when asked.
///
/// The process's variables are read with `getenv` one at a time rather than copied into a
/// dictionary of `String`s at start: a secret passed as `env:VAR` is then copied only into a
/// ``Secret``, which is wiped after use.
public struct Environment: Sendable {
    private let values: [String: String]
    private let readsProcess: Bool

    /// The process's environment.
    public static let process = Environment(values: [:], readsProcess: true)

    /// Exactly these variables (tests, embedding).
    public init(_ values: [String: String]) {
        self.init(values: values, readsProcess: false)
    }

    private init(values: [String: String], readsProcess: Bool) {
        self.values = values
        self.readsProcess = readsProcess
    }

    /// The value of `name` (not for secrets: use ``secret(_:)``).
    public subscript(name: String) -> String? {
        if let value = values[name] { return value }
        guard readsProcess, let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// The value of `name` as a ``Secret``, copied straight from the environment block.
    public func secret(_ name: String) -> Secret? {
        if let value = values[name] { return Secret(value) }
        guard readsProcess, let value = getenv(name) else { return nil }
        return Secret(bytes: UnsafeRawBufferPointer(start: value, count: strlen(value)))
    }

    /// This environment with `overrides` set on top.
    public func merging(_ overrides: [String: String]) -> Environment {
        Environment(values: values.merging(overrides) { $1 }, readsProcess: readsProcess)
    }
}

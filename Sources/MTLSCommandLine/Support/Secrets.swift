#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

#if canImport(Glibc)
    import Glibc
#endif

/// OpenSSL-style secret specifications: `pass:TEXT`, `env:VAR`, `file:PATH` (first line), `fd:N`,
/// `stdin`; with none given and a terminal on stdin, a prompt without echo.
///
/// The one reader of every password source. A source that cannot be read — a descriptor that is
/// not open, input that ends at once (an empty file or pipe), an unset or malformed variable, a
/// file that cannot be opened, a terminal given as fd:/file:, a pipe or FIFO that stays silent for
/// ``silentTimeout`` seconds — is an error that names the source (never what it holds) with exit
/// 3: a CI job whose secret is missing must not protect a key with the empty password. The empty
/// password is taken only when written out: `pass:`, an empty line, a variable set to nothing.
enum SecretSpec {
    /// How long a pipe, FIFO or socket given as a secret source may stay silent.
    static let silentTimeout: Double = 10

    /// Resolves a spec to the secret.
    ///
    /// The secret goes from where it was read straight into a ``Secret`` (wiped when released); the
    /// buffers it was read into are wiped here. `pass:TEXT` is the exception the warning names: the
    /// text is in the process's arguments, which cannot be wiped.
    ///
    /// - Parameters:
    ///   - spec: The option's value, or nil when the option was not given.
    ///   - option: The option's name, for messages (`--password`).
    ///   - prompt: The prompt when asking on the terminal; nil means do not ask.
    ///   - console: For the environment, stdin and warnings.
    /// - Returns: The secret, or nil when no spec was given and no prompt is possible.
    static func resolve(_ spec: String?, option: String, prompt: String?, console: Console) throws(CommandFailure) -> Secret? {
        guard let spec else {
            guard let prompt, console.stdinIsTerminal else { return nil }
            return askWithoutEcho(prompt)
        }
        let emptyHint = "for an empty password, say so: \(option) pass: (nothing after the colon)"
        func unreadable(_ source: String, _ why: String, hint: String? = nil) -> CommandFailure {
            CommandFailure(ExitCode.badInput, "\(option) \(source): \(why); no password was used", hint: hint ?? emptyHint)
        }
        if spec.hasPrefix("pass:") {
            if console.environment["MTLS_QUIET_PASS_WARNING"] == nil {
                console.err("warning: \(option) pass:… puts the secret on the command line, where `ps` and shell history show it; prefer env:, file: or fd:")
            }
            return Secret(bytes: spec.utf8.dropFirst(5))
        }
        if spec.hasPrefix("env:") {
            let name = String(spec.dropFirst(4))
            // A name that is not a variable name is not repeated: it may be the secret itself.
            let isNameByte = { (byte: UInt8) in byte == 0x5F || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
            guard let first = name.utf8.first, !(0x30...0x39).contains(first), name.utf8.allSatisfy(isNameByte)
            else {
                throw unreadable(
                    "env:…", "what follows env: is not an environment variable name (not shown, as it may be the secret itself)", hint: "use env:NAME with the variable's name")
            }
            guard let value = console.environment.secret(name) else {
                throw unreadable("env:\(name)", "the environment variable \(name) is not set", hint: "export it, or use another secret form (file:, fd:, stdin)")
            }
            // Set but empty is a value someone set (as openssl takes it): the empty password, with a
            // note, since a CI secret that is missing can look like this too.
            if value.isEmpty { console.err("note: \(option) env:\(name): the variable is set but empty, so the password is empty") }
            return value
        }
        if spec.hasPrefix("file:") {
            let path = String(spec.dropFirst(5))
            guard !path.isEmpty else { throw unreadable("file:", "no path after file:", hint: "use file:PATH") }
            // Non-blocking: opening a FIFO would wait for a writer; reading then waits at most
            // `silentTimeout`. No controlling terminal is taken from a tty path.
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
            guard fd >= 0 else {
                throw unreadable("file:\(path)", "the file cannot be read: \(String(cString: strerror(errno)))", hint: "give a readable file whose first line is the secret")
            }
            defer { close(fd) }
            return try firstLine(of: fd, source: "file:\(path)", unreadable: unreadable)
        }
        if spec.hasPrefix("fd:") {
            guard let fd = Int32(spec.dropFirst(3)), fd >= 0 else {
                throw unreadable(
                    "fd:…", "what follows fd: is not a descriptor number (not shown, as it may be the secret itself)", hint: "use fd:N, such as fd:3 with 3<secret.txt")
            }
            return try firstLine(of: fd, source: "fd:\(fd)", unreadable: unreadable)
        }
        if spec == "stdin" {
            if console.stdinIsTerminal {
                // A terminal is asked without echo rather than read with the secret shown.
                guard let secret = askWithoutEcho(prompt ?? "Password: ") else { throw unreadable("stdin", "standard input ended before a line was typed") }
                return secret
            }
            if console.readStandardInputSecret != nil {
                return try firstLine(of: 0, source: "stdin", unreadable: unreadable)
            }
            var bytes = console.readStandardInput()
            guard !bytes.isEmpty else { throw unreadable("stdin", "standard input is empty (it ended at once)") }
            return Secret.firstLine(wiping: &bytes)
        }
        // The value is not repeated: it may be the secret itself, typed without a form.
        throw CommandFailure(
            ExitCode.usage, "\(option): the value is not a secret specification (it is not shown here, as it may be the secret itself)",
            hint: "use pass:TEXT, env:VAR, file:PATH, fd:N or stdin")
    }

    /// Reads the first line of `fd`: a descriptor that is not open, a directory, a terminal, a
    /// source that ends at once, an empty first line or a silent pipe is an error naming `source`.
    private static func firstLine(
        of fd: Int32, source: String, unreadable: (String, String, String?) -> CommandFailure
    ) throws(CommandFailure) -> Secret {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw unreadable(source, "descriptor \(fd) is not open", "open it for the command, such as 3<secret.txt for fd:3")
        }
        let kind = info.st_mode & S_IFMT
        if kind == S_IFDIR { throw unreadable(source, "it cannot be read: it is a directory", "give a file whose first line is the secret") }
        if isatty(fd) == 1 {
            throw unreadable(source, "it is a terminal, where the secret would be echoed", "leave the option out to be asked without echo, or use stdin")
        }
        var buffer = [UInt8](repeating: 0, count: Secret.lineLimit)
        // Regular files end; pipes, FIFOs and sockets are given `silentTimeout` for each read.
        let timeout = kind == S_IFREG ? nil : silentTimeout
        guard let read = Secret.firstLine(readingFrom: fd, wiping: &buffer, silentTimeout: timeout) else {
            if errno == ETIMEDOUT {
                throw unreadable(source, "nothing came for \(Int(silentTimeout)) s (a FIFO or pipe with no writer?)", nil)
            }
            throw unreadable(source, "it cannot be read: \(String(cString: strerror(errno)))", nil)
        }
        // End of input at once (an empty file, a closed or empty pipe) is no password at all; an
        // empty line is one written out, and is the empty password (as openssl reads it).
        guard read.bytesRead > 0 else { throw unreadable(source, "it is empty (end of input at once)", nil) }
        return read.line
    }

    /// Reads a line from the terminal with echo off.
    private static func askWithoutEcho(_ prompt: String) -> Secret? {
        Console.writeAll(2, Array(prompt.utf8))
        var old = termios()
        let haveTerminal = tcgetattr(0, &old) == 0
        if haveTerminal {
            var silent = old
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSAFLUSH, &silent)
        }
        defer {
            if haveTerminal { tcsetattr(0, TCSAFLUSH, &old) }
            Console.writeAll(2, Array("\n".utf8))
        }
        // Not readLine(): it leaves the line in a buffer that is freed without being wiped.
        var buffer = [UInt8](repeating: 0, count: Secret.lineLimit)
        guard let read = Secret.firstLine(readingFrom: 0, wiping: &buffer), read.bytesRead > 0 else { return nil }  // end of input, as readLine()
        return read.line
    }
}

/// Writes output files all at once through MTLSTrust's ``OutputWriter`` (the one writer of every
/// file the tool writes): to a temporary file in the same directory, then put in place, so that a
/// failure never leaves half a file; never over an existing file without `force`, and never over
/// anything but a regular file (device, FIFO, socket, symbolic link), even with `force`.
enum OutputFile {
    /// Writes `bytes` to `path` atomically with `mode` (0600 for keys).
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, force: Bool) throws(CommandFailure) {
        do throws(MTLSTrustError) {
            try OutputWriter.write(bytes, to: path, mode: mode, force: force)
        } catch {
            throw CommandFailure(ExitCode.badInput, error.message)
        }
    }

    /// Writes several files as one unit: every file is checked and written under its temporary
    /// name before any is put in place, so that a failure leaves the files already there
    /// (with `force`) untouched; should putting one in place fail, those already placed are removed.
    static func writeAll(_ files: [(path: String, bytes: [UInt8], mode: mode_t)], force: Bool) throws(CommandFailure) {
        do throws(MTLSTrustError) {
            for file in files { try OutputWriter.checkTarget(file.path, force: force) }
            var writers: [OutputWriter] = []
            for file in files {
                let writer = try OutputWriter(path: file.path, mode: file.mode, force: force)
                writers.append(writer)
                try writer.write(file.bytes)
            }
            for (index, writer) in writers.enumerated() {
                do throws(MTLSTrustError) {
                    try writer.commit()
                } catch {
                    for later in writers[(index + 1)...] { later.discard() }
                    for earlier in writers[..<index] { unlink(earlier.path) }
                    throw error
                }
            }
        } catch {
            // Writers not yet committed remove their temporary files when released.
            throw CommandFailure(ExitCode.badInput, error.message)
        }
    }
}

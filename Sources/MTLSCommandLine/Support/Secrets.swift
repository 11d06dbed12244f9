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
enum SecretSpec {
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
        if spec.hasPrefix("pass:") {
            if console.environment["MTLS_QUIET_PASS_WARNING"] == nil {
                console.err("warning: \(option) pass:… puts the secret on the command line, where `ps` and shell history show it; prefer env:, file: or fd:")
            }
            return Secret(bytes: spec.utf8.dropFirst(5))
        }
        if spec.hasPrefix("env:") {
            let name = String(spec.dropFirst(4))
            guard let value = console.environment.secret(name) else {
                throw CommandFailure(
                    ExitCode.usage, "\(option) env:\(name): the environment variable \(name) is not set", hint: "export it, or use another secret form (pass:, file:, fd:, stdin)")
            }
            return value
        }
        if spec.hasPrefix("file:") {
            let path = String(spec.dropFirst(5))
            do throws(MTLSTrustError) {
                return try Secret.readFirstLine(ofFileAt: path)
            } catch {
                // "PATH cannot be read: No such file or directory": the file and the reason.
                throw CommandFailure(ExitCode.badInput, "\(option) file: \(error.message)", hint: "give a readable file whose first line is the secret")
            }
        }
        if spec.hasPrefix("fd:") {
            guard let fd = Int32(spec.dropFirst(3)), fd >= 0 else {
                throw CommandFailure(ExitCode.usage, "\(option) \(spec): fd: needs a file descriptor number")
            }
            return Secret.readFirstLine(from: fd) ?? Secret(bytes: [])
        }
        if spec == "stdin" {
            if let read = console.readStandardInputSecret { return read() ?? Secret(bytes: []) }
            var bytes = console.readStandardInput()
            return Secret.firstLine(wiping: &bytes)
        }
        // The value is not repeated: it may be the secret itself, typed without a form.
        throw CommandFailure(
            ExitCode.usage, "\(option): the value is not a secret specification (it is not shown here, as it may be the secret itself)",
            hint: "use pass:TEXT, env:VAR, file:PATH, fd:N or stdin")
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

/// Writes output files all at once: to a temporary file in the same directory, then renamed, so
/// that a failure never leaves half a file; never over an existing file without `force`.
enum OutputFile {
    /// Writes `bytes` to `path` atomically with `mode` (0600 for keys).
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, force: Bool) throws(CommandFailure) {
        try commit(try stage(bytes, to: path, mode: mode, force: force), to: path)
    }

    /// Checks `path` and writes `bytes` with `mode` to a new temporary file beside it, which is
    /// removed again on failure; returns the temporary file's path.
    private static func stage(_ bytes: [UInt8], to path: String, mode: mode_t, force: Bool) throws(CommandFailure) -> String {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let entry = FileSystem.entry(path)
        if entry != .missing {
            if entry == .directory { throw CommandFailure(ExitCode.badInput, "\(path) is a directory; give a file name") }
            if !force { throw CommandFailure(ExitCode.badInput, "\(path) already exists; pass --force to overwrite it") }
        }
        guard FileSystem.isDirectory(directory) else {
            throw CommandFailure(ExitCode.badInput, "cannot write \(path): the directory \(directory) does not exist")
        }
        let temporary = directory + "/.\(url.lastPathComponent).mtls-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw CommandFailure(ExitCode.badInput, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        var ok = fchmod(fd, mode) == 0
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while ok && offset < raw.count {
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    ok = false
                } else {
                    offset += written
                }
            }
        }
        if ok { ok = fsync(fd) == 0 }
        let writeError = errno
        close(fd)
        guard ok else {
            unlink(temporary)
            throw CommandFailure(ExitCode.badInput, "cannot write \(path): \(String(cString: strerror(writeError)))")
        }
        return temporary
    }

    /// Renames a staged file into place; removes it when that fails.
    private static func commit(_ temporary: String, to path: String) throws(CommandFailure) {
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CommandFailure(ExitCode.badInput, "cannot write \(path): \(reason)")
        }
    }

    /// Writes several files as one unit: every file is checked and written under its temporary
    /// name before any is renamed into place, so that a failure leaves the files already there
    /// (with `force`) untouched; should a rename fail, the files already renamed are removed.
    static func writeAll(_ files: [(path: String, bytes: [UInt8], mode: mode_t)], force: Bool) throws(CommandFailure) {
        if !force {
            for file in files where FileManager.default.fileExists(atPath: file.path) {
                throw CommandFailure(ExitCode.badInput, "\(file.path) already exists; pass --force to overwrite it")
            }
        }
        var staged: [(temporary: String, path: String)] = []
        for file in files {
            do throws(CommandFailure) {
                staged.append((try stage(file.bytes, to: file.path, mode: file.mode, force: force), file.path))
            } catch {
                for entry in staged { unlink(entry.temporary) }
                throw error
            }
        }
        for (index, entry) in staged.enumerated() {
            do throws(CommandFailure) {
                try commit(entry.temporary, to: entry.path)
            } catch {
                for later in staged[(index + 1)...] { unlink(later.temporary) }
                for earlier in staged[..<index] { unlink(earlier.path) }
                throw error
            }
        }
    }
}

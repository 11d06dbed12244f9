import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// OpenSSL-style secret specifications: `pass:TEXT`, `env:VAR`, `file:PATH` (first line), `fd:N`,
/// `stdin`; with none given and a terminal on stdin, a prompt without echo.
enum SecretSpec {
    /// Resolves a spec to the secret.
    ///
    /// - Parameters:
    ///   - spec: The option's value, or nil when the option was not given.
    ///   - option: The option's name, for messages (`--password`).
    ///   - prompt: The prompt when asking on the terminal; nil means do not ask.
    ///   - console: For the environment, stdin and warnings.
    /// - Returns: The secret, or nil when no spec was given and no prompt is possible.
    static func resolve(_ spec: String?, option: String, prompt: String?, console: Console) throws(CommandFailure) -> String? {
        guard let spec else {
            guard let prompt, console.stdinIsTerminal else { return nil }
            return askWithoutEcho(prompt)
        }
        if spec.hasPrefix("pass:") {
            if console.environment["MTLS_QUIET_PASS_WARNING"] == nil {
                console.err("warning: \(option) pass:… puts the secret on the command line, where `ps` and shell history show it; prefer env:, file: or fd:")
            }
            return String(spec.dropFirst(5))
        }
        if spec.hasPrefix("env:") {
            let name = String(spec.dropFirst(4))
            guard let value = console.environment[name] else {
                throw CommandFailure(
                    ExitCode.usage, "\(option) env:\(name): the environment variable \(name) is not set", hint: "export it, or use another secret form (pass:, file:, fd:, stdin)")
            }
            return value
        }
        if spec.hasPrefix("file:") {
            let path = String(spec.dropFirst(5))
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure(ExitCode.badInput, "\(option) file:\(path): the file cannot be read")
            }
            return firstLine(data)
        }
        if spec.hasPrefix("fd:") {
            guard let fd = Int32(spec.dropFirst(3)), fd >= 0 else {
                throw CommandFailure(ExitCode.usage, "\(option) \(spec): fd: needs a file descriptor number")
            }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
            var data = Data()
            while true {
                guard let chunk = try? handle.read(upToCount: 4096), !chunk.isEmpty else { break }
                data.append(chunk)
                if chunk.contains(10) || data.count > 65536 { break }
            }
            return firstLine(data)
        }
        if spec == "stdin" {
            return firstLine(Data(console.readStandardInput()))
        }
        throw CommandFailure(ExitCode.usage, "\(option): '\(spec)' is not a secret specification", hint: "use pass:TEXT, env:VAR, file:PATH, fd:N or stdin")
    }

    private static func firstLine(_ data: Data) -> String {
        // Split the bytes, not the String: Swift treats "\r\n" as one Character, so splitting
        // the text on "\n" would keep a CRLF line whole, line ending included.
        var line = data.prefix { $0 != 0x0A }
        if line.last == 0x0D { line = line.dropLast() }
        return String(decoding: line, as: UTF8.self)
    }

    /// Reads a line from the terminal with echo off.
    private static func askWithoutEcho(_ prompt: String) -> String? {
        FileHandle.standardError.write(Data(prompt.utf8))
        var old = termios()
        let haveTerminal = tcgetattr(0, &old) == 0
        if haveTerminal {
            var silent = old
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSAFLUSH, &silent)
        }
        defer {
            if haveTerminal { tcsetattr(0, TCSAFLUSH, &old) }
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true)
    }
}

/// Writes output files all at once: to a temporary file in the same directory, then renamed, so
/// that a failure never leaves half a file; never over an existing file without `force`.
enum OutputFile {
    /// Writes `bytes` to `path` atomically with `mode` (0600 for keys).
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, force: Bool) throws(CommandFailure) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw CommandFailure(ExitCode.badInput, "\(path) is a directory; give a file name") }
            if !force { throw CommandFailure(ExitCode.badInput, "\(path) already exists; pass --force to overwrite it") }
        }
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
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
        guard ok, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(ok ? errno : writeError))
            unlink(temporary)
            throw CommandFailure(ExitCode.badInput, "cannot write \(path): \(reason)")
        }
    }

    /// Writes several files as one unit: every file is checked before any is written, and on a
    /// failure the files already written are removed.
    static func writeAll(_ files: [(path: String, bytes: [UInt8], mode: mode_t)], force: Bool) throws(CommandFailure) {
        if !force {
            for file in files where FileManager.default.fileExists(atPath: file.path) {
                throw CommandFailure(ExitCode.badInput, "\(file.path) already exists; pass --force to overwrite it")
            }
        }
        var written: [String] = []
        for file in files {
            do throws(CommandFailure) {
                try write(file.bytes, to: file.path, mode: file.mode, force: force)
                written.append(file.path)
            } catch {
                for path in written { unlink(path) }
                throw error
            }
        }
    }
}

internal import COpenSSLShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one writer of every file `mtls` writes (keys, PKCS#12 files, certificates, pins, cookie
/// jars, response bodies): a temporary file beside the target, renamed into place when complete.
///
/// What it promises, whatever the environment:
/// - Only a regular file, or a symbolic link the user owns that leads to a regular file or
///   nowhere, is ever replaced, and only with `force`; a link is replaced itself, its target is
///   never written. A device (`/dev/null`), FIFO, socket or directory is refused even with
///   `force`, and so is another user's link and a link to anything but a regular file
///   (`/dev/stdout`); any link, dangling or not, without `force`. Without `force`, the file is linked into place
///   (`link`), which fails if anything appeared meanwhile, so nothing is replaced even by a race.
/// - The temporary file is created with `O_CREAT | O_EXCL | O_NOFOLLOW` and its final mode (0600
///   for secrets) in the `open` call itself, then set exactly with `fchmod` on the descriptor
///   (the umask cannot widen or narrow it); no one else can open it in between.
/// - The temporary file is removed on every path: errors (`EFBIG` under `ulimit -f`, with
///   `SIGXFSZ` ignored by ``installSignalCleanup()``), ``discard()``, and SIGINT, SIGTERM or
///   SIGHUP while it exists (a C handler unlinks every registered temporary file).
package final class OutputWriter {
    /// The file being written.
    package let path: String
    private let force: Bool
    private var temporary: String?
    private var fd: Int32 = -1

    /// Makes SIGINT, SIGTERM and SIGHUP remove registered temporary files, and `ulimit -f` an
    /// `EFBIG` error rather than a kill. Called once by the `mtls` program; not by the library on
    /// its own (signal handling is the program's decision).
    package static func installSignalCleanup() {
        mtls_cleanup_install()
    }

    /// Checks what is at `path`: nothing, or a regular file when `force`.
    ///
    /// - Throws: `.outputFailure` naming the path and what is there.
    package static func checkTarget(_ path: String, force: Bool) throws(MTLSTrustError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw MTLSTrustError(.outputFailure, "cannot write \(path): \(String(cString: strerror(errno)))", source: path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            if !force { throw MTLSTrustError(.outputFailure, "\(path) already exists; pass --force to overwrite it", source: path) }
        case S_IFDIR:
            throw MTLSTrustError(.outputFailure, "\(path) is a directory; give a file name", source: path)
        case S_IFLNK:
            // With force, a link of the user's own that leads to a regular file or nowhere is
            // replaced by the file (the link itself, never its target). Anyone else's link, a link
            // to a device, FIFO or socket (`/dev/stdout`: use `-`), or any link without force, is refused.
            var target = stat()
            let dangling = stat(path, &target) != 0
            let leadsToFile = dangling || target.st_mode & S_IFMT == S_IFREG
            if force && info.st_uid == geteuid() && leadsToFile { return }
            let why =
                !force
                ? "pass --force to replace the link itself (its target is never written)"
                : info.st_uid != geteuid()
                    ? "it belongs to another user (uid \(info.st_uid))"
                    : "it leads to a \(kindName(target.st_mode)), not a regular file (for standard output, give -)"
            throw MTLSTrustError(
                .outputFailure, "\(path) is a symbolic link\(dangling ? " that points nowhere" : ""): not replaced, as \(why)", source: path)
        default:
            throw MTLSTrustError(
                .outputFailure, "\(path) is a \(kindName(info.st_mode)), not a regular file: mtls never replaces one, even with --force; give a file name", source: path)
        }
    }

    /// What a file mode's type is called in messages.
    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        case S_IFIFO: return "FIFO"
        case S_IFSOCK: return "socket"
        case S_IFDIR: return "directory"
        case S_IFLNK: return "symbolic link"
        default: return "special file"
        }
    }

    /// Checks `path` and creates the temporary file beside it with `mode`.
    package init(path: String, mode: UInt32, force: Bool) throws(MTLSTrustError) {
        let mode = mode_t(mode)
        self.path = path
        self.force = force
        try OutputWriter.checkTarget(path, force: force)
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw MTLSTrustError(.outputFailure, "cannot write \(path): the directory \(directory) does not exist", source: path)
        }
        let staged = (directory == "/" ? "" : directory) + "/.\(name).mtls-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        // Registered before it exists, so that no moment has the file without the signal cleanup.
        _ = mtls_cleanup_register(staged)
        let opened = open(staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard opened >= 0 else {
            let reason = String(cString: strerror(errno))
            mtls_cleanup_unregister(staged)
            throw MTLSTrustError(.outputFailure, "cannot write \(path): \(reason)", source: path)
        }
        fd = opened
        temporary = staged
        // The mode exactly, by descriptor: open's mode passed through the umask.
        guard fchmod(opened, mode) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw MTLSTrustError(.outputFailure, "cannot write \(path): \(reason)", source: path)
        }
    }

    deinit { discard() }

    /// Appends bytes; on failure (a full disk, `EFBIG` under a file-size limit) the temporary
    /// file is removed.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(MTLSTrustError) {
        guard fd >= 0 else { throw MTLSTrustError(.outputFailure, "cannot write \(path): the output was already closed", source: path) }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno)) + (errno == EFBIG ? " (the file-size limit, ulimit -f, was reached)" : "")
                discard()
                throw MTLSTrustError(.outputFailure, "cannot write \(path): \(reason); nothing was left behind", source: path)
            }
            offset += n
        }
    }

    /// Appends bytes.
    package func write(_ bytes: [UInt8]) throws(MTLSTrustError) {
        var failure: MTLSTrustError?
        bytes.withUnsafeBytes { raw in
            do throws(MTLSTrustError) { try write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Flushes the file to disk and puts it in place: linked (no replacement possible) without
    /// `force`, renamed over the regular file there with it. The target is checked again first.
    package func commit() throws(MTLSTrustError) {
        guard let staged = temporary, fd >= 0 else { throw MTLSTrustError(.outputFailure, "cannot write \(path): the output was already closed", source: path) }
        if fsync(fd) != 0 {
            let reason = String(cString: strerror(errno))
            discard()
            throw MTLSTrustError(.outputFailure, "cannot write \(path): \(reason)", source: path)
        }
        close(fd)
        fd = -1
        do throws(MTLSTrustError) {
            try OutputWriter.checkTarget(path, force: force)
        } catch {
            discard()
            throw error
        }
        if !force {
            if link(staged, path) == 0 {
                discard()  // removes the temporary name; the file stays under `path`
                return
            }
            // File systems without hard links fall back to rename, after the check above.
            guard errno == EPERM || errno == EOPNOTSUPP || errno == EXDEV || errno == EMLINK else {
                let reason = errno == EEXIST ? "it appeared while it was being written; pass --force to overwrite it" : String(cString: strerror(errno))
                discard()
                throw MTLSTrustError(.outputFailure, "cannot write \(path): \(reason)", source: path)
            }
        }
        guard rename(staged, path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw MTLSTrustError(.outputFailure, "cannot write \(path): \(reason)", source: path)
        }
        temporary = nil
        mtls_cleanup_unregister(staged)
    }

    /// Abandons the output: closes and removes the temporary file (idempotent).
    package func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if let staged = temporary {
            unlink(staged)
            mtls_cleanup_unregister(staged)
            temporary = nil
        }
    }

    /// Writes `bytes` to `path` at once with `mode`.
    package static func write(_ bytes: [UInt8], to path: String, mode: UInt32, force: Bool) throws(MTLSTrustError) {
        let writer = try OutputWriter(path: path, mode: mode, force: force)
        try writer.write(bytes)
        try writer.commit()
    }

    /// Makes `path` a directory for secrets: missing components are created with mode 0700 in the
    /// `mkdir` call; an existing directory must belong to this user and be writable by no one
    /// else (another local user could otherwise plant it, or swap files in it, and receive the
    /// key). Returns the directories made, outermost first.
    package static func makePrivateDirectory(_ path: String) throws(MTLSTrustError) -> [String] {
        var made: [String] = []
        var missing: [String] = []
        var current = path
        var info = stat()
        while !current.isEmpty, current != "/", current != ".", stat(current, &info) != 0 {
            missing.insert(current, at: 0)
            guard let slash = current.lastIndex(of: "/") else { break }
            current = slash == current.startIndex ? "/" : String(current[..<slash])
        }
        for directory in missing {
            if mkdir(directory, 0o700) == 0 {
                made.append(directory)
            } else if errno != EEXIST {
                // EEXIST: made meanwhile by someone else; the check below decides whether it is usable.
                let reason = String(cString: strerror(errno))
                for earlier in made.reversed() { rmdir(earlier) }
                throw MTLSTrustError(.outputFailure, "cannot create \(directory): \(reason)", source: directory)
            }
        }
        do throws(MTLSTrustError) {
            try checkPrivateDirectory(path)
        } catch {
            for earlier in made.reversed() { rmdir(earlier) }
            throw error
        }
        return made
    }

    /// True when `gid` is this user's primary group, named as the user, with no other members.
    static func isPrivateGroup(_ gid: gid_t) -> Bool {
        guard gid == getegid(), let group = getgrgid(gid), let user = getpwuid(geteuid()) else { return false }
        guard strcmp(group.pointee.gr_name, user.pointee.pw_name) == 0 else { return false }
        guard let members = group.pointee.gr_mem else { return true }
        var index = 0
        while let member = members[index] {
            if strcmp(member, user.pointee.pw_name) != 0 { return false }
            index += 1
        }
        return true
    }

    /// Refuses a directory that is not a directory, not this user's, or writable by others or by a
    /// group other than the user's private group.
    package static func checkPrivateDirectory(_ path: String) throws(MTLSTrustError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw MTLSTrustError(.outputFailure, "cannot use \(path): \(String(cString: strerror(errno)))", source: path)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw MTLSTrustError(.outputFailure, "\(path) exists and is not a directory", source: path)
        }
        guard info.st_uid == geteuid() else {
            throw MTLSTrustError(
                .outputFailure,
                "\(path) belongs to another user (uid \(info.st_uid)): a private key is not written into it; give a directory of your own, or a new path for mtls to create",
                source: path)
        }
        // Group-writable is accepted only for the user's private group (the user-private-group
        // scheme of Debian and Ubuntu, whose umask 002 makes directories 0775): the group has the
        // user's name and no listed members.
        let groupWritable = info.st_mode & 0o020 != 0 && !isPrivateGroup(info.st_gid)
        guard info.st_mode & 0o002 == 0, !groupWritable else {
            throw MTLSTrustError(
                .outputFailure,
                "\(path) is writable by \(info.st_mode & 0o002 != 0 ? "everyone" : "its group") (mode \(String(info.st_mode & 0o7777, radix: 8))): a private key is not written into it; chmod go-w \(path), or give a new path for mtls to create",
                source: path)
        }
    }
}

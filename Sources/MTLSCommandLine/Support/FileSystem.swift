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

/// The few file-system facts the commands need beyond `FileManager`, on FoundationEssentials and
/// the C library: full Foundation (for `NSTemporaryDirectory`, `ObjCBool` and
/// `localizedDescription`) would bring ICU into the binary.
enum FileSystem {
    /// `$TMPDIR` or `/tmp`, with a trailing slash (as `NSTemporaryDirectory()` gives it).
    static var temporaryDirectory: String {
        var directory = getenv("TMPDIR").map { String(cString: $0) } ?? ""
        if directory.isEmpty { directory = "/tmp" }
        return directory.hasSuffix("/") ? directory : directory + "/"
    }

    /// A fresh name under the temporary directory, for a directory the command makes itself.
    static func temporaryName(_ prefix: String) -> String {
        temporaryDirectory + "\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// What is at a path (symbolic links followed).
    enum Entry { case missing, directory, other }

    static func entry(_ path: String) -> Entry {
        guard FileManager.default.fileExists(atPath: path) else { return .missing }
        return isDirectory(path) ? .directory : .other
    }

    /// True when `path` exists and is a directory (symbolic links followed).
    static func isDirectory(_ path: String) -> Bool {
        #if canImport(FoundationEssentials)
            var isDirectory = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory
        #else
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        #endif
    }

    /// Why a file operation failed, as the C library says it (`No such file or directory`):
    /// `FileManager`'s errors carry the POSIX error underneath.
    static func reason(_ error: any Error) -> String {
        if let cocoa = error as? CocoaError, let posix = cocoa.underlying as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        return String(describing: error)
    }
}

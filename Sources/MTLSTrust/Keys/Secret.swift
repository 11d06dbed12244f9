internal import COpenSSL
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
import Synchronization

/// A password or other secret, held in memory this value owns and overwrites with zeros when the
/// last reference to it goes away.
///
/// A Swift `String` cannot be wiped: its storage is freed with the secret still in it, and every
/// conversion makes another copy. `Secret` keeps the bytes in one allocation of its own, hands
/// them out only inside a closure, and never prints them (`description`, `debugDescription` and
/// `Mirror` all say `<redacted>`).
///
/// ```swift
/// var typed: [UInt8] = readPasswordSomehow()      // bytes the caller read
/// let password = Secret(wiping: &typed)           // copied, then `typed` is zeroed
/// let bundle = try PKCS12Bundle(derBytes: pfx, password: password)
/// ```
///
/// The bytes live in pages of their own, mapped for this secret alone: locked in memory where the
/// system allows it (`mlock`: never written to swap) and left out of core dumps
/// (`MADV_DONTDUMP`), as libsodium's `sodium_malloc` does.
///
/// A string literal makes a `Secret` too (`password: "changeit"`): a literal is in the program's
/// read-only data anyway, so there is nothing more to wipe. ``init(_:)`` takes a `String` the
/// caller already has; that `String` itself cannot be wiped.
public final class Secret: @unchecked Sendable, ExpressibleByStringLiteral {
    // @unchecked Sendable: `storage` is filled in by the initialisers and never written afterwards
    // (only read, then wiped in `deinit`), so sharing across threads is safe.
    // The bytes are followed by a NUL so that C functions which want a C string (PKCS12_create)
    // get one without a copy.
    private let storage: UnsafeMutablePointer<UInt8>
    // False when mapping pages failed and the bytes are on the heap instead (still wiped).
    private let inOwnPages: Bool

    /// The number of bytes (UTF-8 for text).
    public let count: Int

    /// A secret holding a copy of `bytes`. The caller wipes its own copy.
    public convenience init(bytes: some Collection<UInt8>) {
        self.init(bytes: bytes, ownPages: true)
    }

    /// `ownPages: false` keeps a short-lived secret (one request's `user:password`) on the heap,
    /// still wiped: mapping, locking and unmapping pages costs five system calls.
    convenience init(bytes: some Collection<UInt8>, ownPages: Bool) {
        self.init(zeros: bytes.count, ownPages: ownPages)
        var index = 0
        for byte in bytes {
            storage[index] = byte
            index += 1
        }
    }

    /// `count` zero bytes (and the NUL after them), to be filled in by this file.
    private init(zeros count: Int, ownPages: Bool) {
        self.count = count
        if ownPages {
            (storage, inOwnPages) = Secret.allocate(count + 1)
        } else {
            (storage, inOwnPages) = (.allocate(capacity: count + 1), false)
        }
        storage.initialize(repeating: 0, count: count + 1)
    }

    /// A secret holding a copy of `bytes`; then every byte of `bytes` is overwritten with zeros.
    public convenience init(wiping bytes: inout [UInt8]) {
        self.init(bytes: bytes)
        Secret.wipe(&bytes)
    }

    /// A secret holding the UTF-8 of `text`. `text` itself cannot be wiped: prefer
    /// ``init(bytes:)`` or ``init(wiping:)`` for secrets read at run time.
    public convenience init(_ text: String) {
        self.init(bytes: text.utf8)
    }

    /// A secret from a string literal.
    public convenience init(stringLiteral value: StaticString) {
        self.init(bytes: UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount))
    }

    deinit {
        OPENSSL_cleanse(storage, count + 1)
        Secret.deallocationObserver.notify(UnsafeRawBufferPointer(start: storage, count: count + 1))
        Secret.deallocate(storage, count + 1, inOwnPages: inOwnPages)
    }

    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    private static func mappedLength(_ size: Int) -> Int { (size + pageSize - 1) / pageSize * pageSize }

    /// Pages of its own for `size` bytes, locked and kept out of core dumps where the system allows;
    /// the heap when mapping fails.
    private static func allocate(_ size: Int) -> (UnsafeMutablePointer<UInt8>, inOwnPages: Bool) {
        let length = mappedLength(size)
        guard let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED else {
            return (.allocate(capacity: size), false)
        }
        _ = mlock(mapped, length)  // best effort: RLIMIT_MEMLOCK may be small
        #if os(Linux)
            _ = madvise(mapped, length, MADV_DONTDUMP)
        #endif
        return (mapped.assumingMemoryBound(to: UInt8.self), true)
    }

    private static func deallocate(_ storage: UnsafeMutablePointer<UInt8>, _ size: Int, inOwnPages: Bool) {
        guard inOwnPages else { return storage.deallocate() }
        let length = mappedLength(size)
        _ = munlock(storage, length)
        _ = munmap(storage, length)
    }

    /// The locked and no-dump state of this secret's pages, from `/proc/self/smaps` (tests).
    var pageFlags: (locked: Bool, excludedFromCoreDumps: Bool)? {
        guard let smaps = ProcFile.text("/proc/self/smaps") else { return nil }
        let address = UInt(bitPattern: storage)
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), let space = line.firstIndex(of: " "), dash < space,
                let start = UInt(line[..<dash], radix: 16), let end = UInt(line[line.index(after: dash)..<space], radix: 16)
            {
                inside = (start..<end).contains(address)
            } else if inside, line.hasPrefix("VmFlags:") {
                let flags = line.split(separator: " ")
                return (flags.contains("lo"), flags.contains("dd"))
            }
        }
        return nil
    }

    /// True when the secret has no bytes.
    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the secret's bytes. The pointer is valid only inside `body`; do not copy
    /// the bytes out into memory that is not wiped.
    public func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result) throws(Failure) -> Result {
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeBufferPointer(start: storage, count: count))
    }

    /// Calls `body` with the bytes in a temporary array that is wiped before this returns (for
    /// functions that take `[UInt8]`; `body` must not keep the array).
    public func withTemporaryArray<Result>(_ body: ([UInt8]) -> Result) -> Result {
        var copy = withUnsafeBytes { [UInt8]($0) }
        defer { Secret.wipe(&copy) }
        return body(copy)
    }

    /// Calls `body` with the secret as a NUL-terminated C string (for C functions that take one).
    /// A secret with a NUL byte inside is cut there by such functions.
    public func withCString<Result, Failure: Error>(_ body: (UnsafePointer<CChar>) throws(Failure) -> Result) throws(Failure) -> Result {
        defer { withExtendedLifetime(self) {} }
        return try storage.withMemoryRebound(to: CChar.self, capacity: count + 1) { (pointer) throws(Failure) -> Result in try body(pointer) }
    }

    /// True when some byte satisfies `predicate` (for checks such as "no control characters").
    public func contains(where predicate: (UInt8) -> Bool) -> Bool {
        withUnsafeBytes { $0.contains(where: predicate) }
    }

    /// True when the bytes are valid UTF-8.
    public var isValidUTF8: Bool {
        withUnsafeBytes { bytes in
            var iterator = bytes.makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }

    /// Calls `body` with the secret re-encoded as UTF-16LE (NTLM's hash input), in a buffer that is
    /// wiped before this returns. Invalid UTF-8 becomes U+FFFD, as `String(decoding:as:)` would.
    public func withUTF16LittleEndian<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        // UTF-16 needs at most one code unit (two bytes) per UTF-8 byte; the buffer is never grown,
        // so no copy is left behind.
        var buffer = [UInt8](repeating: 0, count: 2 * count)
        var length = 0
        withUnsafeBytes { bytes in
            buffer.withUnsafeMutableBufferPointer { output in
                _ = transcode(bytes.makeIterator(), from: UTF8.self, to: UTF16.self, stoppingOnError: false) { unit in
                    output[length] = UInt8(truncatingIfNeeded: unit)
                    output[length + 1] = UInt8(truncatingIfNeeded: unit >> 8)
                    length += 2
                }
            }
        }
        defer { Secret.wipe(&buffer) }
        return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<length])) }
    }

    /// A new secret made of `prefix`, this secret's bytes and `suffix`, built without an intermediate
    /// copy that is not wiped (for `user:password` and `user:realm:password`).
    public func joined(after prefix: [UInt8], before suffix: [UInt8] = []) -> Secret {
        let joined = Secret(zeros: prefix.count + count + suffix.count, ownPages: false)
        var offset = 0
        for part in [prefix, nil, suffix] {
            if let part {
                for byte in part {
                    joined.storage[offset] = byte
                    offset += 1
                }
            } else {
                withUnsafeBytes { bytes in
                    for byte in bytes {
                        joined.storage[offset] = byte
                        offset += 1
                    }
                }
            }
        }
        return joined
    }

    /// Overwrites every byte of `bytes` with zeros, in a way the optimiser cannot drop.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            OPENSSL_cleanse(base, raw.count)
        }
    }

    /// Test hook: called with each secret's memory after it was wiped, before it is freed.
    static let deallocationObserver = DeallocationObserver()
}

// MARK: - Reading secrets

extension Secret {
    /// The longest line ``readFirstLine(from:)`` and ``readFirstLine(ofFileAt:)`` read.
    public static let lineLimit = 65536

    /// The first line of what `fd` gives — up to a newline, the end of input or ``lineLimit``
    /// bytes, without its line ending (LF or CR LF) — read into one buffer that is never grown and
    /// is wiped afterwards. Nil when the first read fails; an empty secret at once-empty input.
    /// The descriptor is not closed; what follows the line may have been read too.
    public static func readFirstLine(from fd: Int32) -> Secret? {
        var buffer = [UInt8](repeating: 0, count: lineLimit)
        return firstLine(readingFrom: fd, wiping: &buffer)?.line
    }

    /// The first line of the file at `path` (a password file, as `openssl -passin file:` reads it).
    ///
    /// - Throws: ``MTLSTrustError`` `.unreadableFile` naming the file.
    public static func readFirstLine(ofFileAt path: String) throws(MTLSTrustError) -> Secret {
        // Non-blocking open: a FIFO without a writer must not hang the reader; a FIFO, pipe or
        // device then gets 10 s of silence at most.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            throw MTLSTrustError(.unreadableFile, "\(path) cannot be read: \(String(cString: strerror(errno)))", source: path)
        }
        defer { close(fd) }
        var info = stat()
        let regular = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        var buffer = [UInt8](repeating: 0, count: lineLimit)
        guard let line = firstLine(readingFrom: fd, wiping: &buffer, silentTimeout: regular ? nil : 10)?.line else {
            throw MTLSTrustError(.unreadableFile, "\(path) cannot be read: \(String(cString: strerror(errno)))", source: path)
        }
        return line
    }

    /// The first line of `bytes`, without its line ending; then every byte of `bytes` is wiped.
    public static func firstLine(wiping bytes: inout [UInt8]) -> Secret {
        let line = firstLine(bytes, count: bytes.count)
        wipe(&bytes)
        return line
    }

    /// Reads from `fd` into `buffer` (never grown, so no copy is left behind) until a newline, end
    /// of file or a full buffer, and returns the first line and the number of bytes read; then every
    /// byte of `buffer` is wiped. Nil when the first read fails.
    ///
    /// With `silentTimeout`, each read waits at most that many seconds for data (a pipe or FIFO
    /// whose writer sends nothing); then the read fails with `errno` `ETIMEDOUT`.
    package static func firstLine(readingFrom fd: Int32, wiping buffer: inout [UInt8], silentTimeout: Double? = nil) -> (line: Secret, bytesRead: Int)? {
        var count = 0
        var failed = false
        buffer.withUnsafeMutableBytes { raw in
            while count < raw.count {
                if let silentTimeout {
                    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    var ready: Int32
                    repeat { ready = poll(&poller, 1, Int32(silentTimeout * 1000)) } while ready < 0 && errno == EINTR
                    if ready == 0 {
                        failed = true
                        errno = ETIMEDOUT
                        break
                    }
                }
                let n = read(fd, raw.baseAddress! + count, raw.count - count)
                if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if n <= 0 {
                    failed = n < 0 && count == 0
                    break
                }
                let newline = raw[count..<(count + n)].contains(0x0A)
                count += n
                if newline { break }
            }
        }
        let line = firstLine(buffer, count: count)
        wipe(&buffer)
        return failed ? nil : (line, count)
    }

    /// The first line of `bytes[0..<count]`, copied without making a copy of the array that would
    /// outlive the wipe (no slice is kept: a live slice would make the wipe copy the array).
    private static func firstLine(_ bytes: [UInt8], count: Int) -> Secret {
        bytes.withUnsafeBufferPointer { raw in
            // Split at the byte: a CRLF line loses both its CR and its LF.
            var end = raw[0..<count].firstIndex(of: 0x0A) ?? count
            if end > 0 && raw[end - 1] == 0x0D { end -= 1 }
            return Secret(bytes: UnsafeBufferPointer(rebasing: raw[0..<end]))
        }
    }
}

extension Secret: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Always `<redacted>`.
    public var description: String { "<redacted>" }
    /// Always `<redacted>`.
    public var debugDescription: String { "<redacted>" }
    /// A mirror with no children, so `dump` shows nothing of the bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

/// Lets tests see a secret's memory at the moment it is freed (it must be all zeros by then).
final class DeallocationObserver: Sendable {
    private let observer = Locked<(@Sendable (UnsafeRawBufferPointer) -> Void)?>(nil)

    func set(_ observer: (@Sendable (UnsafeRawBufferPointer) -> Void)?) {
        self.observer.withLock { $0 = observer }
    }

    func notify(_ memory: UnsafeRawBufferPointer) {
        observer.withLock { $0 }?(memory)
    }
}

/// Files under /proc, read to their end.
package enum ProcFile {
    /// The whole file as text, or nil when it cannot be opened. Read by hand: Foundation's
    /// `String(contentsOfFile:)` stops /proc files, which report size 0, after its first block.
    package static func text(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = block.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += block[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

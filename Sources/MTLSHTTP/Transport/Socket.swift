#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust  // Locked
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A point in time by the monotonic clock, for deadlines.
public struct Deadline: Sendable, Comparable {
    let nanoseconds: UInt64

    /// Now.
    public static var now: Deadline {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Deadline(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }

    /// `seconds` from now.
    public static func after(_ seconds: Double) -> Deadline {
        Deadline(nanoseconds: now.nanoseconds + UInt64(max(0, seconds) * 1_000_000_000))
    }

    /// `duration` from now.
    public static func after(_ duration: Duration) -> Deadline { after(duration.inSeconds) }

    /// Never.
    public static let distantFuture = Deadline(nanoseconds: UInt64.max / 2)

    /// Milliseconds left, clamped to `Int32` for `poll`; 0 when passed.
    var millisecondsLeft: Int32 {
        let current = Deadline.now.nanoseconds
        if current >= nanoseconds { return 0 }
        return Int32(min(UInt64(Int32.max), (nanoseconds - current) / 1_000_000 + 1))
    }

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The earlier of two deadlines.
    static func earliest(_ a: Deadline, _ b: Deadline) -> Deadline { a < b ? a : b }
}

/// Owns one socket file descriptor and closes it exactly once.
///
/// `shutdownBoth()` and `close()` may be called from any thread (a cancellation ends a wait on it).
/// The descriptor is non-blocking; a wait on it goes through the engine loop the waiting task runs on.
public final class SocketHandle: Sendable {
    /// True once the descriptor was closed: a shutdown after that could hit a reused number.
    private let closed = Locked(false)
    /// The descriptor.
    public let fd: Int32
    /// The engine loop a wait on the descriptor is registered with, while one is.
    private let waitingOn = Locked<EventLoop?>(nil)

    init(fd: Int32) { self.fd = fd }

    /// Shuts the socket down in both directions (ends any wait on it) without releasing the descriptor.
    public func shutdownBoth() {
        closed.withLock { closed in
            if !closed { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        waitingOn.withLock { $0 }?.interrupt(fd: fd)
    }

    /// Closes the descriptor (idempotent).
    public func close() {
        closed.withLock { closed in
            if !closed {
                closed = true
                // Before the number can be reused: a wait on it ends now.
                waitingOn.withLock { $0 }?.interrupt(fd: fd)
                _ = Glibc.close(fd)
            }
        }
    }

    deinit { close() }

    /// Waits until the socket is readable or writable, or the deadline passes, without holding a
    /// thread: the task is resumed by the engine loop.
    ///
    /// - Returns: false on timeout.
    nonisolated(nonsending) package func wait(forRead: Bool, forWrite: Bool, until deadline: Deadline) async -> Bool {
        // The loop the task runs on (an exchange prefers one; a blocking call drives its own).
        let loop = EventLoop.current ?? Engine.anyLoop()
        // A blocking call's loop with nothing else to run or wait for would, once the task
        // suspended, do nothing but poll this socket on this thread: poll it here instead, and
        // the task is not suspended, queued and resumed around every wait of a kept-alive
        // request. A cancellation ends the poll as it ends the loop's (the shutdown wakes it).
        if loop.hasOnlyTheCallingTask { return pollReady(forRead: forRead, forWrite: forWrite, until: deadline) }
        waitingOn.withLock { $0 = loop }
        defer { waitingOn.withLock { $0 = nil } }
        return await loop.wait(fd: fd, forRead: forRead, forWrite: forWrite, until: deadline)
    }

    /// The blocking form of ``wait(forRead:forWrite:until:)``: one `poll` of this socket on the
    /// calling thread (the blocking reads and writes, the test server's threads). A cancellation
    /// (``shutdownBoth()``) ends it as readable, like the async form's.
    ///
    /// - Returns: false on timeout.
    package func wait(forRead: Bool, forWrite: Bool, until deadline: Deadline) -> Bool {
        pollReady(forRead: forRead, forWrite: forWrite, until: deadline)
    }

    /// The blocking wait's `poll` (a name of its own: in async code `wait` is the async form).
    private func pollReady(forRead: Bool, forWrite: Bool, until deadline: Deadline) -> Bool {
        var entry = pollfd(fd: fd, events: Int16((forRead ? POLLIN : 0) | (forWrite ? POLLOUT : 0)), revents: 0)
        while true {
            let timeout = deadline == .distantFuture ? -1 : deadline.millisecondsLeft
            if timeout == 0 { return false }
            let ready = poll(&entry, 1, timeout)
            if ready > 0 { return true }
            // A descriptor poll cannot watch: ready, and the next read or write reports why.
            if ready < 0 && errno != EINTR { return true }
        }
    }

    /// The peer address as `host:port`.
    public var peerAddress: String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
        }
        return ok ? SocketAddress.describe(&storage) : nil
    }
}

/// Cancels every socket registered with it: shuts them down so that their waits end at once.
public final class CancellationToken: Sendable {
    private struct State {
        var cancelled = false
        var sockets: [SocketHandle] = []
    }
    private let state = Locked(State())

    public init() {}

    /// True once ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Registers a socket; if already cancelled, shuts it down at once.
    public func register(_ socket: SocketHandle) {
        let already = state.withLock { state in
            if !state.cancelled { state.sockets.append(socket) }
            return state.cancelled
        }
        if already { socket.shutdownBoth() }
    }

    /// Cancels: shuts down every registered socket.
    public func cancel() {
        let all = state.withLock { state in
            state.cancelled = true
            defer { state.sockets.removeAll() }
            return state.sockets
        }
        all.forEach { $0.shutdownBoth() }
    }
}

/// Address helpers.
enum SocketAddress {
    /// `host:port`, or `[host]:port` for IPv6, numeric.
    static func describe(_ storage: inout sockaddr_storage) -> String {
        // inet_ntop and the port by hand: getnameinfo, even numeric, is much more work for every
        // connection. A scoped IPv6 address (fe80::1%eth0) is left to
        // getnameinfo, which names the zone.
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = Int32(storage.ss_family)
        let fast: String? = withUnsafePointer(to: &storage) { pointer -> String? in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address -> String? in
                    var ip = address.pointee.sin_addr
                    guard inet_ntop(AF_INET, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + ":" + String(UInt16(bigEndian: address.pointee.sin_port))
                }
            }
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address -> String? in
                    guard address.pointee.sin6_scope_id == 0 else { return nil }
                    var ip = address.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count)) != nil else { return nil }
                    return "[" + text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "]:" + String(UInt16(bigEndian: address.pointee.sin6_port))
                }
            }
            return nil
        }
        return fast ?? describeByName(&storage)
    }

    static func describeByName(_ storage: inout sockaddr_storage) -> String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var port = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let length = socklen_t(storage.ss_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), &port, socklen_t(port.count), NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard result == 0 else { return "?" }
        let hostText = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let portText = String(decoding: port.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return storage.ss_family == sa_family_t(AF_INET6) ? "[\(hostText)]:\(portText)" : "\(hostText):\(portText)"
    }
}

/// Name resolution with a short cache: like curl's DNS cache (60 s), a client that opens many
/// connections to one host resolves its name once a minute, not once a connection (a lookup of
/// "localhost" alone is a dozen system calls: `/etc/hosts`, a netlink socket for `AI_ADDRCONFIG`).
/// IP literals are never cached; they need no lookup.
enum Resolver {
    struct Address: Sendable {
        var family: Int32
        var socketType: Int32
        var protocolNumber: Int32
        var storage: sockaddr_storage
        var length: socklen_t
    }

    /// How long a lookup is reused.
    static let timeToLive = 60.0
    /// At most this many names are kept (the oldest entries go first).
    static let capacity = 256

    private struct Entry: Sendable {
        var expires: Deadline
        var addresses: [Address]
    }
    private static let cache = Locked<[String: Entry]>([:])

    /// The names in the cache (`name|port`), for tests.
    static var cachedNames: [String] {
        cache.withLock { Array($0.keys) }
    }

    static func addresses(host: String, port: Int, label: String) async throws(HTTPSError) -> [Address] {
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        let numeric = literal.utf8.contains(UInt8(ascii: ":")) || literal.allSatisfy({ $0.isNumber || $0 == "." })
        let key = "\(literal.lowercased())|\(port)"
        if !numeric {
            let entry = cache.withLock { $0[key] }
            if let entry, Deadline.now < entry.expires { return entry.addresses }
        }
        // A name lookup blocks: it runs on the resolver pool while the task waits.
        let name = literal
        let answer = numeric ? lookup(name, port: port, numeric: true) : await ResolverPool.run { lookup(name, port: port, numeric: false) }
        guard let answer else { throw HTTPSError(.cancelled, host: label, "the operation was cancelled") }
        let (status, addresses) = answer
        guard status == 0, !addresses.isEmpty else {
            let reason = status == 0 ? "no usable address" : String(cString: gai_strerror(status))
            throw HTTPSError(.nameResolution, host: label, "the name \(host) could not be resolved: \(reason)", hint: "check the spelling, or use \(setting: .connectTo) HOST:PORT")
        }
        if !numeric {
            cache.withLock { entries in
                if entries.count >= capacity, let oldest = entries.min(by: { $0.value.expires < $1.value.expires })?.key { entries[oldest] = nil }
                entries[key] = Entry(expires: Deadline.after(timeToLive), addresses: addresses)
            }
        }
        return addresses
    }

    /// `getaddrinfo` for TCP, copied out of its list: the status and the addresses.
    private static func lookup(_ name: String, port: Int, numeric: Bool) -> (Int32, [Address]) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = numeric ? AI_NUMERICHOST : AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(name, String(port), &hints, &list)
        guard status == 0 else { return (status, []) }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var cursor = list
        while let info = cursor {
            cursor = info.pointee.ai_next
            guard let address = info.pointee.ai_addr, Int(info.pointee.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size else { continue }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(info.pointee.ai_addrlen))) }
            addresses.append(
                Address(
                    family: info.pointee.ai_family, socketType: info.pointee.ai_socktype, protocolNumber: info.pointee.ai_protocol, storage: storage,
                    length: info.pointee.ai_addrlen))
        }
        return (0, addresses)
    }
}

/// TCP connections and listeners (IPv4 and IPv6), non-blocking, with deadlines.
public enum TCP {
    /// Connects to `host:port`, trying each resolved address in turn until one answers.
    ///
    /// - Throws: ``HTTPSError`` in phase `.nameResolution`, `.connect` or `.timeout`.
    public static func connect(host: String, port: Int, deadline: Deadline, token: CancellationToken? = nil) throws(HTTPSError) -> SocketHandle {
        try Engine.blocking { () async throws(HTTPSError) -> SocketHandle in try await connect(host: host, port: port, deadline: deadline, token: token) }
    }

    /// The async form of ``connect(host:port:deadline:token:)``: the lookup and the connect are
    /// awaited, holding no thread.
    public static func connect(host: String, port: Int, deadline: Deadline, token: CancellationToken? = nil) async throws(HTTPSError) -> SocketHandle {
        let label = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
        let addresses = try await Resolver.addresses(host: host, port: port, label: label)
        if token?.isCancelled == true { throw HTTPSError(.cancelled, host: label, "the operation was cancelled") }
        var lastError = "no address"
        for address in addresses {
            let fd = socket(address.family, address.socketType | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), address.protocolNumber)
            if fd < 0 {
                lastError = String(cString: strerror(errno))
                continue
            }
            let handle = SocketHandle(fd: fd)
            token?.register(handle)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            var storage = address.storage
            let result = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) } }
            if result == 0 { return handle }
            if errno != EINPROGRESS {
                lastError = String(cString: strerror(errno))
                continue
            }
            guard await handle.wait(forRead: false, forWrite: true, until: deadline), token?.isCancelled != true else {
                if token?.isCancelled == true { throw HTTPSError(.cancelled, host: label, "the operation was cancelled") }
                throw HTTPSError(
                    .timeout, host: label, "no answer to the TCP connection within the connect timeout",
                    hint: "check that the server is up and the port is open; raise \(setting: .timeout)")
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return handle }
            lastError = String(cString: strerror(error))
        }
        throw HTTPSError(
            .connect, host: label, "could not connect: \(lastError)",
            hint: lastError.contains("refused") ? "nothing listens on port \(port); check the port and that the server is running" : nil)
    }

    /// Listens on `address:port` (port 0 picks a free one).
    public static func listen(address: String, port: Int, backlog: Int32 = 128) throws(HTTPSError) -> (SocketHandle, Int) {
        let label = "\(address):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST
        var list: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(address, String(port), &hints, &list) == 0, let info = list else {
            throw HTTPSError(.configuration, host: label, "\(address) is not a numeric IP address to listen on")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
        guard fd >= 0 else { throw HTTPSError(.configuration, host: label, "socket() failed: \(String(cString: strerror(errno)))") }
        let handle = SocketHandle(fd: fd)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            throw HTTPSError(
                .configuration, host: label, "cannot listen on \(label): \(reason)",
                hint: reason.contains("in use") ? "another program uses the port; pick another with \(setting: .listeningPort)" : nil)
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            throw HTTPSError(.configuration, host: label, "listen() failed: \(String(cString: strerror(errno)))")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let boundPort: Int
        if storage.ss_family == sa_family_t(AF_INET6) {
            boundPort = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        } else {
            boundPort = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
        }
        return (handle, boundPort)
    }

    /// Accepts one connection, waiting up to `deadline`; nil on timeout or when the listener was shut down.
    public static func accept(_ listener: SocketHandle, until deadline: Deadline) -> SocketHandle? {
        guard listener.wait(forRead: true, forWrite: false, until: deadline) else { return nil }
        let fd = Glibc.accept(listener.fd, nil, nil)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return SocketHandle(fd: fd)
    }
}

internal import COpenSSL
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP
import MTLSTrust
import Synchronization
import Dispatch
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A local HTTPS test server that behaves like IIS with client certificates: per-path Ignore /
/// Accept / Require, the certificate asked for after the request (renegotiation on TLS 1.2,
/// post-handshake auth on TLS 1.3) or in the handshake, IIS substatus answers (403.7, 403.16,
/// 403.17, 403.13, 403.4), Basic and Digest auth, and a log line per request.
public final class TestServer: Sendable {
    public let configuration: TestServerConfiguration
    /// Receives one line per request (and per refused connection).
    public let log: @Sendable (String) -> Void
    let tls: TLSServerContext
    /// One held connection: its client address, since when it has been idle (nil while a request
    /// is being answered), and how to wake its thread (shut the socket, cancel the connection).
    struct Slot {
        var client: String
        var idleSince: ContinuousClock.Instant?
        var wake: @Sendable () -> Void
    }
    struct State {
        var listener: SocketHandle?
        var running = false
        var boundPort = 0
        /// Every held connection, by number; what ``stop()`` and the reaper use to wake workers.
        var slots: [UInt64: Slot] = [:]
        var nextSlot: UInt64 = 0
        /// Worker threads alive (a reaped connection's thread ends shortly after its slot goes).
        var threads = 0
        var nonces: Set<String> = []
    }
    let state = Locked(State())
    let group = DispatchGroup()

    /// The port actually bound (after ``start()``).
    public var boundPort: Int { state.withLock { $0.boundPort } }

    /// Prepares a server; `log` is called from the worker threads, one line at a time per
    /// connection (lines of different connections may come concurrently).
    public init(configuration: TestServerConfiguration, log: @escaping @Sendable (String) -> Void = { _ in }) throws(HTTPSError) {
        self.configuration = configuration
        self.log = log
        self.tls = try TLSServerContext(configuration: configuration.tls)
    }

    /// Binds and starts accepting on a background thread.
    ///
    /// - Returns: The bound port (useful with port 0).
    @discardableResult
    public func start() throws(HTTPSError) -> Int {
        let (socket, port) = try TCP.listen(address: configuration.bindAddress, port: configuration.port)
        state.withLock { state in
            state.listener = socket
            state.running = true
            state.boundPort = port
        }
        // On a thread of its own: the loop blocks in accept for as long as the server runs.
        if DetachedThread.start({ [self] in acceptLoop(socket) }) != 0 {
            DispatchQueue.global().async { [self] in acceptLoop(socket) }
        }
        return port
    }

    /// Stops accepting, closes every connection, and waits for the workers to finish.
    public func stop() {
        let (socket, wakes) = state.withLock { state in
            state.running = false
            defer { state.listener = nil }
            return (state.listener, state.slots.values.map(\.wake))
        }
        socket?.shutdownBoth()
        wakes.forEach { $0() }
        _ = group.wait(timeout: .now() + 5)
        socket?.close()
    }

    var isRunning: Bool { state.withLock { $0.running } }

    func acceptLoop(_ socket: SocketHandle) {
        group.enter()
        defer { group.leave() }
        while isRunning {
            guard let client = TCP.accept(socket, until: .after(0.5)) else { continue }
            guard let slot = admit(client) else {
                client.close()
                continue
            }
            // A thread of its own per connection, bounded by `admit`: Dispatch's pool grows about
            // one thread a second, so blocked workers starved every new connection.
            group.enter()
            let started = DetachedThread.start(stackSize: 1 << 20) { [self] in
                defer {
                    release(slot)
                    group.leave()
                }
                serve(client, slot: slot)
            }
            if started != 0 {
                release(slot)
                group.leave()
                client.close()
            }
        }
    }

    /// The client address of a connection (`host` of `host:port`, brackets kept for IPv6).
    static func clientAddress(_ socket: SocketHandle) -> String {
        guard let peer = socket.peerAddress, let colon = peer.lastIndex(of: ":") else { return "unknown" }
        return String(peer[..<colon])
    }

    /// Takes a slot for a new connection, making room when the limits are reached: under
    /// pressure (more than half the slots in use), connections idle longer than
    /// ``TestServerConfiguration/pressureIdleTimeout`` are closed; at a limit, the connection of
    /// the same client (or, for the total, any) idle longest is closed. Nil when nothing can go:
    /// every held connection is answering a request.
    func admit(_ socket: SocketHandle) -> UInt64? {
        let client = TestServer.clientAddress(socket)
        let now = ContinuousClock.now
        let limits = (total: max(1, configuration.maximumConnections), perClient: max(1, configuration.maximumConnectionsPerClient))
        let (slot, victims, refusal) = state.withLock { state -> (UInt64?, [@Sendable () -> Void], String?) in
            var victims: [@Sendable () -> Void] = []
            func reap(_ id: UInt64) {
                if let slot = state.slots.removeValue(forKey: id) { victims.append(slot.wake) }
            }
            if state.slots.count * 2 > limits.total {
                let stale = state.slots.filter { $0.value.idleSince.map { now - $0 > configuration.pressureIdleTimeout } ?? false }.map(\.key)
                stale.forEach(reap)
            }
            func oldestIdle(_ include: (Slot) -> Bool) -> UInt64? {
                state.slots.filter { $0.value.idleSince != nil && include($0.value) }.min { $0.value.idleSince! < $1.value.idleSince! }?.key
            }
            if state.slots.values.filter({ $0.client == client }).count >= limits.perClient {
                guard let id = oldestIdle({ $0.client == client }) else { return (nil, victims, "\(limits.perClient) connections from \(client), all busy") }
                reap(id)
            }
            if state.slots.count >= limits.total {
                guard let id = oldestIdle({ _ in true }) else { return (nil, victims, "\(limits.total) connections, all busy") }
                reap(id)
            }
            // Reaped threads end soon; until they do, they count, within a margin.
            guard state.threads < limits.total + 64 else { return (nil, victims, "too many connections still closing") }
            let id = state.nextSlot
            state.nextSlot += 1
            state.threads += 1
            state.slots[id] = Slot(client: client, idleSince: now, wake: { socket.shutdownBoth() })
            return (id, victims, nil)
        }
        victims.forEach { $0() }
        if let refusal { log("\(socket.peerAddress ?? client) refused: \(refusal)") }
        return slot
    }

    /// Gives a slot back when its thread ends.
    func release(_ slot: UInt64) {
        state.withLock { state in
            state.slots[slot] = nil
            state.threads -= 1
        }
    }

    /// Marks a connection idle (waiting for a head: may be reaped) or busy (answering a request).
    /// False when the connection was reaped meanwhile.
    @discardableResult
    func mark(_ slot: UInt64, idle: Bool, wake: (@Sendable () -> Void)? = nil) -> Bool {
        state.withLock { state in
            guard state.slots[slot] != nil else { return false }
            state.slots[slot]!.idleSince = idle ? ContinuousClock.now : nil
            if let wake { state.slots[slot]!.wake = wake }
            return true
        }
    }

    /// A failed handshake for the log: each alert with the side that sent it (the transport's
    /// message is worded for a client, "the server sent …"), else the transport's reason.
    static func describeFailure(_ error: HTTPSError) -> String {
        guard let alerts = error.report?.alerts, !alerts.isEmpty else { return error.message }
        return alerts.map(describe).joined(separator: "; ")
    }

    static func alertNote(_ alerts: [TLSAlertRecord]) -> String {
        alerts.isEmpty ? "" : " (" + alerts.map(describe).joined(separator: "; ") + ")"
    }

    static func describe(_ alert: TLSAlertRecord) -> String {
        "\(alert.level) alert \"\(alert.description)\" sent by \(alert.received ? "the client" : "us (the server)")"
    }

}

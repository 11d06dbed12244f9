import Dispatch
import MTLSTrust  // Locked
import Synchronization

#if os(Linux)
    internal import COpenSSLShims  // epoll and eventfd
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The I/O engine: a few event-loop threads that wait on every socket of the process (epoll on
/// Linux, `poll` elsewhere) and run the tasks that drive them.
///
/// Every socket operation of the transport is non-blocking. Where OpenSSL or the kernel says
/// "not now" (`SSL_ERROR_WANT_READ`/`WANT_WRITE`, `EINPROGRESS`, `EAGAIN`), the task awaits
/// ``EventLoop/wait(fd:forRead:forWrite:until:)``: its continuation is kept by the loop and resumed
/// when the descriptor is ready or the deadline passes. Each loop is also a `TaskExecutor`: an
/// exchange (``HTTPSClient/send(_:)``, ``LoginSession/send(_:)``) prefers one loop, so its
/// handshake, parsing and wake-ups run on that thread without crossing to another. A name lookup,
/// which has no non-blocking form, runs on a small resolver pool and is awaited the same way.
///
/// The blocking API is ``Engine/blocking(onLoop:_:)``: the same async code run by a task on a
/// loop that the calling thread turns itself until the work ends (a *driven* loop: the same
/// class, with `poll` and no thread or descriptor of its own; each thread keeps one, and the
/// loop's one worker task, for its next call). A single blocking read, write or wait
/// (``TLSConnection``'s, ``SocketHandle``'s) makes no task at all: it runs the same steps as the
/// async form and `poll`s its one socket on the calling thread. Inside a blocking call's task, a
/// wait for a socket is that same `poll` while the driven loop has nothing else to run
/// (``EventLoop/hasOnlyTheCallingTask``): the task is not suspended and resumed around each wait
/// of a kept-alive request. Nothing behaves differently on one thread or another.
package enum Engine {
    /// The loops: one per online core, at least 1 and at most 8.
    package static let loops: [EventLoop] = {
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let count = max(1, min(cores, 8))
        return (0..<count).map { EventLoop(index: $0) }
    }()

    private static let nextLoop = Locked(0)

    /// The next loop, round robin: where a new exchange (and its sockets) goes.
    package static func anyLoop() -> EventLoop {
        let index = nextLoop.withLock { next in
            next = (next + 1) % loops.count
            return next
        }
        return loops[index]
    }

    /// Runs `work` on a loop with a ``CancellationToken`` that the task's cancellation fires:
    /// every socket registered with it is shut down at once, so the exchange ends with
    /// `.cancelled` within a wake-up, and its connection is closed, not pooled.
    package static func run<T>(host: String, _ work: (CancellationToken) async throws(HTTPSError) -> T) async throws(HTTPSError) -> T {
        let token = CancellationToken()
        let loop = anyLoop()
        let result: Result<T, HTTPSError> = await withTaskCancellationHandler {
            await withTaskExecutorPreference(loop) { () async -> Result<T, HTTPSError> in
                if Task.isCancelled { token.cancel() }
                do throws(HTTPSError) {
                    return .success(try await work(token))
                } catch {
                    return .failure(error)
                }
            }
        } onCancel: {
            token.cancel()
        }
        if case .failure(let error) = result, error.phase != .cancelled, token.isCancelled {
            throw HTTPSError(.cancelled, host: host, "the task was cancelled (\(error.message))")
        }
        return try result.get()
    }

    /// The blocking API's driver: runs `work` in a task and waits for it.
    ///
    /// With `onLoop` (the default), `work` runs on the worker task of a driven loop that this
    /// thread turns until `work` ends: its waits are `poll`s on this thread, as a blocking call's
    /// should be, and it needs no other thread. The thread keeps that loop, and its worker, for
    /// its next call (a client's blocking `send`s in a row make no task and no loop each). Called
    /// on a loop's own thread (from inside an exchange), a driven loop runs nested, and that loop's
    /// other exchanges wait until the call returns: call the async API there instead. With
    /// `onLoop` false, the task runs on the global executor (for a task group of many exchanges)
    /// and this thread waits on a semaphore; that form must not be called on a loop's thread.
    package static func blocking<T, E: Error>(onLoop: Bool = true, _ work: nonisolated(nonsending) () async throws(E) -> T) throws(E) -> T {
        try withoutActuallyEscaping(work) { escapable in
            var frame = BlockingFrame(work: escapable)
            withUnsafeMutablePointer(to: &frame) { pointer in
                let frame = BlockingFrame.Pointer(pointer)
                if onLoop {
                    let loop = EventLoop.takeDriver()
                    // The function captures nothing (in the specialized code, where `T` and `E`
                    // are known): it and the frame's address make up the work, with nothing
                    // allocated for a closure's context.
                    let work = EventLoop.BlockingWork(frame: UnsafeMutableRawPointer(pointer)) { raw in
                        await BlockingFrame<T, E>.Pointer(raw.assumingMemoryBound(to: BlockingFrame<T, E>.self)).run()
                    }
                    let jobBuffer = loop.drive(starting: { loop.runOnWorker(work) }, until: { loop.workerCallEnded })
                    loop.keepAsDriver(jobBuffer: jobBuffer)
                    return
                }
                precondition(
                    EventLoop.current == nil,
                    "a blocking mtls call was made on one of the engine's loop threads, which would wait for itself; call the async API (try await) there")
                let call = BlockingCall()
                Task {
                    await frame.run()
                    call.finish()
                }
                call.done.wait()
            }
            return frame.outcome.take()!  // moved out, not copied (a response is a large value)
        }.get()
    }

    /// A blocking call's work and answer, on the caller's stack while its task runs.
    ///
    /// The task gets a pointer to it, not the values: a class generic over the answer's type
    /// (what this was) has its metadata looked up, and its fields destroyed through it, on every
    /// call; and the task takes `work` out before running it, so that nothing of the caller's
    /// closure is left to the task once the caller has been told it ended
    /// (`withoutActuallyEscaping` checks that).
    private struct BlockingFrame<T, E: Error> {
        /// The work runs where the task is (`nonisolated(nonsending)`), as the exchange under it
        /// does: no hop to the global executor and back on each call.
        typealias Work = nonisolated(nonsending) () async throws(E) -> T
        var work: Work?
        var outcome: Result<T, E>? = nil

        struct Pointer: @unchecked Sendable {
            // @unchecked Sendable: the frame is the caller's, which waits without touching it
            // until the task has ended (the loop's `workerCallEnded` or `BlockingCall`'s
            // semaphore orders the task's writes before the caller's reads).
            let pointer: UnsafeMutablePointer<BlockingFrame>
            init(_ pointer: UnsafeMutablePointer<BlockingFrame>) { self.pointer = pointer }

            nonisolated(nonsending) func run() async {
                guard let work = pointer.pointee.work.take() else { return }
                do throws(E) {
                    pointer.pointee.outcome = .success(try await work())
                } catch {
                    pointer.pointee.outcome = .failure(error)
                }
            }
        }
    }

    /// How a caller that does not drive a loop learns that its call's task ended (a driven
    /// loop's caller asks the loop: ``EventLoop/workerCallEnded``).
    private final class BlockingCall: Sendable {
        /// Signalled when the task ends; its signal orders the task's writes before the caller's reads.
        let done = DispatchSemaphore(value: 0)

        func finish() { done.signal() }
    }
}

/// One event-loop thread: the tasks that prefer it (a job queue) and the descriptors and deadlines
/// they wait for.
///
/// A waiter is keyed by its descriptor: one task drives a connection at a time, so at most one
/// wait per descriptor is outstanding. On Linux each wait arms the descriptor once
/// (`EPOLLONESHOT`, one `epoll_ctl`); elsewhere the loop polls the waiting descriptors.
package final class EventLoop: TaskExecutor, Sendable {
    private struct Waiter {
        var id: UInt64
        var events: Int16
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var jobs: [UnownedJob] = []
        var waiters: [Int32: Waiter] = [:]
        var timers = TimerHeap()
        var nextID: UInt64 = 0
        /// True while the thread is (about to be) asleep in epoll_wait/poll: a job or a wait
        /// added from another thread must wake it.
        var sleeping = false
        /// A driven loop: how many jobs the batch being run holds (the one running included).
        var batch = 0
        /// A driven loop: its worker task, which runs the blocking calls made on it.
        var worker = Worker.none
    }

    /// A driven loop's worker: one task, made by the loop's first blocking call, that runs each
    /// call's work in turn and waits here between calls. A thread's blocking calls in a row (a
    /// client's kept-alive `send`s) then make no task each: a task's creation, its first
    /// allocations and its teardown were a fifth of such a call's own CPU time.
    private enum Worker {
        case none
        /// Between calls, waiting for the next one's work (nil: end).
        case idle(UnsafeContinuation<BlockingWork?, Never>)
        case busy

        var isBusy: Bool { if case .busy = self { true } else { false } }
        var exists: Bool { if case .none = self { false } else { true } }
    }

    /// One blocking call's work, as the worker runs it: a function of the call's frame (on the
    /// caller's stack, ``Engine/blocking(onLoop:_:)``) and the frame's address. (A struct: as the
    /// generic argument of the worker's continuation, a bare closure would be reabstracted, two
    /// thunks and their frames, on every call.)
    fileprivate struct BlockingWork: @unchecked Sendable {
        // @unchecked Sendable: `frame` is the caller's, untouched by it until the work has ended.
        typealias Body = nonisolated(nonsending) @Sendable (UnsafeMutableRawPointer) async -> Void
        let frame: UnsafeMutableRawPointer
        let body: Body

        nonisolated(nonsending) func run() async { await body(frame) }
    }

    /// The queue, the waiters and the timers, shared with the threads that enqueue jobs and the
    /// tasks that register waits.
    private let state = Locked(State())
    package let index: Int
    /// True for a loop that a blocking call turns on its own thread (``drive(until:)``): it polls
    /// its waiters and sleeps on `driverWake` when it has none.
    private let driven: Bool
    private let driverWake = DispatchSemaphore(value: 0)
    /// A driven loop: set once the blocking call's work has ended and the worker waits again
    /// (its release orders the work's writes before the calling thread's reads).
    private let workerCallDone = Atomic(false)
    #if os(Linux)
        private let epoll: Int32
        private let wakeFD: Int32
    #else
        private let wakePipe: (read: Int32, write: Int32)
    #endif

    /// A driven loop: no thread and no descriptor of its own.
    fileprivate init(drivenBy: ()) {
        index = -1
        driven = true
        #if os(Linux)
            epoll = -1
            wakeFD = -1
        #else
            wakePipe = (-1, -1)
        #endif
    }

    fileprivate init(index: Int) {
        self.index = index
        driven = false
        #if os(Linux)
            epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            wakeFD = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
            precondition(epoll >= 0 && wakeFD >= 0, "the I/O engine could not create its epoll set: \(String(cString: strerror(errno)))")
            var event = epoll_event()
            event.events = UInt32(EPOLLIN.rawValue)
            event.data.fd = wakeFD
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event)
        #else
            var fds: [Int32] = [-1, -1]
            precondition(pipe(&fds) == 0, "the I/O engine could not create its wake-up pipe: \(String(cString: strerror(errno)))")
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            wakePipe = (fds[0], fds[1])
        #endif
        let started = DetachedThread.start { [self] in run() }
        precondition(started == 0, "the I/O engine could not start its loop thread (pthread_create: \(started))")
    }

    /// The loop whose thread is running, if any.
    static var current: EventLoop? {
        pthread_getspecific(LoopThreadKey.key).map { Unmanaged<EventLoop>.fromOpaque($0).takeUnretainedValue() }
    }

    // MARK: TaskExecutor

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let onThisLoop = EventLoop.current === self
        if driven {
            state.withLock { $0.jobs.append(job) }
            if !onThisLoop { driverWake.signal() }
            return
        }
        let wake = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.sleeping, !onThisLoop else { return false }
            state.sleeping = false
            return true
        }
        if wake { wakeUp() }
    }

    // MARK: Waiting

    /// True on a driven loop whose thread is running the only job it has, with no other job
    /// queued and no wait registered: while that job waits, the loop has nothing else to do (a
    /// blocking call's one task; the exchange makes no child tasks), so the wait may be the
    /// thread's own `poll` (``SocketHandle/wait(forRead:forWrite:until:)``) without suspending it.
    var hasOnlyTheCallingTask: Bool {
        guard driven, EventLoop.current === self else { return false }
        return state.withLock { $0.batch <= 1 && $0.jobs.isEmpty && $0.waiters.isEmpty }
    }

    /// Waits until `fd` is readable or writable (as asked), or `deadline` passes: true when
    /// ready (or when the descriptor cannot be watched: the next read or write reports why),
    /// false on the deadline.
    ///
    /// Never inlined: the continuation's slots are then allocated (in task memory) only by a wait
    /// that suspends, not on entry to every read and write that might (a kept-alive request's
    /// waits are the thread's own `poll`, ``hasOnlyTheCallingTask``).
    @inline(never)
    package func wait(fd: Int32, forRead: Bool, forWrite: Bool, until deadline: Deadline) async -> Bool {
        if deadline != .distantFuture && deadline.millisecondsLeft == 0 { return false }
        let events = Int16((forRead ? POLLIN : 0) | (forWrite ? POLLOUT : 0))
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let onThisLoop = EventLoop.current === self
            let (id, wake) = state.withLock { state -> (UInt64, Bool) in
                state.nextID &+= 1
                let id = state.nextID
                state.waiters[fd] = Waiter(id: id, events: events, continuation: continuation)
                if deadline != .distantFuture { state.timers.push(.init(deadline: deadline, fd: fd, id: id)) }
                guard state.sleeping, !onThisLoop else { return (id, false) }
                state.sleeping = false
                return (id, true)
            }
            #if os(Linux)
                if driven {
                    if wake { wakeUp() }
                    return
                }
                var event = epoll_event()
                event.events = (forRead ? UInt32(EPOLLIN.rawValue) : 0) | (forWrite ? UInt32(EPOLLOUT.rawValue) : 0) | UInt32(EPOLLONESHOT.rawValue)
                event.data.fd = fd
                let armed = epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event) == 0 || (errno == ENOENT && epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0)
                if !armed { resume(fd: fd, id: id, ready: true) }
            #endif
            if wake { wakeUp() }
        }
    }

    /// Ends any wait on `fd` as ready (a cancellation shut the socket down, or its owner is about
    /// to close it): the waiting task's next read or write reports what happened.
    package func interrupt(fd: Int32) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: fd) }
        waiter?.continuation.resume(returning: true)
    }

    private func resume(fd: Int32, id: UInt64, ready: Bool) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiters[fd], waiter.id == id else { return nil }
            state.waiters[fd] = nil
            return waiter
        }
        waiter?.continuation.resume(returning: ready)
    }

    /// Wakes a driven loop's thread (its task ended, or was resumed, elsewhere; on the thread
    /// itself there is nobody to wake).
    private func wakeDriver() {
        if driven && EventLoop.current !== self { driverWake.signal() }
    }

    /// True once the work last given to ``runOnWorker(_:)`` has ended and the worker waits again.
    fileprivate var workerCallEnded: Bool { workerCallDone.load(ordering: .acquiring) }

    /// Runs `work` on this driven loop's worker task (made now if the loop has none);
    /// ``workerCallEnded`` turns true once the worker waits again. Called by the thread that turns
    /// the loop, as ``drive(starting:until:)``'s start: the worker's next job is queued here,
    /// without a wake-up.
    fileprivate func runOnWorker(_ next: BlockingWork) {
        workerCallDone.store(false, ordering: .relaxed)
        let idle = state.withLock { state -> UnsafeContinuation<BlockingWork?, Never>? in
            guard case .idle(let continuation) = state.worker else {
                // A loop is turned by one blocking call at a time (a nested call takes a loop of
                // its own), so its worker is idle or not made yet.
                precondition(!state.worker.isBusy, "a driven loop's worker was asked for two calls at once")
                state.worker = .busy
                return nil
            }
            state.worker = .busy
            return continuation
        }
        if let idle {
            idle.resume(returning: next)
        } else {
            Task(executorPreference: self) { await self.workerLoop(first: next) }
        }
    }

    // nonisolated(nonsending), as every step under it: the worker stays where it runs (its loop),
    // with no executor switch asked of the runtime on each call.
    nonisolated(nonsending) private func workerLoop(first: BlockingWork) async {
        var next: BlockingWork? = first
        while let current = next {
            await current.run()
            // Told only once the worker waits again, so that a call's end finds its loop
            // with no job of the worker's left (a loop with jobs is not kept for the next call).
            next = await withUnsafeContinuation { continuation in
                state.withLock { $0.worker = .idle(continuation) }
                workerCallDone.store(true, ordering: .releasing)
                wakeDriver()
            }
        }
        state.withLock { $0.worker = .none }
    }

    /// Ends this driven loop's worker, if it has one: before the loop is let go (the worker, which
    /// prefers the loop, keeps it alive while it waits). Turns the loop on this thread until the
    /// worker has ended.
    fileprivate func retireWorker() {
        let idle = state.withLock { state -> UnsafeContinuation<BlockingWork?, Never>? in
            guard case .idle(let continuation) = state.worker else { return nil }
            state.worker = .busy
            return continuation
        }
        guard let idle else { return }
        _ = drive(starting: { idle.resume(returning: nil) }, until: { state.withLock { !$0.worker.exists } })
    }

    /// This thread's driven loop for a blocking call, taken from the thread (so that a blocking
    /// call made inside it gets a new one), or a new one.
    fileprivate static func takeDriver() -> EventLoop {
        guard let kept = pthread_getspecific(DriverThreadKey.key) else { return EventLoop(drivenBy: ()) }
        pthread_setspecific(DriverThreadKey.key, nil)
        return Unmanaged<EventLoop>.fromOpaque(kept).takeRetainedValue()
    }

    /// Keeps this driven loop for the thread's next blocking call: when nothing is left on it (no
    /// job, no wait) and the thread keeps none already. The timers left are those of waits that
    /// ended early; they go. `jobBuffer` (empty: the buffer ``drive(starting:until:)`` ran its jobs
    /// from) becomes the queue, so that the next call's first job is queued without an allocation.
    fileprivate func keepAsDriver(jobBuffer: [UnownedJob]) {
        let idle = state.withLock { state -> Bool in
            guard state.jobs.isEmpty, state.waiters.isEmpty else { return false }
            if state.jobs.capacity < jobBuffer.capacity { state.jobs = jobBuffer }
            state.timers.removeAll()
            return true
        }
        guard idle, pthread_getspecific(DriverThreadKey.key) == nil else {
            retireWorker()
            return
        }
        pthread_setspecific(DriverThreadKey.key, Unmanaged.passRetained(self).toOpaque())
    }

    private func wakeUp() {
        if driven {
            driverWake.signal()
            return
        }
        var one: UInt64 = 1
        #if os(Linux)
            _ = write(wakeFD, &one, 8)
        #else
            _ = write(wakePipe.write, &one, 1)
        #endif
    }

    // MARK: The loop

    private func run() {
        pthread_setspecific(LoopThreadKey.key, Unmanaged.passUnretained(self).toOpaque())
        let executor = asUnownedTaskExecutor()
        var jobs: [UnownedJob] = []
        var readyFDs: [Int32] = []
        var resumptions: [(CheckedContinuation<Bool, Never>, Bool)] = []
        #if os(Linux)
            var events = [epoll_event](repeating: epoll_event(), count: 256)
        #else
            var pollSet: [pollfd] = []
        #endif
        while true {
            state.withLock { swap(&jobs, &$0.jobs) }
            for job in jobs { job.runSynchronously(on: executor) }
            jobs.removeAll(keepingCapacity: true)
            let timeout = state.withLock { state -> Int32 in
                if !state.jobs.isEmpty { return 0 }
                let timeout = state.timers.first.map { $0.deadline.millisecondsLeft } ?? -1
                if timeout != 0 { state.sleeping = true }
                return timeout
            }
            readyFDs.removeAll(keepingCapacity: true)
            #if os(Linux)
                let count = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), timeout) }
                for event in events.prefix(max(0, Int(count))) {
                    if event.data.fd == wakeFD {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                    } else {
                        readyFDs.append(event.data.fd)
                    }
                }
            #else
                pollSet.removeAll(keepingCapacity: true)
                pollSet.append(pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0))
                state.withLock { state in
                    for (fd, waiter) in state.waiters { pollSet.append(pollfd(fd: fd, events: waiter.events, revents: 0)) }
                }
                let count = poll(&pollSet, nfds_t(pollSet.count), timeout)
                if count > 0 {
                    if pollSet[0].revents != 0 {
                        var scratch = [UInt8](repeating: 0, count: 64)
                        while read(wakePipe.read, &scratch, scratch.count) > 0 {}
                    }
                    for entry in pollSet.dropFirst() where entry.revents != 0 { readyFDs.append(entry.fd) }
                }
            #endif
            settle(readyFDs, &resumptions)
        }
    }

    /// Ends the waits whose descriptors are ready or whose deadlines passed.
    private func settle(_ readyFDs: [Int32], _ resumptions: inout [(CheckedContinuation<Bool, Never>, Bool)]) {
        state.withLock { state in
            state.sleeping = false
            for fd in readyFDs {
                if let waiter = state.waiters.removeValue(forKey: fd) { resumptions.append((waiter.continuation, true)) }
            }
            let now = Deadline.now
            while let first = state.timers.first, !(now < first.deadline) {
                state.timers.pop()
                if let waiter = state.waiters[first.fd], waiter.id == first.id {
                    state.waiters[first.fd] = nil
                    resumptions.append((waiter.continuation, false))
                }
            }
            // Timers of waits that ended early stay until their deadline; when they pile up
            // (a kept-alive client makes one per request), keep only the live ones.
            if state.timers.count > 4 * state.waiters.count + 1024 {
                let waiters = state.waiters
                state.timers.keep { waiters[$0.fd]?.id == $0.id }
            }
        }
        for (continuation, ready) in resumptions { continuation.resume(returning: ready) }
        resumptions.removeAll(keepingCapacity: true)
    }

    /// Turns a driven loop on the calling thread until `finished()`: the blocking API's loop. Its
    /// waits are one `poll` on this thread; with none (a name lookup, a hop to another loop) it
    /// sleeps until a job arrives. `start` (which makes the task) runs once the thread is the
    /// loop's, so the task's first job is queued without a wake-up. Returns the (empty) buffer it
    /// ran its jobs from, for ``keepAsDriver(jobBuffer:)``.
    fileprivate func drive(starting start: () -> Void, until finished: () -> Bool) -> [UnownedJob] {
        let previous = pthread_getspecific(LoopThreadKey.key)
        pthread_setspecific(LoopThreadKey.key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(LoopThreadKey.key, previous) }
        start()
        let executor = asUnownedTaskExecutor()
        var jobs: [UnownedJob] = []
        var readyFDs: [Int32] = []
        var resumptions: [(CheckedContinuation<Bool, Never>, Bool)] = []
        var pollSet: [pollfd] = []
        while true {
            state.withLock { state in
                swap(&jobs, &state.jobs)
                state.batch = jobs.count
            }
            for job in jobs { job.runSynchronously(on: executor) }
            jobs.removeAll(keepingCapacity: true)
            if finished() { return jobs }
            pollSet.removeAll(keepingCapacity: true)
            let timeout = state.withLock { state -> Int32 in
                if !state.jobs.isEmpty { return 0 }
                for (fd, waiter) in state.waiters { pollSet.append(pollfd(fd: fd, events: waiter.events, revents: 0)) }
                return state.timers.first.map { $0.deadline.millisecondsLeft } ?? -1
            }
            readyFDs.removeAll(keepingCapacity: true)
            if pollSet.isEmpty {
                if timeout < 0 {
                    driverWake.wait()
                } else if timeout > 0 {
                    _ = driverWake.wait(timeout: .now() + .milliseconds(Int(timeout)))
                }
            } else if poll(&pollSet, nfds_t(pollSet.count), timeout) > 0 {
                for entry in pollSet where entry.revents != 0 { readyFDs.append(entry.fd) }
            }
            settle(readyFDs, &resumptions)
        }
    }
}

/// The thread-specific slot that names a loop's thread.
private enum LoopThreadKey {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "the I/O engine could not create a thread-specific key")
        return key
    }()
}

/// The thread-specific slot where a thread keeps its driven loop between blocking calls
/// (released when the thread ends).
private enum DriverThreadKey {
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { kept in
            guard let kept else { return }
            let loop = Unmanaged<EventLoop>.fromOpaque(kept)
            loop.takeUnretainedValue().retireWorker()
            loop.release()
        }
        precondition(created == 0, "the I/O engine could not create a thread-specific key")
        return key
    }()
}

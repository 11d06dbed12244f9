internal import CFiber
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Many blocking-style jobs on a few threads: each job runs on a fiber (its own stack), and where
/// the transport would block in `poll(2)` — ``SocketHandle/wait(forRead:forWrite:until:)``, the
/// only place it waits — the fiber parks on its thread's epoll instead and the thread runs the
/// next ready fiber.
///
/// This is how `probe --targets` drives a thousand connections through the same synchronous TLS,
/// renegotiation and HTTP code a single probe uses, without a thread per connection. Name lookups,
/// the one other blocking call, run on a few helper threads while the fiber is parked
/// (``offload(_:)``). Nothing holds a lock across a wait, so fibers sharing a thread cannot
/// deadlock on one another.
package enum FiberLoop {
    /// True where fibers work (Linux with glibc); elsewhere callers keep a thread per job.
    package static var isSupported: Bool {
        #if os(Linux)
            mtls_fiber_supported() == 1
        #else
            false
        #endif
    }

    /// What a run used, for reports and tests.
    package struct Statistics: Sendable {
        /// Loop threads and helper threads started.
        package var loopThreads = 0
        package var helperThreads = 0
        /// The most fibers alive at once.
        package var peakFibers = 0
        /// Times a fiber parked on a socket.
        package var parks = 0
    }

    /// Runs `body(i)` for every `i` in `0..<count`, at most `concurrency` at a time, spread over
    /// `threads` loop threads (the caller's thread waits for them), each job on a stack of
    /// `stackSize` bytes.
    ///
    /// - Returns: nil, having run nothing, where fibers are unsupported or no loop could start.
    package static func run(
        count: Int, concurrency: Int, threads: Int, stackSize: Int = 1 << 20, _ body: @escaping @Sendable (Int) -> Void
    ) -> Statistics? {
        #if os(Linux)
            guard isSupported, count > 0 else { return count == 0 ? Statistics() : nil }
            let loopCount = max(1, min(threads, concurrency, count))
            let capacity = (min(concurrency, count) + loopCount - 1) / loopCount
            let jobs = JobCounter(limit: count)
            let helpers = Helpers()
            var loops: [Loop] = []
            for _ in 0..<loopCount {
                guard let loop = Loop(capacity: capacity, stackSize: stackSize, jobs: jobs, helpers: helpers, body: body) else { break }
                loops.append(loop)
            }
            guard !loops.isEmpty else { return nil }
            let group = DispatchGroup()
            var started: [Loop] = []
            for loop in loops {
                group.enter()
                let result = DetachedThread.start {
                    loop.run()
                    group.leave()
                }
                if result == 0 { started.append(loop) } else { group.leave() }
            }
            guard !started.isEmpty else { return nil }
            group.wait()
            var statistics = Statistics(loopThreads: started.count, helperThreads: helpers.threadsUsed)
            for loop in started {
                statistics.peakFibers += loop.peakFibers
                statistics.parks += loop.parks
            }
            return statistics
        #else
            return nil
        #endif
    }

    /// On a fiber, runs `work` on a helper thread while the fiber is parked (for calls with no
    /// non-blocking form, like `getaddrinfo`); elsewhere runs it here.
    package static func offload<T>(_ work: @escaping @Sendable () -> T) -> T {
        #if os(Linux)
            guard let slot = Slot.current else { return work() }
            return slot.offload(work)
        #else
            return work()
        #endif
    }

    /// True when the caller runs on a fiber (a blocking system call would stall its whole loop).
    static var isOnFiber: Bool {
        #if os(Linux)
            mtls_fiber_current() != nil
        #else
            false
        #endif
    }

    /// On a fiber, parks it until `fd` is ready or `deadline` passes and returns whether it is
    /// ready; nil on a thread's own stack (the caller polls).
    static func park(fd: Int32, forRead: Bool, forWrite: Bool, until deadline: Deadline) -> Bool? {
        #if os(Linux)
            guard let slot = Slot.current else { return nil }
            return slot.park(fd: fd, events: (forRead ? UInt32(EPOLLIN.rawValue) : 0) | (forWrite ? UInt32(EPOLLOUT.rawValue) : 0), until: deadline)
        #else
            return nil
        #endif
    }
}

#if os(Linux)
    /// Hands out job indexes to the loops.
    private final class JobCounter: Sendable {
        private let next = Mutex(0)
        let limit: Int
        init(limit: Int) { self.limit = limit }
        func take() -> Int? {
            next.withLock { next in
                guard next < limit else { return nil }
                next += 1
                return next - 1
            }
        }
    }

    /// The helper threads of ``FiberLoop/offload(_:)``: a few serial queues, so that at most that
    /// many threads ever block in them whatever the number of fibers.
    private final class Helpers: Sendable {
        static let width = 4
        private let queues = (0..<width).map { DispatchQueue(label: "mtls.fiber.helper.\($0)") }
        private let state = Mutex((next: 0, used: Set<Int>()))
        func submit(_ work: @escaping @Sendable () -> Void) {
            let index = state.withLock { state in
                state.next = (state.next + 1) % Self.width
                state.used.insert(state.next)
                return state.next
            }
            queues[index].async(execute: work)
        }
        var threadsUsed: Int { state.withLock { $0.used.count } }
    }

    /// A value handed from a helper thread back to its parked fiber (written before the wake-up,
    /// read after it).
    private final class Handoff<T>: @unchecked Sendable {
        var value: T?
    }

    /// A min-heap of timer entries by deadline.
    private struct TimerHeap {
        struct Entry {
            var deadline: Deadline
            var slot: Int
            var generation: UInt64
        }
        private(set) var entries: [Entry] = []

        var first: Entry? { entries.first }

        mutating func push(_ entry: Entry) {
            entries.append(entry)
            var child = entries.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard entries[child].deadline < entries[parent].deadline else { break }
                entries.swapAt(child, parent)
                child = parent
            }
        }

        mutating func pop() {
            guard !entries.isEmpty else { return }
            entries.swapAt(0, entries.count - 1)
            entries.removeLast()
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
                if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
                if smallest == parent { return }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
    }

    /// One fiber's stack and state, reused job after job. Touched only by its loop's thread
    /// (the `@unchecked` is for the pointer the C fiber keeps to it).
    private final class Slot: @unchecked Sendable {
        unowned let loop: Loop
        let index: Int
        let stack: UnsafeMutableRawPointer
        let stackSize: Int
        var fiber: OpaquePointer?
        var job = 0
        /// Bumped on every park, so that a timer left from an earlier park is ignored.
        var generation: UInt64 = 0
        var parked = false
        /// Why the last park ended: true for ready (or helper done), false for the deadline.
        var ready = false

        init(loop: Loop, index: Int, stack: UnsafeMutableRawPointer, stackSize: Int) {
            self.loop = loop
            self.index = index
            self.stack = stack
            self.stackSize = stackSize
        }

        /// The slot whose fiber is running on this thread.
        static var current: Slot? {
            guard let fiber = mtls_fiber_current(), let owner = mtls_fiber_owner(fiber) else { return nil }
            return Unmanaged<Slot>.fromOpaque(owner).takeUnretainedValue()
        }

        /// Makes a fresh fiber on this slot's stack for `job`.
        func prepare(job: Int) -> Bool {
            if let fiber { mtls_fiber_destroy(fiber) }
            self.job = job
            let entry: @convention(c) (UnsafeMutableRawPointer?) -> Void = { raw in
                let slot = Unmanaged<Slot>.fromOpaque(raw!).takeUnretainedValue()
                slot.loop.body(slot.job)
            }
            let me = Unmanaged.passUnretained(self).toOpaque()
            fiber = mtls_fiber_create(stack, stackSize, entry, me)
            guard let fiber else { return false }
            mtls_fiber_set_owner(fiber, me)
            return true
        }

        func park(fd: Int32, events: UInt32, until deadline: Deadline) -> Bool {
            if deadline != .distantFuture && deadline.millisecondsLeft == 0 { return false }
            var event = epoll_event()
            event.events = events
            event.data.u64 = UInt64(index)
            if epoll_ctl(loop.epoll, EPOLL_CTL_ADD, fd, &event) != 0 {
                // Not a descriptor epoll can watch: the caller's next read or write reports it.
                guard errno == EEXIST, epoll_ctl(loop.epoll, EPOLL_CTL_MOD, fd, &event) == 0 else { return true }
            }
            defer { _ = epoll_ctl(loop.epoll, EPOLL_CTL_DEL, fd, nil) }
            generation &+= 1
            if deadline != .distantFuture { loop.timers.push(.init(deadline: deadline, slot: index, generation: generation)) }
            loop.parks += 1
            suspend()
            return ready
        }

        func offload<T>(_ work: @escaping @Sendable () -> T) -> T {
            let handoff = Handoff<T>()
            let loop = self.loop
            let index = self.index
            generation &+= 1
            loop.helpers.submit {
                handoff.value = work()
                loop.wake(index)
            }
            suspend()
            return handoff.value!
        }

        private func suspend() {
            parked = true
            ready = false
            mtls_fiber_suspend(fiber!)
        }

        deinit {
            if let fiber { mtls_fiber_destroy(fiber) }
            munmap(stack, stackSize)
        }
    }

    /// One thread's event loop: its fibers, the epoll set they park on, their timers, and an
    /// eventfd through which helper threads hand fibers back.
    private final class Loop: @unchecked Sendable {
        let epoll: Int32
        let wakeFD: Int32
        let jobs: JobCounter
        let helpers: Helpers
        let body: @Sendable (Int) -> Void
        var slots: [Slot] = []
        var free: [Int] = []
        var runnable: [Int] = []
        var timers = TimerHeap()
        /// Slots whose helper work finished, filled by helper threads.
        let woken = Mutex<[Int]>([])
        var active = 0
        var peakFibers = 0
        var parks = 0
        private static let wakeMarker = UInt64.max

        init?(capacity: Int, stackSize: Int, jobs: JobCounter, helpers: Helpers, body: @escaping @Sendable (Int) -> Void) {
            self.jobs = jobs
            self.helpers = helpers
            self.body = body
            epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            wakeFD = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
            guard epoll >= 0, wakeFD >= 0 else {
                if epoll >= 0 { close(epoll) }
                if wakeFD >= 0 { close(wakeFD) }
                return nil
            }
            var event = epoll_event()
            event.events = UInt32(EPOLLIN.rawValue)
            event.data.u64 = Self.wakeMarker
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event)
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            let size = (stackSize + page - 1) / page * page + page
            for index in 0..<capacity {
                // Reserved, not committed: only the pages a fiber touches become memory. The
                // lowest page is a guard, so an overflow faults instead of writing into a neighbour.
                let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0)
                guard let mapped, mapped != MAP_FAILED else { break }
                mprotect(mapped, page, PROT_NONE)
                slots.append(Slot(loop: self, index: index, stack: mapped, stackSize: size))
                free.append(index)
            }
            guard !slots.isEmpty else {
                close(epoll)
                close(wakeFD)
                return nil
            }
        }

        deinit {
            close(epoll)
            close(wakeFD)
        }

        /// From a helper thread: makes the slot runnable again.
        func wake(_ slot: Int) {
            woken.withLock { $0.append(slot) }
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }

        func run() {
            var events = [epoll_event](repeating: epoll_event(), count: 256)
            while true {
                while let index = free.last, let job = jobs.take() {
                    free.removeLast()
                    guard slots[index].prepare(job: job) else {
                        // Out of memory for the fiber itself: the job runs on this thread's stack.
                        free.append(index)
                        body(job)
                        continue
                    }
                    active += 1
                    runnable.append(index)
                }
                peakFibers = max(peakFibers, active)
                if active == 0 { return }
                while !runnable.isEmpty {
                    let batch = runnable
                    runnable.removeAll(keepingCapacity: true)
                    for index in batch { resume(slots[index]) }
                }
                if active == 0 { continue }
                let timeout: Int32 = timers.first.map { $0.deadline.millisecondsLeft } ?? -1
                let count = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), timeout) }
                for event in events.prefix(max(0, Int(count))) {
                    if event.data.u64 == Self.wakeMarker {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                        for index in woken.withLock({ list in
                            defer { list.removeAll() }
                            return list
                        }) { makeRunnable(index, ready: true) }
                    } else {
                        makeRunnable(Int(event.data.u64), ready: true)
                    }
                }
                let now = Deadline.now
                while let first = timers.first, !(now < first.deadline) {
                    timers.pop()
                    if slots[first.slot].generation == first.generation { makeRunnable(first.slot, ready: false) }
                }
            }
        }

        private func makeRunnable(_ index: Int, ready: Bool) {
            let slot = slots[index]
            guard slot.parked else { return }
            slot.parked = false
            slot.ready = ready
            runnable.append(index)
        }

        private func resume(_ slot: Slot) {
            guard let fiber = slot.fiber, mtls_fiber_resume(fiber) == 1 else { return }
            mtls_fiber_destroy(fiber)
            slot.fiber = nil
            active -= 1
            free.append(slot.index)
        }
    }
#endif

import Dispatch
import MTLSTrust  // Locked

/// The resolver pool: `getaddrinfo` has no non-blocking form, so lookups run on at most
/// ``width`` threads of their own (started as needed, kept) and their answers are awaited.
enum ResolverPool {
    static let width = 4

    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var threads = 0
        var idle = 0
    }
    private static let state = Locked(State())
    private static let pending = DispatchSemaphore(value: 0)

    /// Runs `work` on a resolver thread and returns its value; nil when the task was cancelled
    /// first (the lookup finishes on its thread and is dropped).
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        let handoff = Handoff<T>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
                guard handoff.install(continuation) else { return }
                submit { handoff.finish(work()) }
            }
        } onCancel: {
            handoff.finish(nil)
        }
    }

    private static func submit(_ job: @escaping @Sendable () -> Void) {
        let startThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.idle == 0, state.threads < width else { return false }
            state.threads += 1
            return true
        }
        if startThread {
            let result = DetachedThread.start(stackSize: 512 << 10) { work() }
            if result != 0 { state.withLock { $0.threads -= 1 } }
        }
        pending.signal()
    }

    private static func work() {
        while true {
            state.withLock { $0.idle += 1 }
            pending.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                state.idle -= 1
                return state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            }
            job?()
        }
    }

    /// Resumes a continuation once: with the answer or, on cancellation, nil.
    private final class Handoff<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T?, Never>?
            var finished = false
        }
        private let state = Locked(State())

        /// Keeps the continuation; false (having resumed it) when the task was already cancelled.
        func install(_ continuation: CheckedContinuation<T?, Never>) -> Bool {
            let finished = state.withLock { state -> Bool in
                if !state.finished { state.continuation = continuation }
                return state.finished
            }
            if finished { continuation.resume(returning: nil) }
            return !finished
        }

        func finish(_ value: T?) {
            let continuation = state.withLock { state -> CheckedContinuation<T?, Never>? in
                state.finished = true
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: value)
        }
    }
}

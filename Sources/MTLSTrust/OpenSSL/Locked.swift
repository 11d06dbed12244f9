#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a pthread mutex: the package's one lock for shared mutable state (the
/// engine's queues, waiters and idle pool, the library context, the test server's connection
/// table, caches, the CLI's result tables).
///
/// Not `Synchronization.Mutex`: on Linux it hands a contended lock over inside the kernel
/// (`FUTEX_LOCK_PI` / `FUTEX_UNLOCK_PI`: the kernel writes the owner into the lock word), an
/// ordering ThreadSanitizer cannot see, so every contended handover between two threads was
/// reported as a data race on the guarded value (`scripts/sanitizers.sh thread`, see
/// docs/RELIABILITY.md). `pthread_mutex_lock` is one the sanitizer intercepts, so its reports on
/// the package stay meaningful. `package`: MTLSHTTP, MTLSTestServer, MTLSCommandLine and the tests
/// use it; it is not part of the library's API.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: the value is only touched between pthread_mutex_lock and _unlock.
    // The value lives in an allocation of its own, not in a stored property: for a zero-sized
    // value (`Locked(())`, a lock that guards other fields) a stored property's exclusivity access
    // was reported by TSan at the object's own address, where another thread reads the object's
    // header unlocked, a race on nothing. An allocation of its own is never shared.
    // @usableFromInline: `withLock` is inlined into its callers in the other modules (the
    // engine takes several locks per request), so it is specialized there instead of being called
    // with the value's generic metadata each time.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    package init(_ value: Value) {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

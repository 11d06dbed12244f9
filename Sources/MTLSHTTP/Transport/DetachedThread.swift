#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A detached POSIX thread, for the test server's accept loop and the fleet's workers: the
/// blocking sockets they drive must not run on Dispatch's or the cooperative pool, and
/// `Foundation.Thread` is the only reason those modules would need full Foundation.
package enum DetachedThread {
    private final class Start {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts `body` on a new thread with `stackSize` bytes of stack or the system's default.
    /// Returns the `pthread_create` error, or 0.
    @discardableResult
    package static func start(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let context = Unmanaged.passRetained(Start(body: body)).toOpaque()
        #if os(Linux)
            var thread = pthread_t()
        #else
            var thread: pthread_t?
        #endif
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                start.body()
                return nil
            }, context)
        if result != 0 { Unmanaged<Start>.fromOpaque(context).release() }
        return result
    }
}

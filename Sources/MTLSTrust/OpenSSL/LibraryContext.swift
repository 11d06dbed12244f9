internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Synchronization

/// The library's own OpenSSL library context with the `default` and `legacy` providers, created on
/// first use. Loading `legacy` here never touches `openssl.cnf` or the process-wide default context.
final class LegacyLibraryContext: @unchecked Sendable {
    // @unchecked Sendable: the OpenSSL pointers (not Sendable, so kept beside the lock) are read and
    // written only inside `lock`, set once and never freed; an OSSL_LIB_CTX is safe to fetch from
    // on any thread.
    private let lock = Locked(())
    private var context: OpaquePointer?
    private var providers: [OpaquePointer] = []
    private var failed = false

    static let shared = LegacyLibraryContext()

    /// The context, or nil when this OpenSSL build has no `legacy` provider module.
    var pointer: OpaquePointer? {
        lock.withLock { _ in load() }
    }

    /// Only inside `lock`.
    private func load() -> OpaquePointer? {
        if context != nil || failed { return context }
        guard let ctx = OSSL_LIB_CTX_new() else {
            failed = true
            return nil
        }
        guard let defaultProvider = OSSL_PROVIDER_load(ctx, "default"),
            let legacyProvider = OSSL_PROVIDER_load(ctx, "legacy")
        else {
            OSSL_LIB_CTX_free(ctx)
            failed = true
            ERR_clear_error()
            return nil
        }
        providers = [defaultProvider, legacyProvider]
        context = ctx
        return ctx
    }

    /// True when the `legacy` provider could be loaded.
    var isAvailable: Bool { pointer != nil }

    /// Runs `body` with this context as the calling thread's default library context, then
    /// restores the previous default. OpenSSL calls that take no context (PKCS#12 decryption among
    /// them) then fetch RC2, RC4 and DES from here.
    func withAsThreadDefault<T>(_ body: () throws -> T) rethrows -> T {
        guard let ctx = pointer else { return try body() }
        let previous = OSSL_LIB_CTX_set0_default(ctx)
        defer { _ = OSSL_LIB_CTX_set0_default(previous) }
        return try body()
    }
}

/// Facts about the OpenSSL library in use.
public enum OpenSSLInfo {
    /// `OpenSSL 3.0.19 27 Jan 2026`.
    public static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
    /// True when OpenSSL's legacy provider (RC2, RC4, DES) can be loaded.
    public static var legacyProviderAvailable: Bool { LegacyLibraryContext.shared.isAvailable }
    /// True when every block OpenSSL frees is overwritten with zeros first (see
    /// ``installWipingAllocator()``).
    public static var wipesFreedMemory: Bool { mtls_openssl_wipes_freed_memory() == 1 }

    /// Makes OpenSSL overwrite every block it frees (and every block a growing `realloc` gives up)
    /// with zeros, for the rest of the process.
    ///
    /// OpenSSL 3.0's PKCS#12 key derivation frees a copy of the password without clearing it, so
    /// after reading or writing a `.p12` the password stays in freed heap memory (where a core
    /// dump, swap or a heap over-read finds it). ``Secret`` wipes what this library holds; this
    /// covers what OpenSSL holds. It replaces OpenSSL's allocator for the whole process, so it is
    /// the program's choice: call it as the first statement of `main`, before anything uses
    /// OpenSSL (`mtls` does). The cost is one `memset` per freed block (docs/RELIABILITY.md).
    ///
    /// - Returns: True when installed (or already installed); false when OpenSSL had already
    ///   allocated memory, which OpenSSL does not allow to be freed by other functions.
    @discardableResult
    public static func installWipingAllocator() -> Bool { mtls_install_wiping_allocator() == 1 }

    /// Leaves OpenSSL's global tables (providers, algorithm names, error strings) to the operating
    /// system when the process exits, instead of freeing them one by one in an `atexit` handler.
    ///
    /// A command-line program may end while another thread (a name lookup that has not returned)
    /// still holds OpenSSL objects; an `atexit` teardown would free the tables under it. The kernel
    /// reclaims the memory either way and hands it to the next process zeroed, so nothing the
    /// tables held outlives the process. Tools such as valgrind then list the tables as still
    /// reachable, not as leaks.
    ///
    /// It takes effect only as OpenSSL's first initialisation: call it at the start of `main`,
    /// after ``installWipingAllocator()`` and before anything else uses OpenSSL (`mtls` does). A
    /// library, or a program that unloads libcrypto before it exits, must not call it.
    public static func skipCleanupAtExit() { _ = mtls_openssl_init_without_exit_cleanup() }
}

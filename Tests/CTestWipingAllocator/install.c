// Test bundles only: sets OpenSSL up as `mtls`'s main does, before any test runs: the wiping
// allocator (OpenSSLInfo.installWipingAllocator()), then OpenSSL's first initialisation without its
// atexit teardown (OpenSSLInfo.skipCleanupAtExit()). A constructor, because XCTest gives no hook
// that runs before the first test touches OpenSSL.
//
// Without the second step, OPENSSL_cleanup runs at exit while threads of the suite (the engine's,
// a test server's) may still be alive; it deletes OpenSSL's thread-local keys, so a thread that ends
// after it never runs OpenSSL's per-thread destructor, and LeakSanitizer finds that thread's error
// queue and public and private DRBGs unreferenced (984 bytes in 3 blocks directly, once in a whole
// ASan run of the suite; docs/RELIABILITY.md, "Sanitizers"). The shipped program never runs that
// teardown, so the tests now exercise what it does.
#include "CTestWipingAllocator.h"
#include "COpenSSLShims.h"

__attribute__((constructor(101))) static void mtls_tests_install_wiping_allocator(void) {
    (void)mtls_install_wiping_allocator();
    (void)mtls_openssl_init_without_exit_cleanup();
}

int mtls_tests_wiping_allocator_linked(void) { return 1; }

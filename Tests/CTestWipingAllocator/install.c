// Test bundles only: installs the wiping allocator before any test runs, as `mtls`'s main does
// with OpenSSLInfo.installWipingAllocator(). A constructor, because XCTest gives no hook that runs
// before the first test touches OpenSSL.
#include "CTestWipingAllocator.h"
#include "COpenSSLShims.h"

__attribute__((constructor(101))) static void mtls_tests_install_wiping_allocator(void) { (void)mtls_install_wiping_allocator(); }

int mtls_tests_wiping_allocator_linked(void) { return 1; }

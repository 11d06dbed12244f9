#include "CBuildInfo.h"

// Defined by the BuildInfo.swift that BuildInfoPlugin generates into the mtls executable. Weak:
// SwiftPM applies no build plugins to the host-tool build of mtls that PinSetPlugin runs, and that
// build must still link (it then reports no commit).
extern const char *mtls_generated_build_commit(void) __attribute__((weak));

const char *mtls_build_commit(void) {
    return mtls_generated_build_commit ? mtls_generated_build_commit() : 0;
}

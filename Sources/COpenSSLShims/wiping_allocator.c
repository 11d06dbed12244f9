// OpenSSL frees some buffers that held a password without clearing them first: in 3.0 (and on
// master) the PKCS#12 key derivation (providers/implementations/kdfs/pkcs12kdf.c) builds
// salt || password (UTF-16BE, repeated) in a heap buffer `I` and releases it with OPENSSL_free.
// Every PKCS#12 read or write then leaves the password in freed heap memory, where a core dump,
// a swap file or a later heap overread finds it.
//
// Installed before OpenSSL allocates anything (mtls_install_wiping_allocator, called first thing by
// the program: `mtls`'s main, a library user's main), these allocation functions overwrite each
// block OpenSSL frees, and each block realloc gives up, with zeros. Not a load-time constructor:
// replacing OpenSSL's allocator is the program's decision, not a side effect of linking a library.
// The cost is one memset over memory that was just in use; see docs/RELIABILITY.md.

#include "COpenSSLShims.h"

#include <stdlib.h>
#include <string.h>
#if defined(__APPLE__)
#include <malloc/malloc.h>
#define mtls_usable_size(p) malloc_size(p)
#else
#include <malloc.h>
#define mtls_usable_size(p) malloc_usable_size(p)
#endif
// glibc's explicit_bzero is its optimised memset that the compiler may not drop; OPENSSL_cleanse
// (elsewhere) clears byte by byte, a large share of a TLS handshake's work once every free is
// wiped.
#if defined(__GLIBC__)
#define mtls_wipe(p, n) explicit_bzero((p), (n))
#else
#define mtls_wipe(p, n) OPENSSL_cleanse((p), (n))
#endif

static int installed = 0;

static void *mtls_wiping_malloc(size_t num, const char *file, int line) {
    (void)file;
    (void)line;
    return malloc(num);
}

static void mtls_wiping_free(void *ptr, const char *file, int line) {
    (void)file;
    (void)line;
    if (ptr == NULL) return;
    mtls_wipe(ptr, mtls_usable_size(ptr));
    free(ptr);
}

static void *mtls_wiping_realloc(void *ptr, size_t num, const char *file, int line) {
    if (ptr == NULL) return mtls_wiping_malloc(num, file, line);
    if (num == 0) {
        mtls_wiping_free(ptr, file, line);
        return NULL;
    }
    size_t old = mtls_usable_size(ptr);
    if (num <= old) return ptr;  // fits: nothing is left behind
    // Never realloc(): a block it moves would be freed with its contents in place.
    void *moved = malloc(num);
    if (moved == NULL) return NULL;
    memcpy(moved, ptr, old);
    mtls_wipe(ptr, old);
    free(ptr);
    return moved;
}

int mtls_install_wiping_allocator(void) {
    // CRYPTO_set_mem_functions refuses once OpenSSL has allocated; asking twice is harmless.
    if (!installed) installed = CRYPTO_set_mem_functions(mtls_wiping_malloc, mtls_wiping_realloc, mtls_wiping_free);
    return installed;
}

int mtls_openssl_wipes_freed_memory(void) { return installed; }

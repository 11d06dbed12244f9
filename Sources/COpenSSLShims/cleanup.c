// Temporary files that must not outlive the process: the output writer (MTLSTrust's OutputWriter)
// registers each staged file here, and a SIGINT, SIGTERM or SIGHUP removes every registered file
// before the process dies with the signal's default action. In C because a signal handler may
// only call async-signal-safe functions (unlink, signal, raise): no Swift runtime, no locks, no
// allocation. Slots are atomic pointers, so registering on one thread while a signal arrives on
// another sees either the path or nothing.

#include "COpenSSLShims.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MTLS_CLEANUP_SLOTS 64

static _Atomic(char *) mtls_cleanup_slots[MTLS_CLEANUP_SLOTS];

int mtls_cleanup_register(const char *path) {
    char *copy = strdup(path);
    if (copy == NULL) return 0;
    for (int i = 0; i < MTLS_CLEANUP_SLOTS; i++) {
        char *expected = NULL;
        if (atomic_compare_exchange_strong(&mtls_cleanup_slots[i], &expected, copy)) return 1;
    }
    free(copy);
    return 0;
}

void mtls_cleanup_unregister(const char *path) {
    for (int i = 0; i < MTLS_CLEANUP_SLOTS; i++) {
        char *current = atomic_load(&mtls_cleanup_slots[i]);
        if (current != NULL && strcmp(current, path) == 0) {
            char *expected = current;
            if (atomic_compare_exchange_strong(&mtls_cleanup_slots[i], &expected, NULL)) {
                free(current);
                return;
            }
        }
    }
}

static void mtls_cleanup_on_signal(int number) {
    for (int i = 0; i < MTLS_CLEANUP_SLOTS; i++) {
        char *current = atomic_load(&mtls_cleanup_slots[i]);
        if (current != NULL) unlink(current);
    }
    // Die of the signal, as without the handler: the shell sees 130/143.
    signal(number, SIG_DFL);
    raise(number);
}

void mtls_cleanup_install(void) {
    // A file-size limit (ulimit -f) makes write fail with EFBIG instead of killing the process
    // with SIGXFSZ, so the writer sees the error and removes its temporary file.
    signal(SIGXFSZ, SIG_IGN);
    int numbers[] = {SIGINT, SIGTERM, SIGHUP};
    for (unsigned i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        struct sigaction old;
        // A signal the caller ignores (nohup, `serve`'s own handling) stays ignored.
        if (sigaction(numbers[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = mtls_cleanup_on_signal;
        sigemptyset(&action.sa_mask);
        sigaction(numbers[i], &action, NULL);
    }
}

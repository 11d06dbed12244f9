#include "CFiber.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MTLS_SANITIZED 1
#endif
#endif

// Under AddressSanitizer and ThreadSanitizer, which do not follow a switch of stacks unannotated,
// callers keep their thread per job.
#if defined(__linux__) && defined(__GLIBC__) && !defined(MTLS_SANITIZED)
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

// Exported by libswiftCore: the concurrency runtime's hand-over of a task's exclusivity accesses.
// Weak, so that a runtime without them only loses the hand-over, not the link.
extern void swift_task_enterThreadLocalContext(char *state) __attribute__((weak));
extern void swift_task_exitThreadLocalContext(char *state) __attribute__((weak));

struct mtls_fiber {
    ucontext_t context;
    ucontext_t caller;
    void (*entry)(void *);
    void *argument;
    void *owner;
    uintptr_t exclusivity[2];  // the runtime's SwiftTaskThreadLocalContext: first and last access
    char *low;                 // the lowest usable byte of the stack (above the guard page)
    int finished;
};

static __thread mtls_fiber *current;

static void enter_accesses(mtls_fiber *fiber) {
    if (swift_task_enterThreadLocalContext) swift_task_enterThreadLocalContext((char *)fiber->exclusivity);
}

static void exit_accesses(mtls_fiber *fiber) {
    if (swift_task_exitThreadLocalContext) swift_task_exitThreadLocalContext((char *)fiber->exclusivity);
}

// makecontext passes int arguments only: the pointer comes in two halves.
static void trampoline(unsigned int high, unsigned int low) {
    mtls_fiber *fiber = (mtls_fiber *)(((uintptr_t)high << 32) | (uintptr_t)low);
    enter_accesses(fiber);
    fiber->entry(fiber->argument);
    exit_accesses(fiber);
    fiber->finished = 1;
    setcontext(&fiber->caller);
}

int mtls_fiber_supported(void) { return sizeof(uintptr_t) == 8; }

mtls_fiber *mtls_fiber_create(void *stack, size_t size, void (*entry)(void *), void *argument) {
    if (!mtls_fiber_supported()) return NULL;
    mtls_fiber *fiber = calloc(1, sizeof(mtls_fiber));
    if (!fiber) return NULL;
    if (getcontext(&fiber->context) != 0) {
        free(fiber);
        return NULL;
    }
    fiber->context.uc_stack.ss_sp = stack;
    fiber->context.uc_stack.ss_size = size;
    fiber->context.uc_link = NULL;
    fiber->low = (char *)stack + (size_t)sysconf(_SC_PAGESIZE);
    fiber->entry = entry;
    fiber->argument = argument;
    uintptr_t address = (uintptr_t)fiber;
    makecontext(&fiber->context, (void (*)(void))trampoline, 2, (unsigned int)(address >> 32), (unsigned int)(address & 0xffffffffu));
    return fiber;
}

void mtls_fiber_destroy(mtls_fiber *fiber) { free(fiber); }

int mtls_fiber_resume(mtls_fiber *fiber) {
    if (fiber->finished) return 1;
    mtls_fiber *previous = current;
    current = fiber;
    swapcontext(&fiber->caller, &fiber->context);
    current = previous;
    return fiber->finished;
}

// A parked fiber's stack below its current frame is dead until it runs again, but the pages its
// deepest call touched (a handshake's signature checks) stay resident: with a thousand fibers
// parked that is most of the process's memory. Hand them back, keeping a margin below the frame
// so that the next shallow calls do not fault.
static void trim(mtls_fiber *fiber) {
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t margin = 2 * page;
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
    uintptr_t low = (uintptr_t)fiber->low;
    if (frame < low + margin + page) return;
    uintptr_t end = (frame - margin) & ~(page - 1);
    if (end > low) madvise((void *)low, end - low, MADV_DONTNEED);
}

void mtls_fiber_suspend(mtls_fiber *fiber) {
    trim(fiber);
    exit_accesses(fiber);
    swapcontext(&fiber->context, &fiber->caller);
    enter_accesses(fiber);
}

mtls_fiber *mtls_fiber_current(void) { return current; }
void *mtls_fiber_owner(mtls_fiber *fiber) { return fiber->owner; }
void mtls_fiber_set_owner(mtls_fiber *fiber, void *owner) { fiber->owner = owner; }

#else

int mtls_fiber_supported(void) { return 0; }
mtls_fiber *mtls_fiber_create(void *stack, size_t size, void (*entry)(void *), void *argument) {
    (void)stack; (void)size; (void)entry; (void)argument;
    return NULL;
}
void mtls_fiber_destroy(mtls_fiber *fiber) { (void)fiber; }
int mtls_fiber_resume(mtls_fiber *fiber) { (void)fiber; return 1; }
void mtls_fiber_suspend(mtls_fiber *fiber) { (void)fiber; }
mtls_fiber *mtls_fiber_current(void) { return NULL; }
void *mtls_fiber_owner(mtls_fiber *fiber) { (void)fiber; return NULL; }
void mtls_fiber_set_owner(mtls_fiber *fiber, void *owner) { (void)fiber; (void)owner; }

#endif

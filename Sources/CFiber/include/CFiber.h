// Stackful fibers for the fleet's event loop: a job runs on its own stack and parks where the
// transport would block in poll(2), so a few threads can drive a thousand connections through the
// same synchronous TLS and HTTP code as a single probe.
//
// The switch is glibc's ucontext (makecontext is variadic, which Swift cannot call). Around every
// switch the fiber hands its Swift exclusivity-access set to and from the thread, exactly as the
// concurrency runtime does for a task (swift_task_enter/exitThreadLocalContext), so an access a
// parked fiber holds is neither seen by the next fiber on the thread nor lost.
#ifndef MTLS_CFIBER_H
#define MTLS_CFIBER_H

#include <stddef.h>

#if defined(__linux__)
// The loop's own system calls, which the Swift Glibc module leaves out.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#pragma clang assume_nonnull begin

typedef struct mtls_fiber mtls_fiber;

/// 1 where fibers work (Linux with glibc, not under a sanitizer); elsewhere the callers keep one
/// thread per job.
int mtls_fiber_supported(void);

/// A fiber that will run `entry(argument)` on `stack` (`size` bytes, the caller's to map and
/// unmap) when first resumed. NULL when out of memory or unsupported.
mtls_fiber *_Nullable mtls_fiber_create(void *stack, size_t size, void (*entry)(void *_Nullable), void *_Nullable argument);

/// Frees a fiber that has finished or was never started (not its stack).
void mtls_fiber_destroy(mtls_fiber *fiber);

/// Runs `fiber` on the calling thread until it suspends or finishes. Returns 1 when it finished.
int mtls_fiber_resume(mtls_fiber *fiber);

/// Called on a fiber: returns to the thread that resumed it, until it is resumed again. The pages
/// of its stack below the caller's frame are given back to the system first.
void mtls_fiber_suspend(mtls_fiber *fiber);

/// The fiber running on this thread, or NULL on a thread's own stack.
mtls_fiber *_Nullable mtls_fiber_current(void);

/// The value the owner attached with mtls_fiber_set_owner (the Swift job that runs on it).
void *_Nullable mtls_fiber_owner(mtls_fiber *fiber);
void mtls_fiber_set_owner(mtls_fiber *fiber, void *_Nullable owner);

#pragma clang assume_nonnull end

#endif

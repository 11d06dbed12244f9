#include "CImage.h"

#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct range {
    ElfW(Addr) low, high;
};

static int main_program(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct range *out = data;
    ElfW(Addr) base = info->dlpi_addr;
    const ElfW(Dyn) *dynamic = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dynamic = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
    if (!dynamic) return 1;
    ElfW(Addr) rela = 0;
    size_t rela_size = 0;
    for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_RELA) rela = d->d_un.d_ptr;
        else if (d->d_tag == DT_RELASZ) rela_size = d->d_un.d_val;
        else if (d->d_tag == DT_TEXTREL) return 1;  // the loader wrote to read-only pages: leave them
    }
    if (!rela || !rela_size) return 1;
    // glibc stores the relocated address in place; other loaders may leave the link-time one.
    if (rela < base) rela += base;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return 1;
    ElfW(Addr) low = (rela + (ElfW(Addr))page - 1) & ~((ElfW(Addr))page - 1);
    ElfW(Addr) high = (rela + rela_size) & ~((ElfW(Addr))page - 1);
    if (high <= low) return 1;
    // The whole range in one read-only PT_LOAD segment and outside PT_GNU_RELRO.
    int inside = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        ElfW(Addr) start = base + p->p_vaddr, end = start + p->p_memsz;
        if (p->p_type == PT_LOAD && !(p->p_flags & PF_W) && start <= low && high <= end) inside = 1;
        if ((p->p_type == PT_GNU_RELRO || (p->p_type == PT_LOAD && (p->p_flags & PF_W))) && low < end && start < high) return 1;
    }
    if (inside) {
        out->low = low;
        out->high = high;
    }
    return 1;  // the first object is the main program: stop there
}

unsigned long mtls_release_relocation_pages(void) {
    struct range r = {0, 0};
    dl_iterate_phdr(main_program, &r);
    if (r.high <= r.low) return 0;
    if (madvise((void *)r.low, r.high - r.low, MADV_DONTNEED) != 0) return 0;
    return (unsigned long)(r.high - r.low);
}
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

struct registration {
    int descriptor, all_objects, count;
    ElfW(Addr) page;
};

static int register_read_only(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct registration *r = data;
    // Not the vDSO: the kernel's own pages, not a file's.
    ElfW(Addr) vdso = (ElfW(Addr))getauxval(AT_SYSINFO_EHDR);
    for (int i = 0; vdso && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && info->dlpi_addr + p->p_vaddr <= vdso && vdso < info->dlpi_addr + p->p_vaddr + p->p_memsz)
            return r->all_objects ? 0 : 1;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD || (p->p_flags & PF_W) || p->p_memsz == 0) continue;
        ElfW(Addr) start = (info->dlpi_addr + p->p_vaddr) & ~(r->page - 1);
        ElfW(Addr) end = (info->dlpi_addr + p->p_vaddr + p->p_memsz + r->page - 1) & ~(r->page - 1);
        struct uffdio_register reg = {.range = {.start = start, .len = end - start}, .mode = UFFDIO_REGISTER_MODE_WP};
        if (ioctl(r->descriptor, UFFDIO_REGISTER, &reg) == 0) r->count++;
    }
    return r->all_objects ? 0 : 1;  // the first object is the main program
}

/// Whether a seccomp filter is installed (/proc/self/status "Seccomp: 2"): a sandbox may kill the
/// process for a system call it does not expect (systemd's SystemCallFilter= does by default).
static int seccomp_filtered(void) {
    int file = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (file < 0) return 1;
    char buffer[4096];
    ssize_t length = read(file, buffer, sizeof buffer - 1);
    close(file);
    if (length <= 0) return 1;
    buffer[length] = 0;
    const char *field = strstr(buffer, "\nSeccomp:");
    if (!field) return 1;
    field += strlen("\nSeccomp:");
    while (*field == ' ' || *field == '\t') field++;
    return *field != '0';
}

int mtls_map_code_page_by_page(int all_objects) {
#ifdef SYS_userfaultfd
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || seccomp_filtered()) return 0;
    // User-mode faults only: allowed without privileges (vm.unprivileged_userfaultfd=0) since 5.11.
    int descriptor = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (descriptor < 0) return 0;
    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC};
    if (ioctl(descriptor, UFFDIO_API, &api) != 0) {
        close(descriptor);
        return 0;
    }
    struct registration r = {descriptor, all_objects, 0, (ElfW(Addr))page};
    dl_iterate_phdr(register_read_only, &r);
    // Closing the descriptor would undo the registrations: it stays open (close-on-exec).
    if (r.count == 0) close(descriptor);
    return r.count;
#else
    (void)all_objects;
    return 0;
#endif
}
#else
unsigned long mtls_release_relocation_pages(void) { return 0; }
int mtls_map_code_page_by_page(int all_objects) {
    (void)all_objects;
    return 0;
}
#endif

#include "CImage.h"

#if defined(__linux__)
#define _GNU_SOURCE
#include <link.h>
#include <sys/mman.h>
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
#else
unsigned long mtls_release_relocation_pages(void) { return 0; }
#endif

#ifndef CIMAGE_H
#define CIMAGE_H

/// Gives back the pages of the executable's relocation table (.rela.dyn) once the dynamic loader
/// has applied it: nothing reads the table again, and its pages (0.9 MiB for the static release
/// binary) would otherwise stay resident for the life of the process. Only a range inside a
/// read-only segment is dropped (madvise MADV_DONTNEED: the clean file pages leave the process and
/// would be read back from the file if ever touched). Returns the bytes given back (0 where there
/// is nothing to do or the layout is not the expected one; never fails).
unsigned long mtls_release_relocation_pages(void);

/// From now on the read-only pages of the executable (and, with `all_objects`, of every loaded
/// library) are mapped one page per fault. By default the kernel maps up to 64 KiB of cached file
/// pages around each faulting page ("fault-around"), so code that runs on scattered pages keeps
/// whole neighbourhoods resident; a VMA registered with userfaultfd in write-protect mode has no
/// fault-around, and with UFFD_FEATURE_WP_ASYNC (Linux 6.7+) the kernel resolves any
/// write-protect fault itself, so no thread serves the descriptor (and these pages are never
/// written anyway). Costs more, smaller page faults. Returns how many mappings were registered
/// (0 where userfaultfd is unavailable, disallowed or too old, or under a seccomp filter, which
/// may kill the process for a system call it does not expect: nothing changes then).
int mtls_map_code_page_by_page(int all_objects);

#endif

#ifndef CIMAGE_H
#define CIMAGE_H

/// Gives back the pages of the executable's relocation table (.rela.dyn) once the dynamic loader
/// has applied it: nothing reads the table again, and its pages (0.9 MiB for the static release
/// binary) would otherwise stay resident for the life of the process. Only a range inside a
/// read-only segment is dropped (madvise MADV_DONTNEED: the clean file pages leave the process and
/// would be read back from the file if ever touched). Returns the bytes given back (0 where there
/// is nothing to do or the layout is not the expected one; never fails).
unsigned long mtls_release_relocation_pages(void);

#endif

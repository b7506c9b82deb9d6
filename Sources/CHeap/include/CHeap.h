#ifndef MSGLOG_CHEAP_H
#define MSGLOG_CHEAP_H

#include <stddef.h>

/// Readies the process's heap for a command that fills tens of megabytes of
/// fresh memory (an import: LMDB's dirty pages, its tables and sorts, its
/// parsed lines): grown by `bytes` (2 MiB to 512 MiB) and kept, shared by
/// the threads that allocate from then on, and advised to take huge pages.
/// Returns how many bytes of it may now be huge pages. 0 with nothing
/// changed where the kernel has no huge pages to give or a limit is set on
/// the data segment or the address space; 0 with the heap's settings
/// changed (memory kept rather than given back: the command runs, at a
/// little more memory) where the heap did not grow in one piece or the
/// advice failed. Process-wide and for good: for a command's own process,
/// never a library's caller.
size_t msglog_heap_prefer_huge_pages(size_t bytes);

#endif

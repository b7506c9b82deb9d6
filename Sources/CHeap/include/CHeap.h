#ifndef MSGLOG_CHEAP_H
#define MSGLOG_CHEAP_H

#include <stddef.h>

/// Readies the process's heap for a command that fills tens of megabytes of
/// fresh memory (an import: LMDB's dirty pages, its tables and sorts, its
/// parsed lines): grown by `bytes` (2 MiB to 512 MiB) and kept, shared by
/// every thread, and advised to take huge pages. Returns how many bytes of
/// it may now be huge pages: 0 where the kernel or the heap does not allow
/// it, or the data segment has a limit (the command then runs as it would
/// have). Process-wide and for good:
/// for a command's own process, never a library's caller.
size_t msglog_heap_prefer_huge_pages(size_t bytes);

#endif

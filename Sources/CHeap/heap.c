// A fresh page of memory costs a page fault when first written, about 2 µs
// on a virtual machine: an import of 25,000 events spent a sixth of its time
// in the ~3,300 faults of its dirty pages, tables and parsed lines. With
// transparent huge pages ("always", or "madvise" as Debian and Ubuntu set
// them) one fault maps 2 MiB.
//
// glibc's allocator asks for huge pages only when told at start-up
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), which a process cannot do for
// itself. So this grows the main heap by `bytes` in one piece (brk would
// grow it later by regions of their own, without the advice), keeps it
// (no trim, and blocks up to glibc's mmap limit from the heap rather than
// mmap; every later growth is padded as much), makes the threads that
// allocate from now on share it, and advises the kernel.
#define _GNU_SOURCE
#include "CHeap.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

size_t msglog_heap_prefer_huge_pages(size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = 2u << 20;
  if (bytes < huge || bytes > (512u << 20)) return 0;
  // Under a limit on the data segment or the address space (`ulimit -d`,
  // `ulimit -v`), the heap's growth and what it keeps could be what makes
  // the command run out of memory (a 1 MiB import aborted under 64 MiB
  // where 1 byte less imported): not then. Nor where the kernel has no
  // transparent huge pages, or they are off. Decided before any setting
  // changes, so that the command then runs as it would have.
  struct rlimit data, space;
  if (getrlimit(RLIMIT_DATA, &data) != 0 || data.rlim_cur != RLIM_INFINITY) return 0;
  if (getrlimit(RLIMIT_AS, &space) != 0 || space.rlim_cur != RLIM_INFINITY) return 0;
  char mode[64] = {0};
  FILE *enabled = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!enabled) return 0;
  size_t got = fread(mode, 1, sizeof mode - 1, enabled);
  fclose(enabled);
  if (got == 0 || strstr(mode, "[never]")) return 0;
  // glibc refuses an mmap threshold above 32 MiB on 64-bit.
  const size_t mmapLimit = (size_t)4 * 1024 * 1024 * sizeof(long);
  // One heap for every thread: an import's parsing thread filled fresh
  // pages of a heap of its own, four fifths of the faults left.
  if (!mallopt(M_ARENA_MAX, 1) || !mallopt(M_MMAP_THRESHOLD, (int)(bytes < mmapLimit ? bytes : mmapLimit)) ||
      !mallopt(M_TOP_PAD, (int)bytes) || !mallopt(M_TRIM_THRESHOLD, (int)(2 * bytes)))
    return 0;
  uintptr_t before = (uintptr_t)sbrk(0);
  if (before == (uintptr_t)-1) return 0;
  // Take blocks until the heap has to grow (by a block and the pad), then
  // give them back to it. A heap with more than that spare already stays
  // as it is.
  enum { block = 1 << 20, blocks = 64 };
  void *taken[blocks];
  int n = 0;
  while (n < blocks && (uintptr_t)sbrk(0) == before && (taken[n] = malloc(block)) != NULL) n++;
  while (n > 0) free(taken[--n]);
  uintptr_t after = (uintptr_t)sbrk(0);
  uintptr_t start = (before + huge - 1) & ~(huge - 1), end = after & ~(huge - 1);
  if (end <= start || madvise((void *)start, end - start, MADV_HUGEPAGE) != 0) return 0;
  return end - start;
#else
  (void)bytes;
  return 0;
#endif
}

#ifndef MSGLOG_CLMDB_SHIM_H
#define MSGLOG_CLMDB_SHIM_H
#include <lmdb.h>
#include <stdint.h>

/* renameat2(2), which glibc declares only under _GNU_SOURCE (Swift's Glibc
   module does not set it); the same prototype as glibc's <stdio.h>. */
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/* Renames `from` to `to` unless `to` exists (EEXIST then): a database or a
   backup is put in place without ever replacing what another process put
   there first. EINVAL where the file system cannot (the caller falls back). */
static inline int msglog_rename_noreplace(const char *from, const char *to) {
  return renameat2(-100 /* AT_FDCWD */, from, -100, to, 1u /* RENAME_NOREPLACE */);
}

/* sync_file_range(2), which glibc also declares only under _GNU_SOURCE;
   the same prototype as glibc's <fcntl.h> (__off64_t is int64_t). */
extern int sync_file_range(int fd, int64_t offset, int64_t count, unsigned int flags);

/* Starts writing every dirty page of the file `fd` back to the disk,
   without waiting for the writes (only, at worst, for room in the
   device's queue): a later fdatasync then finds them written, or on their
   way. No durability of its own (no metadata, no disk cache). */
static inline int msglog_start_writeback(int fd) {
  return sync_file_range(fd, 0, 0, 2u /* SYNC_FILE_RANGE_WRITE */);
}
#endif

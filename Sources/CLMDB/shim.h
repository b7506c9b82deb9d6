#ifndef MSGLOG_CLMDB_SHIM_H
#define MSGLOG_CLMDB_SHIM_H
#include <lmdb.h>

/* renameat2(2), which glibc declares only under _GNU_SOURCE (Swift's Glibc
   module does not set it); the same prototype as glibc's <stdio.h>. */
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/* Renames `from` to `to` unless `to` exists (EEXIST then): a database or a
   backup is put in place without ever replacing what another process put
   there first. EINVAL where the file system cannot (the caller falls back). */
static inline int msglog_rename_noreplace(const char *from, const char *to) {
  return renameat2(-100 /* AT_FDCWD */, from, -100, to, 1u /* RENAME_NOREPLACE */);
}
#endif

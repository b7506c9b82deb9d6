#ifndef MSGLOG_CLIBPQ_H
#define MSGLOG_CLIBPQ_H

// libpq's own header (Debian: libpq-dev), for its types and declarations.
// The functions themselves are msglog's forwarders in libpq.c, which load
// libpq.so.5 on first use: linking libpq would load it and the twenty
// libraries it needs (TLS, Kerberos, LDAP…) into every msglog process,
// LMDB users' included, before main runs.
#include <postgresql/libpq-fe.h>

/// Loads libpq.so.5 once; 0 on success, else -1 with the reason in
/// `error` (at most `size` bytes, NUL-terminated). Safe from any thread.
int msglog_libpq_load(char *error, unsigned long size);

#endif

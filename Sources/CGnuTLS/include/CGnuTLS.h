#ifndef MSGLOG_CGNUTLS_H
#define MSGLOG_CGNUTLS_H

// GnuTLS's own header (Debian: libgnutls28-dev), for its types and
// declarations. The functions themselves are msglog's forwarders in
// gnutls.c, which load libgnutls.so.30 the first time an https:// URL is
// used: a program that never syncs over TLS never loads it (nor the
// libraries it needs), and a program can link the client without it.
#include <gnutls/gnutls.h>

/// Loads libgnutls.so.30 once; 0 on success, else -1 with the reason in
/// `error` (at most `size` bytes, NUL-terminated). Safe from any thread.
/// Refused in a static executable (see gnutls.c).
int msglog_gnutls_load(char *error, unsigned long size);

/// Whether this process can run GnuTLS: 0 in a static executable.
int msglog_gnutls_can_load(void);

/// Makes `session` read and write the connected socket `fd` through
/// msglog's own transport functions: `send` with MSG_NOSIGNAL (a peer that
/// went away is an error, never a SIGPIPE) and `recv`, with an errno
/// function that hands GnuTLS this program's errno. (GnuTLS's own would
/// read the errno of the C library it was loaded with, which in a static
/// program is not the one the program's `recv` sets.)
void msglog_gnutls_use_socket(gnutls_session_t session, int fd);

#endif

#ifndef MSGLOG_CMICROHTTPD_SHIM_H
#define MSGLOG_CMICROHTTPD_SHIM_H

// GNU libmicrohttpd (Debian: libmicrohttpd-dev), linked by msglog-serve
// only: the `msglog` binary is static and starts faster than sqlite3, and
// a static program cannot load a library that starts threads.
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

// The library's enums as Swift sees them vary with its version (some are
// closed C enums, imported with their prefixes stripped): these give the
// values msglog uses by one stable name.
static inline enum MHD_Result msglog_mhd_yes(void) { return MHD_YES; }
static inline enum MHD_Result msglog_mhd_no(void) { return MHD_NO; }
static inline enum MHD_ResponseMemoryMode msglog_mhd_must_copy(void) { return MHD_RESPMEM_MUST_COPY; }
static inline enum MHD_ValueKind msglog_mhd_header_kind(void) { return MHD_HEADER_KIND; }
static inline enum MHD_ValueKind msglog_mhd_argument_kind(void) { return MHD_GET_ARGUMENT_KIND; }

/// MHD_start_daemon is variadic, which Swift cannot call: the options msglog
/// uses — a thread per connection (an event stream blocks in its own
/// thread), the address, a connection limit, a completion callback.
static inline struct MHD_Daemon *msglog_mhd_start(const struct sockaddr *address, int ipv6, unsigned limit,
                                                  MHD_AccessHandlerCallback handler, void *context,
                                                  MHD_RequestCompletedCallback completed, void *completed_context) {
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                   (ipv6 ? MHD_USE_IPv6 : 0);
  return MHD_start_daemon(flags, 0, NULL, NULL, handler, context, MHD_OPTION_SOCK_ADDR, address,
                          MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                          MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024), MHD_OPTION_NOTIFY_COMPLETED, completed,
                          completed_context, MHD_OPTION_END);
}

/// The port the daemon listens on (after binding port 0), or 0.
static inline uint16_t msglog_mhd_bound_port(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info ? info->port : 0;
}

#endif

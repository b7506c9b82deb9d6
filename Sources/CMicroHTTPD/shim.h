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

/// Called with each request's target as it arrived (before libmicrohttpd
/// splits and unescapes it); what it returns is the request's context.
typedef void *(*msglog_mhd_target_callback)(void *context, const char *target, struct MHD_Connection *connection);

/// Told when a connection libmicrohttpd was given closes (its socket is
/// still open then, and closed right after).
typedef void (*msglog_mhd_closed_callback)(void *context, int fd);

struct msglog_mhd_closed_hook {
  msglog_mhd_closed_callback closed;
  void *context;
};

static inline void msglog_mhd_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                                enum MHD_ConnectionNotificationCode code) {
  (void)socket_context;
  if (code != MHD_CONNECTION_NOTIFY_CLOSED) return;
  struct msglog_mhd_closed_hook *hook = cls;
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  hook->closed(hook->context, info ? (int)info->connect_fd : -1);
}

/// MHD_start_daemon is variadic, which Swift cannot call: the options msglog
/// uses — a thread per connection (an event stream blocks in its own
/// thread); no listening socket of its own (msglog accepts connections and
/// hands them over with MHD_add_connection, so that it decides how many it
/// takes and from whom); a connection limit; an idle timeout; the raw
/// request target; a completion callback; and word of each connection that
/// closes.
static inline struct MHD_Daemon *msglog_mhd_start(unsigned limit, MHD_AccessHandlerCallback handler, void *context,
                                                  msglog_mhd_target_callback target,
                                                  MHD_RequestCompletedCallback completed,
                                                  struct msglog_mhd_closed_hook *closed) {
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                   MHD_USE_NO_LISTEN_SOCKET;
  return MHD_start_daemon(flags, 0, NULL, NULL, handler, context, MHD_OPTION_CONNECTION_LIMIT, limit,
                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_THREAD_STACK_SIZE,
                          (size_t)(512 * 1024), MHD_OPTION_URI_LOG_CALLBACK, target, context,
                          MHD_OPTION_NOTIFY_COMPLETED, completed, context, MHD_OPTION_NOTIFY_CONNECTION,
                          msglog_mhd_notify_connection, closed, MHD_OPTION_END);
}

/// The socket of a connection, or -1.
static inline int msglog_mhd_connection_fd(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? (int)info->connect_fd : -1;
}

/// Receives a request's header fields one by one, as sent (names as sent, repeats included).
typedef void (*msglog_mhd_header_sink)(void *context, const char *name, const char *value);

struct msglog_mhd_header_visit_context {
  msglog_mhd_header_sink sink;
  void *context;
};

static inline enum MHD_Result msglog_mhd_header_visit(void *cls, enum MHD_ValueKind kind, const char *key,
                                                      const char *value) {
  (void)kind;
  struct msglog_mhd_header_visit_context *visit = cls;
  visit->sink(visit->context, key, value ? value : "");
  return MHD_YES;
}

/// Calls `sink` with every header field of the request on `connection`.
static inline void msglog_mhd_headers(struct MHD_Connection *connection, msglog_mhd_header_sink sink, void *context) {
  struct msglog_mhd_header_visit_context visit = {sink, context};
  MHD_get_connection_values(connection, MHD_HEADER_KIND, msglog_mhd_header_visit, &visit);
}

#endif

// Forwarders for the GnuTLS functions msglog calls (the HTTP client's, and
// the server's for --tls-cert), resolved with dlopen the first time TLS is
// used (see CGnuTLS.h for why), and the transport functions a session reads and writes its socket with. The
// forwarders are hidden, so they never interpose on GnuTLS's own exports
// (the C library's headers come first, to keep their default visibility).
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/types.h>

#pragma GCC visibility push(hidden)
#include "CGnuTLS.h"
#pragma GCC visibility pop

// Each function: a pointer of the header's own type, and a forwarder.
#define MSGLOG_GNUTLS_FUNCTIONS(X) \
  X(gnutls_check_version) X(gnutls_strerror) X(gnutls_error_is_fatal) \
  X(gnutls_certificate_allocate_credentials) X(gnutls_certificate_free_credentials) \
  X(gnutls_certificate_set_x509_system_trust) X(gnutls_certificate_set_x509_trust_file) \
  X(gnutls_init) X(gnutls_deinit) X(gnutls_set_default_priority) X(gnutls_credentials_set) \
  X(gnutls_server_name_set) X(gnutls_session_set_verify_cert) X(gnutls_session_get_verify_cert_status) \
  X(gnutls_transport_set_ptr) X(gnutls_transport_set_push_function) X(gnutls_transport_set_pull_function) \
  X(gnutls_transport_set_pull_timeout_function) X(gnutls_transport_set_errno_function) \
  X(gnutls_handshake) X(gnutls_record_get_direction) X(gnutls_record_recv) X(gnutls_record_send) \
  X(gnutls_record_check_pending) X(gnutls_bye) X(gnutls_alert_get) X(gnutls_alert_get_name) \
  X(gnutls_certificate_set_x509_key_file)

#define MSGLOG_GNUTLS_POINTER(name) static __typeof__(name) *p_##name;
MSGLOG_GNUTLS_FUNCTIONS(MSGLOG_GNUTLS_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

// A static executable has no program interpreter (AT_BASE is 0). It can
// dlopen GnuTLS, but GnuTLS's thread-local state (its random generator's,
// first used in the handshake) is reached through the loaded copy of the
// dynamic loader, which a static program never set up: the first
// handshake crashes (SIGSEGV in gnutls_rnd). Such a program refuses to
// load it, and speaks TLS through a dynamic helper process instead.
int msglog_gnutls_can_load(void) { return getauxval(AT_BASE) != 0; }

static void load(void) {
  if (!msglog_gnutls_can_load()) {
    snprintf(failure, sizeof failure,
             "https:// needs GnuTLS, which a static executable cannot run (its thread-local storage needs the "
             "dynamic loader)");
    return;
  }
  void *library = dlopen("libgnutls.so.30", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(failure, sizeof failure, "msglog needs libgnutls.so.30 for https:// (Debian: libgnutls30): %s",
             dlerror());
    return;
  }
#define MSGLOG_GNUTLS_RESOLVE(name)                                                                  \
  if (!(p_##name = (__typeof__(name) *)dlsym(library, #name))) {                                      \
    snprintf(failure, sizeof failure, "the libgnutls.so.30 found lacks %s (GnuTLS 3.7 or later needed)", #name); \
    return;                                                                                           \
  }
  MSGLOG_GNUTLS_FUNCTIONS(MSGLOG_GNUTLS_RESOLVE)
  if (!p_gnutls_check_version("3.7.0")) {
    snprintf(failure, sizeof failure, "the libgnutls.so.30 found is GnuTLS %s (3.7 or later needed)",
             p_gnutls_check_version(NULL));
  }
}

int msglog_gnutls_load(char *error, unsigned long size) {
  pthread_once(&once, load);
  if (failure[0] == 0) return 0;
  if (size > 0) {
    strncpy(error, failure, size - 1);
    error[size - 1] = 0;
  }
  return -1;
}

// The transport: the socket's descriptor is the transport pointer.
static ssize_t push(gnutls_transport_ptr_t transport, const void *data, size_t size) {
  return send((int)(intptr_t)transport, data, size, MSG_NOSIGNAL);
}

static ssize_t pull(gnutls_transport_ptr_t transport, void *data, size_t size) {
  return recv((int)(intptr_t)transport, data, size, 0);
}

static int pull_timeout(gnutls_transport_ptr_t transport, unsigned int ms) {
  struct pollfd poller = {.fd = (int)(intptr_t)transport, .events = POLLIN};
  return poll(&poller, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
}

// GnuTLS asks for the errno of a failed push or pull right after it: this
// program's, the one send and recv above set (see CGnuTLS.h).
static int transport_errno(gnutls_transport_ptr_t transport) {
  (void)transport;
  return errno;
}

void msglog_gnutls_use_socket(gnutls_session_t session, int fd) {
  p_gnutls_transport_set_ptr(session, (gnutls_transport_ptr_t)(intptr_t)fd);
  p_gnutls_transport_set_push_function(session, push);
  p_gnutls_transport_set_pull_function(session, pull);
  p_gnutls_transport_set_pull_timeout_function(session, pull_timeout);
  p_gnutls_transport_set_errno_function(session, transport_errno);
}

const char *gnutls_check_version(const char *req_version) { return p_gnutls_check_version(req_version); }
const char *gnutls_strerror(int error) { return p_gnutls_strerror(error); }
int gnutls_error_is_fatal(int error) { return p_gnutls_error_is_fatal(error); }
int gnutls_certificate_allocate_credentials(gnutls_certificate_credentials_t *res) {
  return p_gnutls_certificate_allocate_credentials(res);
}
void gnutls_certificate_free_credentials(gnutls_certificate_credentials_t sc) {
  p_gnutls_certificate_free_credentials(sc);
}
int gnutls_certificate_set_x509_system_trust(gnutls_certificate_credentials_t cred) {
  return p_gnutls_certificate_set_x509_system_trust(cred);
}
int gnutls_certificate_set_x509_trust_file(gnutls_certificate_credentials_t cred, const char *cafile,
                                           gnutls_x509_crt_fmt_t type) {
  return p_gnutls_certificate_set_x509_trust_file(cred, cafile, type);
}
int gnutls_init(gnutls_session_t *session, unsigned int flags) { return p_gnutls_init(session, flags); }
void gnutls_deinit(gnutls_session_t session) { p_gnutls_deinit(session); }
int gnutls_set_default_priority(gnutls_session_t session) { return p_gnutls_set_default_priority(session); }
int gnutls_credentials_set(gnutls_session_t session, gnutls_credentials_type_t type, void *cred) {
  return p_gnutls_credentials_set(session, type, cred);
}
int gnutls_server_name_set(gnutls_session_t session, gnutls_server_name_type_t type, const void *name,
                           size_t name_length) {
  return p_gnutls_server_name_set(session, type, name, name_length);
}
void gnutls_session_set_verify_cert(gnutls_session_t session, const char *hostname, unsigned flags) {
  p_gnutls_session_set_verify_cert(session, hostname, flags);
}
unsigned int gnutls_session_get_verify_cert_status(gnutls_session_t session) {
  return p_gnutls_session_get_verify_cert_status(session);
}
void gnutls_transport_set_ptr(gnutls_session_t session, gnutls_transport_ptr_t ptr) {
  p_gnutls_transport_set_ptr(session, ptr);
}
void gnutls_transport_set_push_function(gnutls_session_t session, gnutls_push_func push_func) {
  p_gnutls_transport_set_push_function(session, push_func);
}
void gnutls_transport_set_pull_function(gnutls_session_t session, gnutls_pull_func pull_func) {
  p_gnutls_transport_set_pull_function(session, pull_func);
}
void gnutls_transport_set_pull_timeout_function(gnutls_session_t session, gnutls_pull_timeout_func func) {
  p_gnutls_transport_set_pull_timeout_function(session, func);
}
void gnutls_transport_set_errno_function(gnutls_session_t session, gnutls_errno_func errno_func) {
  p_gnutls_transport_set_errno_function(session, errno_func);
}
int gnutls_handshake(gnutls_session_t session) { return p_gnutls_handshake(session); }
int gnutls_record_get_direction(gnutls_session_t session) { return p_gnutls_record_get_direction(session); }
ssize_t gnutls_record_recv(gnutls_session_t session, void *data, size_t data_size) {
  return p_gnutls_record_recv(session, data, data_size);
}
ssize_t gnutls_record_send(gnutls_session_t session, const void *data, size_t data_size) {
  return p_gnutls_record_send(session, data, data_size);
}
size_t gnutls_record_check_pending(gnutls_session_t session) { return p_gnutls_record_check_pending(session); }
int gnutls_bye(gnutls_session_t session, gnutls_close_request_t how) { return p_gnutls_bye(session, how); }
gnutls_alert_description_t gnutls_alert_get(gnutls_session_t session) { return p_gnutls_alert_get(session); }
const char *gnutls_alert_get_name(gnutls_alert_description_t alert) { return p_gnutls_alert_get_name(alert); }
int gnutls_certificate_set_x509_key_file(gnutls_certificate_credentials_t res, const char *certfile,
                                         const char *keyfile, gnutls_x509_crt_fmt_t type) {
  return p_gnutls_certificate_set_x509_key_file(res, certfile, keyfile, type);
}

// The Linux readiness calls msglog's HTTP engine waits with: epoll, and
// eventfd to wake an event loop from another thread. Glibc's Swift module
// leaves these headers out.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>

// The bytes a TCP socket holds that its peer has not acknowledged yet
// (SIOCOUTQ), or -1: whether a client is still taking an answer while the
// server cannot write more (ioctl is variadic, which Swift cannot call).
static inline int msglog_unsent_bytes(int fd) {
  int count = 0;
  return ioctl(fd, SIOCOUTQ, &count) == 0 ? count : -1;
}

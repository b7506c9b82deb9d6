// The Linux readiness calls msglog's HTTP engine waits with: epoll, and
// eventfd to wake an event loop from another thread. Glibc's Swift module
// leaves these headers out.
#include <sys/epoll.h>
#include <sys/eventfd.h>

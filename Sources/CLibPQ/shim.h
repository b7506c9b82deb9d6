#ifndef MSGLOG_CLIBPQ_SHIM_H
#define MSGLOG_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif

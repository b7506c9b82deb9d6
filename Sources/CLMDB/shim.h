#ifndef MSGLOG_CLMDB_SHIM_H
#define MSGLOG_CLMDB_SHIM_H
#include <lmdb.h>
#endif

// Forwarders for the libpq functions msglog calls, resolved with dlopen
// the first time a PostgreSQL location is used (see CLibPQ.h for why).
// They are hidden, so they never interpose on libpq's own exports (the C
// library's headers come first, to keep their default visibility).
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#pragma GCC visibility push(hidden)
#include "CLibPQ.h"
#pragma GCC visibility pop

// Each function: a pointer of the header's own type, and a forwarder.
#define MSGLOG_PQ_FUNCTIONS(X) \
  X(PQconnectStart) X(PQconnectPoll) X(PQconninfo) X(PQconninfoParse) X(PQconninfoFree) X(PQfinish) X(PQstatus) X(PQerrorMessage) X(PQsocket) X(PQsetNoticeProcessor) \
  X(PQexecParams) X(PQprepare) X(PQexecPrepared) X(PQsendQueryParams) X(PQsendPrepare) \
  X(PQsendQueryPrepared) X(PQgetResult) X(PQenterPipelineMode) X(PQexitPipelineMode) \
  X(PQpipelineStatus) X(PQtransactionStatus) \
  X(PQpipelineSync) X(PQsendFlushRequest) X(PQconsumeInput) X(PQnotifies) X(PQfreemem) X(PQresultStatus) \
  X(PQresultErrorField) X(PQclear) X(PQntuples) X(PQgetvalue) X(PQgetlength) X(PQgetisnull) \
  X(PQputCopyData) X(PQputCopyEnd)

#define MSGLOG_PQ_POINTER(name) static __typeof__(name) *p_##name;
MSGLOG_PQ_FUNCTIONS(MSGLOG_PQ_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void load(void) {
  void *library = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(failure, sizeof failure, "msglog needs libpq.so.5 for PostgreSQL (Debian: libpq5): %s", dlerror());
    return;
  }
#define MSGLOG_PQ_RESOLVE(name)                                                               \
  if (!(p_##name = (__typeof__(name) *)dlsym(library, #name))) {                               \
    snprintf(failure, sizeof failure, "the libpq.so.5 found lacks %s (libpq 14 or later needed)", #name); \
    return;                                                                                    \
  }
  MSGLOG_PQ_FUNCTIONS(MSGLOG_PQ_RESOLVE)
}

int msglog_libpq_load(char *error, unsigned long size) {
  pthread_once(&once, load);
  if (failure[0] == 0) return 0;
  if (size > 0) {
    strncpy(error, failure, size - 1);
    error[size - 1] = 0;
  }
  return -1;
}

PGconn *PQconnectStart(const char *conninfo) { return p_PQconnectStart(conninfo); }
PostgresPollingStatusType PQconnectPoll(PGconn *conn) { return p_PQconnectPoll(conn); }
PQconninfoOption *PQconninfo(PGconn *conn) { return p_PQconninfo(conn); }
PQconninfoOption *PQconninfoParse(const char *conninfo, char **errmsg) { return p_PQconninfoParse(conninfo, errmsg); }
void PQconninfoFree(PQconninfoOption *connOptions) { p_PQconninfoFree(connOptions); }
void PQfinish(PGconn *conn) { p_PQfinish(conn); }
ConnStatusType PQstatus(const PGconn *conn) { return p_PQstatus(conn); }
char *PQerrorMessage(const PGconn *conn) { return p_PQerrorMessage(conn); }
int PQsocket(const PGconn *conn) { return p_PQsocket(conn); }
PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) {
  return p_PQsetNoticeProcessor(conn, proc, arg);
}
PGresult *PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                       const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                       int resultFormat) {
  return p_PQexecParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}
PGresult *PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) {
  return p_PQprepare(conn, stmtName, query, nParams, paramTypes);
}
PGresult *PQexecPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                         const int *paramLengths, const int *paramFormats, int resultFormat) {
  return p_PQexecPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
int PQsendQueryParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                      const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                      int resultFormat) {
  return p_PQsendQueryParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                             resultFormat);
}
int PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) {
  return p_PQsendPrepare(conn, stmtName, query, nParams, paramTypes);
}
int PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                        const int *paramLengths, const int *paramFormats, int resultFormat) {
  return p_PQsendQueryPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}
PGresult *PQgetResult(PGconn *conn) { return p_PQgetResult(conn); }
int PQenterPipelineMode(PGconn *conn) { return p_PQenterPipelineMode(conn); }
int PQexitPipelineMode(PGconn *conn) { return p_PQexitPipelineMode(conn); }
PGpipelineStatus PQpipelineStatus(const PGconn *conn) { return p_PQpipelineStatus(conn); }
PGTransactionStatusType PQtransactionStatus(const PGconn *conn) { return p_PQtransactionStatus(conn); }
int PQpipelineSync(PGconn *conn) { return p_PQpipelineSync(conn); }
int PQsendFlushRequest(PGconn *conn) { return p_PQsendFlushRequest(conn); }
int PQconsumeInput(PGconn *conn) { return p_PQconsumeInput(conn); }
PGnotify *PQnotifies(PGconn *conn) { return p_PQnotifies(conn); }
void PQfreemem(void *ptr) { p_PQfreemem(ptr); }
ExecStatusType PQresultStatus(const PGresult *res) { return p_PQresultStatus(res); }
char *PQresultErrorField(const PGresult *res, int fieldcode) { return p_PQresultErrorField(res, fieldcode); }
void PQclear(PGresult *res) { p_PQclear(res); }
int PQntuples(const PGresult *res) { return p_PQntuples(res); }
char *PQgetvalue(const PGresult *res, int tup_num, int field_num) { return p_PQgetvalue(res, tup_num, field_num); }
int PQgetlength(const PGresult *res, int tup_num, int field_num) { return p_PQgetlength(res, tup_num, field_num); }
int PQgetisnull(const PGresult *res, int tup_num, int field_num) { return p_PQgetisnull(res, tup_num, field_num); }
int PQputCopyData(PGconn *conn, const char *buffer, int nbytes) { return p_PQputCopyData(conn, buffer, nbytes); }
int PQputCopyEnd(PGconn *conn, const char *errormsg) { return p_PQputCopyEnd(conn, errormsg); }

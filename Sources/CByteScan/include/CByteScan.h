#ifndef MSGLOG_CBYTESCAN_H
#define MSGLOG_CBYTESCAN_H

#include <stddef.h>

/// The first offset at or after `from` where `bytes` holds a quote followed
/// by `u` or `o` (both within `count`), or `count` when there is none: where
/// an import's measuring pass looks for the keys only the ledger performs
/// (`ImportInput.namesLedgerOnly`). Sixteen bytes a step with SSE2 on
/// x86-64 (every x86-64 CPU has it), a byte a step elsewhere.
size_t msglog_next_quote_before_u_or_o(const void *bytes, size_t count, size_t from);

#endif

#!/usr/bin/python3
"""The baseline `msglog import` is measured against: Python's lmdb module
writing the same event records, and an index of 16-byte random ids, in one
durable write transaction — no parsing, no validation, no derived state.

  scripts/lmdb-import-baseline.py SOURCE_DB TARGET_DIR

Reads the records of the `events` table of a msglog database SOURCE_DB
(untimed), then times opening TARGET_DIR, writing them and one id row per
record in one transaction, and the commit (synced, as msglog's). Prints the
seconds taken and the number of records.
"""
import os
import sys
import time

import lmdb

source, target = sys.argv[1], sys.argv[2]
env = lmdb.open(source, readonly=True, max_dbs=16, lock=False)
events = env.open_db(b"events", create=False)
with env.begin(db=events) as txn:
    records = list(txn.cursor().iternext())
env.close()
ids = [os.urandom(16) for _ in records]

start = time.perf_counter()
out = lmdb.open(target, map_size=1 << 34, max_dbs=16, sync=True, metasync=True)
out_events = out.open_db(b"events")
out_ids = out.open_db(b"ids")
with out.begin(write=True) as txn:
    for (key, value), id in zip(records, ids):
        txn.put(key, value, db=out_events, append=True)
        txn.put(id, key, db=out_ids)
out.close()
elapsed = time.perf_counter() - start
print(f"{elapsed:.6f} {len(records)}")

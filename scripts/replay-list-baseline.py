#!/usr/bin/python3
"""The baseline `msglog --json replay` is measured against: a plain Python
program that reads the log with Python's lmdb module (as decode-log.py
does, following docs/FORMAT.md: records whole or framed), folds one stream's events into a Python
list and prints the `replay --json` document.

  scripts/replay-list-baseline.py DB [STREAM]     # STREAM: main by default

What it leaves out, to be the quickest plain Python there is: the records'
checksums (CRC32C in pure Python would be most of its time) and every check
a replay makes (the recorded index, the item at it). Its output is that of
`msglog --json replay` (the bench compares them once).
"""
import datetime
import json
import struct
import sys
import uuid

import lmdb

# The size of each op's fields in a framed record's frame (no sender, no text).
FIELDS = {1: 8, 2: 8, 3: 16, 4: 24, 5: 16}

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def rfc3339(ms):
    t = EPOCH + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def sender_and_text(rec, p):
    flag = rec[p]
    p += 1
    sender = None
    if flag == 1:
        (length,) = struct.unpack_from(">I", rec, p)
        p += 4
        sender = bytes(rec[p:p + length]).decode("utf-8")
        p += length
    (length,) = struct.unpack_from(">I", rec, p)
    p += 4
    return sender, bytes(rec[p:p + length]).decode("utf-8")


def main(path, stream):
    name = stream.encode("utf-8")
    env = lmdb.open(path, max_dbs=8, readonly=True, lock=False)
    events = env.open_db(b"events", create=False)
    stream_events = env.open_db(b"stream-events", create=False)
    items = []       # the stream's list: [id, text, sender, ms, seq, edited ms or None]
    removed = {}     # id -> the item as it was removed, for a restore
    seq = version = 0
    with env.begin(buffers=True) as txn:
        prefix = name + b"\0"
        keys = txn.cursor(db=stream_events)
        found = keys.set_range(prefix)
        while found:
            key = bytes(keys.key())
            if not key.startswith(prefix):
                break
            rec = txn.get(key[len(prefix):], db=events)
            if rec[0] == 4:  # record format 4: the body after the frame
                op, parts, seq, version, ms = struct.unpack_from(">BBQQq", rec, 1)
                item = bytes(rec[27:43])
                (n,) = struct.unpack_from(">H", rec, 43)
                p = 45 + n
                body = p + FIELDS[op] + (8 if parts & 1 else 0) + (32 if parts & 2 else 0)
            else:
                _fmt, op, seq, version, ms = struct.unpack_from(">BBQQq", rec, 0)
                item = bytes(rec[26:42])
                (n,) = struct.unpack_from(">H", rec, 42)
                p = 44 + n
                body = p + (8 if op == 1 else 24)
            if op == 1:    # insert
                (index,) = struct.unpack_from(">Q", rec, p)
                sender, text = sender_and_text(rec, body)
                items.insert(index, [item, text, sender, ms, seq, None])
            elif op == 2:  # remove
                (index,) = struct.unpack_from(">Q", rec, p)
                removed[item] = items.pop(index)
            elif op == 3:  # move
                source, target = struct.unpack_from(">QQ", rec, p)
                items.insert(target, items.pop(source))
            elif op == 4:  # edit: new text; author, time and seq stay
                (index,) = struct.unpack_from(">Q", rec, p)
                _sender, text = sender_and_text(rec, body)
                items[index][1] = text
                items[index][5] = ms
            elif op == 5:  # restore
                (index,) = struct.unpack_from(">Q", rec, p)
                items.insert(index, removed.pop(item))
            found = keys.next()
    out = []
    for index, (item, text, sender, ms, iseq, edited) in enumerate(items):
        entry = {"index": index, "id": str(uuid.UUID(bytes=item)), "text": text}
        if sender is not None:
            entry["sender"] = sender
        entry["time"] = rfc3339(ms)
        entry["seq"] = iseq
        if edited is not None:
            entry["edited"] = rfc3339(edited)
        out.append(entry)
    doc = {"stream": stream, "seq": seq, "version": version, "count": len(items), "items": out}
    sys.stdout.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "main")

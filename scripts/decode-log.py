#!/usr/bin/python3
"""Reads a msglog database with Python's lmdb module alone, following
docs/FORMAT.md, and prints every event as `msglog export` does.

    /usr/bin/python3 scripts/decode-log.py msglog.lmdb   # Debian python3 + python3-lmdb

It exists to prove the format is documented well enough for a third-party
client; the test suite compares its output with `msglog export`.
"""
import datetime, json, struct, sys, uuid

import lmdb


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def rfc3339(ms):
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def decode(seq, rec):
    if struct.unpack(">I", rec[-4:])[0] != crc32c(rec[:-4]):
        raise SystemExit(f"seq {seq}: checksum mismatch")
    fmt, op, rseq, version, ms = struct.unpack(">BBQQq", rec[:26])
    if fmt != 1 or rseq != seq:
        raise SystemExit(f"seq {seq}: unexpected record")
    item = str(uuid.UUID(bytes=bytes(rec[26:42])))
    n, = struct.unpack(">H", rec[42:44])
    stream = bytes(rec[44:44 + n]).decode("utf-8")
    out = {"seq": seq, "stream": stream, "version": version, "time": rfc3339(ms),
           "op": {1: "insert", 2: "remove", 3: "move"}[op], "id": item}
    p = 44 + n
    if op == 1:
        index, flag = struct.unpack(">QB", rec[p:p + 9]); p += 9
        sender = None
        if flag == 1:
            length, = struct.unpack(">I", rec[p:p + 4]); p += 4
            sender = bytes(rec[p:p + length]).decode("utf-8"); p += length
        length, = struct.unpack(">I", rec[p:p + 4]); p += 4
        out["index"] = index
        out["text"] = bytes(rec[p:p + length]).decode("utf-8")
        if sender is not None:
            out["sender"] = sender
    elif op == 3:
        out["from"], out["to"] = struct.unpack(">QQ", rec[p:p + 16])
    return out


def main(path):
    env = lmdb.open(path, max_dbs=8, readonly=True, lock=False)
    events = env.open_db(b"events", create=False)
    with env.begin(db=events, buffers=True) as txn:
        for key, rec in txn.cursor():
            seq, = struct.unpack(">Q", key)
            line = json.dumps(decode(seq, bytes(rec)), ensure_ascii=False, separators=(",", ":"))
            sys.stdout.write(line + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "msglog.lmdb")

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


OPS = {1: "insert", 2: "remove", 3: "move", 4: "edit", 5: "restore"}


def decode(seq, rec):
    if struct.unpack(">I", rec[-4:])[0] != crc32c(rec[:-4]):
        raise SystemExit(f"seq {seq}: checksum mismatch")
    fmt, op, rseq, version, ms = struct.unpack(">BBQQq", rec[:26])
    if fmt not in (1, 2) or rseq != seq or op not in OPS or (fmt == 1 and op > 3):
        raise SystemExit(f"seq {seq}: unexpected record")
    item = str(uuid.UUID(bytes=bytes(rec[26:42])))
    n, = struct.unpack(">H", rec[42:44])
    stream = bytes(rec[44:44 + n]).decode("utf-8")
    out = {"seq": seq, "stream": stream, "version": version, "time": rfc3339(ms), "op": OPS[op], "id": item}
    p = 44 + n

    def sender_and_text(p):
        flag, = struct.unpack(">B", rec[p:p + 1]); p += 1
        sender = None
        if flag == 1:
            length, = struct.unpack(">I", rec[p:p + 4]); p += 4
            sender = bytes(rec[p:p + length]).decode("utf-8"); p += length
        length, = struct.unpack(">I", rec[p:p + 4]); p += 4
        return sender, bytes(rec[p:p + length]).decode("utf-8"), p + length

    if op == 1:
        out["index"], = struct.unpack(">Q", rec[p:p + 8])
        sender, out["text"], p = sender_and_text(p + 8)
        if sender is not None:
            out["sender"] = sender
    elif op == 2:
        p += 8                      # the index it had: derived, not exported
    elif op == 3:
        out["from"], out["to"] = struct.unpack(">QQ", rec[p:p + 16]); p += 16
    elif op == 4:
        p += 24                     # index, text record before, insert: derived
        sender, out["text"], p = sender_and_text(p)
        if sender is not None:
            out["sender"] = sender
    elif op == 5:
        out["index"], = struct.unpack(">Q", rec[p:p + 8]); p += 16   # then the text record: derived
    if fmt == 2:
        undoes, = struct.unpack(">Q", rec[p:p + 8]); p += 8
        if undoes:
            out["undoes"] = undoes
    if p != len(rec) - 4:
        raise SystemExit(f"seq {seq}: {len(rec) - 4 - p} unexpected bytes")
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

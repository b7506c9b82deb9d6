#!/usr/bin/python3
"""Reads a msglog database with Python's lmdb module alone, following
docs/FORMAT.md, and prints every event as `msglog export` does.

    /usr/bin/python3 scripts/decode-log.py msglog.lmdb   # Debian python3 + python3-lmdb

It exists to prove the format is documented well enough for a third-party
client; the test suite compares its output with `msglog export`. It reads
record formats 1 to 3 (one checksum over the whole record), format 4 (a
frame and an erasable body, each with its own checksum; a body erased or,
for an edit, unsigned), and formats 5 and 6 (an erase and an unsign: a frame
alone).
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


OPS = {1: "insert", 2: "remove", 3: "move", 4: "edit", 5: "restore", 6: "erase", 7: "unsign"}
# The framed formats, and the op each of formats 5 and 6 holds alone.
FRAMED = {4: None, 5: 6, 6: 7}


def fail(seq, why):
    raise SystemExit(f"seq {seq}: {why}")


def sender_and_text(rec, p, out=None):
    """An insert's or an edit's sender flag, sender and text from offset p;
    given the framed record's fields `out`, also a body erased (flags 2) or,
    for an edit, unsigned (4): then the seq that says so, returned last."""
    flag, = struct.unpack(">B", rec[p:p + 1]); p += 1
    if flag not in (0, 1, 2, 4) or flag in (2, 4) and out is None or flag == 4 and out["op"] != "edit":
        raise SystemExit(f"invalid body flags {flag}")
    if flag in (2, 4):
        erased, = struct.unpack(">Q", rec[p:p + 8]); p += 8
        if flag == 2:
            return None, "", p, erased
        length, = struct.unpack(">I", rec[p:p + 4]); p += 4
        if length == 0:
            raise SystemExit("an unsigned body without its text")
        return None, bytes(rec[p:p + length]).decode("utf-8"), p + length, erased
    sender = None
    if flag == 1:
        length, = struct.unpack(">I", rec[p:p + 4]); p += 4
        sender = bytes(rec[p:p + length]).decode("utf-8"); p += length
    length, = struct.unpack(">I", rec[p:p + 4]); p += 4
    if out is not None:
        return sender, bytes(rec[p:p + length]).decode("utf-8"), p + length, None
    return sender, bytes(rec[p:p + length]).decode("utf-8"), p + length


def op_fields(out, op, rec, p):
    """The op's positions from offset p (as every format holds them); the offset after."""
    if op in (1, 2):
        if op == 1:
            out["index"], = struct.unpack(">Q", rec[p:p + 8])
        return p + 8                # a remove's index: derived, not exported
    if op == 3:
        out["from"], out["to"] = struct.unpack(">QQ", rec[p:p + 16])
        return p + 16
    if op == 4:
        return p + 24               # index, text record before, insert: derived
    if op == 6:
        return p + 8                # an erase's index: derived, not exported
    if op == 7:
        out["edit"], = struct.unpack(">Q", rec[p:p + 8])
        return p + 8
    out["index"], = struct.unpack(">Q", rec[p:p + 8])
    return p + 16                   # then the text record: derived


def origin(rec, p):
    replica = str(uuid.UUID(bytes=bytes(rec[p:p + 16])))
    change, made = struct.unpack(">Qq", rec[p + 16:p + 32])
    return {"replica": replica, "change": change, "made": rfc3339(made)}


def decode_whole(seq, rec):
    """Record formats 1 to 3: a CRC-32C over everything before its last 4 bytes."""
    if struct.unpack(">I", rec[-4:])[0] != crc32c(rec[:-4]):
        fail(seq, "checksum mismatch")
    fmt, op, rseq, version, ms = struct.unpack(">BBQQq", rec[:26])
    if rseq != seq or op not in OPS or op > 5 or (fmt == 1 and op > 3):
        fail(seq, "unexpected record")
    item = str(uuid.UUID(bytes=bytes(rec[26:42])))
    n, = struct.unpack(">H", rec[42:44])
    stream = bytes(rec[44:44 + n]).decode("utf-8")
    out = {"seq": seq, "stream": stream, "version": version, "time": rfc3339(ms), "op": OPS[op], "id": item}
    p = op_fields(out, op, rec, 44 + n)
    if op in (1, 4):
        sender, out["text"], p = sender_and_text(rec, p)
        if sender is not None:
            out["sender"] = sender
    if fmt >= 2:
        undoes, = struct.unpack(">Q", rec[p:p + 8]); p += 8
        if undoes:
            out["undoes"] = undoes
    if fmt == 3:
        out["origin"] = origin(rec, p); p += 32
    if p != len(rec) - 4:
        fail(seq, f"{len(rec) - 4 - p} unexpected bytes")
    return out


def decode_framed(seq, rec):
    """Record format 4: the frame (checked by the last 4 bytes), then, for an
    insert or an edit, the body (checked by the 4 bytes before those: a
    CRC-32C of the frame and the body, every byte before them)."""
    op, parts, rseq, version, ms = struct.unpack(">BBQQq", rec[1:27])
    if rseq != seq or op not in OPS or parts & ~3 or (FRAMED[rec[0]] or op) != op or op in (6, 7) and rec[0] == 4:
        fail(seq, "unexpected record")
    item = str(uuid.UUID(bytes=bytes(rec[27:43])))
    n, = struct.unpack(">H", rec[43:45])
    stream = bytes(rec[45:45 + n]).decode("utf-8")
    out = {"seq": seq, "stream": stream, "version": version, "time": rfc3339(ms), "op": OPS[op], "id": item}
    p = op_fields(out, op, rec, 45 + n)
    undoes = None
    if parts & 1:
        undoes, = struct.unpack(">Q", rec[p:p + 8]); p += 8
    made = None
    if parts & 2:
        made = origin(rec, p); p += 32
    frame_crc = struct.unpack(">I", rec[-4:])[0]
    if frame_crc != crc32c(rec[:p]):
        fail(seq, "checksum mismatch")
    erased = None
    if op in (1, 4):
        if struct.unpack(">I", rec[-8:-4])[0] != crc32c(rec[:-8]):
            fail(seq, "text checksum mismatch")
        sender, out["text"], p, erased = sender_and_text(rec, p, out)
        if sender is not None:
            out["sender"] = sender
        p += 4
    if p != len(rec) - 4:
        fail(seq, f"{len(rec) - 4 - p} unexpected bytes")
    if op in (1, 4) and erased is not None:
        out["erased"] = erased
    if undoes is not None:
        out["undoes"] = undoes
    if made is not None:
        out["origin"] = made
    return out


def decode(seq, rec):
    if rec[0] in (1, 2, 3):
        return decode_whole(seq, rec)
    if rec[0] in FRAMED:
        return decode_framed(seq, rec)
    fail(seq, f"unknown record format {rec[0]}")


def main(path):
    env = lmdb.open(path, max_dbs=16, readonly=True, lock=False)
    events = env.open_db(b"events", create=False)
    with env.begin(db=events, buffers=True) as txn:
        for key, rec in txn.cursor():
            seq, = struct.unpack(">Q", key)
            line = json.dumps(decode(seq, bytes(rec)), ensure_ascii=False, separators=(",", ":"))
            sys.stdout.write(line + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "msglog.lmdb")

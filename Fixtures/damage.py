#!/usr/bin/python3
"""Damages one row of a msglog database behind msglog's back, as another
program with Python's `lmdb` module could; the tests use it to prove that
damage is detected, never served, never spread into the log, and repaired.

    damage.py DB OP TARGET [ARG]   one chosen damage
    damage.py DB random SEED       one random damage of a random derived row

OP: delete | truncate | flip | swap | junk
TARGET picks the row:
    head:STREAM                  the stream's heads row
    node:STREAM:root | :leaf     its order tree's root, or its first leaf
    id:live | id:removed         an ids row of a live / a removed item
    events:STREAM:last | :first  a row of the per-stream event index
    checkpoint:STREAM:last       the stream's latest checkpoint
    summary                      the summary row in meta
ARG: truncate: the length to keep; flip: the bit to flip (default: a middle one);
     swap: a second TARGET whose value is exchanged with the first;
     junk: the key the copy goes under (default: the row's own, its last byte changed).
Prints one line saying what it did.
"""
import random
import struct
import sys

import lmdb

TABLES = [b"heads", b"order", b"ids", b"stream-events", b"checkpoints", b"meta"]


def open_env(path):
    env = lmdb.open(path, max_dbs=8, map_size=1 << 36)
    dbs = {name: env.open_db(name, create=False) for name in TABLES}
    return env, dbs


def head_fields(txn, dbs, stream):
    row = txn.get(stream, db=dbs[b"heads"])
    return struct.unpack(">7Q", row[:56])


def node_key(stream, node):
    return stream + b"\0" + struct.pack(">Q", node)


def resolve(txn, dbs, target):
    """(table name, key) for a TARGET."""
    kind, _, rest = target.partition(":")
    if kind == "head":
        return b"heads", rest.encode()
    if kind == "node":
        stream, _, which = rest.rpartition(":")
        stream = stream.encode()
        node = head_fields(txn, dbs, stream)[3]
        if which == "leaf":
            while True:
                row = txn.get(node_key(stream, node), db=dbs[b"order"])
                if row[0] == 1:
                    break
                node = struct.unpack(">Q", row[13:21])[0]  # the first child
        return b"order", node_key(stream, node)
    if kind == "id":
        for key, row in txn.cursor(db=dbs[b"ids"]):
            removed = struct.unpack(">Q", row[8:16])[0]
            if (removed != 0) == (rest == "removed"):
                return b"ids", bytes(key)
        raise SystemExit(f"damage.py: no {rest} id")
    if kind in ("events", "checkpoint"):
        stream, _, which = rest.rpartition(":")
        table = b"stream-events" if kind == "events" else b"checkpoints"
        prefix = stream.encode() + b"\0"
        keys = [bytes(k) for k, _ in txn.cursor(db=dbs[table]) if bytes(k).startswith(prefix) and len(k) == len(prefix) + 8]
        if not keys:
            raise SystemExit(f"damage.py: no {table.decode()} rows for {stream}")
        return table, keys[-1] if which == "last" else keys[0]
    if kind == "summary":
        return b"meta", b"summary"
    raise SystemExit(f"damage.py: unknown target {target}")


def apply(txn, dbs, op, table, key, arg, rng):
    db = dbs[table]
    value = txn.get(key, db=db)
    if value is None:
        raise SystemExit(f"damage.py: no row {key!r} in {table.decode()}")
    value = bytes(value)
    if op == "delete":
        txn.delete(key, db=db)
        return f"deleted {table.decode()} {key.hex()}"
    if op == "truncate" and not value:
        op = "flip"  # nothing to cut: damage it another way
    if op == "swap" and bytes(txn.get(arg[1], db=dbs[arg[0]])) == value:
        op = "flip"  # exchanging equal values changes nothing
    if op == "truncate":
        keep = int(arg) if arg is not None else rng.randrange(len(value))
        txn.put(key, value[:keep], db=db)
        return f"truncated {table.decode()} {key.hex()} to {keep} of {len(value)} bytes"
    if op == "flip":
        if not value:
            txn.put(key, b"\x01", db=db)
            return f"filled empty {table.decode()} {key.hex()}"
        bit = int(arg) if arg is not None else rng.randrange(len(value) * 8)
        damaged = bytearray(value)
        damaged[bit // 8] ^= 1 << (bit % 8)
        txn.put(key, bytes(damaged), db=db)
        return f"flipped bit {bit} of {table.decode()} {key.hex()}"
    if op == "swap":
        other_table, other = arg
        other_value = bytes(txn.get(other, db=dbs[other_table]))
        txn.put(key, other_value, db=db)
        txn.put(other, value, db=dbs[other_table])
        return f"swapped {table.decode()} {key.hex()} with {other_table.decode()} {other.hex()}"
    if op == "junk":
        if arg is not None:
            junk_key = arg.encode()
        else:
            junk_key = key[:-1] + bytes([key[-1] ^ 0x80])
            if txn.get(junk_key, db=db) is not None:
                junk_key = key + b"\x7f"
        txn.put(junk_key, value, db=db)
        return f"added a copy of {table.decode()} {key.hex()} under {junk_key.hex()}"
    raise SystemExit(f"damage.py: unknown op {op}")


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    path, op = sys.argv[1], sys.argv[2]
    env, dbs = open_env(path)
    with env.begin(write=True) as txn:
        if op == "random":
            rng = random.Random(int(sys.argv[3]))
            rows = []
            for table in TABLES:
                for key, _ in txn.cursor(db=dbs[table]):
                    if table == b"meta" and bytes(key) != b"summary":
                        continue  # the format marker is not derived data
                    rows.append((table, bytes(key)))
            table, key = rng.choice(rows)
            op = rng.choice(["delete", "truncate", "flip", "flip", "swap", "junk"])
            arg = None
            if op == "swap":
                same = [row for row in rows if row[0] == table and row[1] != key]
                if not same:
                    op = "flip"
                else:
                    arg = rng.choice(same)
            print(apply(txn, dbs, op, table, key, arg, rng))
            return
        table, key = resolve(txn, dbs, sys.argv[3])
        arg = sys.argv[4] if len(sys.argv) > 4 else None
        if op == "swap":
            arg = resolve(txn, dbs, arg)
        print(apply(txn, dbs, op, table, key, arg, random.Random(0)))


if __name__ == "__main__":
    main()

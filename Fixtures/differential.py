#!/usr/bin/env python3
"""A seeded random session of commands run through the model (model.py),
written as a script for the test suite to run through msglog and compare.

    python3 Fixtures/differential.py SEED STEPS > script.jsonl

Two streams, `a` and `b`; appends, inserts, moves, removes, edits (some to
the same text), restores (with and without an index), undos (the latest, a
seq, an undo's seq: redo), stale writes with `--rebase` and without, and
commands that must be refused. Each line is one step:

    {"step":1,"time":"…","args":["append","--stream","a","--id","…","--","tea"],
     "command":{"op":"append","stream":"a","id":"…","text":"tea"},
     "outcome":"ok","output":"{\"seq\":1,…}","list":"{…list --json of the stream…}"}

`args` are msglog's arguments (without --db and --json); `command` the same
as a value, for a test that calls the library; `outcome` is ok, noop,
refused (exit 1), conflict (exit 75) or usage (exit 64); `output` is the
`--json` document on ok (as msglog prints it, a string), else null; `list`
the stream's `list --json` after the step (a string); `time` is the time
the model gave the event. The last line is {"export":[…every event as `export` prints it…]}.
"""
import json, os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Conflict, Log, Refused, Usage, uid  # noqa: E402

WORDS = ["tea", "plan", "ship it", "room 4B", "👍", "draft", "p99", "later", "ok", "café", "α β", "notes"]


def stamp(step):
    return "2026-12-01T%02d:%02d:%02d.%03dZ" % (8 + step // 3600, step // 60 % 60, step % 60, step * 7 % 1000)


def shape(log, event, before):
    """The `--json` document of the command that appended `event`, given the
    stream's items before it (for where a removed or edited item was)."""
    out = {k: event[k] for k in ("seq", "stream", "version", "time", "id")}
    op = event["op"]
    if op in ("insert", "restore"):
        out["index"] = event["index"]
    elif op in ("remove", "edit"):
        out["index"] = [i["id"] for i in before].index(event["id"])
    elif op == "move":
        out["from"], out["to"] = event["from"], event["to"]
    if "undoes" in event:
        out["undoes"] = event["undoes"]
    if event.get("rebased"):
        out["rebased"] = True
    return out


class Session:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.log = Log()
        self.next_id = 0
        self.removed = {"a": [], "b": []}   # ids removed from each stream, perhaps restored since

    def fresh_id(self):
        self.next_id += 1
        return uid(0x7000 + self.seed % 0x1000, self.next_id)

    def text(self):
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 3)))

    def version_options(self, stream, rebasable):
        """An --expect-version now and then: the current one, a stale one
        (with --rebase when the command takes it), or a future one."""
        r = self.rng.random()
        current = self.log.version(stream)
        if r < 0.6:
            return {}, []
        if r < 0.72:
            return {"expectVersion": current}, ["--expect-version", str(current)]
        if r < 0.95 and current > 0:
            stale = max(0, current - self.rng.randint(1, 4))
            if rebasable and self.rng.random() < 0.9:
                return ({"expectVersion": stale, "rebase": True},
                        ["--expect-version", str(stale), "--rebase"])
            if self.rng.random() < 0.5:
                return {}, []
            return {"expectVersion": stale}, ["--expect-version", str(stale)]
        if rebasable and self.rng.random() < 0.2:
            return {"rebase": True}, ["--rebase"]           # without --expect-version: usage
        return {"expectVersion": current + 1}, ["--expect-version", str(current + 1)]

    def choose(self, stream):
        """A command (as a value and as arguments) for the model to run."""
        rng, log = self.rng, self.log
        items = log.items(stream)
        n = len(items)
        kind = rng.choices(
            ["append", "insert", "move", "remove", "edit", "restore", "undo", "redo", "undo-seq"],
            [18, 8, 22, 9, 10, 8, 12, 4, 5])[0]
        rebasable = kind in ("insert", "move", "remove", "edit")
        extra, flags = self.version_options(stream, rebasable)
        base = ["--stream", stream]
        if kind == "append" or (kind in ("move", "remove", "edit") and n == 0):
            id, text = self.fresh_id(), self.text()
            sender = rng.choice([None, "ann", "bob"])
            c = {"op": "append", "stream": stream, "id": id, "text": text, "sender": sender}
            args = ["append"] + base + ["--id", id] + (["--sender", sender] if sender else [])
            extra, flags = self.version_options(stream, False)
            return dict(c, **extra), args + flags + ["--", text]
        if kind == "insert":
            # Sometimes past the end, or reusing an id (refused).
            index = rng.randint(0, n + (1 if rng.random() < 0.1 else 0))
            id = self.fresh_id() if rng.random() > 0.05 or not items else rng.choice(items)["id"]
            text = self.text()
            c = {"op": "insert", "stream": stream, "index": index, "id": id, "text": text}
            return dict(c, **extra), ["insert", str(index)] + base + ["--id", id] + flags + ["--", text]
        if kind == "move":
            bound = n + (1 if rng.random() < 0.05 else 0)
            frm, to = rng.randrange(bound), rng.randrange(bound)
            if rng.random() < 0.05:
                to = frm
            c = {"op": "move", "stream": stream, "from": frm, "to": to}
            return dict(c, **extra), ["move", str(frm), str(to)] + base + flags
        if kind == "remove":
            id = self.target_id(stream)
            c = {"op": "remove", "stream": stream, "id": id}
            return dict(c, **extra), ["remove", id] + base + flags
        if kind == "edit":
            id = self.target_id(stream)
            live = [i for i in items if i["id"] == id]
            text = live[0]["text"] if live and rng.random() < 0.15 else self.text()
            sender = rng.choice([None, "ann", "bob"])
            c = {"op": "edit", "stream": stream, "id": id, "text": text, "sender": sender}
            args = ["edit", id] + base + (["--sender", sender] if sender else []) + flags + ["--", text]
            return dict(c, **extra), args
        if kind == "restore":
            pool = self.removed[stream] or [i["id"] for i in items]
            id = rng.choice(pool) if pool else self.fresh_id()
            if rng.random() < 0.1 and items:
                id = rng.choice(items)["id"]          # a live id: refused
            c = {"op": "restore", "stream": stream, "id": id}
            args = ["restore", id] + base
            if rng.random() < 0.3:
                index = rng.randint(0, n + (1 if rng.random() < 0.1 else 0))
                c["index"] = index
                args += ["--index", str(index)]
            extra, flags = self.version_options(stream, False)
            return dict(c, **extra), args + flags
        extra, flags = self.version_options(stream, False)
        if kind == "undo":
            return dict({"op": "undo", "stream": stream}, **extra), ["undo"] + base + flags
        # An undo by seq: of an undo (a redo), of any event (perhaps undone
        # already, or of the other stream), or past the head.
        events = log.events
        if kind == "redo":
            undos = [e for e in events if "undoes" in e]
            seq = rng.choice(undos)["seq"] if undos else log.seq() + 1
        else:
            seq = rng.randint(1, log.seq() + 1) if events else 1
        return dict({"op": "undo", "stream": stream, "seq": seq}, **extra), ["undo", str(seq)] + base + flags

    def target_id(self, stream):
        """A live id mostly; now and then a removed one (refused)."""
        items = self.log.items(stream)
        if self.removed[stream] and self.rng.random() < 0.08:
            return self.rng.choice(self.removed[stream])
        return self.rng.choice(items)["id"]

    def run(self, c, time):
        """Runs the command on the model: (outcome, output)."""
        log, s = self.log, c["stream"]
        before = [dict(i) for i in log.items(s)]
        v = {k: c[k] for k in ("expectVersion",) if k in c}
        ev = v.get("expectVersion")
        rebase = c.get("rebase", False)
        op = c["op"]
        try:
            if op == "append":
                e = log.append(s, c["text"], c["id"], time, sender=c.get("sender"), expect_version=ev)
            elif op == "insert":
                e = log.insert(s, c["index"], c["text"], c["id"], time, expect_version=ev, rebase=rebase)
            elif op == "move":
                e = log.move(s, c["from"], c["to"], time, expect_version=ev, rebase=rebase)
            elif op == "remove":
                e = log.remove(s, c["id"], time, expect_version=ev, rebase=rebase)
            elif op == "edit":
                e = log.edit(s, c["id"], c["text"], time, sender=c.get("sender"), expect_version=ev, rebase=rebase)
            elif op == "restore":
                e = log.restore(s, c["id"], time, index=c.get("index"), expect_version=ev)
            else:
                e = log.undo(s, time, seq=c.get("seq"), expect_version=ev)
        except Refused:
            return "refused", None
        except Conflict:
            return "conflict", None
        except Usage:
            return "usage", None
        if e is None:
            return "noop", None
        if e["op"] == "remove":
            self.removed[s].append(e["id"])
        return "ok", shape(log, e, before)


def main(seed, steps):
    session = Session(seed)
    out = sys.stdout
    for step in range(1, steps + 1):
        stream = "a" if session.rng.random() < 0.75 else "b"
        command, args = session.choose(stream)
        time = stamp(step)
        outcome, output = session.run(command, time)
        text = None if output is None else json.dumps(output, ensure_ascii=False, separators=(",", ":"))
        line = {"step": step, "time": time, "args": args, "command": command, "outcome": outcome,
                "output": text, "list": session.log.listing(stream)}
        out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    out.write(json.dumps({"export": session.log.lines()}, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1, int(sys.argv[2]) if len(sys.argv) > 2 else 200)

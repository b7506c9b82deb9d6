#!/usr/bin/env python3
"""An independent model of msglog's events and commands, "Working together"
included (edit, restore, undo, rebase), in plain Python: a list per stream,
a snapshot of every stream after every seq, nothing clever. It follows the
contract word for word, so that what msglog computes with its trees,
checkpoints and indices can be checked against what the words say.
make-fixtures.py writes the scenario fixtures with it, and differential.py
drives it beside the real binary (the test suite compares the two).

    log = Log()
    log.append("main", "red", id=uid(4, 0), time=t(0))
    log.move("main", 0, 2, t(1), expect_version=3, rebase=True)
    log.undo("main", t(2))      # the latest undoable event
    log.lines()                 # the `export` lines (JSON objects)
    log.listing("main")         # the `list --json` document

Commands raise Refused (exit 1), Conflict (exit 75) or Usage (exit 64);
a no-op (a move onto itself, an edit to the same text, an undo whose
inverse changes nothing) appends nothing and returns None.
"""
import json


class Refused(Exception):
    pass


class Conflict(Exception):
    pass


class Usage(Exception):
    pass


class Log:
    def __init__(self):
        self.events = []      # every event, seq = index + 1
        self.history = {}     # stream -> [items after version 0, 1, 2, ...]
        self.removed = {}     # id -> the item as it was when last removed (its text, edited, ...)
        self.used = set()     # every id ever inserted

    # -- reading ------------------------------------------------------------

    def seq(self):
        return len(self.events)

    def version(self, stream):
        return len(self.history.get(stream, [[]])) - 1

    def items(self, stream, version=None):
        versions = self.history.get(stream, [[]])
        return versions[-1 if version is None else version]

    def live(self, stream, id):
        return any(i["id"] == id for i in self.items(stream))

    def stream_events(self, stream):
        return [e for e in self.events if e["stream"] == stream]

    def undoer(self, seq):
        """The standing event that undoes event `seq`, or None."""
        for e in reversed(self.events):
            if e.get("undoes") == seq and self.undoer(e["seq"]) is None:
                return e
        return None

    def listing(self, stream, at=None):
        """`list --json` (or `replay --json --at`) as msglog prints it."""
        at = self.seq() if at is None else at
        version = len([e for e in self.events[:at] if e["stream"] == stream])
        items = self.items(stream, version)
        out = {"stream": stream, "seq": at, "version": version, "count": len(items),
               "items": [dict([("index", k)] + list(i.items())) for k, i in enumerate(items)]}
        return json.dumps(out, separators=(",", ":"), ensure_ascii=False)

    def lines(self):
        """The export lines: each event as `log --json` prints it."""
        return [json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in self.events]

    # -- the predecessor rule ----------------------------------------------

    def after_predecessor(self, stream, before, index, moving=None):
        """Where an item goes so that it follows its predecessor: in the list
        `before` (a past list), walk back from position `index` - 1 to the
        first item that is live now, and answer the index right after that
        item in the list as it is now (without `moving`, the item being
        placed, if it is live); 0 when none is."""
        now = [i["id"] for i in self.items(stream) if i["id"] != moving]
        for k in range(index - 1, -1, -1):
            anchor = before[k]["id"]
            if anchor in now:
                return now.index(anchor) + 1
        return 0

    # -- appending ----------------------------------------------------------

    def _check_version(self, stream, expect_version, rebase):
        """None when the command applies as given, else the version it was
        computed at (a rebase). Exit 75 when the stream is elsewhere and no
        rebase was asked for, or the version is in the future."""
        if expect_version is None:
            if rebase:
                raise Usage("--rebase needs --expect-version")
            return None
        actual = self.version(stream)
        if expect_version == actual:
            return None
        if rebase and expect_version < actual:
            return expect_version
        raise Conflict("stream %s is at version %d, not %d" % (stream, actual, expect_version))

    def _append(self, stream, time, op, undoes=None, **fields):
        items = [dict(i) for i in self.items(stream)]
        event = {"seq": self.seq() + 1, "stream": stream, "version": self.version(stream) + 1,
                 "time": time, "op": op}
        if op == "insert":
            item = {"id": fields["id"], "text": fields["text"]}
            if fields.get("sender") is not None:
                item["sender"] = fields["sender"]
            item["time"] = time
            item["seq"] = event["seq"]
            items.insert(fields["index"], item)
            self.used.add(fields["id"])
            event.update(id=fields["id"], index=fields["index"], text=fields["text"])
            if fields.get("sender") is not None:
                event["sender"] = fields["sender"]
        elif op == "remove":
            k = [i["id"] for i in items].index(fields["id"])
            self.removed[fields["id"]] = items.pop(k)
            event.update(id=fields["id"])
        elif op == "move":
            x = items.pop(fields["from"])
            items.insert(fields["to"], x)
            event.update(id=x["id"], **{"from": fields["from"], "to": fields["to"]})
        elif op == "edit":
            k = [i["id"] for i in items].index(fields["id"])
            item = dict(items[k])
            item["text"] = fields["text"]
            item["edited"] = time
            items[k] = item
            event.update(id=fields["id"], text=fields["text"])
            if fields.get("sender") is not None:
                event["sender"] = fields["sender"]
        elif op == "restore":
            items.insert(fields["index"], dict(self.removed.pop(fields["id"])))
            event.update(id=fields["id"], index=fields["index"])
        if undoes is not None:
            event["undoes"] = undoes
        self.events.append(event)
        self.history.setdefault(stream, [[]]).append(items)
        return event

    # -- commands -----------------------------------------------------------

    def append(self, stream, text, id, time, sender=None, expect_version=None):
        return self.insert(stream, len(self.items(stream)), text, id, time, sender, expect_version)

    def insert(self, stream, index, text, id, time, sender=None, expect_version=None, rebase=False):
        # The version first, as msglog checks it before the command (a
        # stale command is a conflict whatever else is wrong with it).
        at = self._check_version(stream, expect_version, rebase)
        if id in self.used:
            raise Refused("id %s was used before" % id)
        if at is not None:
            before = self.items(stream, at)
            if index > len(before):
                raise Refused("index %d is beyond the %d items at version %d" % (index, len(before), at))
            index = self.after_predecessor(stream, before, index)
        if index > len(self.items(stream)):
            raise Refused("index out of range")
        event = self._append(stream, time, "insert", id=id, index=index, text=text, sender=sender)
        return dict(event, rebased=True) if at is not None else event

    def move(self, stream, frm, to, time, expect_version=None, rebase=False):
        at = self._check_version(stream, expect_version, rebase)
        if at is not None:
            before = [dict(i) for i in self.items(stream, at)]
            if frm >= len(before) or to >= len(before):
                raise Refused("index out of range at version %d" % at)
            x = before.pop(frm)
            before.insert(to, x)
            if not self.live(stream, x["id"]):
                raise Refused("item %s is no longer in the stream" % x["id"])
            to = self.after_predecessor(stream, before, to, moving=x["id"])
            frm = [i["id"] for i in self.items(stream)].index(x["id"])
        count = len(self.items(stream))
        if frm >= count or to >= count:
            raise Refused("index out of range")
        if frm == to:
            return None
        event = self._append(stream, time, "move", **{"from": frm, "to": to})
        return dict(event, rebased=True) if at is not None else event

    def remove(self, stream, id, time, expect_version=None, rebase=False):
        at = self._check_version(stream, expect_version, rebase)
        if not self.live(stream, id):
            raise Refused("no live item %s" % id)
        event = self._append(stream, time, "remove", id=id)
        return dict(event, rebased=True) if at is not None else event

    def edit(self, stream, id, text, time, sender=None, expect_version=None, rebase=False):
        at = self._check_version(stream, expect_version, rebase)
        if not self.live(stream, id):
            raise Refused("no live item %s" % id)
        current = [i for i in self.items(stream) if i["id"] == id][0]
        if current["text"] == text:
            return None
        event = self._append(stream, time, "edit", id=id, text=text, sender=sender)
        return dict(event, rebased=True) if at is not None else event

    def restore(self, stream, id, time, index=None, undoes=None, expect_version=None):
        self._check_version(stream, expect_version, False)
        if self.live(stream, id):
            raise Refused("item %s is live" % id)
        removals = [e for e in self.stream_events(stream) if e["op"] == "remove" and e["id"] == id]
        if not removals or id not in self.removed:
            raise Refused("item %s was never in stream %s" % (id, stream))
        if index is None:
            removal = removals[-1]
            before = self.items(stream, removal["version"] - 1)
            k = [i["id"] for i in before].index(id)
            index = self.after_predecessor(stream, before, k)
        if index > len(self.items(stream)):
            raise Refused("index out of range")
        return self._append(stream, time, "restore", undoes=undoes, id=id, index=index)

    # -- undo ---------------------------------------------------------------

    def inverse(self, target):
        """(op, fields) of the event that undoes `target` now; None when it
        would change nothing; Refused when it cannot apply."""
        stream, id, op = target["stream"], target["id"], target["op"]
        if op in ("insert", "restore"):
            if not self.live(stream, id):
                raise Refused("item %s is no longer live" % id)
            return ("remove", {"id": id})
        if op == "remove":
            if self.live(stream, id):
                raise Refused("item %s is live again" % id)
            before = self.items(stream, target["version"] - 1)
            k = [i["id"] for i in before].index(id)
            return ("restore", {"id": id, "index": self.after_predecessor(stream, before, k)})
        if op == "edit":
            if not self.live(stream, id):
                raise Refused("item %s is no longer live" % id)
            before = [i for i in self.items(stream, target["version"] - 1) if i["id"] == id][0]
            now = [i for i in self.items(stream) if i["id"] == id][0]
            if now["text"] == before["text"]:
                return None
            return ("edit", {"id": id, "text": before["text"]})
        if op == "move":
            if not self.live(stream, id):
                raise Refused("item %s is no longer live" % id)
            before = self.items(stream, target["version"] - 1)
            k = [i["id"] for i in before].index(id)
            to = self.after_predecessor(stream, before, k, moving=id)
            frm = [i["id"] for i in self.items(stream)].index(id)
            if frm == to:
                return None
            return ("move", {"from": frm, "to": to})
        raise AssertionError(op)

    def undo(self, stream, time, seq=None, sender=None, expect_version=None):
        self._check_version(stream, expect_version, False)
        if seq is None:
            for target in reversed(self.stream_events(stream)):
                if "undoes" in target or self.undoer(target["seq"]) is not None:
                    continue
                try:
                    if self.inverse(target) is None:
                        continue
                except Refused:
                    continue
                seq = target["seq"]
                break
            else:
                raise Refused("nothing to undo")
        if seq < 1 or seq > self.seq() or self.events[seq - 1]["stream"] != stream:
            raise Refused("no event %d in stream %s" % (seq, stream))
        target = self.events[seq - 1]
        undoer = self.undoer(seq)
        if undoer is not None:
            raise Refused("event %d was undone by event %d" % (seq, undoer["seq"]))
        inverse = self.inverse(target)
        if inverse is None:
            return None
        op, fields = inverse
        if op == "restore":
            return self.restore(stream, fields["id"], time, index=fields["index"], undoes=seq)
        if op == "edit":
            fields = dict(fields, sender=sender)
        return self._append(stream, time, op, undoes=seq, **fields)


def uid(scenario, n):
    return "%08x-0000-4000-8000-%012x" % (scenario, n)


def t(minute, second=0):
    return "2026-11-29T11:%02d:%02d.000Z" % (minute, second)


if __name__ == "__main__":
    # The contract's own examples, as a smoke check of the model.
    log = Log()
    for n, c in enumerate("ABCDE"):
        log.append("b", c, uid(9, n), t(0, n))
    # Restore after the predecessor: [A B C D E], remove D, move C to 0 -> [C A B E]; restore D after C? No:
    # before D's removal the item before D was C, which is live: D goes right after C -> [C D A B E].
    log.remove("b", uid(9, 3), t(1))
    log.move("b", 2, 0, t(2))
    assert [i["text"] for i in log.items("b")] == list("CABE")
    log.restore("b", uid(9, 3), t(3))
    assert [i["text"] for i in log.items("b")] == list("CDABE"), log.items("b")
    # Two people drag at version 8 ([C D A B E]): one moves E to 0, the other (stale) moves A to 4.
    log.move("b", 4, 0, t(4), expect_version=8)
    assert [i["text"] for i in log.items("b")] == list("ECDAB")
    e = log.move("b", 2, 4, t(5), expect_version=8, rebase=True)
    # At version 8 with A moved to 4: [C D B E A]; A follows E, live: A goes right after E -> [E A C D B].
    assert e["rebased"] and [i["text"] for i in log.items("b")] == list("EACDB"), log.items("b")
    # Undo the last: moves A back after its predecessor before the move (D) -> [E C D A B].
    log.undo("b", t(6))
    assert [i["text"] for i in log.items("b")] == list("ECDAB"), log.items("b")
    # Redo: undo the undo.
    log.undo("b", t(7), seq=log.seq())
    assert [i["text"] for i in log.items("b")] == list("EACDB"), log.items("b")
    # Edit, then undo the edit.
    log.edit("b", uid(9, 0), "A!", t(8), sender="bob")
    assert log.items("b")[1]["text"] == "A!" and log.items("b")[1]["edited"] == t(8)
    log.undo("b", t(9))
    assert log.items("b")[1]["text"] == "A"
    print("ok")

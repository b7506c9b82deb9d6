#!/usr/bin/env python3
"""Writes the scenario fixtures: an import file per scenario and the
`list --json` document msglog must print after importing it.

The expected lists come from the independent model in model.py (SPEC.md's
event table and its "Working together" commands in plain Python), not from
msglog, so the fixtures check msglog independently.

The first three scenarios are import lines as a person would write them
(`append`, `insert`, `remove`, `move`). The scenarios of working together
(edits, restored cards, undone and rebased drags) are the model's `export`
lines, seqs and versions included: `undoes` names a seq, and msglog must
print exactly these lines back after importing them.

Run from the repository root: python3 Fixtures/make-fixtures.py
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Log, uid  # noqa: E402


def time(minute, second=0):
    return "2026-11-29T10:%02d:%02d.000Z" % (minute, second)


def model(lines, stream="main"):
    """The `list --json` document after importing `lines` (import form)."""
    log = Log()
    for line in lines:
        s, op, t = line.get("stream", stream), line["op"], line["time"]
        if op == "append":
            log.append(s, line["text"], line["id"], t, sender=line.get("sender"))
        elif op == "insert":
            log.insert(s, line["index"], line["text"], line["id"], t, sender=line.get("sender"))
        elif op == "remove":
            log.remove(s, line["id"], t)
        elif op == "move":
            log.move(s, line["from"], line["to"], t)
    return log.listing(stream)


def chat():
    said = [("ann", "Morning! Are we still on for the review at 11?"),
            ("bob", "Yes — room 4B, I booked it."),
            ("ann", "Great. I'll bring the draft 📄"),
            ("bob", "Can you add the latency numbers?\nThe p99 ones."),
            ("ann", "Done, they're on slide 3."),
            ("bob", "👍"),
            ("ann", "See you there."),
            ("bob", "On my way.")]
    return [{"op": "append", "id": uid(1, n), "sender": s, "text": t, "time": time(n)}
            for n, (s, t) in enumerate(said)]


def board():
    colours = ["red", "orange", "amber", "yellow", "lime", "green", "emerald", "teal",
               "cyan", "sky", "blue", "indigo", "violet", "purple", "fuchsia", "pink",
               "rose", "slate", "gray", "zinc", "neutral", "stone", "brown", "black"]
    lines = [{"op": "append", "id": uid(2, n), "text": c, "time": time(0, n)} for n, c in enumerate(colours)]
    drags = [(23, 0), (0, 23), (5, 6), (6, 5), (12, 3), (3, 20), (1, 22), (22, 1), (10, 11), (17, 2), (9, 9), (0, 12)]
    for n, (a, b) in enumerate(drags):
        lines.append({"op": "move", "from": a, "to": b, "time": time(1, n)})
    return lines


def form():
    cards = ["Title", "Intro paragraph", "Photo", "Name field", "Email field",
             "Phone field", "Consent checkbox", "Submit button"]
    lines = []
    order = [(0, 0), (1, 1), (2, 2), (3, 1), (4, 4), (5, 3), (6, 6), (7, 7)]
    for n, (card, index) in enumerate(order):
        lines.append({"op": "insert", "index": index, "id": uid(3, card), "text": cards[card],
                      "sender": "designer", "time": time(2, n)})
    lines.append({"op": "remove", "id": uid(3, 2), "time": time(3, 0)})   # Photo
    lines.append({"op": "remove", "id": uid(3, 5), "time": time(3, 1)})   # Phone field
    return lines


# -- Working together: the seeds again, then edits, restores, undo, rebase ----

def replayed(lines):
    """A model log holding the events of import lines (as `model` applies them)."""
    log = Log()
    for line in lines:
        op, t = line["op"], line["time"]
        if op == "append":
            log.append("main", line["text"], line["id"], t, sender=line.get("sender"))
        elif op == "insert":
            log.insert("main", line["index"], line["text"], line["id"], t, sender=line.get("sender"))
        elif op == "remove":
            log.remove("main", line["id"], t)
        elif op == "move":
            log.move("main", line["from"], line["to"], t)
    return log


def position(log, id):
    return [i["id"] for i in log.items("main")].index(id)


def chat_edits():
    """People fix their messages: edits, an edit undone, a removed edited
    message brought back by undo (text and `edited` as they were), an edit
    undone by seq and redone."""
    log = replayed(chat())
    room = log.edit("main", uid(1, 1), "Yes — room 4C, I booked it. 4B was taken.", time(8), sender="bob")
    log.edit("main", uid(1, 2), "Great. I'll bring the draft and the numbers 📄", time(9), sender="ann")
    log.edit("main", uid(1, 2), "Great. I'll bring the draft 📄\tand the p99 numbers", time(10), sender="ann")
    log.undo("main", time(11))                     # ann's second edit
    log.edit("main", uid(1, 5), "👍 thanks!", time(12), sender="bob")
    log.remove("main", uid(1, 5), time(13))
    log.undo("main", time(14))                     # the remove: back with its edited text
    log.edit("main", uid(1, 6), "See you there.\n(room 4C)", time(15))
    back = log.undo("main", time(16), seq=room["seq"])   # bob's room edit, by seq
    log.undo("main", time(17), seq=back["seq"])           # and redone
    return log


def colour_board_undo():
    """Drags undone and redone, and two people dragging at once: the stale
    drags are rebased onto the head and land where their people meant."""
    log = replayed(board())
    log.undo("main", time(4, 0))                   # the last drag
    log.undo("main", time(4, 1))                   # the one before
    log.undo("main", time(4, 2), seq=log.seq())    # redo it
    first_drag = [e for e in log.events if e["op"] == "move"][0]
    log.undo("main", time(4, 3), seq=first_drag["seq"])   # black back where it was
    # Ann and Bob both see version v; Ann drags first, Bob's drag is stale.
    v = log.version("main")
    log.move("main", 3, 10, time(5, 0), expect_version=v)
    log.move("main", 15, 1, time(5, 1), expect_version=v, rebase=True)
    # Carl saw v too: he drags the card Ann moved, and after the card Bob moved.
    log.move("main", 3, 2, time(5, 2), expect_version=v, rebase=True)
    # Dee removes a card; Eve, a version behind, drags a card to follow it:
    # it lands after the first card before it that is still there.
    w = log.version("main")
    log.remove("main", log.items("main")[6]["id"], time(6, 0), expect_version=w)
    log.move("main", 20, 7, time(6, 1), expect_version=w, rebase=True)
    log.insert("main", 7, "ochre", uid(4, 0), time(6, 2), expect_version=w, rebase=True)
    log.undo("main", time(7, 0))                   # the insert
    log.undo("main", time(7, 1))                   # Eve's rebased drag
    return log


def form_cards_restore():
    """Cards deleted by mistake come back: after their predecessor when no
    place is given, at a given index, by undo; an edited card comes back
    with its edit."""
    log = replayed(form())
    log.move("main", 4, 0, time(4, 0))            # Consent checkbox to the top
    log.restore("main", uid(3, 2), time(4, 1))     # Photo, after its predecessor
    log.remove("main", uid(3, 1), time(4, 2))      # Intro paragraph
    log.restore("main", uid(3, 5), time(4, 3))     # Phone field: its predecessor is gone, the one before it
    log.restore("main", uid(3, 1), time(4, 4), index=0)
    phone = log.seq() - 1
    log.undo("main", time(5, 0), seq=phone)        # the Phone field's restore: removed again
    log.undo("main", time(5, 1), seq=log.seq())    # redone: restored again
    log.edit("main", uid(3, 4), "Email address field", time(6, 0), sender="designer")
    log.remove("main", uid(3, 4), time(6, 1))
    log.restore("main", uid(3, 4), time(6, 2))     # with its edit
    return log


here = os.path.dirname(os.path.abspath(__file__))


def write(name, lines, expected, compact=False):
    with open(os.path.join(here, name + ".jsonl"), "w") as f:
        for line in lines:
            if compact:
                f.write(line + "\n")
            else:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(os.path.join(here, name + ".expected.json"), "w") as f:
        f.write(expected + "\n")


for name, lines in [("chat", chat()), ("colour-board", board()), ("form-cards", form())]:
    write(name, lines, model(lines))
for name, log in [("chat-edits", chat_edits()), ("colour-board-undo", colour_board_undo()),
                  ("form-cards-restore", form_cards_restore())]:
    write(name, log.lines(), log.listing("main"), compact=True)

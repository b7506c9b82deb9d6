#!/usr/bin/env python3
"""Writes the scenario fixtures: an import file per scenario and the
`list --json` document msglog must print after importing it.

The expected lists come from the small model below (SPEC.md's event table in
plain Python), not from msglog, so the fixtures check msglog independently.
Run from the repository root: python3 Fixtures/make-fixtures.py
"""
import json, os

def uid(scenario, n):
    return "%08x-0000-4000-8000-%012x" % (scenario, n)

def time(minute, second=0):
    return "2026-11-29T10:%02d:%02d.000Z" % (minute, second)

def model(lines, stream="main"):
    items, seq, version = [], 0, 0
    for line in lines:
        op = line["op"]
        if op == "move" and line["from"] == line["to"]:
            continue
        seq += 1
        if line.get("stream", stream) != stream:
            continue
        version += 1
        if op in ("append", "insert"):
            item = {"id": line["id"], "text": line["text"]}
            if "sender" in line: item["sender"] = line["sender"]
            item["time"] = line["time"]; item["seq"] = seq
            items.insert(line["index"] if op == "insert" else len(items), item)
        elif op == "remove":
            items = [i for i in items if i["id"] != line["id"]]
        elif op == "move":
            x = items.pop(line["from"]); items.insert(line["to"], x)
    out = {"stream": stream, "seq": seq, "version": version, "count": len(items),
           "items": [dict([("index", k)] + list(i.items())) for k, i in enumerate(items)]}
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)

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

here = os.path.dirname(os.path.abspath(__file__))
for name, lines in [("chat", chat()), ("colour-board", board()), ("form-cards", form())]:
    with open(os.path.join(here, name + ".jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(os.path.join(here, name + ".expected.json"), "w") as f:
        f.write(model(lines) + "\n")

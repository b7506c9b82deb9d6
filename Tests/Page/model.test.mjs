// The page's model (Sources/MsglogServer/Page/Resources/model.js) under
// node's own test runner: the server's events folded into the list by the
// event table, and this page's changes on their way replayed on top by the
// predecessor rule the server applies to a drag sent with `rebase`.
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { StreamModel, moveChange, moved, predecessors } from "../../Sources/MsglogServer/Page/Resources/model.js";

const T = "2026-03-14T09:26:00.000Z";

/** A model of stream "s" read at version 0 (seq 10: other streams' events came first). */
function empty() {
  const model = new StreamModel("s");
  model.reset({ seq: 10, version: 0, items: [] });
  return model;
}

/** A model of stream "s" holding `texts` (ids = texts), version = count, as /api/items answers. */
function holding(...texts) {
  const model = new StreamModel("s");
  model.reset({
    seq: 100 + texts.length,
    version: texts.length,
    items: texts.map((text, index) => ({ index, id: text, text, time: T, seq: 100 + index + 1, sender: "ann" })),
  });
  return model;
}

/** The next event of `model`'s stream (version + 1, seq after its head). */
function next(model, op, fields) {
  return { stream: "s", op, version: model.version + 1, seq: model.head + 1, time: T, ...fields };
}

const ids = (items) => items.map((item) => item.id);
const texts = (items) => items.map((item) => item.text);

describe("folding the server's events", () => {
  test("a list read from the server keeps each item without its index, at its version and head", () => {
    const model = holding("a", "b");
    assert.deepEqual(model.items, [
      { id: "a", text: "a", time: T, seq: 101, sender: "ann" },
      { id: "b", text: "b", time: T, seq: 102, sender: "ann" },
    ]);
    assert.equal(model.version, 2);
    assert.equal(model.head, 102);
    assert.equal(model.stale, false);
  });

  test("insert, move, edit, remove and restore change the list as the event table says", () => {
    const model = empty();
    assert.equal(model.fold(next(model, "insert", { id: "a", index: 0, text: "A", sender: "ann" })), true);
    assert.equal(model.fold(next(model, "insert", { id: "b", index: 0, text: "B" })), true);
    assert.equal(model.fold(next(model, "insert", { id: "c", index: 2, text: "C" })), true);
    assert.deepEqual(ids(model.items), ["b", "a", "c"]);
    assert.deepEqual(model.items[1], { id: "a", text: "A", time: T, seq: 11, sender: "ann" });
    assert.equal("sender" in model.items[0], false);
    // move: `to` is the final index.
    model.fold(next(model, "move", { id: "b", from: 0, to: 2 }));
    assert.deepEqual(ids(model.items), ["a", "c", "b"]);
    // edit: the text changes and it is marked edited (the edit's time); its place, author, time and seq stay.
    model.fold({ ...next(model, "edit", { id: "a", text: "A2", sender: "bob" }), time: "2026-03-15T00:00:00.000Z" });
    assert.deepEqual(model.items[0], { id: "a", text: "A2", time: T, seq: 11, sender: "ann", edited: "2026-03-15T00:00:00.000Z" });
    // remove, then restore: it comes back as it was, where the restore says.
    model.fold(next(model, "remove", { id: "a" }));
    assert.deepEqual(ids(model.items), ["c", "b"]);
    model.fold(next(model, "restore", { id: "a", index: 2 }));
    assert.deepEqual(model.items[2], { id: "a", text: "A2", time: T, seq: 11, sender: "ann", edited: "2026-03-15T00:00:00.000Z" });
    assert.equal(model.version, 7);
    assert.equal(model.head, 17);
  });

  test("an item someone else added is told as arrived; this page's own, a move and an erased text are not", () => {
    const model = empty();
    const arrived = [];
    model.on("arrived", (event) => arrived.push(event.id));
    model.adopt([{ op: "append", id: "mine", text: "M", key: 1 }]);
    model.fold(next(model, "insert", { id: "theirs", index: 0, text: "T", sender: "bob" }));
    model.fold(next(model, "insert", { id: "mine", index: 1, text: "M" }));
    // Answered before its event is folded in (`untilSeq`: the event it made): its event drops it, and is still its.
    model.adopt([{ op: "append", id: "answered", text: "A", key: 2, untilSeq: model.head + 1 }]);
    model.fold(next(model, "insert", { id: "answered", index: 2, text: "A" }));
    assert.equal(model.pending.length, 0);
    model.fold(next(model, "move", { id: "mine", from: 1, to: 0 }));
    model.fold(next(model, "insert", { id: "gone", index: 3, text: "", erased: 40 }));
    assert.deepEqual(arrived, ["theirs"]);
  });

  test("an event of another stream changes nothing", () => {
    const model = holding("a");
    assert.equal(model.fold({ ...next(model, "insert", { id: "x", index: 0, text: "x" }), stream: "other" }), true);
    assert.deepEqual(ids(model.items), ["a"]);
    assert.equal(model.version, 1);
  });

  test("an event the list has already moves the head on and nothing else", () => {
    const model = holding("a", "b");
    assert.equal(model.fold({ stream: "s", op: "remove", id: "a", version: 2, seq: 150, time: T }), true);
    assert.deepEqual(ids(model.items), ["a", "b"]);
    assert.equal(model.head, 150);
  });

  test("an event past the next version: following lost track", () => {
    const model = holding("a");
    const ahead = { stream: "s", op: "insert", id: "z", index: 0, text: "z", version: 3, seq: 200, time: T };
    assert.equal(model.fold(ahead), false);
    assert.deepEqual(ids(model.items), ["a"]);
    assert.equal(model.version, 1);
    assert.equal(model.head, 101, "following resumes after the last event folded in, not after one skipped");
  });

  test("an event that does not fit the list is refused: the page must read it again", () => {
    const refused = [
      ["insert", { id: "x", index: 3, text: "x" }],
      ["move", { id: "b", from: 0, to: 1 }],  // a is at 0
      ["move", { id: "a", from: 0, to: 2 }],
      ["remove", { id: "gone" }],
      ["edit", { id: "gone", text: "t" }],
      ["restore", { id: "never-seen-removed", index: 0 }],
      ["shuffle", {}],
    ];
    for (const [op, fields] of refused) {
      const model = holding("a", "b");
      assert.equal(model.fold(next(model, op, fields)), false, op + " " + JSON.stringify(fields));
      assert.deepEqual(ids(model.items), ["a", "b"]);
      assert.equal(model.version, 2);
    }
  });

  test("listeners hear of each event folded in, of a list read again and of another stream", () => {
    const model = holding("a");
    const heard = [];
    model.on("event", (event) => heard.push("event " + event.op));
    model.on("list", () => heard.push("list"));
    model.on("open", () => heard.push("open"));
    model.fold(next(model, "insert", { id: "b", index: 1, text: "b" }));
    model.fold(next(model, "remove", { id: "zz" }));  // refused: not heard
    model.reset({ seq: 5, version: 0, items: [] });
    model.open("other");
    assert.deepEqual(heard, ["event insert", "list", "open"]);
  });

  test("another stream starts from nothing, to be read", () => {
    const model = holding("a");
    model.fold(next(model, "remove", { id: "a" }));
    model.propose({ op: "edit", id: "a", text: "x", edited: T });
    model.open("other");
    assert.equal(model.stream, "other");
    assert.deepEqual([model.items, model.version, model.head, model.stale, model.removed.size, model.pending],
      [[], 0, 0, true, 0, []]);
  });
});

describe("this page's changes on their way", () => {
  test("a move shows at once, its card marked pending, and the server's layer stays as it was", () => {
    const model = holding("a", "b", "c", "d");
    model.propose(moveChange(model.view(), 0, 2));
    assert.deepEqual(ids(model.view()), ["b", "c", "a", "d"]);
    assert.deepEqual(model.view().map((item) => item.pending === true), [false, false, true, false]);
    assert.deepEqual(ids(model.items), ["a", "b", "c", "d"]);
    assert.equal(model.view(), model.view(), "the same list until something changes (the list view keeps its elements)");
  });

  test("with nothing pending the view is the server's list itself", () => {
    const model = holding("a");
    assert.equal(model.view(), model.items);
  });

  test("moves up, down, to the top and to the end land where they were dropped", () => {
    for (const [from, to] of [[3, 1], [1, 3], [2, 0], [0, 4], [4, 0]]) {
      const model = holding("a", "b", "c", "d", "e");
      model.propose(moveChange(model.view(), from, to));
      assert.deepEqual(ids(model.view()), ids(moved(model.items, from, to)), from + " → " + to);
    }
  });

  test("a card dropped while others changed the stream goes after the card it was dropped under", () => {
    // The browser test "a live update keeps the drag": a, dragged under d at version 5, while f was appended.
    const model = holding("a", "b", "c", "d", "e");
    const shown = model.view().slice();
    model.fold(next(model, "insert", { id: "f", index: 5, text: "f" }));
    model.propose(moveChange(shown, 0, 3));
    assert.deepEqual(ids(model.view()), ["b", "c", "d", "a", "e", "f"]);
    // Someone moves d to the top: a still follows d.
    model.fold(next(model, "move", { id: "d", from: 3, to: 0 }));
    assert.deepEqual(ids(model.view()), ["d", "a", "b", "c", "e", "f"]);
  });

  test("the card it was dropped under gone, it follows the first one before that still there; none: the top", () => {
    const model = holding("a", "b", "c", "d", "e");
    model.propose(moveChange(model.view(), 4, 3));  // e after c (before d)
    model.fold(next(model, "remove", { id: "c" }));
    assert.deepEqual(ids(model.view()), ["a", "b", "e", "d"]);
    model.fold(next(model, "remove", { id: "b" }));
    model.fold(next(model, "remove", { id: "a" }));
    assert.deepEqual(ids(model.view()), ["e", "d"]);
  });

  test("a move of a card deleted meanwhile shows nothing of it", () => {
    const model = holding("a", "b", "c");
    model.propose(moveChange(model.view(), 0, 2));
    model.fold(next(model, "remove", { id: "a" }));
    assert.deepEqual(ids(model.view()), ["b", "c"]);
  });

  test("a delete hides the card, an edit shows its text marked edited, both on what arrived meanwhile", () => {
    const model = holding("a", "b", "c");
    model.propose({ op: "remove", id: "b" });
    model.propose({ op: "edit", id: "c", text: "C!", edited: "2026-03-16T00:00:00.000Z" });
    model.fold(next(model, "insert", { id: "x", index: 0, text: "x" }));
    assert.deepEqual(texts(model.view()), ["x", "a", "C!"]);
    assert.deepEqual(model.view()[2], { id: "c", text: "C!", time: T, seq: 103, sender: "ann", edited: "2026-03-16T00:00:00.000Z", pending: true });
    assert.equal(model.items[3].text, "c");
  });

  test("an insert goes after what it follows, or at the end; changes replay in the order made", () => {
    const model = holding("a", "b");
    model.propose({ op: "insert", id: "n", text: "new", time: T, after: predecessors(model.view(), 1) });
    model.propose({ op: "insert", id: "m", text: "mine", sender: "me", time: T });
    model.propose(moveChange(model.view(), 3, 0));
    assert.deepEqual(ids(model.view()), ["m", "a", "n", "b"]);
    assert.deepEqual(model.view()[0], { id: "m", text: "mine", sender: "me", time: T, pending: true });
  });

  // A change's answer is its push's outcome: the outbox gives it back with the seq of its event (`untilSeq`, sync.js).
  test("an answered change stays until the server's layer reaches its event, then goes", () => {
    const model = holding("a", "b", "c");
    const change = { ...moveChange(model.view(), 0, 2), key: 1 };
    model.adopt([change]);
    // Done as the event at seq 105: someone else's event (seq 104) comes first.
    model.adopt([{ ...change, untilSeq: 105 }]);
    model.fold(next(model, "insert", { id: "x", index: 3, text: "x" }));
    assert.equal(model.pending.length, 1);
    assert.deepEqual(ids(model.view()), ["b", "c", "a", "x"]);
    model.fold(next(model, "move", { id: "a", from: 0, to: 2 }));
    assert.equal(model.pending.length, 0);
    assert.deepEqual(ids(model.view()), ["b", "c", "a", "x"]);
    assert.equal(model.view(), model.items);
  });

  test("an answer whose event the model has already goes at once; a change proposed and dropped leaves nothing", () => {
    const model = holding("a", "b");
    model.fold({ stream: "s", op: "remove", id: "a", version: 3, seq: 103, time: T });
    model.adopt([{ op: "remove", id: "a", key: 1, untilSeq: 103 }]);
    const proposed = model.propose(moveChange(model.view(), 0, 0));
    model.drop(proposed);
    assert.equal(model.pending.length, 0);
    assert.deepEqual(ids(model.view()), ["b"]);
  });

  test("a list read again that has an answered change settles it; a refused change is dropped", () => {
    const model = holding("a", "b");
    const answered = { op: "remove", id: "a", key: 1, untilSeq: 110 };
    const refused = { op: "edit", id: "b", text: "B", edited: T, key: 2 };
    model.adopt([answered, refused]);
    model.reset({ seq: 111, version: 4, items: [{ index: 0, id: "b", text: "b", time: T, seq: 102 }] });
    assert.deepEqual(model.pending, [refused]);
    model.adopt([]);
    assert.equal(model.pending.length, 0);
    assert.deepEqual(texts(model.view()), ["b"]);
  });
});

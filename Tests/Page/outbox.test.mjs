// The outbox's rules (Sources/MsglogServer/Page/Resources/outbox.js) and
// the model's overlay of the outbox's changes, under node's own test
// runner: numbering once per replica and log, a change made on one log
// never numbered, pushed or shown for another, the push body as the
// server's ReplicaChange reads it, the outcomes settled, and the pending
// changes folded on top of the server's list (what a reload offline shows).
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { StreamModel, cancelled, moveChange } from "../../Sources/MsglogServer/Page/Resources/model.js";
import {
  PUSH_LIMIT, byLog, landed, madeFor, newSecret, numberEntries, pushBody, settleOutcomes, shownOn, wireChange,
} from "../../Sources/MsglogServer/Page/Resources/outbox.js";

const T = "2026-12-01T12:00:00.000Z";
const LOG = "9b80f034-76d9-42ff-9a9f-2dc87baf6f31";
const OTHER_LOG = "0b80f034-76d9-42ff-9a9f-2dc87baf6f31";
const R = "11111111-2222-4333-8444-555555555555";
const S = "ab".repeat(32);

function entry(key, change, extra = {}) {
  return { key, change: { stream: "s", ...change }, made: T, basis: 7, ...extra };
}

describe("numbering", () => {
  test("unnumbered entries get the replica's next numbers in the order made, and the counter moves on", () => {
    const entries = [entry(3, { op: "remove", id: "c" }), entry(1, { op: "remove", id: "a" }), entry(2, { op: "remove", id: "b" })];
    const { changed, next } = numberEntries(entries, { log: LOG, replica: R, next: 5 });
    assert.deepEqual(changed.map((e) => [e.key, e.number, e.log, e.replica]), [[1, 5, LOG, R], [2, 6, LOG, R], [3, 7, LOG, R]]);
    assert.equal(next, 8);
  });

  test("an entry numbered once keeps its number for every resend; an answered one is not numbered", () => {
    const entries = [
      entry(1, { op: "remove", id: "a" }, { number: 1, log: LOG, replica: R, seq: 40 }),
      entry(2, { op: "remove", id: "b" }, { number: 2, log: LOG, replica: R }),
      entry(3, { op: "remove", id: "c" }),
    ];
    const first = numberEntries(entries, { log: LOG, replica: R, next: 3 });
    assert.deepEqual(first.changed.map((e) => [e.key, e.number]), [[3, 3]]);
    const numbered = entries.map((e) => first.changed.find((c) => c.key === e.key) || e);
    const again = numberEntries(numbered, { log: LOG, replica: R, next: first.next });
    assert.deepEqual(again.changed, [], "a resend numbers nothing again");
    assert.equal(again.next, 4);
  });

  test("an entry made or numbered on another log is never numbered for this one (the server restarted on another log)", () => {
    const entries = [
      entry(1, { op: "remove", id: "a" }, { number: 9, log: OTHER_LOG, replica: R }),
      entry(2, { op: "append", id: "b", text: "b" }, { log: OTHER_LOG }),
      entry(3, { op: "append", id: "c", text: "c" }, { log: LOG }),
    ];
    const { changed, next } = numberEntries(entries, { log: LOG, replica: "22222222-2222-4333-8444-555555555555", next: 1 });
    assert.deepEqual(changed.map((e) => [e.key, e.number, e.log]), [[3, 1, LOG]]);
    assert.equal(next, 2);
    assert.equal(pushBody([...entries.slice(0, 2), ...changed], { log: OTHER_LOG, replica: R }).changes.length, 1,
      "only the one numbered on the other log goes there, once it is back");
  });

  test("an entry made on no log known (a page that never read one) is the first log's that numbers it", () => {
    const entries = [entry(1, { op: "append", id: "a", text: "a" }, { log: null }), entry(2, { op: "remove", id: "b" })];
    const { changed } = numberEntries(entries, { log: LOG, replica: R, next: 4 });
    assert.deepEqual(changed.map((e) => [e.key, e.number, e.log]), [[1, 4, LOG], [2, 5, LOG]]);
    const again = numberEntries(changed, { log: OTHER_LOG, replica: R, next: 1 });
    assert.deepEqual(again.changed, [], "numbered on one log, it is that log's");
  });
});

describe("another log", () => {
  const made = [
    entry(1, { op: "append", id: "a", text: "on this log" }, { log: LOG }),
    entry(2, { op: "append", id: "b", text: "on the other" }, { log: OTHER_LOG }),
    entry(3, { op: "remove", id: "c" }, { log: OTHER_LOG, number: 4, replica: R, seq: 30 }),  // answered there
    entry(4, { op: "append", id: "d", text: "on none known" }, { log: null }),
    entry(5, { op: "remove", id: "e", stream: "t" }, { log: OTHER_LOG }),
  ];

  test("a change goes to the log it was made on, or to any when made on none known", () => {
    assert.deepEqual(made.map((e) => madeFor(e, LOG)), [true, false, false, true, false]);
    assert.deepEqual(made.map((e) => madeFor(e, null)), [false, false, false, true, false],
      "a server with no log takes only what was made on none");
    assert.equal(madeFor(entry(9, { op: "remove", id: "x" }), LOG), true, "an entry kept before entries had a log");
  });

  test("the other log's unanswered changes are held; its answered ones go", () => {
    const { held, gone } = byLog(made, LOG);
    assert.deepEqual(held.map((e) => e.key), [2, 5]);
    assert.deepEqual(gone, [3]);
    assert.deepEqual(byLog(made, null).held.map((e) => e.key), [1, 2, 5], "a server with no log holds every log's");
  });

  test("the page shows its stream's changes made on the log it shows (all of them while it has read none)", () => {
    assert.deepEqual(shownOn(made, { stream: "s", log: LOG }).map((e) => e.key), [1, 4]);
    assert.deepEqual(shownOn(made, { stream: "s", log: OTHER_LOG }).map((e) => e.key), [2, 3, 4]);
    assert.deepEqual(shownOn(made, { stream: "s", log: undefined }).map((e) => e.key), [1, 2, 3, 4]);
    assert.deepEqual(shownOn(made, { stream: "t", log: OTHER_LOG }).map((e) => e.key), [5]);
  });
});

describe("the push", () => {
  test("the body: protocol 1, the log and replica, the unanswered changes in number order as ReplicaChange reads them", () => {
    const entries = [
      entry(2, { op: "move", id: "b", after: ["a"], from: 0, to: 1 }, { number: 2, log: LOG, replica: R }),
      entry(1, { op: "append", id: "n", text: "hi", sender: "me", seen: 3 }, { number: 1, log: LOG, replica: R }),
      entry(0, { op: "remove", id: "z" }, { number: 7, log: LOG, replica: R, seq: 30 }),  // answered
    ];
    assert.deepEqual(pushBody(entries, { log: LOG, replica: R, secret: S }), {
      protocol: 1, log: LOG, replica: R, secret: S,
      changes: [
        { change: 1, made: T, basis: 7, op: "append", stream: "s", id: "n", text: "hi", sender: "me", seen: 3 },
        { change: 2, made: T, basis: 7, op: "move", stream: "s", id: "b", after: ["a"], from: 0, to: 1 },
      ],
    });
  });

  test("a replica's secret: 32 random bytes as 64 lowercase hex digits, a new one each time", () => {
    const secret = newSecret();
    assert.match(secret, /^[0-9a-f]{64}$/);
    assert.notEqual(newSecret(), secret);
    assert.equal(newSecret((bytes) => bytes.fill(0xa5)), "a5".repeat(32));
  });

  test("nothing unanswered: no push; more than the bound: the first PUSH_LIMIT", () => {
    assert.equal(pushBody([], { log: LOG, replica: R }), null);
    const many = Array.from({ length: PUSH_LIMIT + 10 }, (_, i) =>
      entry(i + 1, { op: "remove", id: "x" + i }, { number: i + 1, log: LOG, replica: R }));
    const body = pushBody(many, { log: LOG, replica: R });
    assert.equal(body.changes.length, PUSH_LIMIT);
    assert.deepEqual([body.changes[0].change, body.changes.at(-1).change], [1, PUSH_LIMIT]);
  });

  test("an undo names the event its change became, or the change while it is on its way; never the page's own fields", () => {
    const done = entry(1, { op: "remove", id: "a" }, { number: 1, log: LOG, replica: R, seq: 44 });
    const waiting = entry(2, { op: "remove", id: "b" }, { number: 2, log: LOG, replica: R });
    const byKey = new Map([[1, done], [2, waiting]]);
    const undoDone = entry(3, { op: "undo", undoesKey: 1 }, { number: 3 });
    const undoWaiting = entry(4, { op: "undo", undoesKey: 2 }, { number: 4 });
    assert.deepEqual(wireChange(undoDone, byKey), { change: 3, made: T, basis: 7, op: "undo", stream: "s", seq: 44 });
    assert.deepEqual(wireChange(undoWaiting, byKey), { change: 4, made: T, basis: 7, op: "undo", stream: "s", undoesChange: 2 });
    const edit = entry(5, { op: "edit", id: "a", text: "x", edited: T }, { number: 5 });
    assert.equal("edited" in wireChange(edit), false);
  });
});

describe("outcomes", () => {
  const pushed = [
    entry(1, { op: "append", id: "n", text: "hi", seen: 0 }, { number: 1, log: LOG, replica: R }),
    entry(2, { op: "move", id: "b", after: [], from: 1, to: 0 }, { number: 2, log: LOG, replica: R }),
    entry(3, { op: "remove", id: "gone" }, { number: 3, log: LOG, replica: R }),
  ];

  test("applied keeps the entry with its seq; unchanged and refused drop it, refused with its reason", () => {
    const { applied, done, refused, results } = settleOutcomes(pushed, { log: LOG, replica: R }, [
      { change: 1, result: "applied", seq: 12, rebased: true },
      { change: 2, result: "unchanged" },
      { change: 3, result: "refused", error: "no item with id gone in stream 's'" },
    ]);
    assert.deepEqual(applied.map((e) => [e.key, e.seq, e.rebased]), [[1, 12, true]]);
    assert.deepEqual(done, [2, 3]);
    assert.deepEqual(refused.map((r) => [r.entry.key, r.error]), [[3, "no item with id gone in stream 's'"]]);
    assert.equal(results.length, 3);
  });

  test("an outcome of a number not pushed, or of another replica's entry, is ignored", () => {
    const other = [entry(9, { op: "remove", id: "a" }, { number: 1, log: LOG, replica: "22222222-2222-4333-8444-555555555555" })];
    const { applied, done, results } = settleOutcomes(other, { log: LOG, replica: R }, [
      { change: 1, result: "applied", seq: 3 }, { change: 4, result: "unchanged" }]);
    assert.deepEqual([applied, done, results], [[], [], []]);
  });

  test("an applied entry goes once the list shown has its event; another stream's waits for its own page", () => {
    const entries = [
      entry(1, { op: "remove", id: "a" }, { seq: 20 }),
      entry(2, { op: "remove", id: "b" }, { seq: 25 }),
      entry(3, { op: "remove", id: "c", stream: "t" }, { seq: 5 }),
      entry(4, { op: "remove", id: "d" }),  // unanswered
    ];
    assert.deepEqual(landed(entries, { stream: "s", log: LOG, head: 22 }), [1]);
    assert.deepEqual(landed(entries, { stream: "s", log: LOG, head: 99 }), [1, 2]);
  });

  test("an applied entry of another log does not land in this log's list however far it is", () => {
    const entries = [entry(1, { op: "remove", id: "a" }, { log: OTHER_LOG, seq: 2 }), entry(2, { op: "remove", id: "b" }, { log: LOG, seq: 3 })];
    assert.deepEqual(landed(entries, { stream: "s", log: LOG, head: 99 }), [2]);
  });
});

describe("the outbox's changes over the server's list", () => {
  function holding(...texts) {
    const model = new StreamModel("s");
    model.reset({ seq: 100, version: texts.length, items: texts.map((text) => ({ id: text, text, time: T, seq: 1 })) });
    return model;
  }
  const texts = (model) => model.view().map((i) => i.text);
  /** An outbox entry as sync.js gives it to the model. */
  const pending = (key, change, extra = {}) => ({ ...change, key, time: T, ...extra });

  test("after a reload: three messages at the end, two moves, an edit and a delete, each marked pending", () => {
    const model = holding("a", "b", "c", "d");
    const shown = [];
    let key = 0;
    const add = (change) => { shown.push(pending(++key, change)); model.adopt(shown); };
    for (const text of ["m1", "m2", "m3"]) add({ op: "append", id: text, text });
    add(moveChange(model.view(), 0, 2));  // a after c
    add(moveChange(model.view(), 3, 0));  // d to the top
    add({ op: "edit", id: "b", text: "B", edited: T });
    add({ op: "remove", id: "m2" });
    assert.deepEqual(texts(model), ["d", "B", "c", "a", "m1", "m3"]);
    assert.deepEqual(model.view().filter((i) => i.pending).map((i) => i.text), ["d", "B", "a", "m1", "m3"]);
    assert.deepEqual(model.items.map((i) => i.text), ["a", "b", "c", "d"], "the server's layer is untouched");
  });

  test("an applied change stays until the server's layer reaches its seq, then the list equals the server's", () => {
    const model = holding("a", "b", "c");
    model.adopt([pending(1, moveChange(model.view(), 0, 2), { untilSeq: 101 })]);
    assert.deepEqual(texts(model), ["b", "c", "a"]);
    model.fold({ stream: "s", seq: 101, version: 4, op: "move", id: "a", from: 0, to: 2, time: T });
    assert.equal(model.pending.length, 0);
    assert.deepEqual(texts(model), ["b", "c", "a"]);
    assert.equal(model.view(), model.items);
  });

  test("adopting the outbox again keeps a change proposed and not yet kept; an outbox emptied by another tab shows nothing", () => {
    const model = holding("a", "b");
    model.propose({ op: "remove", id: "a" });
    model.adopt([pending(1, { op: "edit", id: "b", text: "B" })]);
    assert.deepEqual(texts(model), ["B"]);
    model.drop(model.pending[1]);
    model.adopt([]);
    assert.deepEqual(texts(model), ["a", "b"]);
  });

  test("adopting says whether the list shown may have changed: an empty outbox read again changes nothing, one emptied does", () => {
    const model = holding("a", "b");
    assert.equal(model.adopt([]), false);
    assert.equal(model.adopt([pending(1, { op: "remove", id: "a" })]), true);
    assert.equal(model.adopt([]), true);
    assert.deepEqual(texts(model), ["a", "b"]);
    assert.equal(model.adopt([]), false);
  });

  test("an undo of a change on its way takes it back; an undo of that undo brings it back", () => {
    const change = pending(1, { op: "remove", id: "a" });
    const undo = pending(2, { op: "undo", undoesKey: 1 });
    const redo = pending(3, { op: "undo", undoesKey: 2 });
    assert.deepEqual([...cancelled([change, undo])], [1]);
    assert.deepEqual([...cancelled([change, undo, redo])], [2]);
    const model = holding("a", "b");
    model.adopt([change, undo]);
    assert.deepEqual(texts(model), ["a", "b"]);
    model.adopt([change, undo, redo]);
    assert.deepEqual(texts(model), ["b"]);
  });

  test("an append goes after what others sent meanwhile, as the server puts it", () => {
    const model = holding("a");
    model.adopt([pending(1, { op: "append", id: "mine", text: "mine" })]);
    model.fold({ stream: "s", seq: 101, version: 2, op: "insert", id: "theirs", text: "theirs", index: 1, time: T });
    assert.deepEqual(texts(model), ["a", "theirs", "mine"]);
  });
});

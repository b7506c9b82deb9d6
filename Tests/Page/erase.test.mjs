// What the page does when it learns that items were erased for everyone
// (SPEC "Forgetting on purpose"), under node's own test runner: the
// model's list (the erase event folded in; an erase known before its event
// blanks the item in place, so the events before it still fold in by
// index), and the outbox's entries that name an erased item, dropped with
// the undos of them.
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { describe, mock, test } from "node:test";
import { Forgetting } from "../../Sources/MsglogServer/Page/Resources/forget.js";
import { StreamModel } from "../../Sources/MsglogServer/Page/Resources/model.js";
import { naming } from "../../Sources/MsglogServer/Page/Resources/outbox.js";
import { erasedChangeInWords, eraseFailedInWords } from "../../Sources/MsglogServer/Page/Resources/words.js";

const T = "2026-12-02T09:00:00.000Z";

/** A model of stream "s" holding `texts` (ids = the texts' first letters upper-cased), version = count. */
function holding(...texts) {
  const model = new StreamModel("s");
  model.reset({
    seq: 100 + texts.length,
    version: texts.length,
    items: texts.map((text, index) => ({ index, id: text[0].toUpperCase(), text, time: T, seq: 101 + index, sender: "ann" })),
  });
  return model;
}

function next(model, op, fields) {
  return { stream: "s", op, version: model.version + 1, seq: model.head + 1, time: T, ...fields };
}

const shown = (model) => model.view().map((item) => item.text);
/** Every string the model keeps, as JSON: what a kept list or a cache of it would hold. */
const everything = (model) => JSON.stringify([model.items, [...model.removed.values()], model.pending, model.view()]);

describe("the model learns an erase", () => {
  test("the erase event takes a live item off, as a remove, and its text from everything kept", () => {
    const model = holding("apple", "secret", "cherry");
    assert.equal(model.fold(next(model, "erase", { id: "S" })), true);
    assert.deepEqual(shown(model), ["apple", "cherry"]);
    assert.equal(model.version, 4);
    assert.ok(!everything(model).includes("secret"));
  });

  test("an item removed, then erased: its text kept for a restore goes, and a restore no longer finds it", () => {
    const model = holding("apple", "secret");
    model.fold(next(model, "remove", { id: "S" }));
    assert.ok(everything(model).includes("secret"), "a removed item is kept for a restore");
    model.fold(next(model, "erase", { id: "S" }));
    assert.ok(!everything(model).includes("secret"));
    assert.equal(model.fold(next(model, "restore", { id: "S", index: 0 })), false);
  });

  test("an erase known before its event: the item blanked in place, not shown, and the events between fold by index", () => {
    const model = holding("apple", "secret", "cherry");
    assert.equal(model.forget(["S"]), true);
    assert.deepEqual(shown(model), ["apple", "cherry"]);
    assert.ok(!everything(model).includes("secret"));
    assert.deepEqual(model.items[1], { id: "S", text: "", time: T, seq: 102, erased: true });
    // Someone's move made before the erase still counts the erased item.
    assert.equal(model.fold(next(model, "move", { id: "C", from: 2, to: 0 })), true);
    assert.deepEqual(shown(model), ["cherry", "apple"]);
    assert.equal(model.fold(next(model, "erase", { id: "S" })), true);
    assert.deepEqual(model.items.map((item) => item.id), ["C", "A"]);
    assert.equal(model.blanked.size, 0);
    assert.equal(model.forget(["S"]), false, "forgotten already");
  });

  test("a list kept with a blanked item, read back on a reload, does not show it", () => {
    const model = holding("apple", "secret");
    model.forget(["S"]);
    const kept = { items: model.items, version: model.version, seq: model.head, log: null };
    const reloaded = new StreamModel("s");
    reloaded.reset(kept);
    assert.deepEqual(shown(reloaded), ["apple"]);
  });

  test("an insert that arrives erased (following from before the erase) is blanked until its erase folds", () => {
    const model = holding("apple");
    model.fold(next(model, "insert", { id: "S", index: 1, text: "", erased: 105 }));
    assert.deepEqual(shown(model), ["apple"]);
    model.fold(next(model, "erase", { id: "S" }));
    assert.deepEqual(model.items.map((item) => item.id), ["A"]);
  });

  test("an unsign (erase --sender of someone who edited another's item) changes nothing, and its edit keeps the item", () => {
    const model = holding("apple");
    // The edit arrives unsigned (following from before the unsign): its text stays, no sender, `erased` names the unsign.
    assert.equal(model.fold(next(model, "edit", { id: "A", text: "apple pie", erased: 104 })), true);
    assert.equal(model.fold(next(model, "unsign", { id: "A", edit: 103 })), true);
    assert.deepEqual(shown(model), ["apple pie"]);
    assert.equal(model.version, 3);
    assert.equal(model.stale, false);
  });

  test("this page's changes of an erased item on their way go with it", () => {
    const model = holding("apple", "secret");
    model.propose({ op: "edit", id: "S", text: "secret, edited", edited: T });
    model.propose({ op: "edit", id: "A", text: "apple pie", edited: T });
    model.forget(["S"]);
    assert.deepEqual(model.pending.map((change) => change.id), ["A"]);
    assert.deepEqual(shown(model), ["apple pie"]);
    assert.ok(!everything(model).includes("secret"));
  });
});

describe("the outbox forgets an erased item", () => {
  const entry = (key, change, extra = {}) => ({ key, change: { stream: "s", ...change }, made: T, basis: 7, ...extra });

  test("every entry naming an erased item goes — sent or not, any token's, any log's — with the undos of them", () => {
    const entries = [
      entry(1, { op: "edit", id: "S", text: "secret, edited" }, { seq: 120, owner: "me" }),
      entry(2, { op: "edit", id: "A", text: "apple pie" }, { owner: "me" }),
      entry(3, { op: "move", id: "S", after: ["A"] }, { owner: "another token", log: "another log" }),
      entry(4, { op: "undo", undoesKey: 1 }),
      entry(5, { op: "undo", undoesKey: 4 }),
      entry(6, { op: "undo", undoesKey: 2 }),
      entry(7, { op: "insert", id: "N", text: "new", after: ["S"] }),
    ];
    assert.deepEqual(naming(entries, ["S"]), [1, 3, 4, 5]);
    assert.deepEqual(naming(entries, ["S", "N"]), [1, 3, 4, 5, 7]);
    assert.deepEqual(naming(entries, ["X"]), []);
    assert.deepEqual(naming([], ["S"]), []);
  });
});

describe("forgetting", () => {
  test("ids learned erased leave the model at once, then the outbox and the kept lists, together when they come in a burst", async () => {
    const model = holding("apple", "secret", "cherry");
    const calls = [];
    let release;
    const first = new Promise((resolve) => { release = resolve; });
    const sync = { forget: async (ids) => { calls.push(["outbox", ids]); if (calls.length === 1) await first; } };
    const idb = { forgetTexts: async (ids) => { calls.push(["kept", ids]); } };
    const forgetting = new Forgetting({ model, sync, idb });
    const told = [];
    forgetting.on("forgot", (ids) => told.push(ids));
    const one = forgetting.learn(["S"]);
    assert.deepEqual(shown(model), ["apple", "cherry"], "off the screen before the storage is done");
    // An erase by sender: more ids while the first are being forgotten; they go together next.
    forgetting.learn(["A"]);
    forgetting.learn(["X"]);
    release();
    await one;
    assert.deepEqual(told, [["S"], ["A"], ["X"]]);
    assert.deepEqual(calls, [["outbox", ["S"]], ["kept", ["S"]], ["outbox", ["A", "X"]], ["kept", ["A", "X"]]]);
    assert.deepEqual(shown(model), ["cherry"]);
  });

  test("storage that refuses (the browser's is off) does not stop the next erase from being forgotten", async () => {
    const model = holding("apple", "secret");
    const calls = [];
    const sync = { forget: async (ids) => { calls.push(ids); } };
    const idb = { forgetTexts: async () => { throw new Error("storage off"); } };
    const forgetting = new Forgetting({ model, sync, idb, retryMs: 1 });
    await forgetting.learn(["S"]);
    await forgetting.learn(["A"]);
    assert.deepEqual(calls, [["S"], ["A", "S"]], "what failed goes again with the next");
  });

  test("storage that fails is asked again after 1, 2, 4, 8 and 16 waits, then only with the next erase", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const settle = async () => { for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r)); };
      const model = holding("apple", "secret");
      const asked = [];
      let clock = 0;
      const sync = { forget: async () => {} };
      const idb = { forgetTexts: async (ids) => { asked.push([clock, ids]); throw new Error("busy"); } };
      const forgetting = new Forgetting({ model, sync, idb, retryMs: 100 });
      await forgetting.learn(["S"]);
      for (let ms = 0; ms < 5000; ms += 10) {
        clock += 10;
        mock.timers.tick(10);
        await settle();
      }
      assert.deepEqual(asked.map(([at]) => at), [0, 100, 300, 700, 1500, 3100], "one timer, doubling, five times");
      assert.ok(asked.every(([, ids]) => ids.join() === "S"));
      await forgetting.learn(["A"]);
      assert.deepEqual(asked.at(-1)[1], ["A", "S"], "what failed goes with the next erase learned");
    } finally {
      mock.timers.reset();
    }
  });

  test("storage that fails for a moment is asked again: an erased text does not stay readable under the old key", async () => {
    const model = holding("apple", "secret");
    const kept = [];
    let failing = 2;
    const sync = { forget: async () => {} };
    const idb = {
      forgetTexts: async (ids) => {
        if (failing-- > 0) throw new Error("busy");
        kept.push(ids);
      },
    };
    const forgetting = new Forgetting({ model, sync, idb, retryMs: 5 });
    await forgetting.learn(["S"]);
    assert.deepEqual(kept, []);
    const deadline = Date.now() + 2000;
    while (kept.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(kept, [["S"]], "forgotten on the third try");
  });
});

describe("words", () => {
  test("a change refused for an erased item is said without its text", () => {
    const words = erasedChangeInWords({ op: "edit", id: "S", text: "secret, edited" });
    assert.equal(words, "Your edit was not sent: that message was deleted for everyone.");
    assert.ok(!words.includes("secret"));
  });

  test("offline, Delete for everyone says it needs the server and is not kept", () => {
    assert.match(eraseFailedInWords(0, "the server cannot be reached"), /needs the server.*not kept to send later/);
    assert.equal(eraseFailedInWords(403, "token ann may not erase stream team"),
      "The message was not deleted for everyone: token ann may not erase stream team.");
  });
});

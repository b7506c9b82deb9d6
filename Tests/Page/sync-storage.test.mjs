// The outbox's push (Sources/MsglogServer/Page/Resources/sync.js) when the
// browser's own storage fails, under node's own test runner with its clock
// advanced by hand: not the server, so no answer says it; the page says so
// once three pushes running failed by it — a network failure between does
// not start the count again — and goes on trying until the storage is back.
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { mock, test } from "node:test";
import { HTTPError } from "../../Sources/MsglogServer/Page/Resources/api.js";
import { Sync } from "../../Sources/MsglogServer/Page/Resources/sync.js";

// Node 20 has no `navigator` (the page asks it for Web Locks; without them it pushes unlocked).
globalThis.navigator ??= {};

/** Lets every promise the push awaits settle (setImmediate is not the mocked clock's). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

test("a push the browser's storage keeps failing is said once, and tried again until it is back", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const outcomes = ["storage", "storage", "network", "storage", "storage", "storage", "ok"];
    let tries = 0;
    // A try: the outbox read (the storage failing, or one change waiting, which goes to a server away), or nothing left.
    const waiting = { key: 1, owner: "me", made: "2026-12-04T09:00:00.000Z", change: { op: "append", stream: "main", id: "A", text: "hi" } };
    const idb = {
      entries: async () => {
        const outcome = outcomes[Math.min(tries, outcomes.length - 1)];
        tries += 1;
        if (outcome === "storage") throw new Error("the disk is full");
        return outcome === "network" ? [waiting] : [];
      },
    };
    const api = { owner: () => "me", request: async () => { throw new HTTPError(0, "the server cannot be reached"); } };
    const model = { stream: "main", log: null, adopt: () => false };
    const sync = new Sync({ model, api, idb, channel: null });
    const said = [];
    sync.on("problem", (words) => said.push({ words, tries }));
    sync.push();
    await settle();
    while (tries < outcomes.length) {
      mock.timers.tick(5000);  // the longest wait between two tries
      await settle();
    }
    assert.equal(tries, outcomes.length, "tried until the storage was back");
    assert.deepEqual(said.map((s) => s.tries), [4], "said once, at the third storage failure: " + JSON.stringify(said));
    assert.match(said[0].words, /this browser's storage failed \(the disk is full\)\. They stay kept, and are tried again\./);
    mock.timers.tick(60_000);
    await settle();
    assert.equal(tries, outcomes.length, "tried again after it went through");
  } finally {
    mock.timers.reset();
  }
});

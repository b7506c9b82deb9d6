// The outbox's push (Sources/MsglogServer/Page/Resources/sync.js) when the
// browser's own storage fails, under node's own test runner: not the
// server, so no answer says it; the page says so once it has failed a few
// times running, and goes on trying until the storage is back.
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { test } from "node:test";
import { Sync } from "../../Sources/MsglogServer/Page/Resources/sync.js";

// Node 20 has no `navigator` (the page asks it for Web Locks; without them it pushes unlocked).
globalThis.navigator ??= {};

test("a push the browser's storage keeps failing is said once, and tried again until it is back", async () => {
  let reads = 0;
  let failing = true;
  const idb = {
    entries: async () => {
      reads += 1;
      if (failing) throw new Error("the disk is full");
      return [];
    },
  };
  const api = { owner: () => "me", request: async () => { throw new Error("no request expected"); } };
  const model = { stream: "main", log: null, adopt: () => false };
  const sync = new Sync({ model, api, idb, channel: null });
  const said = [];
  sync.on("problem", (words) => said.push(words));
  const until = async (what, probe) => {
    const deadline = Date.now() + 10_000;
    while (!probe() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(probe(), what);
  };
  sync.push();
  await until("three failed tries", () => reads >= 3);
  await until("said", () => said.length > 0);
  assert.equal(reads, 3, "said at the third failure");
  assert.match(said[0], /this browser's storage failed \(the disk is full\)\. They stay kept, and are tried again\./);
  failing = false;
  await until("tried again once the storage is back", () => reads >= 4);
  assert.equal(said.length, 1, "said once: " + JSON.stringify(said));
});

// Sealing what the page keeps (Sources/MsglogServer/Page/Resources/seal.js)
// under node's own test runner, with keys kept in memory instead of the
// origin's private file system: an outbox entry's and a kept list's texts
// are not in what is stored, open back as they were, and once the key is
// renewed and the old one dropped, what was sealed under it can never be
// opened again (the ciphertext IndexedDB's files may still hold).
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryKeys, Sealer, Unreadable } from "../../Sources/MsglogServer/Page/Resources/seal.js";

const T = "2026-12-02T09:00:00.000Z";
const SECRET = "the secret plan: 4B at noon";

/** Whether `text` is anywhere in `value` as stored (its strings and its bytes). */
function holds(value, text) {
  const bytes = new TextEncoder().encode(text);
  const seen = [];
  const walk = (v) => {
    if (typeof v === "string") seen.push(v.includes(text));
    else if (v instanceof Uint8Array) seen.push(Buffer.from(v).includes(Buffer.from(bytes)));
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return seen.some(Boolean);
}

describe("sealing", () => {
  test("an outbox entry keeps what the change is in the clear, its text and sender sealed", async () => {
    const sealer = new Sealer(new MemoryKeys());
    const entry = { key: 3, owner: "me", made: T, change: { op: "edit", stream: "s", id: "S", text: SECRET, sender: "ann" } };
    const kept = await sealer.sealEntry(entry);
    assert.equal(holds(kept, SECRET) || holds(kept, "ann"), false);
    assert.deepEqual({ ...kept.change, sealed: undefined }, { op: "edit", stream: "s", id: "S", sealed: undefined });
    assert.deepEqual(await sealer.openEntry(kept), entry);
    const move = { key: 4, change: { op: "move", stream: "s", id: "S", after: ["A"] } };
    assert.deepEqual(await sealer.sealEntry(move), move, "a change without text is kept as it is");
    const plain = { key: 5, change: { op: "append", stream: "s", id: "N", text: "kept before sealing" } };
    assert.deepEqual(await sealer.openEntry(plain), plain, "an entry kept before sealing opens as it is");
  });

  test("a kept list keeps its ids, times and seqs in the clear, its texts and senders sealed together", async () => {
    const sealer = new Sealer(new MemoryKeys());
    const items = [
      { id: "A", text: "apple", time: T, seq: 1, sender: "ann" },
      { id: "S", text: SECRET, time: T, seq: 2 },
      { id: "E", text: "", time: T, seq: 3, erased: true },
    ];
    const record = { owner: "me", log: "L", stream: "s", version: 3, seq: 9, items };
    const kept = await sealer.sealList(record);
    assert.equal(holds(kept, SECRET) || holds(kept, "apple"), false);
    assert.deepEqual(kept.items.map((item) => item.id), ["A", "S", "E"]);
    assert.deepEqual(await sealer.openList(kept), record);
  });

  test("a renewed key seals from then on; with the old one dropped, what it sealed can never be opened", async () => {
    const keys = new MemoryKeys();
    const sealer = new Sealer(keys);
    const old = await sealer.seal(SECRET);
    const first = await sealer.current();
    assert.equal(old.key, first);
    const renewed = await sealer.renew();
    assert.ok(renewed > first, "key names sort by when they were made");
    assert.equal(await sealer.current(), renewed);
    const again = await sealer.seal("still here");
    assert.equal(again.key, renewed);
    await sealer.dropAllBut(renewed);
    assert.deepEqual(await keys.names(), [renewed]);
    await assert.rejects(sealer.open(old), Unreadable);
    // Another page of this browser, which never held the old key in memory, cannot open it either.
    const other = new Sealer(keys);
    await assert.rejects(other.open(old), Unreadable);
    assert.equal(await other.open(again), "still here");
  });

  test("first seals at once, by two pages of one browser, make one key and every one opens", async () => {
    // Each step of the keys' files takes a turn of the event loop, as the browser's file system does.
    const keys = new MemoryKeys();
    const slow = (f) => async (...args) => { await new Promise((r) => setTimeout(r, 1)); return f(...args); };
    for (const name of ["names", "read", "write"]) keys[name] = slow(keys[name].bind(keys));
    const one = new Sealer(keys), other = new Sealer(keys);
    const sealed = await Promise.all([one.seal("a"), other.seal("b"), one.seal("c"), other.seal("d")]);
    assert.equal((await keys.names()).length, 1, "one key for the lot: " + (await keys.names()));
    assert.equal(new Set(sealed.map((s) => s.key)).size, 1);
    const third = new Sealer(keys);
    assert.deepEqual(await Promise.all(sealed.map((s) => third.open(s))), ["a", "b", "c", "d"]);
  });

  test("a key file that is no whole key (an older page's, left empty) is passed over: a newer key seals", async () => {
    const keys = new MemoryKeys();
    const sealer = new Sealer(keys);
    const broken = "key-" + String(Date.now() + 60_000).padStart(15, "0") + "-00112233445566ff";
    await keys.write(broken, new Uint8Array(0));
    const sealed = await sealer.seal(SECRET);
    assert.ok(sealed.key > broken, "sealed under " + sealed.key);
    assert.equal(await new Sealer(keys).open(sealed), SECRET);
    await assert.rejects(sealer.open({ ...sealed, key: broken }), Unreadable);
    await keys.write("making-" + broken, new Uint8Array(32));
    await sealer.dropAllBut(sealed.key);
    assert.deepEqual(await keys.names(), [sealed.key], "every other file of the keys goes");
  });

  test("a key that cannot be read for now is an error, not a key gone: what it sealed stays", async () => {
    const keys = new MemoryKeys();
    const sealed = await new Sealer(keys).seal(SECRET);
    keys.read = async () => { throw new Error("the file system is busy"); };
    const error = await new Sealer(keys).open(sealed).catch((e) => e);
    assert.ok(!(error instanceof Unreadable) && error.message === "the file system is busy", "thrown: " + error);
  });

  test("a record no key of this page sealed is unreadable, not a crash", async () => {
    const sealer = new Sealer(new MemoryKeys());
    await sealer.current();
    await assert.rejects(sealer.open({ key: "key-000000000000001-00", iv: new Uint8Array(12), data: new Uint8Array(20) }), Unreadable);
    await assert.rejects(sealer.open(null), Unreadable);
    const forged = { ...(await sealer.seal("x")), data: new Uint8Array(20) };
    await assert.rejects(sealer.open(forged), Unreadable);
  });
});

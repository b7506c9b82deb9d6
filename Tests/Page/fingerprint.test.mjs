// Whose data the page keeps (Sources/MsglogServer/Page/Resources/fingerprint.js):
// SHA-256 in plain JavaScript against node's own, and the owner of a token.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { NO_TOKEN, ownerOf, sha256Hex } from "../../Sources/MsglogServer/Page/Resources/fingerprint.js";

const node = (text) => createHash("sha256").update(text, "utf8").digest("hex");

test("SHA-256 is node's, at every length around a block's edge and past one, and of UTF-8 text", () => {
  assert.equal(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  for (let n = 0; n <= 130; n++) assert.equal(sha256Hex("x".repeat(n)), node("x".repeat(n)), "length " + n);
  for (const text of ["héllo ✓", "🙂".repeat(40), "abc+def/ghi+jkl=mno", "\u0000\uffff", "a".repeat(100000)]) {
    assert.equal(sha256Hex(text), node(text));
  }
});

test("a token's owner is its fingerprint, never the token; no token is an owner of its own", () => {
  const token = "abc+def/ghi+jkl=mno";
  assert.equal(ownerOf(token), node("msglog page owner\n" + token));
  assert.ok(!ownerOf(token).includes(token));
  assert.equal(ownerOf(token), ownerOf(token));
  assert.notEqual(ownerOf(token), ownerOf(token + "x"));
  assert.equal(ownerOf(null), NO_TOKEN);
  assert.equal(ownerOf(""), NO_TOKEN);
  assert.notEqual(ownerOf("t"), NO_TOKEN);
});

// How many links' tokens the page checks with the server before anyone
// agrees (Sources/MsglogServer/Page/Resources/token.js): a page the
// browser opens may send tabs to links with made-up tokens, and 20 failed
// tokens turn the address away for a minute, so at most
// OFFER_CHECKS_PER_MINUTE are checked in a minute, counted in storage
// every tab of the origin shares; none without storage.
//
//     node --test Tests/Page/token.test.mjs

import assert from "node:assert/strict";
import { test } from "node:test";

import { OFFER_CHECKS_PER_MINUTE, takeOfferCheck } from "../../Sources/MsglogServer/Page/Resources/token.js";

/** The storage module's shape over a Map; `off`: a browser that keeps nothing. */
function store({ off = false } = {}) {
  const values = new Map();
  return {
    values,
    get: (area, key) => (off ? null : values.get(area + ":" + key) ?? null),
    set: (area, key, value) => { if (!off) values.set(area + ":" + key, value); },
  };
}

test("a minute's checks are counted, and come back as the minute passes", () => {
  const s = store();
  const start = 1_000_000;
  for (let n = 0; n < OFFER_CHECKS_PER_MINUTE; n++) assert.equal(takeOfferCheck(start + n, s), true, "check " + n);
  assert.equal(takeOfferCheck(start + 10, s), false, "one past the minute's");
  assert.equal(takeOfferCheck(start + 59_999, s), false, "still within the minute of the first");
  assert.equal(takeOfferCheck(start + 60_000, s), true, "the first check is a minute old");
  assert.equal(takeOfferCheck(start + 60_000, s), false, "the other four are not");
});

test("without storage nothing is checked before the user agrees", () => {
  assert.equal(takeOfferCheck(1_000_000, store({ off: true })), false);
});

test("what another page left in the key does not open the way", () => {
  const s = store();
  for (const planted of ["not json", "{}", '"x"', '[1e99, "a", null]', JSON.stringify(Array(50).fill(2_000_000))]) {
    s.values.set("localStorage:msglog.offerChecks", planted);
    const now = 1_000_000;
    let taken = 0;
    for (let n = 0; n < 10; n++) if (takeOfferCheck(now + n, s)) taken++;
    assert.ok(taken <= OFFER_CHECKS_PER_MINUTE, planted + ": " + taken + " checks");
  }
});

// How the page puts things into words (Sources/MsglogServer/Page/Resources/words.js).

import assert from "node:assert/strict";
import { test } from "node:test";
import { quoted, streamNameProblem, when } from "../../Sources/MsglogServer/Page/Resources/words.js";

test("a quoted text is on one line and cut to its limit with an ellipsis", () => {
  assert.equal(quoted("  Ship\n\tit  "), "'Ship it'");
  assert.equal(quoted("x".repeat(40)), "'" + "x".repeat(40) + "'");
  assert.equal(quoted("x".repeat(41)), "'" + "x".repeat(39) + "…'");
  assert.equal(quoted("abcdef", 4), "'abc…'");
});

test("a stream name is 1–200 bytes of UTF-8 without control characters, and not only spaces", () => {
  assert.equal(streamNameProblem("team"), null);
  assert.equal(streamNameProblem("é".repeat(100)), null);  // 200 bytes
  assert.match(streamNameProblem("é".repeat(101)), /at most 200 bytes; this one is 202/);
  assert.match(streamNameProblem("   "), /other than a space/);
  assert.match(streamNameProblem(""), /other than a space/);
  assert.match(streamNameProblem("a\u0007b"), /control characters/);
  assert.match(streamNameProblem("a\u0085b"), /control characters/);
});

test("a time today is the clock alone; another day has its date, another year its year", () => {
  const now = new Date(2026, 2, 14, 18, 0);
  const today = when(new Date(2026, 2, 14, 9, 26).toISOString(), now);
  const earlier = when(new Date(2026, 0, 2, 9, 26).toISOString(), now);
  const lastYear = when(new Date(2025, 0, 2, 9, 26).toISOString(), now);
  assert.match(today, /^\D*0?9\D26\D*$/);
  assert.ok(earlier.endsWith(", " + today) && !earlier.includes("2026"), earlier);
  assert.ok(lastYear.includes("2025"), lastYear);
  assert.equal(when("not a time", now), "not a time");
});

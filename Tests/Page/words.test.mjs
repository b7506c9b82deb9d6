// How the page puts things into words (Sources/MsglogServer/Page/Resources/words.js).

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  arrivalInWords, changeInWords, heldInWords, isolated, quoted, shownName, signedOutInWords, streamNameProblem, when,
} from "../../Sources/MsglogServer/Page/Resources/words.js";

test("a quoted text is on one line and cut to its limit with an ellipsis", () => {
  assert.equal(quoted("  Ship\n\tit  "), "'Ship it'");
  assert.equal(quoted("x".repeat(40)), "'" + "x".repeat(40) + "'");
  assert.equal(quoted("x".repeat(41)), "'" + "x".repeat(39) + "…'");
  assert.equal(quoted("abcdef", 4), "'abc…'");
  // Cut where a reader sees a character end: never inside an emoji's
  // surrogate pair, its joined family, or a letter and its marks.
  const family = "\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}";
  assert.equal(quoted("a".repeat(38) + family + "b"), "'" + "a".repeat(38) + family + "b'");
  assert.equal(quoted("a".repeat(38) + family + "bc"), "'" + "a".repeat(38) + family + "…'");
  assert.equal(quoted("a".repeat(39) + family + "bc"), "'" + "a".repeat(39) + "…'");
  assert.equal(quoted("e\u0301".repeat(5), 3), "'" + "e\u0301".repeat(2) + "…'");
  assert.equal(quoted("\u{1F600}".repeat(100)), "'" + "\u{1F600}".repeat(39) + "…'");
  assert.doesNotMatch(quoted("x".repeat(39) + "\u{1F600}".repeat(3)), /[\ud800-\udbff](?![\udc00-\udfff])/);
  // Only the first 640 units are looked at: a character they cut is left out whole.
  assert.equal(quoted("x" + "e" + "\u0301".repeat(700)), "'x…'");
});

test("someone's text cannot reorder the sentence it is quoted in, nor a stream's name pass for another", () => {
  // A stray U+202E made "Deleted card '.'pop tuohtiw desrever" of a note (a helper's find).
  assert.equal(quoted("\u202ereversed"), "'\u2068\u202ereversed\u2069'");
  assert.equal(quoted("שלום"), "'\u2068שלום\u2069'");
  assert.equal(quoted("plain text"), "'plain text'");
  assert.equal(isolated("ann"), "ann");
  assert.equal(arrivalInWords({ text: "hi", sender: "\u202eann" }, "chat"), "\u2068\u202eann\u2069 wrote 'hi'.");
  assert.equal(arrivalInWords({ text: "x", sender: "\u2067bob" }, "board"), "New card 'x' from \u2068\u2067bob\u2069.");
  // In the stream picker "\u202eevil" showed as "live", another stream's name.
  assert.equal(shownName("\u202eevil"), "\\u{202e}evil");
  assert.equal(shownName("team"), "team");
  assert.equal(shownName("فريق"), "\u2068فريق\u2069");
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

test("a change of this page in words: its kind, and a message's or an edit's text quoted", () => {
  assert.equal(changeInWords({ op: "append", text: "see you\nat 5" }), "Your message 'see you at 5'");
  assert.equal(changeInWords({ op: "edit", text: "fixed" }), "Your edit 'fixed'");
  assert.equal(changeInWords({ op: "move" }), "Your move of a card");
  assert.equal(changeInWords({ op: "remove" }), "Your delete");
  assert.equal(changeInWords({ op: "undo" }), "Your undo");
});

test("changes held say why they are not sent, in the number they are, and what discarding them does", () => {
  const one = heldInWords("otherLog", 1), three = heldInWords("otherLog", 3);
  assert.match(one.text, /^1 change you made was not sent\. .*different log from the one you made it on.* It stays in this browser and is sent if that log comes back\.$/);
  assert.match(three.text, /^3 changes you made were not sent\. .*made them on, so they would land .* They stay in this browser and are sent/);
  assert.equal(one.button, "Discard this change");
  assert.equal(three.button, "Discard these 3 changes");
  assert.equal(three.done, "Discarded 3 changes.");
  const others = heldInWords("otherOwner", 2);
  assert.match(others.text, /^2 changes were made in this browser with another access token and not sent yet\. They belong to whoever made them/);
  assert.equal(others.button, "Discard the other token's 2 changes");
  assert.equal(heldInWords("otherOwner", 1).button, "Discard the other token's change");
});

test("a refused token says what went with it", () => {
  assert.match(signedOutInWords(1, true), /^The server no longer accepts this page's access token, so your change not yet sent was removed/);
  assert.match(signedOutInWords(2, false), /^The server now asks for an access token, so your 2 changes not yet sent were removed/);
});

test("an arrival says who wrote what in the chat, and a new card on the board", () => {
  const event = { op: "insert", id: "a", text: "hello\nthere", sender: "Ann", time: "2026-12-04T11:59:30.000Z" };
  assert.equal(arrivalInWords(event, "chat"), "Ann wrote 'hello there'.");
  assert.equal(arrivalInWords({ ...event, sender: undefined }, "chat"), "New message 'hello there'.");
  assert.equal(arrivalInWords(event, "board"), "New card 'hello there' from Ann.");
  assert.equal(arrivalInWords({ ...event, text: "x".repeat(500) }, "chat").length, "Ann wrote ''.".length + 200);
});

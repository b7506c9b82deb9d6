// The outbox fed the answers a real `msglog serve` gave (recorded by
// SyncAnswerFixtureTests into Fixtures/sync-answers.json, which that test
// checks against a fresh server on each store, so these cannot drift):
// the push's outcomes read as the library reads them and settled, each
// refusal with its code and the server's words, a resend answered alike,
// and the calls refused whole carrying their kind and words.
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import {
  MalformedAnswer, numberEntries, PROTOCOL, pushBody, readAnswer, settleOutcomes,
} from "../../Sources/MsglogServer/Page/Resources/outbox.js";

const exchanges = JSON.parse(readFileSync(new URL("./Fixtures/sync-answers.json", import.meta.url), "utf8"));
const exchange = (name) => exchanges.find((e) => e.name === name);

/** The outbox's entries for the changes a recorded push carried, numbered as it numbered them. */
function entriesOf(push) {
  const { log, replica, changes } = push.request;
  const made = changes.map(({ change, made, basis, ...fields }, i) => ({ key: i + 1, change: fields, made, basis, log }));
  const { changed } = numberEntries(made, { log, replica, next: changes[0].change });
  return { entries: changed, log, replica };
}

describe("a push's answer, as the server gave it", () => {
  const push = exchange("push");

  test("the outbox sends what the server took: the recorded push is the body the outbox makes of its entries", () => {
    const { entries, log, replica } = entriesOf(push);
    assert.deepEqual(pushBody(entries, { log, replica, secret: push.request.secret }), push.request);
  });

  test("every outcome is read: applied (rebased or not), unchanged, refused with its code, its data and the server's words", () => {
    const answer = readAnswer(push.body);
    assert.equal(answer.head, push.body.head);
    assert.deepEqual(answer.outcomes.map((o) => o.result),
      ["applied", "applied", "applied", "unchanged", "refused", "applied", "refused", "refused", "refused"]);
    assert.deepEqual(answer.outcomes.filter((o) => o.result === "applied").map((o) => [o.change, o.seq, o.rebased]),
      [[1, 2, false], [2, 3, true], [3, 4, false], [6, 5, false]]);
    const refused = answer.outcomes.filter((o) => o.result === "refused");
    assert.deepEqual(refused.map((o) => o.reason.code), ["no-such-item", "item-removed", "empty-text", "item-is-live"]);
    assert.deepEqual(refused[1].reason, { code: "item-removed", id: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", seq: 5 });
    assert.equal(refused[1].error, "item aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa was already removed (at seq 5)");
  });

  test("settled: the applied kept with their seqs, the rest dropped, each refusal told with its reason", () => {
    const { entries, log, replica } = entriesOf(push);
    const { applied, done, refused, results } = settleOutcomes(entries, { log, replica }, readAnswer(push.body).outcomes);
    assert.deepEqual(applied.map((e) => [e.number, e.seq, e.rebased]), [[1, 2, false], [2, 3, true], [3, 4, false], [6, 5, false]]);
    assert.deepEqual(done.map((key) => entries.find((e) => e.key === key).number), [4, 5, 7, 8, 9]);
    assert.deepEqual(refused.map((r) => [r.entry.number, r.reason.code, r.error]), [
      [5, "no-such-item", "no item with id dddddddd-dddd-4ddd-8ddd-dddddddddddd in stream 'main'"],
      [7, "item-removed", "item aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa was already removed (at seq 5)"],
      [8, "empty-text", "message text is empty"],
      [9, "item-is-live", "item bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb is live in stream 'main': only a removed item can come back"],
    ]);
    assert.equal(results.length, 9);
  });

  test("the same push sent again is answered alike: each change was done once", () => {
    assert.deepEqual(exchange("push-resent").body, push.body);
  });

  test("an outcome a server kept in words, before reasons had codes, is refused with its words and no reason", () => {
    const { outcomes } = readAnswer({ head: 1, outcomes: [{ change: 1, result: "refused", error: "no item with id x" }] });
    assert.deepEqual(outcomes, [{ change: 1, result: "refused", reason: null, error: "no item with id x" }]);
  });

  test("an answer that is none is refused as the server's fault", () => {
    for (const body of [null, {}, { head: 1 }, { head: 1, outcomes: [7] }, { head: 1, outcomes: [{ change: 1, result: "applied" }] },
      { head: 1, outcomes: [{ change: 1, result: "lost" }] }]) {
      assert.throws(() => readAnswer(body), MalformedAnswer, JSON.stringify(body));
    }
  });
});

describe("a push refused whole, as the server gave it", () => {
  test("each carries its kind and the server's words, with the status the page shows them by", () => {
    assert.deepEqual(exchanges.filter((e) => e.status !== 200).map((e) => [e.name, e.status, e.body.kind]), [
      ["replica-secret", 403, "replica-secret"],
      ["another-log", 409, "another-log"],
      ["newer-protocol", 409, "incompatible"],
      ["out-of-order", 409, "lost-track"],
    ]);
    assert.equal(exchange("replica-secret").body.replica, exchange("replica-secret").request.replica);
    for (const e of exchanges.filter((x) => x.status !== 200)) assert.equal(typeof e.body.error, "string", e.name);
  });

  test("the hello names the protocol the page speaks and the log the pushes go to", () => {
    const { body } = exchange("hello");
    assert.equal(body.protocol, PROTOCOL);
    assert.equal(body.log, exchange("push").request.log);
  });
});

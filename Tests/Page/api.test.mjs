// The page's requests (Sources/MsglogServer/Page/Resources/api.js) give up
// on an answer that never comes: a push whose answer a phone's network
// lost held the outbox until a reload (a helper, through a proxy that kept
// the answer). `fetch` here is one that answers only when told, and ends
// as the browser's does when its signal aborts.
//
//     node --test Tests/Page/api.test.mjs

import assert from "node:assert/strict";
import { after, afterEach, describe, test } from "node:test";

import { Api, HTTPError, READ_TIMEOUT_MS, WRITE_TIMEOUT_MS } from "../../Sources/MsglogServer/Page/Resources/api.js";

/** What the page reads of the browser: an address without a token, no storage. */
globalThis.location = { hash: "", pathname: "/", search: "" };
globalThis.window = {};

const realFetch = globalThis.fetch;
afterEach(() => { globalThis.fetch = realFetch; });

/** A fetch whose answers never come; the signal each request carried. */
function hangingFetch() {
  const signals = [];
  globalThis.fetch = (_, init) => {
    signals.push(init.signal);
    return new Promise((_, reject) => init.signal?.addEventListener("abort", () => reject(init.signal.reason)));
  };
  return signals;
}

describe("a request", () => {
  test("whose answer never comes fails in time, as one that could not be sent", async () => {
    const signals = hangingFetch();
    const started = Date.now();
    // Node lets a process end with only AbortSignal.timeout's timer left: held open meanwhile.
    const alive = setTimeout(() => {}, 10_000);
    after(() => clearTimeout(alive));
    await assert.rejects(
      new Api().request("/api/sync/push", { changes: [] }, { timeout: 50 }),
      (e) => e instanceof HTTPError && e.status === 0 && e.message === "the server did not answer in time");
    assert.ok(Date.now() - started < 5_000);
    assert.equal(signals.length, 1);
    assert.ok(signals[0].aborted);
  });

  test("is bounded by default, a write sooner than a read", async () => {
    const signals = [];
    globalThis.fetch = async (_, init) => {
      signals.push(init.signal);
      return new Response("{}", { status: 200 });
    };
    const api = new Api();
    assert.deepEqual(await api.request("/api/sync/push", { changes: [] }), {});
    assert.deepEqual(await api.request("/api/items?stream=main"), {});
    assert.ok(signals.every((s) => s instanceof AbortSignal && !s.aborted));
    assert.ok(WRITE_TIMEOUT_MS < READ_TIMEOUT_MS && WRITE_TIMEOUT_MS <= 30_000);
  });

  test("that cannot be sent says so", async () => {
    globalThis.fetch = async () => { throw new TypeError("Failed to fetch"); };
    await assert.rejects(
      new Api().request("/api/streams"),
      (e) => e instanceof HTTPError && e.status === 0 && e.message === "the server cannot be reached");
  });
});

describe("a token in the address", () => {
  /** A tab whose address holds `hash` and whose sessionStorage holds `held`. */
  function tab(hash, held) {
    const stored = new Map(held ? [["msglog.token", held]] : []);
    const addresses = [];
    globalThis.window.sessionStorage = {
      getItem: (k) => stored.get(k) ?? null, setItem: (k, v) => stored.set(k, v), removeItem: (k) => stored.delete(k),
    };
    globalThis.location = { hash, pathname: "/", search: "?stream=main" };
    globalThis.history = { state: null, replaceState: (_, __, url) => addresses.push(url) };
    return { stored, addresses };
  }
  after(() => {
    delete globalThis.window.sessionStorage;
    globalThis.location = { hash: "", pathname: "/", search: "" };
  });

  // Any page the browser opens can send a tab to such a link: taken as it
  // came, it signed the tab in as whoever made the link, and a refused one
  // dropped what the page kept for its own token.
  test("is offered, not taken, and leaves the address at once", () => {
    const { stored, addresses } = tab("#token=abc+def%2Fg", "mine");
    const api = new Api();
    assert.equal(api.readToken(), "mine");
    assert.equal(api.offered, "abc+def/g");
    assert.deepEqual(addresses, ["/?stream=main"]);
    assert.equal(stored.get("msglog.token"), "mine");
    assert.equal(api.headers({}).Authorization, "Bearer mine");
    api.acceptOffered();
    assert.equal(api.readToken(), "abc+def/g");
    assert.equal(stored.get("msglog.token"), "abc+def/g");
    assert.equal(api.offered, null);
  });

  test("the tab holds already is not offered again", () => {
    tab("#token=mine", "mine");
    assert.equal(new Api().offered, null);
  });

  test("declined, changes nothing", () => {
    const { stored } = tab("#token=theirs", null);
    const api = new Api();
    assert.equal(api.readToken(), null);
    api.declineOffered();
    assert.equal(api.offered, null);
    assert.equal(api.readToken(), null);
    assert.equal(stored.size, 0);
  });

  test("is asked about with itself, and a refusal of it is not the page's", async () => {
    tab("#token=theirs", "mine");
    const sent = [];
    globalThis.fetch = async (url, init) => {
      sent.push([url, init.headers.Authorization]);
      return new Response(JSON.stringify({ error: "unauthorized" }), { status: 401 });
    };
    const api = new Api();
    let told = 0;
    api.on("unauthorized", () => { told += 1; });
    await assert.rejects(api.whose(api.offered, "a/b"), (e) => e instanceof HTTPError && e.status === 401);
    assert.deepEqual(sent, [["/api/whoami?stream=a%2Fb", "Bearer theirs"]]);
    assert.equal(told, 0);
    assert.equal(api.readToken(), "mine");
  });
});

describe("a link to the address the tab shows", () => {
  // The browser only changes the fragment (no new page): the page takes it as at a load.
  test("is offered and leaves the address", () => {
    const stored = new Map([["msglog.token", "mine"]]);
    const addresses = [];
    globalThis.window.sessionStorage = { getItem: (k) => stored.get(k) ?? null, setItem: (k, v) => stored.set(k, v) };
    globalThis.location = { hash: "", pathname: "/", search: "?stream=main" };
    globalThis.history = { state: null, replaceState: (_, __, url) => addresses.push(url) };
    const api = new Api();
    assert.equal(api.readToken(), "mine");
    assert.equal(api.takeFragment(), false);
    globalThis.location.hash = "#token=theirs";
    assert.equal(api.takeFragment(), true);
    assert.equal(api.offered, "theirs");
    assert.deepEqual(addresses, ["/?stream=main"]);
    assert.equal(api.readToken(), "mine");
    delete globalThis.window.sessionStorage;
    globalThis.location = { hash: "", pathname: "/", search: "" };
  });
});

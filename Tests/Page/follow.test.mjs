// Following (Sources/MsglogServer/Page/Resources/follow.js): the server's
// event stream cut into its events' data, however the bytes arrive; and
// the loop that reads the list (and the log it is of), follows from its
// head, resumes after the last event and reads the list again when the
// events do not follow it, against a stand-in for the server's routes
// (fetch).

import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { Api } from "../../Sources/MsglogServer/Page/Resources/api.js";
import { eventData, Follower } from "../../Sources/MsglogServer/Page/Resources/follow.js";
import { StreamModel } from "../../Sources/MsglogServer/Page/Resources/model.js";

describe("the event stream's data", () => {
  test("each whole event's data, in order; what is still arriving is kept for the next read", () => {
    const { data, rest } = eventData('retry: 1000\n\nid: 7\ndata: {"seq":7}\n\n: keep-alive\n\nid: 8\ndata: {"se');
    assert.deepEqual(data, ['{"seq":7}']);
    assert.equal(rest, 'id: 8\ndata: {"se');
    const after = eventData(rest + 'q":8}\n\n');
    assert.deepEqual(after, { data: ['{"seq":8}'], rest: "" });
  });

  test("an event cut anywhere, even between its two newlines, comes out once", () => {
    const stream = 'id: 1\ndata: {"seq":1}\n\nid: 2\ndata: {"seq":2}\n\n';
    for (let cut = 0; cut <= stream.length; cut++) {
      const first = eventData(stream.slice(0, cut));
      const second = eventData(first.rest + stream.slice(cut));
      assert.deepEqual(first.data.concat(second.data), ['{"seq":1}', '{"seq":2}'], "cut at " + cut);
      assert.equal(second.rest, "");
    }
  });
});

// MARK: - The loop, against a stand-in server

const T = "2026-03-14T09:26:00.000Z";
const item = (id, index, seq) => ({ index, id, text: id, time: T, seq });
const insert = (id, index, version, seq) => ({ stream: "s", op: "insert", id, index, text: id, version, seq, time: T });

const json = (body) => ({ ok: true, status: 200, statusText: "OK", text: async () => JSON.stringify(body) });
const refused = (status) => ({ ok: false, status, statusText: "refused", text: async () => '{"error":"refused"}' });

/** An event stream sending `events` (as `msglog serve` writes them), then ending as a stopped server's does. */
function eventStream(events) {
  const bytes = new TextEncoder().encode(events.map((e) => "id: " + e.seq + "\ndata: " + JSON.stringify(e) + "\n\n").join(""));
  let sent = false;
  return {
    ok: true, status: 200, statusText: "OK",
    body: {
      getReader: () => ({
        read: async () => (sent ? { done: true } : ((sent = true), { value: bytes, done: false })),
        cancel: async () => {},
      }),
    },
  };
}

let asked, statuses, api, model, follower;

const LOG = "9b80f034-76d9-42ff-9a9f-2dc87baf6f31";
const HELLO = "/api/sync?protocol=1";

/**
 * Answers the page's requests with `answer(path, asked)`, the sync hello
 * with `hello(asked)` (log LOG by default); records them in `asked`, but
 * for the hello.
 */
function serve(answer, hello = () => json({ protocol: 1, format: 1, log: LOG, head: 0 })) {
  globalThis.fetch = async (path) => {
    if (path === HELLO) return hello(asked);
    asked.push(path);
    return answer(path, asked);
  };
}

async function until(what, condition) {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(condition(), what + "; asked " + JSON.stringify(asked));
}

describe("following the stream", () => {
  beforeEach(() => {
    asked = [];
    statuses = [];
    globalThis.location = { hash: "", pathname: "/", search: "" };
    api = new Api();
    model = new StreamModel("s");
    follower = new Follower({ model, api, kept: { read: async () => undefined } });
    follower.on("status", ({ kind }) => statuses.push(kind));
  });
  afterEach(() => follower.stop());

  test("reads the list, follows from its head, folds each event in, and resumes after the last one", async () => {
    serve((path) => {
      if (path === "/api/streams") return json({ streams: [{ stream: "s", seq: 5, version: 2 }] });
      if (path === "/api/items?stream=s") return json({ seq: 5, version: 2, items: [item("a", 0, 1), item("b", 1, 4)] });
      if (path === "/api/follow?stream=s&from=6") return eventStream([insert("c", 2, 3, 6), insert("d", 0, 4, 9)]);
      return eventStream([]);
    });
    follower.follow();
    await until("following resumes after seq 9", () => asked.includes("/api/follow?stream=s&from=10"));
    assert.deepEqual(asked.slice(0, 4), ["/api/streams", "/api/items?stream=s", "/api/follow?stream=s&from=6", "/api/follow?stream=s&from=10"]);
    assert.deepEqual(model.items.map((i) => i.id), ["d", "a", "b", "c"]);
    assert.deepEqual([model.version, model.head], [4, 9]);
    assert.deepEqual(statuses.slice(0, 4), ["live", "offline", "connecting", "live"]);
    assert.equal(model.log, LOG, "the list is of the log the hello names");
  });

  test("a stream the token may not read is said refused, once, in the server's words, and not tried again", async () => {
    for (const refusedAt of ["/api/follow?stream=s&from=6", "/api/items?stream=s"]) {
      asked = [];
      statuses.length = 0;
      const whys = [];
      model = new StreamModel("s");
      follower = new Follower({ model, api, kept: { read: async () => undefined } });
      follower.on("status", ({ kind, why }) => {
        statuses.push(kind);
        if (why !== undefined) whys.push(why);
      });
      serve((path) => {
        if (path === "/api/streams") return json({ streams: [{ stream: "s", seq: 5, version: 2 }] });
        if (path === refusedAt) {
          return { ok: false, status: 403, statusText: "Forbidden", text: async () => '{"error":"token ann may not read stream s"}',
            json: async () => ({ error: "token ann may not read stream s" }) };
        }
        if (path === "/api/items?stream=s") return json({ seq: 5, version: 2, items: [item("a", 0, 1)] });
        return eventStream([]);
      });
      // The backoff's timers run when told: a retry, which would come after 500 ms, is looked for past the longest.
      mock.timers.enable({ apis: ["setTimeout"] });
      try {
        follower.follow();
        for (let i = 0; i < 50 && !statuses.includes("refused"); i++) await new Promise((resolve) => setImmediate(resolve));
        assert.ok(statuses.includes("refused"), refusedAt + ": not said refused; asked " + JSON.stringify(asked));
        mock.timers.tick(60_000);
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      } finally {
        mock.timers.reset();
      }
      assert.deepEqual(statuses, ["refused"], refusedAt);
      assert.equal(asked.filter((p) => p === refusedAt).length, 1, refusedAt + " asked again: " + JSON.stringify(asked));
      assert.equal(whys.length, 1, refusedAt);
      assert.match(whys[0], /token ann may not read stream s/);
      follower.stop();
    }
  });

  test("a network gone for long is said once, not at every try (the status is a live region)", async () => {
    const said = [];
    follower.on("status", ({ kind, text }) => said.push(kind + ": " + text));
    globalThis.fetch = async (path) => {
      asked.push(path);
      throw new TypeError("Failed to fetch");
    };
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      follower.follow();
      for (let tries = 0; tries < 8; tries++) {
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
        mock.timers.tick(60_000);
      }
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      mock.timers.reset();
    }
    assert.ok(asked.length >= 6, "tried " + asked.length + " times");
    // Each try ends offline again; only the first says it tries.
    assert.deepEqual([...new Set(said)], ["offline: Offline, retrying", "connecting: Reconnecting…"]);
    assert.equal(said.filter((s) => s.startsWith("connecting")).length, 1, JSON.stringify(said));
  });

  test("the log is asked for before the list; a server with no database has none (null), as one with a log made before ids", async () => {
    const order = [];
    let hello = json({ protocol: 1, format: 1, log: null, head: 4 });
    serve((path) => {
      order.push(path);
      if (path === "/api/streams") return json({ streams: [{ stream: "s", seq: 4, version: 1 }] });
      if (path === "/api/items?stream=s") return json({ seq: 4, version: 1, items: [item("a", 0, 4)] });
      return eventStream([]);
    }, () => { order.push(HELLO); return hello; });
    follower.follow();
    await until("following", () => asked.some((p) => p.startsWith("/api/follow")));
    assert.deepEqual(order.slice(0, 3), [HELLO, "/api/streams", "/api/items?stream=s"]);
    assert.equal(model.log, null);
    follower.stop();
    hello = refused(404);
    model.open("s");
    assert.equal(model.log, undefined, "another stream opened: nothing read yet");
    follower.follow();
    await until("the list read again", () => order.filter((p) => p === HELLO).length === 2 && model.log !== undefined);
    assert.equal(model.log, null);
  });

  test("events that do not follow the list (another log) make it read again, then follow from the new head", async () => {
    let lists = 0;
    const OTHER_LOG = "0b80f034-76d9-42ff-9a9f-2dc87baf6f31";
    serve((path) => {
      if (path === "/api/streams") return json({ streams: [{ stream: "s", seq: 3, version: 1 }] });
      if (path === "/api/items?stream=s") {
        lists += 1;
        return lists === 1 ? json({ seq: 3, version: 1, items: [item("a", 0, 3)] })
          : json({ seq: 20, version: 2, items: [item("x", 0, 18), item("y", 1, 20)] });
      }
      if (path === "/api/follow?stream=s&from=4") return eventStream([insert("z", 0, 5, 7)]);  // version 5 after 1
      return eventStream([]);
    }, () => json({ protocol: 1, format: 1, log: lists === 0 ? LOG : OTHER_LOG, head: 0 }));
    follower.follow();
    await until("the list is read again and followed from its head", () => asked.includes("/api/follow?stream=s&from=21"));
    assert.equal(lists, 2);
    assert.deepEqual(model.items.map((i) => i.id), ["x", "y"]);
    assert.equal(model.log, OTHER_LOG, "the log read again with the list");
  });

  test("a server back with another log id is read again, even when its events would follow the list", async () => {
    const OTHER_LOG = "0b80f034-76d9-42ff-9a9f-2dc87baf6f31";
    let hellos = 0;
    serve((path) => {
      if (path === "/api/streams") return json({ streams: [{ stream: "s", seq: 3, version: 1 }] });
      if (path === "/api/items?stream=s") return json({ seq: 3, version: 1, items: [item("a", 0, 3)] });
      // The first stream ends (the server stopped); the one after a restart goes on with version 2, as any log's might.
      return eventStream(asked.filter((p) => p.startsWith("/api/follow")).length === 1 ? [] : [insert("b", 1, 2, 4)]);
    }, () => json({ protocol: 1, format: 1, log: ++hellos === 1 ? LOG : OTHER_LOG, head: 3 }));
    follower.follow();
    await until("the list is read again", () => asked.filter((p) => p === "/api/items?stream=s").length === 2);
    await until("on the other log", () => model.log === OTHER_LOG);
  });

  test("an event stream refused (a restart on a shorter log) makes it read the list again", async () => {
    serve((path, asked) => {
      if (path === "/api/streams") return json({ streams: [{ stream: "s", seq: 2, version: 1 }] });
      if (path === "/api/items?stream=s") return json({ seq: 2, version: 1, items: [item("a", 0, 2)] });
      const follows = asked.filter((p) => p.startsWith("/api/follow")).length;
      return follows === 1 ? refused(400) : eventStream([]);
    });
    follower.follow();
    await until("the list is read twice", () => asked.filter((p) => p === "/api/items?stream=s").length === 2);
    await until("and followed again", () => asked.filter((p) => p.startsWith("/api/follow")).length === 2);
  });

  test("a 401 asks for the token and stops following", async () => {
    let asks = 0;
    api.on("unauthorized", () => { asks += 1; });
    serve((path) => {
      if (path === "/api/streams") return json({ streams: [] });
      return refused(401);
    });
    follower.follow();
    await until("the token is asked for", () => asks === 1);
    await new Promise((resolve) => setTimeout(resolve, 700));  // longer than a retry's wait
    assert.deepEqual(asked, ["/api/streams", "/api/follow?stream=s&from=1"]);
  });
});

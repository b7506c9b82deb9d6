// Following the stream: its list read (when the page must), then its
// events from the server's event stream folded into the model, live. A
// dropped stream is resumed after the last event received, with backoff
// while the server is away; a stream that cannot resume there (a restart
// on a shorter log), a server back with another log id, or events that do
// not follow make the page read the list again. Free of the DOM: what it
// has to say it tells (`on`).

import { HTTPError } from "./api.js";
import { Events } from "./events.js";
import { PROTOCOL } from "./outbox.js";

/** The longest wait between two tries to reach the server. */
const MAX_BACKOFF_MS = 5000;
/** How long an event stream may say nothing before it is taken for dropped (the server's keep-alive: 15 s). */
const QUIET_MS = 40000;

class LostTrack extends Error {}

/**
 * The sync hello of `api`'s server: the log's id (null when it has no log
 * yet, or one made before logs had ids) and its horizon, the seq its kept
 * history begins at (0 for a log never trimmed).
 */
export async function readHello(api) {
  try {
    const hello = await api.request("/api/sync?protocol=" + PROTOCOL);
    return { log: hello.log || null, horizon: Number.isInteger(hello.horizon) ? hello.horizon : 0 };
  } catch (e) {
    if (e.status === 404) return { log: null, horizon: 0 };  // no database yet
    throw e;
  }
}

/**
 * Follows `model`'s stream from `api`'s server; `kept` is where the last
 * list read of a stream is kept, for a reload while the server is away
 * (`read(stream)`: `{ log, items, version, seq }` or undefined). Tells:
 * "status" (`{ kind, text }`: live, connecting, offline, or refused — the
 * token may not read the stream, which no retry changes; `why` then says
 * so in the server's words — in words),
 * "ready" (the page has read its stream, or knows it cannot for now),
 * "loaded" (the list was read again), "streams" (the log's stream names),
 * "problem" (something the user should know, in words).
 */
export class Follower extends Events {
  /** The AbortController of the live event stream. */
  #following = null;
  /** Ends the wait before the next try at once (`wake`). */
  #wakeUp = () => {};
  /** Ends the event stream open now, for the next try (`drop`). */
  #dropConnection = () => {};

  constructor({ model, api, kept }) {
    super(["status", "ready", "loaded", "streams", "problem"]);
    this.model = model;
    this.api = api;
    this.kept = kept;
  }

  /** The log's streams (`/api/streams`): none when there is no database yet. */
  async readStreams() {
    try {
      return (await this.api.request("/api/streams")).streams;
    } catch (e) {
      if (e.status === 404) return [];  // no database yet
      throw e;
    }
  }

  /** The server's log id (the sync hello): null when it has no log yet, or one made before logs had ids. */
  async readLog() {
    return (await readHello(this.api)).log;
  }

  /**
   * Reads the stream's list: the model from scratch, at the log's head, and
   * the log it is of (this page's changes are made on it). The
   * streams come first: a stream no event names yet has no list (404) and is
   * followed from the log's head, not from seq 1 (which would send every
   * other stream's events to this page).
   */
  async load() {
    const model = this.model;
    const stream = model.stream;
    let log, horizon, streams;
    try {
      // Asked before the list, so that a restart on another log in between
      // leaves the new list under the old id (what is made on it is held as
      // the old log's, never sent) and never the old list under the new id
      // (what is made on it sent to a log its user never saw).
      ({ log, horizon } = await readHello(this.api));
      streams = await this.readStreams();
    } catch (e) {
      // The server away, and nothing shown yet: the list last read, until it is back.
      if (e.status === 0 && model.version === 0 && model.items.length === 0) await this.#showKept(stream);
      throw e;
    }
    this.emit("streams", streams.map((s) => s.stream));
    let list = { seq: streams.reduce((head, s) => Math.max(head, s.seq), 0), version: 0, items: [] };
    if (streams.some((s) => s.stream === stream)) {
      list = await this.api.request("/api/items?stream=" + encodeURIComponent(stream));
    }
    if (stream !== model.stream) return;
    model.reset({ ...list, log, horizon });
  }

  async #showKept(stream) {
    let kept;
    try { kept = await this.kept.read(stream); } catch { return; }
    const model = this.model;
    if (!kept || stream !== model.stream || model.version !== 0) return;
    model.reset(kept);
    model.lostTrack();  // read again once the server is back
    this.emit("loaded");
  }

  /** Follows the model's stream: reads its list first when the model must be read again. */
  follow() {
    this.stop();
    this.#following = new AbortController();
    this.#connect(this.#following.signal);
  }

  /** Stops following. */
  stop() {
    if (this.#following) this.#following.abort();
    this.#following = null;
  }

  /** Tries to reach the server now, not after the backoff (the browser says it is online again). */
  wake() {
    this.#wakeUp();
  }

  /**
   * Ends the event stream open now, as if the network had dropped it (the
   * browser says it is offline, while a stream open before may still look
   * open): the page says Offline and tries again, backing off.
   */
  drop() {
    this.#dropConnection();
  }

  #sleep(ms, signal) {
    return new Promise((resolve) => {
      // Its listener on `signal` goes when the sleep ends, however it ends.
      const over = new AbortController();
      const end = () => { clearTimeout(timer); over.abort(); resolve(); };
      const timer = setTimeout(end, ms);
      this.#wakeUp = end;
      signal.addEventListener("abort", end, { once: true, signal: over.signal });
    });
  }

  async #connect(signal) {
    const model = this.model;
    let failures = 0;
    while (!signal.aborted) {
      // This try's stream, ended by the follower's end or by `drop`.
      const connection = new AbortController();
      const end = () => connection.abort();
      signal.addEventListener("abort", end, { once: true, signal: connection.signal });
      this.#dropConnection = end;
      try {
        // Back after a drop: the server may have restarted on another log,
        // whose events could happen to follow the list shown.
        if (failures > 0 && !model.stale && (await this.readLog()) !== model.log) model.lostTrack();
        if (model.stale) {
          await this.load();
          this.emit("loaded");
        }
        this.emit("ready");
        const path = "/api/follow?stream=" + encodeURIComponent(model.stream) + "&from=" + (model.head + 1);
        const response = await fetch(path, { headers: this.api.headers(), signal: connection.signal, cache: "no-store" });
        if (response.status === 401) {
          connection.abort();
          this.api.unauthorized();
          return;
        }
        if (response.status === 403) {
          let why = "the token may not read this stream";
          try { why = (await response.json()).error || why; } catch { /* keep the words above */ }
          throw new HTTPError(403, why);
        }
        if (!response.ok) {
          // Not resumable here (the log is shorter than the page's head, or gone): read it again.
          model.lostTrack();
          throw new LostTrack("the event stream was refused");
        }
        failures = 0;
        this.emit("status", { kind: "live", text: "Live" });
        await this.#readEvents(response, connection.signal);
        // The server ended the stream (it stopped): resume after the last event.
      } catch (e) {
        if (signal.aborted) return;
        this.emit("ready");
        if (e.status === 401) return;  // the page asks for the token
        if (e.status === 403) {
          // The token's rights do not change: trying again would only say Offline
          // over a list it may not read. Another stream or token follows anew.
          connection.abort();
          this.emit("status", { kind: "refused", text: "Not allowed", why: "This stream cannot be read with this "
            + "page's token (" + e.message + "). Pick another stream." });
          return;
        }
        if (e.status >= 400) this.emit("problem", "The stream could not be read: " + e.message + ".");
      }
      // Over: its listener on `signal` goes with it.
      connection.abort();
      if (signal.aborted) return;
      failures += 1;
      const wait = Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures);
      // The status is a live region: said once as the page goes offline,
      // and once as it first tries again — not at every try, where a screen
      // reader read out "Reconnecting…" and a countdown every few seconds
      // for as long as the network was gone. Live again is said as it comes.
      this.emit("status", { kind: "offline", text: "Offline, retrying" });
      await this.#sleep(wait, signal);
      if (!signal.aborted && failures === 1) this.emit("status", { kind: "connecting", text: "Reconnecting…" });
    }
  }

  /**
   * Server-Sent Events, read from a fetch (EventSource cannot send a token),
   * folded into the model. A stream that says nothing for `QUIET_MS` (the
   * server sends a keep-alive every 15 s) is taken for dropped: a network
   * gone without a reset leaves a connection that never ends by itself.
   */
  async #readEvents(response, signal) {
    const reader = response.body.getReader();
    const end = () => reader.cancel().catch(() => {});
    signal.addEventListener("abort", end, { once: true });
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const quiet = setTimeout(end, QUIET_MS);
      let read;
      try {
        read = await reader.read();
      } finally {
        clearTimeout(quiet);
      }
      const { value, done } = read;
      if (done) return;
      const { data, rest } = eventData(buffer + decoder.decode(value, { stream: true }));
      buffer = rest;
      for (const text of data) {
        if (!this.model.fold(JSON.parse(text))) {
          this.model.lostTrack();
          reader.cancel().catch(() => {});
          throw new LostTrack("the events do not follow the list");
        }
      }
    }
  }
}

/**
 * The `data:` of each whole event in `buffer` (events end with a blank
 * line; `retry:` and keep-alive comments carry none), and what is left of
 * an event still arriving.
 */
export function eventData(buffer) {
  const data = [];
  let end;
  while ((end = buffer.indexOf("\n\n")) >= 0) {
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    let text = null;
    for (const line of block.split("\n")) {
      if (line.startsWith("data: ")) text = line.slice(6);
    }
    if (text !== null) data.push(text);
  }
  return { data, rest: buffer };
}

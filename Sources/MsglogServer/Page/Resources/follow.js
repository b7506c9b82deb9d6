// Following the stream: its list read (when the page must), then its
// events from the server's event stream folded into the model, live. A
// dropped stream is resumed after the last event received, with backoff
// while the server is away; a stream that cannot resume there (a restart
// on a shorter log), a server back with another log id, or events that do
// not follow make the page read the list again. Free of the DOM: what it
// has to say goes to whoever asked (`reportTo`).

import { api, headers, unauthorized } from "./api.js";
import { model } from "./model.js";
import { PROTOCOL } from "./outbox.js";

/** The longest wait between two tries to reach the server. */
const MAX_BACKOFF_MS = 5000;

let report = {
  /** The connection's state: `kind` live, connecting or offline, and its words. */
  status(kind, text) {},
  /** The page has read its stream, or knows it cannot for now. */
  ready() {},
  /** The list was read again. */
  loaded() {},
  /** The log's streams, by name. */
  streams(names) {},
  /** Something the user should know. */
  problem(text) {},
};

/**
 * Where the last list read of a stream is kept, for a reload while the
 * server is away (idb.js in the page; nothing by default).
 */
let cache = {
  /** The list kept for `stream` (`{ log, items, version, seq }`), or undefined. */
  async read(stream) {},
};

/** Keeps lists with `store` (`read(stream)`). */
export function cacheWith(store) {
  cache = { ...cache, ...store };
}

/** Where following says what happens (any of `report`'s functions). */
export function reportTo(listeners) {
  report = { ...report, ...listeners };
}

/** The log's streams (`/api/streams`): none when there is no database yet. */
export async function readStreams() {
  try {
    return (await api("/api/streams")).streams;
  } catch (e) {
    if (e.status === 404) return [];  // no database yet
    throw e;
  }
}

/** The server's log id (the sync hello): null when it has no log yet, or one made before logs had ids. */
export async function readLog() {
  try {
    return (await api("/api/sync?protocol=" + PROTOCOL)).log || null;
  } catch (e) {
    if (e.status === 404) return null;  // no database yet
    throw e;
  }
}

/**
 * Reads the stream's list: the model from scratch, at the log's head, and
 * the log it is of (this page's changes are made on it). The
 * streams come first: a stream no event names yet has no list (404) and is
 * followed from the log's head, not from seq 1 (which would send every
 * other stream's events to this page).
 */
export async function load() {
  const stream = model.stream;
  let log, streams;
  try {
    // Asked before the list, so that a restart on another log in between
    // leaves the new list under the old id (what is made on it is held as
    // the old log's, never sent) and never the old list under the new id
    // (what is made on it sent to a log its user never saw).
    log = await readLog();
    streams = await readStreams();
  } catch (e) {
    // The server away, and nothing shown yet: the list last read, until it is back.
    if (e.status === 0 && model.version === 0 && model.items.length === 0) await showKept(stream);
    throw e;
  }
  report.streams(streams.map((s) => s.stream));
  let list = { seq: streams.reduce((head, s) => Math.max(head, s.seq), 0), version: 0, items: [] };
  if (streams.some((s) => s.stream === stream)) {
    list = await api("/api/items?stream=" + encodeURIComponent(stream));
  }
  if (stream !== model.stream) return;
  model.reset({ ...list, log });
}

async function showKept(stream) {
  let kept;
  try { kept = await cache.read(stream); } catch { return; }
  if (!kept || stream !== model.stream || model.version !== 0) return;
  model.reset(kept);
  model.lostTrack();  // read again once the server is back
  report.loaded();
}

/** The AbortController of the live event stream. */
let following = null;

/** Follows the model's stream: reads its list first when the model must be read again. */
export function follow() {
  stop();
  following = new AbortController();
  connect(following.signal);
}

/** Stops following. */
export function stop() {
  if (following) following.abort();
  following = null;
}

class LostTrack extends Error {}

/** Ends the wait before the next try at once (`wake`). */
let wakeUp = () => {};

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  wakeUp = () => { clearTimeout(timer); resolve(); };
  signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

/** Tries to reach the server now, not after the backoff (the browser says it is online again). */
export function wake() {
  wakeUp();
}

async function connect(signal) {
  let failures = 0;
  while (!signal.aborted) {
    try {
      // Back after a drop: the server may have restarted on another log,
      // whose events could happen to follow the list shown.
      if (failures > 0 && !model.stale && (await readLog()) !== model.log) model.lostTrack();
      if (model.stale) {
        await load();
        report.loaded();
      }
      report.ready();
      const path = "/api/follow?stream=" + encodeURIComponent(model.stream) + "&from=" + (model.head + 1);
      const response = await fetch(path, { headers: headers(), signal, cache: "no-store" });
      if (response.status === 401) {
        unauthorized();
        return;
      }
      if (!response.ok) {
        // Not resumable here (the log is shorter than the page's head, or gone): read it again.
        model.lostTrack();
        throw new LostTrack("the event stream was refused");
      }
      failures = 0;
      report.status("live", "Live");
      await readEvents(response, signal);
      // The server ended the stream (it stopped): resume after the last event.
    } catch (e) {
      if (signal.aborted) return;
      report.ready();
      if (e.status === 401) return;  // the page asks for the token
      if (e.status >= 400) report.problem("The stream could not be read: " + e.message + ".");
    }
    if (signal.aborted) return;
    failures += 1;
    const wait = Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures);
    report.status("offline", "Offline, retrying in " + Math.ceil(wait / 1000) + " s");
    await sleep(wait, signal);
    if (!signal.aborted) report.status("connecting", "Reconnecting…");
  }
}

/** Server-Sent Events, read from a fetch (EventSource cannot send a token), folded into the model. */
async function readEvents(response, signal) {
  const reader = response.body.getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const { data, rest } = eventData(buffer + decoder.decode(value, { stream: true }));
    buffer = rest;
    for (const text of data) {
      if (!model.fold(JSON.parse(text))) {
        model.lostTrack();
        reader.cancel().catch(() => {});
        throw new LostTrack("the events do not follow the list");
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

// This page as a replica (docs/SYNC.md): every change is kept in the
// outbox in IndexedDB first, shown at once as pending, and pushed with the
// sync protocol (`POST /api/sync/push`) under this browser's replica id and
// the change's number — whenever there is something to push and the
// server can be reached: at once, when the browser says it is online, when
// following goes live again, and on a timer while it cannot. One push at a
// time in this browser (a Web Lock shared by its tabs), so the numbers go
// out in order and a change sent twice is done once. Other tabs hear of
// every change of the outbox (a BroadcastChannel) and show it too.

import { api, HTTPError } from "./api.js";
import * as idb from "./idb.js";
import { model } from "./model.js";
import { landed, newSecret, numberEntries, PROTOCOL, pushBody, settleOutcomes, unanswered } from "./outbox.js";

/** The longest wait between two tries to push. */
const MAX_BACKOFF_MS = 5000;

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("msglog-outbox") : null;

/** The outbox as last read, in key order. */
let entries = [];
/** Per entry key: the functions waiting for its outcome (this tab's writes). */
const waiting = new Map();
let listeners = { refused() {}, changed() {}, problem() {} };
let pushing = false, again = false, failures = 0, timer = null;

/** Where sync says what happened: `refused(entry, error)`, `changed()` (redraw), `problem(text)`. */
export function reportTo(report) {
  listeners = { ...listeners, ...report };
}

/** A new id, as the server's ids (UUID v4). */
export function newID() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return hex.slice(0, 8) + "-" + hex.slice(8, 12) + "-" + hex.slice(12, 16) + "-" + hex.slice(16, 20) + "-" + hex.slice(20);
}

/** An entry as the model replays it. */
function pendingOf(entry) {
  const change = { ...entry.change, key: entry.key, time: entry.made };
  if (change.op === "edit") change.edited = entry.made;
  if (entry.seq !== undefined) change.untilSeq = entry.seq;
  return change;
}

/** Shows the outbox's changes of the model's stream. */
function show() {
  model.adopt(entries.filter((e) => e.change.stream === model.stream).map(pendingOf));
  listeners.changed();
}

/** Reads the outbox again (another tab changed it, or this page starts). */
export async function refresh() {
  try {
    entries = await idb.entries();
  } catch {
    return;
  }
  show();
}

/**
 * Keeps `change` (`{ op, stream, … }` as the protocol has it; `undoesKey`:
 * an earlier entry it undoes) in the outbox, shows it, and pushes it. The
 * entry, with `outcome`: a promise of the server's outcome (which may take
 * as long as the server is away).
 */
export async function record(change) {
  const proposed = model.propose({ ...pendingOf({ change, made: new Date().toISOString() }), key: undefined });
  listeners.changed();
  let entry;
  try {
    entry = await idb.add({ change, made: proposed.time, basis: model.head });
  } catch (e) {
    model.drop(proposed);
    listeners.changed();
    throw new HTTPError(0, "the browser would not keep the change (" + (e && e.message) + ")");
  }
  model.drop(proposed);
  entries.push(entry);
  show();
  channel?.postMessage("changed");
  const outcome = new Promise((resolve) => waiting.set(entry.key, resolve));
  push();
  return { ...entry, outcome };
}

/** Pushes what waits, now (or once the push under way ends). */
export function push() {
  clearTimeout(timer);
  timer = null;
  if (pushing) { again = true; return; }
  pushing = true;
  (async () => {
    try {
      do {
        again = false;
        if (navigator.locks) await navigator.locks.request("msglog-push", drain);
        else await drain();
      } while (again);
      failures = 0;
    } catch (e) {
      failures += 1;
      if (e.status === 401) return;  // the page asks for the token; it pushes once it has one
      // Not the network: say so (the changes stay kept, and are tried again).
      if (e.status >= 400 && e.status !== 404) listeners.problem("Your changes could not be sent: " + e.message + ".");
      timer = setTimeout(push, Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures));
    } finally {
      pushing = false;
    }
  })();
}

/** The server's log id (the hello) and this browser's replica on it: its id, secret and next change number. */
async function replicaOn() {
  let hello;
  try {
    hello = await api("/api/sync?protocol=" + PROTOCOL);
  } catch (e) {
    if (e.status !== 404) throw e;
    return null;  // no database yet
  }
  const log = hello.log;
  if (!log) return null;  // a log made before logs had an id: it gets one with its next write
  const name = "replica:" + log;
  let replica = (await idb.meta(name)) || { name, replica: newID(), next: 1 };
  if (!replica.secret) {
    // Kept before it is ever sent: the server keeps its hash at the first
    // push and refuses any push for this id without it (a replica id kept
    // from before secrets claims its id with its first push).
    replica = { ...replica, secret: newSecret() };
    await idb.update({ meta: [replica] });
  }
  return { log, replica };
}

/** Pushes every unanswered entry, in batches, under the lock (so read afresh: another tab may have pushed). */
async function drain() {
  entries = await idb.entries();
  if (!entries.some(unanswered)) return show();
  const on = await replicaOn();
  if (!on) {
    await firstWrite();
    return drain();
  }
  const { log, replica } = on;
  const id = replica.replica;
  const { changed, next } = numberEntries(entries, { log, replica: id, next: replica.next });
  if (changed.length > 0) {
    await idb.update({ put: changed, meta: [{ ...replica, next }] });
    entries = await idb.entries();
  }
  for (;;) {
    const body = pushBody(entries, { log, replica: id, secret: replica.secret });
    if (!body) break;
    const answer = await api("/api/sync/push", body);
    const { applied, done, refused, results } = settleOutcomes(entries, { log, replica: id }, answer.outcomes);
    if (results.length === 0) throw new HTTPError(500, "the push's answer names none of its changes");
    await idb.update({ put: applied, drop: done });
    entries = await idb.entries();
    show();
    channel?.postMessage("changed");
    for (const { entry, error } of refused) listeners.refused(entry, error);
    for (const { entry, outcome } of results) {
      waiting.get(entry.key)?.(outcome);
      waiting.delete(entry.key);
    }
  }
  await prune();
}

/**
 * A server with no log yet (or one without an id) has nothing to sync
 * with: its first change can only be a message (nothing else has an item
 * to act on), sent as an append by id — the write that makes the log and
 * its id; sent again after a lost answer, the id is there already (409),
 * and it is done.
 */
async function firstWrite() {
  const entry = entries.find(unanswered);
  const change = entry.change;
  if (change.op !== "append" && change.op !== "insert") {
    throw new HTTPError(409, "the server has no log to sync with yet");
  }
  let outcome;
  try {
    const body = { stream: change.stream, id: change.id, text: change.text };
    if (change.sender !== undefined) body.sender = change.sender;
    const answer = await api("/api/append", body);
    outcome = { change: entry.number, result: "applied", seq: answer.seq };
    await idb.update({ put: [{ ...entry, seq: answer.seq }] });
  } catch (e) {
    if (e.status !== 409) throw e;
    outcome = { change: entry.number, result: "unchanged" };
    await idb.update({ drop: [entry.key] });
  }
  entries = await idb.entries();
  show();
  channel?.postMessage("changed");
  waiting.get(entry.key)?.(outcome);
  waiting.delete(entry.key);
}

/** Drops the answered entries the list shown has now (their events are in it, and in the list kept for a reload). */
export async function prune() {
  const keys = landed(entries, { stream: model.stream, head: model.head });
  if (keys.length === 0) return;
  await idb.update({ drop: keys });
  entries = entries.filter((e) => !keys.includes(e.key));
  channel?.postMessage("changed");
}

if (channel) channel.onmessage = () => refresh();
window.addEventListener("online", push);

// This page as a replica (docs/SYNC.md): every change is kept in the
// outbox in IndexedDB first, shown at once as pending, and pushed with the
// sync protocol (`POST /api/sync/push`) under this browser's replica id and
// the change's number — whenever there is something to push and the
// server can be reached: at once, when the browser says it is online, when
// following goes live again, and on a timer while it cannot. One push at a
// time in this browser (a Web Lock shared by its tabs), so the numbers go
// out in order and a change sent twice is done once. Other tabs hear of
// every change of the outbox (a BroadcastChannel) and show it too.
// A change goes only to the log it was made on, and only with the token it
// was made with: the others are held, and the page says so (`held`).

import { api, HTTPError, owner } from "./api.js";
import * as idb from "./idb.js";
import { model } from "./model.js";
import {
  byLog, landed, madeFor, newSecret, numberEntries, PROTOCOL, pushBody, settleOutcomes, shownOn, unanswered,
} from "./outbox.js";

/** The longest wait between two tries to push. */
const MAX_BACKOFF_MS = 5000;

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("msglog-outbox") : null;

/** The outbox as last read, in key order: every token's (`mine()`: this page's). */
let entries = [];
/** The server's log as its last hello said: undefined before one, null when it has none. */
let serverLog;
/** Per entry key: the functions waiting for its outcome (this tab's writes). */
const waiting = new Map();
let listeners = { refused() {}, changed() {}, problem() {}, held() {} };
let pushing = false, again = false, failures = 0, timer = null;

/**
 * Where sync says what happened: `refused(entry, error)`, `changed()`
 * (redraw), `problem(text)`, `held({ otherLog, otherOwner })` (what is
 * kept and not sent: this token's changes made on another log than the
 * server's, and the unsent changes another token left).
 */
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

/** The outbox's entries of this page's token. */
function mine() {
  const me = owner();
  return entries.filter((e) => e.owner === me);
}

/** Shows the outbox's changes of the model's stream and log, and says what is held. */
function show() {
  const own = mine();
  model.adopt(shownOn(own, { stream: model.stream, log: model.log }).map(pendingOf));
  const log = serverLog !== undefined ? serverLog : model.log;
  listeners.held({
    otherLog: log === undefined ? [] : byLog(own, log).held,
    otherOwner: entries.filter((e) => unanswered(e) && e.owner !== owner()),
  });
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
    // Made on the log shown; with none read yet, on the log last seen here (or on none known).
    const log = model.log !== undefined ? model.log : (await idb.lastLog()) ?? null;
    entry = await idb.add({ change, made: proposed.time, basis: model.head, owner: owner(), log });
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

/**
 * The server's log id (the hello; null when it has none, or one made
 * before logs had an id, which gets one with its next write), and this
 * browser's replica on it for `me`'s token: its id, secret and next change
 * number. One replica per token, so that two tokens' changes never share
 * one (a replica belongs to the token that first pushed for it).
 */
async function replicaOn(me) {
  let hello;
  try {
    hello = await api("/api/sync?protocol=" + PROTOCOL);
  } catch (e) {
    if (e.status !== 404) throw e;
    hello = { log: null };  // no database yet
  }
  serverLog = hello.log || null;
  if (!serverLog) return { log: null };
  const name = "replica:" + serverLog + (me ? ":" + me : "");
  let replica = (await idb.meta(name)) || { name, replica: newID(), next: 1 };
  if (!replica.secret) {
    // Kept before it is ever sent: the server keeps its hash at the first
    // push and refuses any push for this id without it (a replica id kept
    // from before secrets claims its id with its first push).
    replica = { ...replica, secret: newSecret() };
    await idb.update({ meta: [replica] });
  }
  return { log: serverLog, replica };
}

/**
 * Pushes every unanswered entry of this page's token made on the server's
 * log, in batches, under the lock (so read afresh: another tab may have
 * pushed). The ones made on another log stay, unsent, and are said.
 */
async function drain() {
  entries = await idb.entries();
  const me = owner();
  if (!mine().some(unanswered)) return show();
  const { log, replica } = await replicaOn(me);
  const { gone } = byLog(mine(), log);
  if (gone.length > 0) {
    await idb.update({ drop: gone });
    entries = await idb.entries();
    channel?.postMessage("changed");
  }
  if (!replica) {
    if (!mine().some((e) => unanswered(e) && madeFor(e, null))) return show();
    await firstWrite();
    return drain();
  }
  const id = replica.replica;
  const { changed, next } = numberEntries(mine(), { log, replica: id, next: replica.next });
  if (changed.length > 0) {
    await idb.update({ put: changed, meta: [{ ...replica, next }] });
    entries = await idb.entries();
  }
  for (;;) {
    const body = pushBody(mine(), { log, replica: id, secret: replica.secret });
    if (!body) break;
    const answer = await api("/api/sync/push", body);
    const { applied, done, refused, results } = settleOutcomes(mine(), { log, replica: id }, answer.outcomes);
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
  show();
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
  const entry = mine().find((e) => unanswered(e) && madeFor(e, null));
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
  const keys = landed(mine(), { stream: model.stream, log: model.log, head: model.head });
  if (keys.length === 0) return;
  await idb.update({ drop: keys });
  entries = entries.filter((e) => !keys.includes(e.key));
  channel?.postMessage("changed");
}

/**
 * This page uses its token now (it started, or another token was typed):
 * the lists other tokens read go, and the outbox is read again, showing
 * this token's changes only.
 */
export async function useOwner() {
  try { await idb.keepOnly(owner()); } catch { /* the browser's storage is off: nothing kept */ }
  await refresh();
}

/**
 * The server refused this page's token: what the page kept with it goes —
 * the lists it read and its changes, sent or not (they could never be
 * sent as that token's, and must not outlive it). The changes removed
 * that were not sent.
 */
export async function forgetOwner() {
  let removed = [];
  try { removed = await idb.forget(owner()); } catch { return []; }
  for (const entry of removed) waiting.delete(entry.key);
  await refresh();
  channel?.postMessage("changed");
  return removed;
}

/** Discards `held` (entries `held` reported): they are never sent. */
export async function discard(held) {
  await idb.update({ drop: held.map((e) => e.key) });
  for (const entry of held) waiting.delete(entry.key);
  await refresh();
  channel?.postMessage("changed");
}

if (channel) channel.onmessage = () => refresh();
window.addEventListener("online", push);

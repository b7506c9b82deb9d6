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

import { HTTPError } from "./api.js";
import { Events } from "./events.js";
import {
  byLog, landed, madeFor, naming, newSecret, numberEntries, PROTOCOL, pushBody, readAnswer, settleOutcomes, shownOn,
  unanswered,
} from "./outbox.js";

/** The longest wait between two tries to push. */
const MAX_BACKOFF_MS = 5000;
/** How many pushes in a row failed by the browser's storage before the page says so. */
const STORAGE_FAILURES_SAID = 3;

/** A push the server refused whole (403), with the keys of the entries it carried. */
class ForbiddenPush extends Error {
  constructor(message, entries) {
    super(message);
    this.keys = new Set(entries.map((e) => e.key));
  }
}

/** A failure of this browser's own storage (IndexedDB, its keys), told from the server's answers. */
class StorageFailure extends Error {
  constructor(cause) {
    super(cause?.message ?? String(cause));
    this.cause = cause;
  }
}

/** `idb` whose every call that fails throws a StorageFailure, for the push (the calls are idb.js's, all async). */
function asStorage(idb) {
  return new Proxy(idb, {
    get(target, name) {
      const value = target[name];
      if (typeof value !== "function") return value;
      return async (...args) => {
        try {
          return await value.apply(target, args);
        } catch (e) {
          throw new StorageFailure(e);
        }
      };
    },
  });
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

/**
 * The outbox of `model`'s page, kept with `idb` (idb.js), pushed to `api`'s
 * server; `channel` (a BroadcastChannel, or null) tells the other tabs of
 * every change of it (each calls `refresh`). Tells "changed" (draw again),
 * "refused" (`{ entry, reason, error }`: the code of the refusal and the server's words), "problem" (words), "held" (`{ otherLog,
 * otherOwner }`: what is kept and not sent — this token's changes made on
 * another log than the server's, and the unsent changes another token left).
 */
export class Sync extends Events {
  /** The outbox as last read, in key order: every token's (`#mine()`: this page's). */
  #entries = [];
  /** The server's log as its last hello said: undefined before one, null when it has none. */
  #serverLog;
  /** Per entry key: the functions waiting for its outcome (this tab's writes). */
  #waiting = new Map();
  #pushing = false;
  #again = false;
  #failures = 0;
  /** Pushes in a row that the browser's storage failed (said at the third). */
  #storageFailures = 0;
  /**
   * The push the server refused whole (403: the token may not write any
   * stream, or not with this replica's secret): `{ owner, why, keys }`, the
   * token's, the server's words, the entries it carried — held, and said,
   * until a push goes through or the token changes; null when none.
   */
  #forbidden = null;
  #timer = null;

  constructor({ model, api, idb, channel }) {
    super(["changed", "refused", "problem", "held"]);
    this.model = model;
    this.api = api;
    this.idb = idb;
    /** The same, for the push: its failures are the storage's. */
    this.storage = asStorage(idb);
    this.channel = channel;
  }

  /** Tells the other tabs that the outbox changed. */
  #tellTabs() {
    this.channel?.postMessage("changed");
  }

  /** The outbox's entries of this page's token. */
  #mine() {
    const me = this.api.owner();
    return this.#entries.filter((e) => e.owner === me);
  }

  /** Shows the outbox's changes of the model's stream and log, and says what is held. */
  #show() {
    const model = this.model;
    const own = this.#mine();
    const changed = model.adopt(shownOn(own, { stream: model.stream, log: model.log }).map(pendingOf));
    const log = this.#serverLog !== undefined ? this.#serverLog : model.log;
    const me = this.api.owner();
    this.emit("held", {
      otherLog: log === undefined ? [] : byLog(own, log).held,
      otherOwner: this.#entries.filter((e) => unanswered(e) && e.owner !== me),
      forbidden: this.#forbidden?.owner !== me ? [] : own.filter((e) => unanswered(e) && this.#forbidden.keys.has(e.key)),
      why: this.#forbidden?.why ?? null,
    });
    // The list is drawn again only when it may differ: with nothing on its way, reading the outbox draws nothing.
    if (changed) this.emit("changed");
  }

  /** A push went through, or the token changed: nothing is held for want of rights any more. */
  #allowed() {
    if (this.#forbidden === null) return;
    this.#forbidden = null;
    this.#show();
  }

  /** Reads the outbox again (another tab changed it, or this page starts). */
  async refresh() {
    try {
      this.#entries = await this.idb.entries();
    } catch {
      return;
    }
    this.#show();
  }

  /**
   * Keeps `change` (`{ op, stream, … }` as the protocol has it; `undoesKey`:
   * an earlier entry it undoes) in the outbox, shows it, and pushes it. The
   * entry, with `outcome`: a promise of the server's outcome (which may take
   * as long as the server is away).
   */
  async record(change) {
    const model = this.model;
    const proposed = model.propose({ ...pendingOf({ change, made: new Date().toISOString() }), key: undefined });
    this.emit("changed");
    let entry;
    try {
      // Made on the log shown; with none read yet, on the log last seen here (or on none known).
      const log = model.log !== undefined ? model.log : (await this.idb.lastLog()) ?? null;
      entry = await this.idb.add({ change, made: proposed.time, basis: model.head, owner: this.api.owner(), log });
    } catch (e) {
      model.drop(proposed);
      this.emit("changed");
      throw new HTTPError(0, "the browser would not keep the change (" + (e && e.message) + ")");
    }
    model.drop(proposed);
    this.#entries.push(entry);
    this.#show();
    this.#tellTabs();
    const outcome = new Promise((resolve) => this.#waiting.set(entry.key, resolve));
    this.push();
    return { ...entry, outcome };
  }

  /** Pushes what waits, now (or once the push under way ends). */
  push() {
    clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#pushing) { this.#again = true; return; }
    this.#pushing = true;
    (async () => {
      try {
        do {
          this.#again = false;
          if (navigator.locks) await navigator.locks.request("msglog-push", () => this.#drain());
          else await this.#drain();
        } while (this.#again);
        this.#failures = 0;
        this.#storageFailures = 0;
        this.#allowed();
      } catch (e) {
        this.#failures += 1;
        if (e.status === 401) return;  // the page asks for the token; it pushes once it has one
        if (e instanceof ForbiddenPush) {
          // The token may not write: the changes pushed are held, shown as
          // the server has them once discarded (tried again all the same:
          // its rights may change).
          this.#forbidden = { owner: this.api.owner(), why: e.message, keys: e.keys };
          this.#show();
        } else if (e.status >= 400 && e.status !== 404) {
          // Not the network: say so (the changes stay kept, and are tried again).
          this.emit("problem", "Your changes could not be sent: " + e.message + ".");
        }
        // This browser's storage failing (the changes kept cannot be read
        // to send): said once it has failed a few pushes running, whatever
        // the network did between, as it goes on trying.
        if (e instanceof StorageFailure && ++this.#storageFailures === STORAGE_FAILURES_SAID) {
          this.emit("problem", "Your changes could not be sent: this browser's storage failed (" + e.message
            + "). They stay kept, and are tried again.");
        }
        this.#timer = setTimeout(() => this.push(), Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.#failures));
      } finally {
        this.#pushing = false;
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
  async #replicaOn(me) {
    let hello;
    try {
      hello = await this.api.request("/api/sync?protocol=" + PROTOCOL);
    } catch (e) {
      if (e.status !== 404) throw e;
      hello = { log: null };  // no database yet
    }
    const log = hello.log || null;
    this.#serverLog = log;
    if (!log) return { log: null };
    const name = "replica:" + log + (me ? ":" + me : "");
    let replica = (await this.storage.meta(name)) || { name, replica: newID(), next: 1 };
    if (!replica.secret) {
      // Kept before it is ever sent: the server keeps its hash at the first
      // push and refuses any push for this id without it (a replica id kept
      // from before secrets claims its id with its first push).
      replica = { ...replica, secret: newSecret() };
      await this.storage.update({ meta: [replica] });
    }
    return { log, replica };
  }

  /** The outcome of the entry with `key`, to the write waiting for it in this tab. */
  #answer(key, outcome) {
    this.#waiting.get(key)?.(outcome);
    this.#waiting.delete(key);
  }

  /**
   * Pushes every unanswered entry of this page's token made on the server's
   * log, in batches, under the lock (so read afresh: another tab may have
   * pushed). The ones made on another log stay, unsent, and are said.
   */
  async #drain() {
    const idb = this.storage;
    this.#entries = await idb.entries();
    const me = this.api.owner();
    if (!this.#mine().some(unanswered)) return this.#show();
    const { log, replica } = await this.#replicaOn(me);
    const { gone } = byLog(this.#mine(), log);
    if (gone.length > 0) {
      await idb.update({ drop: gone });
      this.#entries = await idb.entries();
      this.#tellTabs();
    }
    if (!replica) {
      if (!this.#mine().some((e) => unanswered(e) && madeFor(e, null))) return this.#show();
      await this.#firstWrite();
      return this.#drain();
    }
    const id = replica.replica;
    const { changed, next } = numberEntries(this.#mine(), { log, replica: id, next: replica.next });
    if (changed.length > 0) {
      await idb.update({ put: changed, meta: [{ ...replica, next }] });
      this.#entries = await idb.entries();
    }
    for (;;) {
      const body = pushBody(this.#mine(), { log, replica: id, secret: replica.secret });
      if (!body) break;
      let sent;
      try {
        sent = await this.api.request("/api/sync/push", body);
      } catch (e) {
        if (e.status !== 403) throw e;
        throw new ForbiddenPush(e.message, this.#mine().filter((x) => unanswered(x) && madeFor(x, log)));
      }
      const answer = readAnswer(sent);
      const { applied, done, refused, results } = settleOutcomes(this.#mine(), { log, replica: id }, answer.outcomes);
      if (results.length === 0) throw new HTTPError(500, "the push's answer names none of its changes");
      await idb.update({ put: applied, drop: done });
      this.#entries = await idb.entries();
      this.#show();
      this.#tellTabs();
      for (const { entry, reason, error } of refused) this.emit("refused", { entry, reason, error });
      for (const { entry, outcome } of results) this.#answer(entry.key, outcome);
    }
    this.#show();
    await this.prune();
  }

  /**
   * A server with no log yet (or one without an id) has nothing to sync
   * with: its first change can only be a message (nothing else has an item
   * to act on), sent as an append by id — the write that makes the log and
   * its id; sent again after a lost answer, the id is there already (409),
   * and it is done.
   */
  async #firstWrite() {
    const idb = this.storage;
    const entry = this.#mine().find((e) => unanswered(e) && madeFor(e, null));
    const change = entry.change;
    if (change.op !== "append" && change.op !== "insert") {
      throw new HTTPError(409, "the server has no log to sync with yet");
    }
    let outcome;
    try {
      const body = { stream: change.stream, id: change.id, text: change.text };
      if (change.sender !== undefined) body.sender = change.sender;
      const answer = await this.api.request("/api/append", body);
      outcome = { change: entry.number, result: "applied", seq: answer.seq };
      await idb.update({ put: [{ ...entry, seq: answer.seq }] });
    } catch (e) {
      if (e.status === 403) {
        // This change's stream is not the token's to write: refused, as a
        // push would refuse it, and the others go on.
        outcome = { change: entry.number, result: "refused", error: e.message };
        await idb.update({ drop: [entry.key] });
        this.emit("refused", { entry, reason: null, error: e.message });
      } else {
        if (e.status !== 409) throw e;
        outcome = { change: entry.number, result: "unchanged" };
        await idb.update({ drop: [entry.key] });
      }
    }
    this.#entries = await idb.entries();
    this.#show();
    this.#tellTabs();
    this.#answer(entry.key, outcome);
  }

  /** Drops the answered entries the list shown has now (their events are in it, and in the list kept for a reload). */
  async prune() {
    const model = this.model;
    const keys = landed(this.#mine(), { stream: model.stream, log: model.log, head: model.head });
    if (keys.length === 0) return;
    await this.idb.update({ drop: keys });
    this.#entries = this.#entries.filter((e) => !keys.includes(e.key));
    this.#tellTabs();
  }

  /**
   * This page uses its token now (it started, or another token was typed):
   * the lists other tokens read go, and the outbox is read again, showing
   * this token's changes only.
   */
  async useOwner() {
    this.#allowed();
    try { await this.idb.keepOnly(this.api.owner()); } catch { /* the browser's storage is off: nothing kept */ }
    await this.refresh();
  }

  /**
   * The server refused this page's token: what the page kept with it goes —
   * the lists it read and its changes, sent or not (they could never be
   * sent as that token's, and must not outlive it). The changes removed
   * that were not sent.
   */
  async forgetOwner() {
    this.#allowed();
    let removed = [];
    try { removed = await this.idb.forget(this.api.owner()); } catch { return []; }
    for (const entry of removed) this.#waiting.delete(entry.key);
    await this.refresh();
    this.#tellTabs();
    return removed;
  }

  /**
   * The items `ids` were erased for everyone: every entry of the outbox
   * that names one goes (sent or not; any token's: an erased text is kept
   * for nobody), with the undos of them — under the push's lock, so that a
   * push under way cannot put back an entry it read before. How many went.
   */
  async forget(ids) {
    const drop = async () => {
      const keys = naming(await this.idb.entries(), ids);
      if (keys.length > 0) await this.idb.update({ drop: keys });
      return keys;
    };
    let keys;
    try {
      keys = navigator.locks ? await navigator.locks.request("msglog-push", drop) : await drop();
    } catch {
      return 0;  // the browser's storage is off: nothing was kept
    }
    for (const key of keys) this.#waiting.delete(key);
    if (keys.length === 0) return 0;
    await this.refresh();
    this.#tellTabs();
    return keys.length;
  }

  /**
   * Discards `held` (entries `held` told of): they are never sent — under
   * the push's lock, so that a push under way cannot put back an entry it
   * read before.
   */
  async discard(held) {
    const drop = () => this.idb.update({ drop: held.map((e) => e.key) });
    if (navigator.locks) await navigator.locks.request("msglog-push", drop); else await drop();
    for (const entry of held) this.#waiting.delete(entry.key);
    await this.refresh();
    this.#tellTabs();
  }
}

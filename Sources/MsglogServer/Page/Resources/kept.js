// The list shown, kept in the browser (idb.js) for a reload while the
// server is away: under the token it was read with and the log it was
// read from, a moment after it changes, when the page has nothing else to
// do (a list of 10,000 items is a copy on the page's thread), and read
// back by following (follow.js) when the server cannot be reached.

import { Events } from "./events.js";

/** How long after a change the list is kept: a burst of events is one write. */
const KEEP_AFTER_MS = 300;
/** At the latest this long after that, idle or not. */
const KEEP_WITHIN_MS = 2000;

/** Tells "kept" once a list is kept (the outbox's changes whose events it holds may go). */
export class KeptList extends Events {
  #waiting = false;
  /**
   * The list was read afresh since it was last kept: the copy it replaces
   * may hold items since erased (the page cannot tell them from removed
   * ones), whose text the browser's files must then forget (`idb.forgetTexts`).
   */
  #fresh = false;
  /** A list was kept without items the copy it replaced had, and forgetting their texts failed: asked again. */
  #forgetOwed = false;

  constructor({ model, api, idb }) {
    super(["kept"]);
    this.model = model;
    this.api = api;
    this.idb = idb;
  }

  /** The list of `stream` this page's token last read from the log last seen here (`{ log, items, version, seq }`), or undefined. */
  read(stream) {
    return this.idb.list(this.api.owner(), stream);
  }

  /** The list was read afresh (`/api/items`): it is kept soon, and what the copy it replaces held and it lacks is forgotten. */
  readAfresh() {
    this.#fresh = true;
    this.keepSoon();
  }

  /** Keeps the list shown (the server's layer) a moment from now, once the page is idle. */
  keepSoon() {
    if (this.#waiting) return;
    this.#waiting = true;
    setTimeout(() => {
      const keep = () => {
        this.#waiting = false;
        this.#keep();
      };
      if (typeof requestIdleCallback === "function") requestIdleCallback(keep, { timeout: KEEP_WITHIN_MS });
      else keep();
    }, KEEP_AFTER_MS);
  }

  /** The record of the list to keep, or null when there is none to keep. */
  #record() {
    const { stream, items, version, head, log, stale } = this.model;
    if (stale && version === 0) return null;
    if (log === undefined) return null;
    return { owner: this.api.owner(), log, stream, items, version, seq: head };
  }

  async #keep() {
    const record = this.#record();
    if (!record) return;
    const counting = this.#fresh;
    this.#fresh = false;
    // Told once the write is done or found done already: the outbox's
    // answered changes may go then, and not before (a reload offline
    // shows them from there until a list holding them is kept).
    try {
      const { gone } = await this.idb.keepList(record, { counting });
      if (gone > 0) this.#forgetOwed = true;
    } catch {
      // Storage off, or failing for now: counted again at the next keep.
      this.#fresh ||= counting;
      return;
    }
    this.emit("kept");
    // Owed until done: the next keep finds this list kept already and counts nothing gone.
    if (!this.#forgetOwed) return;
    try {
      await this.idb.forgetTexts([]);
      this.#forgetOwed = false;
    } catch { /* asked again at the next keep */ }
  }
}

// What the page does when it learns that items were erased for everyone
// (SPEC "Forgetting on purpose": its own "Delete for everyone" answered,
// an erase event followed from anyone, a change of its own refused because
// its item was erased): each leaves the screen as a removed one does, and
// its text goes from everything the page keeps — the model (and the text
// kept for a restore), the outbox's entries naming it, every list kept
// for a reload — and from the browser's files themselves: what IndexedDB
// still holds of it there is left sealed under a key that is deleted
// (idb.js `forgetTexts`, seal.js).
// Free of the DOM: what is on screen is told ("forgot").

import { Events } from "./events.js";

/** Tells "forgot" (the ids) once they are off the model: the screen, an edit under way and the past forget them too. */
export class Forgetting extends Events {
  /** Ids learned erased, not yet forgotten by the browser's storage. */
  #queued = new Set();
  #running = false;
  /** Ids whose forgetting the storage failed, how often in a row, and the timer asking again. */
  #failed = new Set();
  #failures = 0;
  #retry = null;

  /** `retryMs`: the first wait before the storage is asked again after a failure (doubling, a few times). */
  constructor({ model, sync, idb, retryMs = 1000 }) {
    super(["forgot"]);
    this.model = model;
    this.sync = sync;
    this.idb = idb;
    this.retryMs = retryMs;
  }

  /**
   * The items `ids` were erased: off the screen now; their text off the
   * browser's storage and files as soon as the writes under way allow. An
   * erase by sender brings many events at once: they are forgotten
   * together, one new key for the lot.
   */
  learn(ids) {
    this.model.forget(ids);
    this.emit("forgot", ids);
    for (const id of ids) this.#queued.add(id);
    return this.#run();
  }

  async #run() {
    if (this.#running) return;
    this.#running = true;
    try {
      // What failed before goes with what is new (one new key for the lot).
      for (const id of this.#failed) this.#queued.add(id);
      this.#failed.clear();
      while (this.#queued.size > 0) {
        const ids = [...this.#queued];
        this.#queued.clear();
        await this.sync.forget(ids);
        try {
          await this.idb.forgetTexts(ids);
          this.#failures = 0;
        } catch {
          // Off, or failing for now: what it keeps of these texts is still
          // readable under the old key, so it is asked again a few times,
          // and with the next erase learned.
          for (const id of ids) this.#failed.add(id);
        }
      }
    } finally {
      this.#running = false;
    }
    if (this.#failed.size > 0) this.#retryLater();
  }

  /**
   * Asks the storage again after 1, 2, 4, 8 and 16 times `retryMs` (one
   * timer, however many runs failed); after that, only with the next erase
   * learned.
   */
  #retryLater() {
    clearTimeout(this.#retry);
    this.#retry = null;
    if (this.#failures >= 5) return;
    const wait = this.retryMs * 2 ** this.#failures;
    this.#failures += 1;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#run();
    }, wait);
  }
}

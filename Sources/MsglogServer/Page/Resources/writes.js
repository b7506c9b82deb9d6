// Every write of this page goes through here: a change kept in the outbox
// first (sync.js: IndexedDB, shown at once as pending, pushed by the sync
// protocol with this browser's replica id and change number, so that it is
// done once however often it is sent), and told ("undoable") so that
// Ctrl+Z undoes this page's own last change — by its event once the server
// has it, by its change number while it is on its way.

import { Events } from "./events.js";

/** Tells "undoable" (`{ key, seq }`) for each change Ctrl+Z may take back. */
export class Writes extends Events {
  /** `whyNot()`: why the stream shown may not be written now, or null (app.js). */
  constructor({ model, sync, whyNot }) {
    super(["undoable"]);
    this.model = model;
    this.sync = sync;
    this.whyNot = whyNot;
  }

  /** Whether changes to the stream shown are offered (cards moved and deleted, messages edited, undone). */
  get allowed() {
    return this.whyNot() === null;
  }

  /**
   * Keeps `change` (`{ op, … }` as the sync protocol has it, on the model's
   * stream) and sends it. `undoable`: Ctrl+Z may take it back (an undo's own
   * change is put on the redo list by undo.js). The entry, with `outcome`:
   * a promise of the server's outcome, and its `ref` for undo (`{ key, seq }`,
   * the seq once the server has it). Throws when the browser would not
   * keep it, or the token may only read the stream (nothing shown, nothing
   * sent: a change the server would refuse whole is not made).
   */
  async write(change, { undoable = true } = {}) {
    const refusal = this.whyNot();
    if (refusal !== null) throw new Error(refusal);
    const entry = await this.sync.record({ stream: this.model.stream, ...change });
    const ref = { key: entry.key, seq: undefined };
    entry.outcome.then((outcome) => {
      if (outcome.result === "applied") ref.seq = outcome.seq;
    });
    if (undoable) this.emit("undoable", ref);
    return { entry, ref };
  }
}

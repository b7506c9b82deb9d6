// Undo and redo: this page's own changes, by seq (or change, on its way). Ctrl+Z (Cmd+Z) or the
// Undo button undoes the last, Shift+Ctrl+Z or Redo redoes. The server
// appends the event that undoes a change (a remove for an append, a
// restore after its predecessor for a delete, the text before for an
// edit, a move back for a move), which comes back through following like
// anyone's.

import { $ } from "./dom.js";

export class Undo {
  /** This page's changes, each `{ key, seq }`: its outbox entry, and its event once the server has it. */
  #changes = { undo: [], redo: [] };

  constructor({ writes, shown, say }) {
    this.writes = writes;
    this.shown = shown;
    this.say = say;
    $("undo").addEventListener("click", () => this.#undoLast());
    $("redo").addEventListener("click", () => this.#redoLast());
    window.addEventListener("keydown", (e) => this.#onKey(e));
  }

  /** `ref` was made by this page: the one Ctrl+Z undoes next. */
  record(ref) {
    this.#changes.undo.push(ref);
    this.#changes.redo = [];
    this.update();
  }

  /** Another stream: nothing of this page's to undo there. */
  clear() {
    this.#changes = { undo: [], redo: [] };
    this.update();
  }

  #forget(ref) {
    for (const list of [this.#changes.undo, this.#changes.redo]) {
      const at = list.indexOf(ref);
      if (at >= 0) list.splice(at, 1);
    }
  }

  /**
   * Undoes change `ref`, by its event when the server has it, else by its
   * change on its way; its undo goes on the redo list. `redoing`: `ref` is
   * an undo, and undoing it redoes. Kept in the outbox like every change.
   */
  async undoChange(ref, { redoing = false } = {}) {
    if (this.shown.isPast()) return;
    this.#forget(ref);
    this.update();
    const what = redoing ? "redo" : "undo";
    const change = ref.seq !== undefined ? { op: "undo", seq: ref.seq } : { op: "undo", undoesKey: ref.key };
    try {
      const { entry, ref: undone } = await this.writes.write(change, { undoable: false });
      (redoing ? this.#changes.undo : this.#changes.redo).push(undone);
      this.say.note("");
      entry.outcome.then((outcome) => {
        if (outcome.result === "applied") {
          this.say.announce(redoing ? "Redone." : "Undone.");
          return;
        }
        this.#forget(undone);
        this.update();
        if (outcome.result === "unchanged") this.say.announce("Nothing to " + what + ": it is as it was already.");
      });
    } catch (e) {
      this.say.note("Could not " + what + " that: " + e.message + ".");
    }
    this.update();
  }

  #undoLast() {
    const ref = this.#changes.undo.at(-1);
    if (ref === undefined) this.say.announce("Nothing of yours to undo.");
    else this.undoChange(ref);
  }

  #redoLast() {
    const ref = this.#changes.redo.at(-1);
    if (ref === undefined) this.say.announce("Nothing to redo.");
    else this.undoChange(ref, { redoing: true });
  }

  /** The buttons as the page is now: nothing to undo in the past, or where the token may not write. */
  update() {
    const off = this.shown.isPast() || !this.writes.allowed;
    $("undo").disabled = off || this.#changes.undo.length === 0;
    $("redo").disabled = off || this.#changes.redo.length === 0;
  }

  /** Ctrl+Z (Cmd+Z on a Mac) undoes, Shift+Ctrl+Z redoes — except in a text field, which keeps its own. */
  #onKey(event) {
    if (event.key.toLowerCase() !== "z" || !(event.ctrlKey || event.metaKey) || event.altKey) return;
    const target = event.target;
    if (target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
    if (this.shown.isMoving()) return;
    event.preventDefault();
    if (event.shiftKey) this.#redoLast(); else this.#undoLast();
  }
}

// What the page says: the note at the top (with a button when there is
// something to do about it), the connection's status, and what a screen
// reader hears.

import { $ } from "./dom.js";

export class Say {
  /** What the note's button does, when it has one (the "Undo" of a deleted card). */
  #noteAction = null;

  constructor() {
    $("note-close").addEventListener("click", () => this.note(""));
    $("note-action").addEventListener("click", () => {
      const run = this.#noteAction;
      this.note("");
      if (run) run();
    });
  }

  /** Shows `text` in the note (none: hides it); `action`: { label, run } for its button. */
  note(text, action = null) {
    $("note-text").textContent = text || "";
    $("note").hidden = !text;
    this.#noteAction = action && action.run;
    $("note-action").hidden = !action;
    if (action) $("note-action").textContent = action.label;
  }

  /** Says `text` to a screen reader (the aria-live region). */
  announce(text) {
    $("announce").textContent = text;
  }

  /** The connection's state: `kind` live, connecting or offline, in words. */
  setStatus(kind, text) {
    const status = $("status");
    if (status.dataset.state === kind && status.textContent === text) return;
    status.dataset.state = kind;
    status.textContent = text;
  }
}

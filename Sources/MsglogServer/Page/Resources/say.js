// What the page says: the note at the top (with a button when there is
// something to do about it), the connection's status, and what a screen
// reader hears.

import { $ } from "./dom.js";

/** What the note's button does, when it has one (the "Undo" of a deleted card). */
let noteAction = null;

/** Shows `text` in the note (none: hides it); `action`: { label, run } for its button. */
export function note(text, action = null) {
  $("note-text").textContent = text || "";
  $("note").hidden = !text;
  noteAction = action && action.run;
  $("note-action").hidden = !action;
  if (action) $("note-action").textContent = action.label;
}

/** Says `text` to a screen reader (the aria-live region). */
export function announce(text) {
  $("announce").textContent = text;
}

/** The connection's state: `kind` live, connecting or offline, in words. */
export function setStatus(kind, text) {
  const status = $("status");
  if (status.dataset.state === kind && status.textContent === text) return;
  status.dataset.state = kind;
  status.textContent = text;
}

$("note-close").addEventListener("click", () => note(""));
$("note-action").addEventListener("click", () => {
  const run = noteAction;
  note("");
  if (run) run();
});

// Undo and redo: this page's own changes, by seq. Ctrl+Z (Cmd+Z) or the
// Undo button undoes the last, Shift+Ctrl+Z or Redo redoes. The server
// appends the event that undoes a change (a remove for an append, a
// restore after its predecessor for a delete, the text before for an
// edit, a move back for a move), which comes back through following like
// anyone's.

import { api } from "./api.js";
import { $ } from "./dom.js";
import { model } from "./model.js";
import { announce, note } from "./say.js";
import { onRender } from "./screen.js";
import { isMoving, isPast } from "./shown.js";

const changes = { undo: [], redo: [], busy: false };

/** Change `seq` was made by this page: the one Ctrl+Z undoes next. */
export function record(seq) {
  changes.undo.push(seq);
  changes.redo = [];
  updateUndo();
}

/**
 * Undoes change `seq`; its undo goes on the redo list. `redoing`: `seq`
 * is an undo, and undoing it redoes.
 */
export async function undoChange(seq, { redoing = false } = {}) {
  if (changes.busy || isPast()) return;
  for (const list of [changes.undo, changes.redo]) {
    const at = list.lastIndexOf(seq);
    if (at >= 0) list.splice(at, 1);
  }
  changes.busy = true;
  updateUndo();
  const what = redoing ? "redo" : "undo";
  try {
    const answer = await api("/api/undo", { stream: model.stream, seq });
    if (answer && answer.seq) {
      (redoing ? changes.undo : changes.redo).push(answer.seq);
      announce(redoing ? "Redone." : "Undone.");
    } else {
      announce("Nothing to " + what + ": it is as it was already.");
    }
    note("");
  } catch (e) {
    note("Could not " + what + " that: " + e.message + ".");
  } finally {
    changes.busy = false;
    updateUndo();
  }
}

function undoLast() {
  const seq = changes.undo[changes.undo.length - 1];
  if (seq === undefined) announce("Nothing of yours to undo.");
  else undoChange(seq);
}

function redoLast() {
  const seq = changes.redo[changes.redo.length - 1];
  if (seq === undefined) announce("Nothing to redo.");
  else undoChange(seq, { redoing: true });
}

function updateUndo() {
  const past = isPast();
  $("undo").disabled = changes.busy || past || changes.undo.length === 0;
  $("redo").disabled = changes.busy || past || changes.redo.length === 0;
}

/** Ctrl+Z (Cmd+Z on a Mac) undoes, Shift+Ctrl+Z redoes — except in a text field, which keeps its own. */
function onUndoKey(event) {
  if (event.key.toLowerCase() !== "z" || !(event.ctrlKey || event.metaKey) || event.altKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
  if (isMoving()) return;
  event.preventDefault();
  if (event.shiftKey) redoLast(); else undoLast();
}

// Another stream: nothing of this page's to undo there.
model.subscribe((change) => {
  if (change.kind !== "open") return;
  changes.undo = [];
  changes.redo = [];
  updateUndo();
});
onRender(updateUndo);
$("undo").addEventListener("click", undoLast);
$("redo").addEventListener("click", redoLast);
window.addEventListener("keydown", onUndoKey);

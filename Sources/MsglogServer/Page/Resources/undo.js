// Undo and redo: this page's own changes, by seq (or change, on its way). Ctrl+Z (Cmd+Z) or the
// Undo button undoes the last, Shift+Ctrl+Z or Redo redoes. The server
// appends the event that undoes a change (a remove for an append, a
// restore after its predecessor for a delete, the text before for an
// edit, a move back for a move), which comes back through following like
// anyone's.

import { $ } from "./dom.js";
import { model } from "./model.js";
import { announce, note } from "./say.js";
import { onRender } from "./screen.js";
import { isMoving, isPast } from "./shown.js";
import { write } from "./writes.js";

/** This page's changes, each `{ key, seq }`: its outbox entry, and its event once the server has it. */
const changes = { undo: [], redo: [] };

/** `ref` was made by this page: the one Ctrl+Z undoes next. */
export function record(ref) {
  changes.undo.push(ref);
  changes.redo = [];
  updateUndo();
}

function forget(ref) {
  for (const list of [changes.undo, changes.redo]) {
    const at = list.indexOf(ref);
    if (at >= 0) list.splice(at, 1);
  }
}

/**
 * Undoes change `ref`, by its event when the server has it, else by its
 * change on its way; its undo goes on the redo list. `redoing`: `ref` is
 * an undo, and undoing it redoes. Kept in the outbox like every change.
 */
export async function undoChange(ref, { redoing = false } = {}) {
  if (isPast()) return;
  forget(ref);
  updateUndo();
  const what = redoing ? "redo" : "undo";
  const change = ref.seq !== undefined ? { op: "undo", seq: ref.seq } : { op: "undo", undoesKey: ref.key };
  try {
    const { entry, ref: undone } = await write(change, { undoable: false });
    (redoing ? changes.undo : changes.redo).push(undone);
    note("");
    entry.outcome.then((outcome) => {
      if (outcome.result === "applied") {
        announce(redoing ? "Redone." : "Undone.");
        return;
      }
      forget(undone);
      updateUndo();
      if (outcome.result === "unchanged") announce("Nothing to " + what + ": it is as it was already.");
    });
  } catch (e) {
    note("Could not " + what + " that: " + e.message + ".");
  }
  updateUndo();
}

function undoLast() {
  const ref = changes.undo[changes.undo.length - 1];
  if (ref === undefined) announce("Nothing of yours to undo.");
  else undoChange(ref);
}

function redoLast() {
  const ref = changes.redo[changes.redo.length - 1];
  if (ref === undefined) announce("Nothing to redo.");
  else undoChange(ref, { redoing: true });
}

function updateUndo() {
  const past = isPast();
  $("undo").disabled = past || changes.undo.length === 0;
  $("redo").disabled = past || changes.redo.length === 0;
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

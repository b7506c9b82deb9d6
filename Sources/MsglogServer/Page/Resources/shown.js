// What the page shows instead of the stream as it is now: the past (the
// history slider), or a card being moved (from the keyboard, or under a
// pointer). Free of the DOM.

import { model } from "./model.js";

/** The history slider's position: null for now, else { version, seq, time, items }. */
let past = null;
/** A card being moved: { items, pin, hold }; `pin`: its id, kept drawn; `hold`: draw nothing until it is dropped. */
let moving = null;
const cancels = [];

/** The list to show: the past, a card being moved, or the model (with this page's changes on their way). */
export function shownItems() {
  if (past) return past.items;
  if (moving) return moving.items;
  return model.view();
}

export function showPast(at) {
  past = at;
}

/** The past shown, or null. */
export function shownPast() {
  return past;
}

export function isPast() {
  return past !== null;
}

/** Shows `items` while a card is moved (null: it was dropped or put back). */
export function showMoving(state) {
  moving = state;
}

export function isMoving() {
  return moving !== null;
}

/** The id of the card being moved, kept drawn, or null. */
export function pinned() {
  return moving ? moving.pin ?? null : null;
}

/** Whether a card is under a pointer: what arrives meanwhile is drawn once it is dropped. */
export function isHolding() {
  return moving !== null && moving.hold === true;
}

/** Calls `cancel()` whenever a move must be put back (another view, stream or moment is shown). */
export function onCancelMoves(cancel) {
  cancels.push(cancel);
}

/** Puts back a card being moved. */
export function cancelMoves() {
  for (const cancel of cancels) cancel();
}

// What the page shows instead of the stream as it is now: the past (the
// history slider), or a card being moved (from the keyboard, or under a
// pointer). Free of the DOM.

import { Events } from "./events.js";

/** What is shown of `model`; tells "cancel" when a card being moved must be put back. */
export class Shown extends Events {
  /** The history slider's position: null for now, else { version, seq, time, items }. */
  #past = null;
  /** A card being moved: { items, pin, hold }; `pin`: its id, kept drawn; `hold`: draw nothing until it is dropped. */
  #moving = null;

  constructor(model) {
    super(["cancel"]);
    this.model = model;
  }

  /** The list to show: the past, a card being moved, or the model (with this page's changes on their way). */
  items() {
    if (this.#past) return this.#past.items;
    if (this.#moving) return this.#moving.items;
    return this.model.view();
  }

  showPast(at) {
    this.#past = at;
  }

  /** The past shown, or null. */
  past() {
    return this.#past;
  }

  isPast() {
    return this.#past !== null;
  }

  /** Shows `items` while a card is moved (null: it was dropped or put back). */
  showMoving(state) {
    this.#moving = state;
  }

  isMoving() {
    return this.#moving !== null;
  }

  /** The id of the card being moved, kept drawn, or null. */
  pinned() {
    return this.#moving ? this.#moving.pin ?? null : null;
  }

  /** Whether a card is under a pointer: what arrives meanwhile is drawn once it is dropped. */
  isHolding() {
    return this.#moving !== null && this.#moving.hold === true;
  }

  /** Puts back a card being moved (another view, stream or moment is shown). */
  cancelMoves() {
    this.emit("cancel");
  }
}

// Moving a card from the keyboard (dnd-kit's keyboard sensor): Space or
// Enter picks the focused card up, ArrowUp/ArrowDown move it, Space or
// Enter drops it (one move event), Escape (or Tab) puts it back; each step
// said to a screen reader. Without a card picked up the arrows, Home and
// End go from card to card.

import { $ } from "./dom.js";
import { moved } from "./model.js";
import { quoted } from "./words.js";

export class BoardKeyboard {
  /** A card picked up: { id, text, from, to, base }. */
  #lift = null;

  constructor({ board, shown, screen, say }) {
    this.board = board;
    this.shown = shown;
    this.screen = screen;
    this.say = say;
    const list = $("board");
    list.addEventListener("keydown", (e) => this.#onKey(e));
    list.addEventListener("focusout", (e) => {
      const lift = this.#lift;
      if (lift && e.target.dataset && e.target.dataset.id === lift.id && !list.contains(e.relatedTarget)) this.#cancelLift();
    });
  }

  /** Puts a lifted card back, saying nothing (another view, stream or moment is shown). */
  cancel() {
    if (this.#lift) this.#letGo();
  }

  #onKey(event) {
    const card = event.target;
    if (!card.classList || !card.classList.contains("card")) return;  // keys on the delete button are its own
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const index = Number(card.dataset.index);
    const count = this.shown.items().length;
    let handled = true;
    if (this.#lift) {
      switch (event.key) {
        case "ArrowUp": this.#step(-1); break;
        case "ArrowDown": this.#step(1); break;
        case " ": case "Enter": this.#drop(); break;
        case "Escape": this.#cancelLift(); break;
        case "Tab": this.#cancelLift(); handled = false; break;
        default: handled = false;
      }
    } else {
      switch (event.key) {
        case " ": case "Enter": this.#pickUp(card); break;
        case "ArrowUp": this.board.focusCard(index - 1); break;
        case "ArrowDown": this.board.focusCard(index + 1); break;
        case "Home": this.board.focusCard(0); break;
        case "End": this.board.focusCard(count - 1); break;
        default: handled = false;
      }
    }
    if (handled) event.preventDefault();
  }

  /** Shows the board with the lifted card where it is now. */
  #showLift() {
    const lift = this.#lift;
    this.shown.showMoving({ items: moved(lift.base, lift.from, lift.to), pin: lift.id });
  }

  #pickUp(card) {
    const shown = this.shown;
    if (shown.isPast()) {
      this.say.announce("This is the board as it was. Go back to now to move cards.");
      return;
    }
    if (!this.board.writes.allowed) {
      this.say.announce("The token signed in may only read this board: its cards cannot be moved.");
      return;
    }
    if (shown.isMoving()) return;
    const base = shown.items().slice();
    const from = base.findIndex((item) => item.id === card.dataset.id);
    if (from < 0) return;
    this.#lift = { id: card.dataset.id, text: base[from].text, from, to: from, base };
    this.#showLift();
    card.classList.add("lifted");
    this.say.announce("Picked up card " + quoted(base[from].text) + ". It is at position " + (from + 1) + " of " + base.length
      + ". Use the up and down arrow keys to move it, Space or Enter to drop it, Escape to cancel.", base[from].id);
  }

  #step(delta) {
    const lift = this.#lift;
    const count = lift.base.length;
    const to = lift.to + delta;
    if (to < 0 || to >= count) {
      this.say.announce("Card " + quoted(lift.text) + " is already at the " + (to < 0 ? "top" : "bottom") + ", position " + (lift.to + 1) + " of " + count + ".", lift.id);
      return;
    }
    lift.to = to;
    this.#showLift();
    this.screen.render();
    this.board.list.reveal(to);
    this.say.announce("Card " + quoted(lift.text) + " moved to position " + (to + 1) + " of " + count + ".", lift.id);
  }

  /** Lets go of the lifted card (it is no longer shown moving); the lift it was. */
  #letGo() {
    const lift = this.#lift;
    this.#lift = null;
    this.shown.showMoving(null);
    this.board.list.elements.get(lift.id)?.classList.remove("lifted");
    return lift;
  }

  #drop() {
    const lift = this.#letGo();
    const count = lift.base.length;
    if (lift.to === lift.from) {
      this.say.announce("Card " + quoted(lift.text) + " dropped at its original position, " + (lift.from + 1) + " of " + count + ".", lift.id);
      this.screen.render();
      return;
    }
    this.say.announce("Card " + quoted(lift.text) + " dropped at position " + (lift.to + 1) + " of " + count + ".", lift.id);
    this.board.moveCard(lift.base, lift.from, lift.to);
  }

  #cancelLift() {
    const lift = this.#letGo();
    this.screen.render();
    this.board.list.reveal(lift.from);
    this.say.announce("Moving cancelled. Card " + quoted(lift.text) + " is back at position " + (lift.from + 1) + " of " + lift.base.length + ".", lift.id);
  }
}

// Moving a card from the keyboard (dnd-kit's keyboard sensor): Space or
// Enter picks the focused card up, ArrowUp/ArrowDown move it, Space or
// Enter drops it (one move event), Escape (or Tab) puts it back; each step
// said to a screen reader. Without a card picked up the arrows, Home and
// End go from card to card.

import { cards, focusCard, moveCard } from "./board.js";
import { $ } from "./dom.js";
import { model, moved } from "./model.js";
import { announce } from "./say.js";
import { render } from "./screen.js";
import { isMoving, isPast, onCancelMoves, showMoving, shownItems } from "./shown.js";
import { quoted } from "./words.js";

/** A card picked up: { id, text, from, to, version, base }. */
let lift = null;

function onBoardKey(event) {
  const card = event.target;
  if (!card.classList || !card.classList.contains("card")) return;  // keys on the delete button are its own
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const index = Number(card.dataset.index);
  const count = shownItems().length;
  let handled = true;
  if (lift) {
    switch (event.key) {
      case "ArrowUp": stepLift(-1); break;
      case "ArrowDown": stepLift(1); break;
      case " ": case "Enter": dropLift(); break;
      case "Escape": cancelLift(); break;
      case "Tab": cancelLift(); handled = false; break;
      default: handled = false;
    }
  } else {
    switch (event.key) {
      case " ": case "Enter": pickUp(card); break;
      case "ArrowUp": focusCard(index - 1); break;
      case "ArrowDown": focusCard(index + 1); break;
      case "Home": focusCard(0); break;
      case "End": focusCard(count - 1); break;
      default: handled = false;
    }
  }
  if (handled) event.preventDefault();
}

/** Shows the board with the lifted card where it is now. */
function showLift() {
  showMoving({ items: moved(lift.base, lift.from, lift.to), pin: lift.id });
}

function pickUp(card) {
  if (isPast()) {
    announce("This is the board as it was. Go back to now to move cards.");
    return;
  }
  if (isMoving()) return;
  const base = shownItems().slice();
  const from = base.findIndex((item) => item.id === card.dataset.id);
  if (from < 0) return;
  lift = { id: card.dataset.id, text: base[from].text, from, to: from, version: model.version, base };
  showLift();
  card.classList.add("lifted");
  announce("Picked up card " + quoted(lift.text) + ". It is at position " + (from + 1) + " of " + base.length
    + ". Use the up and down arrow keys to move it, Space or Enter to drop it, Escape to cancel.");
}

function stepLift(delta) {
  const count = lift.base.length;
  const to = lift.to + delta;
  if (to < 0 || to >= count) {
    announce("Card " + quoted(lift.text) + " is already at the " + (to < 0 ? "top" : "bottom") + ", position " + (lift.to + 1) + " of " + count + ".");
    return;
  }
  lift.to = to;
  showLift();
  render();
  cards.reveal(to);
  announce("Card " + quoted(lift.text) + " moved to position " + (to + 1) + " of " + count + ".");
}

/** Lets go of the lifted card (it is no longer shown moving); the lift it was. */
function letGo() {
  const l = lift;
  lift = null;
  showMoving(null);
  cards.elements.get(l.id)?.classList.remove("lifted");
  return l;
}

function dropLift() {
  const l = letGo();
  const count = l.base.length;
  if (l.to === l.from) {
    announce("Card " + quoted(l.text) + " dropped at its original position, " + (l.from + 1) + " of " + count + ".");
    render();
    return;
  }
  announce("Card " + quoted(l.text) + " dropped at position " + (l.to + 1) + " of " + count + ".");
  moveCard(l.base, l.from, l.to, l.version);
}

function cancelLift() {
  const l = letGo();
  render();
  cards.reveal(l.from);
  announce("Moving cancelled. Card " + quoted(l.text) + " is back at position " + (l.from + 1) + " of " + l.base.length + ".");
}

onCancelMoves(() => { if (lift) letGo(); });
const board = $("board");
board.addEventListener("keydown", onBoardKey);
board.addEventListener("focusout", (e) => {
  if (lift && e.target.dataset && e.target.dataset.id === lift.id && !board.contains(e.relatedTarget)) cancelLift();
});

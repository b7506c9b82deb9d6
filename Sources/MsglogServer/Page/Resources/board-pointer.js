// Moving a card with a pointer: mouse, pen or touch. From the handle a
// drag starts at once; on the card a mouse starts one by moving, a touch
// by a long press (a swipe scrolls). While a card is dragged, the cards
// between make room, the list scrolls near its edges, and nothing that
// arrives is drawn under it; dropped, it is one move event.

import { moveCard } from "./board.js";
import { $ } from "./dom.js";
import { nextFrame } from "./frame.js";
import { model } from "./model.js";
import { render } from "./screen.js";
import { isMoving, isPast, onCancelMoves, showMoving, shownItems } from "./shown.js";

/** A touch held this long without moving picks a card up (as iOS does). */
const LONG_PRESS_MS = 450;

/** A pointer down on a card that may become a drag. */
let press = null;
/** A card being dragged: { id, from, to, version, base, card, slots, size, startY, startScroll, lastY, edge }. */
let drag = null;

function onPointerDown(event) {
  if (event.button !== 0 || !event.isPrimary || isPast() || isMoving()) return;
  const card = event.target.closest(".card");
  if (!card || event.target.closest("button")) return;
  cancelPress();
  press = { card, id: card.dataset.id, x: event.clientX, y: event.clientY, type: event.pointerType, timer: 0 };
  if (event.target.closest(".handle")) {
    // From the handle a drag starts at once, on any pointer (it does not scroll).
    event.preventDefault();
    startDrag(event.clientY);
  } else if (event.pointerType === "touch") {
    // On the card, scrolling wins: only a touch held still picks it up.
    card.classList.add("pressing");
    press.timer = setTimeout(() => {
      if (press) startDrag(press.y);
    }, LONG_PRESS_MS);
  }
}

function onPointerMove(event) {
  if (drag) {
    moveDrag(event.clientY);
    return;
  }
  if (!press) return;
  const distance = Math.hypot(event.clientX - press.x, event.clientY - press.y);
  if (press.type === "touch") {
    if (distance > 10) cancelPress();  // a swipe: the page scrolls
  } else if (distance > 4) {
    startDrag(press.y);
    moveDrag(event.clientY);
  }
}

function onPointerUp(event) {
  if (drag) {
    moveDrag(event.clientY);
    endDrag(true);
  }
  cancelPress();
}

function onPointerCancel() {
  if (drag) endDrag(false);
  cancelPress();
}

function cancelPress() {
  if (!press) return;
  clearTimeout(press.timer);
  press.card.classList.remove("pressing");
  press = null;
}

function startDrag(startY) {
  const card = press.card;
  clearTimeout(press.timer);
  card.classList.remove("pressing");
  const base = shownItems().slice();
  const from = base.findIndex((item) => item.id === press.id);
  if (from < 0 || !card.isConnected) { cancelPress(); return; }
  const scroller = $("main");
  const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
  // Where each drawn card sits (in the scrolled content), to find the slot under the dragged one.
  const slots = [...$("board").children].map((el) => {
    const rect = el.getBoundingClientRect();
    return { el, index: Number(el.dataset.index), top: rect.top - top, height: rect.height };
  });
  drag = {
    id: press.id, from, to: from, version: model.version, base, card, slots, size: card.offsetHeight,
    startY, startScroll: scroller.scrollTop, lastY: startY, edge: 0,
  };
  showMoving({ items: base, hold: true });
  card.classList.add("dragging");
  $("board").classList.add("sorting");
  if (press.type === "touch" && navigator.vibrate) navigator.vibrate(10);
}

function moveDrag(clientY) {
  const scroller = $("main");
  drag.lastY = clientY;
  const dy = clientY - drag.startY + scroller.scrollTop - drag.startScroll;
  drag.card.style.transform = "translateY(" + dy + "px)";
  const self = drag.slots.find((slot) => slot.el === drag.card);
  const centre = self.top + self.height / 2 + dy;
  let to = drag.to, best = Infinity;
  for (const slot of drag.slots) {
    const distance = Math.abs(slot.top + slot.height / 2 - centre);
    if (distance < best) { best = distance; to = slot.index; }
  }
  if (to !== drag.to) {
    drag.to = to;
    // The cards between make room, as they will be once it is dropped.
    for (const slot of drag.slots) {
      if (slot.el === drag.card) continue;
      let shift = 0;
      if (drag.from < to && slot.index > drag.from && slot.index <= to) shift = -drag.size;
      if (drag.from > to && slot.index >= to && slot.index < drag.from) shift = drag.size;
      slot.el.style.transform = shift ? "translateY(" + shift + "px)" : "";
    }
  }
  // Near the top or bottom edge, the list scrolls under the card.
  const rect = scroller.getBoundingClientRect();
  const edge = clientY < rect.top + 40 ? -1 : clientY > rect.bottom - 40 ? 1 : 0;
  if (edge && !drag.edge) nextFrame(autoScroll);
  drag.edge = edge;
}

function autoScroll() {
  if (!drag || !drag.edge) return;
  const scroller = $("main");
  const before = scroller.scrollTop;
  scroller.scrollTop += drag.edge * 10;
  if (scroller.scrollTop !== before) moveDrag(drag.lastY);
  nextFrame(autoScroll);
}

function endDrag(drop) {
  const d = drag;
  drag = null;
  showMoving(null);
  for (const slot of d.slots) slot.el.style.transform = "";
  d.card.classList.remove("dragging");
  $("board").classList.remove("sorting");
  if (drop && d.to !== d.from) moveCard(d.base, d.from, d.to, d.version);
  else render();
}

onCancelMoves(() => {
  cancelPress();
  if (drag) endDrag(false);
});
const board = $("board");
board.addEventListener("pointerdown", onPointerDown);
window.addEventListener("pointermove", onPointerMove);
window.addEventListener("pointerup", onPointerUp);
window.addEventListener("pointercancel", onPointerCancel);
// Once a card is picked up by a long press, the finger moves it instead of the page.
board.addEventListener("touchmove", (e) => { if (drag) e.preventDefault(); }, { passive: false });
board.addEventListener("contextmenu", (e) => { if (press || drag) e.preventDefault(); });
window.addEventListener("keydown", (e) => { if (drag && e.key === "Escape") endDrag(false); });

// Moving a card with a pointer: mouse, pen or touch. From the handle a
// drag starts at once; on the card a mouse starts one by moving, a touch
// by a long press (a swipe scrolls). While a card is dragged, the cards
// between make room, the list scrolls near its edges (as far as cards are
// drawn: a long list draws the few about the screen, and a card is
// dropped only where one shows), and nothing that arrives is drawn under
// it; dropped, it is one move event.

import { $ } from "./dom.js";
import { nextFrame } from "./frame.js";

/** A touch held this long without moving picks a card up (as iOS does). */
const LONG_PRESS_MS = 450;

export class BoardPointer {
  /** A pointer down on a card that may become a drag. */
  #press = null;
  /** A card being dragged: { id, from, to, base, card, slots, reach, size, startY, startScroll, lastY, edge }. */
  #drag = null;
  /** One function, so that asking again before the frame runs it once (frame.js). */
  #autoScrollInFrame = () => this.#autoScroll();
  /** A wheel or touchpad scrolling the list during a drag goes no further than the auto-scroll does. */
  #clampScroll = () => {
    const drag = this.#drag;
    if (!drag) return;
    const scroller = $("main");
    const clamped = this.#clamped(scroller.scrollTop, drag, scroller);
    if (clamped !== scroller.scrollTop) scroller.scrollTop = clamped;
  };

  constructor({ board, shown, screen }) {
    this.board = board;
    this.shown = shown;
    this.screen = screen;
    const list = $("board");
    list.addEventListener("pointerdown", (e) => this.#onPointerDown(e));
    window.addEventListener("pointermove", (e) => this.#onPointerMove(e));
    window.addEventListener("pointerup", (e) => this.#onPointerUp(e));
    window.addEventListener("pointercancel", () => this.cancel());
    // Once a card is picked up by a long press, the finger moves it instead of the page.
    list.addEventListener("touchmove", (e) => { if (this.#drag) e.preventDefault(); }, { passive: false });
    list.addEventListener("contextmenu", (e) => { if (this.#press || this.#drag) e.preventDefault(); });
    window.addEventListener("keydown", (e) => { if (this.#drag && e.key === "Escape") this.#endDrag(false); });
  }

  /** Puts a card under the pointer back (the pointer was cancelled; another view, stream or moment is shown). */
  cancel() {
    if (this.#drag) this.#endDrag(false);
    this.#cancelPress();
  }

  #onPointerDown(event) {
    if (event.button !== 0 || !event.isPrimary || this.shown.isPast() || this.shown.isMoving()) return;
    if (!this.board.writes.allowed) return;  // a token that may only read moves nothing
    const card = event.target.closest(".card");
    if (!card || event.target.closest("button")) return;
    this.#cancelPress();
    const press = { card, id: card.dataset.id, x: event.clientX, y: event.clientY, type: event.pointerType, timer: 0 };
    this.#press = press;
    if (event.target.closest(".handle")) {
      // From the handle a drag starts at once, on any pointer (it does not scroll).
      event.preventDefault();
      this.#startDrag(event.clientY);
    } else if (event.pointerType === "touch") {
      // On the card, scrolling wins: only a touch held still picks it up.
      card.classList.add("pressing");
      press.timer = setTimeout(() => {
        if (this.#press) this.#startDrag(this.#press.y);
      }, LONG_PRESS_MS);
    }
  }

  #onPointerMove(event) {
    if (this.#drag) {
      this.#moveDrag(event.clientY);
      return;
    }
    const press = this.#press;
    if (!press) return;
    const distance = Math.hypot(event.clientX - press.x, event.clientY - press.y);
    if (press.type === "touch") {
      if (distance > 10) this.#cancelPress();  // a swipe: the page scrolls
    } else if (distance > 4) {
      this.#startDrag(press.y);
      this.#moveDrag(event.clientY);
    }
  }

  #onPointerUp(event) {
    if (this.#drag) {
      this.#moveDrag(event.clientY);
      this.#endDrag(true);
    }
    this.#cancelPress();
  }

  #cancelPress() {
    const press = this.#press;
    if (!press) return;
    clearTimeout(press.timer);
    press.card.classList.remove("pressing");
    this.#press = null;
  }

  #startDrag(startY) {
    const press = this.#press;
    const card = press.card;
    clearTimeout(press.timer);
    card.classList.remove("pressing");
    const base = this.shown.items().slice();
    const from = base.findIndex((item) => item.id === press.id);
    if (from < 0 || !card.isConnected) { this.#cancelPress(); return; }
    const scroller = $("main");
    const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
    // Where each drawn card sits (in the scrolled content), to find the slot under the dragged one.
    const slots = [...$("board").children].map((el) => {
      const rect = el.getBoundingClientRect();
      return { el, index: Number(el.dataset.index), top: rect.top - top, height: rect.height };
    });
    // The drawn cards' extent: the list held still while the card moves,
    // no card past it is drawn (listview.js), and a drop there would land
    // after the last one drawn, where the user does not see it.
    const reach = {
      top: Math.min(...slots.map((slot) => slot.top)),
      bottom: Math.max(...slots.map((slot) => slot.top + slot.height)),
    };
    this.#drag = {
      id: press.id, from, to: from, base, card, slots, reach, size: card.offsetHeight,
      startY, startScroll: scroller.scrollTop, lastY: startY, edge: 0,
    };
    this.shown.showMoving({ items: base, hold: true });
    scroller.addEventListener("scroll", this.#clampScroll);
    card.classList.add("dragging");
    $("board").classList.add("sorting");
    // A buzz for the lift; the browser refuses one (and logs an error)
    // before the page's first tap.
    if (press.type === "touch" && navigator.vibrate && navigator.userActivation?.hasBeenActive !== false) {
      navigator.vibrate(10);
    }
  }

  #moveDrag(clientY) {
    const drag = this.#drag;
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
    if (edge && !drag.edge) nextFrame(this.#autoScrollInFrame);
    drag.edge = edge;
  }

  #autoScroll() {
    const drag = this.#drag;
    if (!drag || !drag.edge) return;
    const scroller = $("main");
    const before = scroller.scrollTop;
    scroller.scrollTop = this.#clamped(before + drag.edge * 10, drag, scroller);
    if (scroller.scrollTop !== before) this.#moveDrag(drag.lastY);
    nextFrame(this.#autoScrollInFrame);
  }

  /**
   * `top`, kept within what the drawn cards reach (a longer move takes
   * another drag, or the keyboard) — or where the drag began, if that was
   * past it (the end of the list): never moved back against the user.
   */
  #clamped(top, drag, scroller) {
    const least = Math.min(drag.startScroll, drag.reach.top);
    const most = Math.max(drag.startScroll, drag.reach.bottom - scroller.clientHeight);
    return Math.min(Math.max(top, least), most);
  }

  #endDrag(drop) {
    const drag = this.#drag;
    this.#drag = null;
    $("main").removeEventListener("scroll", this.#clampScroll);
    this.shown.showMoving(null);
    for (const slot of drag.slots) slot.el.style.transform = "";
    drag.card.classList.remove("dragging");
    $("board").classList.remove("sorting");
    if (drop && drag.to !== drag.from) this.board.moveCard(drag.base, drag.from, drag.to);
    else this.screen.render();
  }
}

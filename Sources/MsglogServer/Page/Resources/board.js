// The board: each item a card that takes focus (one card in the tab
// order, arrows between cards), moved from the keyboard
// (board-keyboard.js), by a pointer (board-pointer.js) or a step at a time
// by its Move up and Move down buttons (on the card focused), deleted by its
// button, with a note that brings it back, or deleted for everyone where
// the page's token may erase (erase.js).

import { eraseButton, pendingMark } from "./chat.js";
import { $, element } from "./dom.js";
import { ListView } from "./listview.js";
import { moveChange, PREDECESSORS } from "./model.js";
import { quoted } from "./words.js";

const notColours = new Set(["inherit", "initial", "unset", "revert", "revert-layer", "currentcolor", "transparent"]);
/** The CSS colour a card's text names (as on the colour board), or null. */
function colourOf(text) {
  const t = text.trim();
  if (!t || t.length > 64 || notColours.has(t.toLowerCase())) return null;
  return CSS.supports("color", t) ? t : null;
}

// A card: picked up from the handle, a long press or the keyboard.
function createCard(item) {
  const li = element("li", "card");
  li.dataset.id = item.id;
  li.tabIndex = -1;
  li.setAttribute("aria-describedby", "card-help");
  const face = element("div", "face");
  const handle = element("span", "handle");
  handle.setAttribute("aria-hidden", "true");
  const swatch = element("span", "swatch");
  swatch.setAttribute("aria-hidden", "true");
  const text = element("span", "text");
  text.dir = "auto";
  const remove = element("button", "delete");
  remove.type = "button";
  remove.tabIndex = -1;
  remove.textContent = "×";
  const erase = eraseButton();
  erase.tabIndex = -1;
  // Moving without dragging (WCAG 2.5.7): one step a tap or a click, shown on the card that has the focus.
  const up = moveButton("up", "▲");
  const down = moveButton("down", "▼");
  // Beside the handle: nothing before them comes and goes (the pending mark, Delete for everyone), so a finger
  // pressing again finds them where they were.
  face.append(handle, up, down, swatch, text, element("bdi", "sender"), pendingMark(), erase, remove);
  li.append(face);
  return li;
}

function moveButton(way, glyph) {
  const button = element("button", "move move-" + way);
  button.type = "button";
  button.tabIndex = -1;
  button.dataset.step = way === "up" ? "-1" : "1";
  button.textContent = glyph;
  button.title = way === "up" ? "Move up" : "Move down";
  return button;
}

function fillCard(li, item, context, erase, writes) {
  const colour = colourOf(item.text);
  const swatch = li.querySelector(".swatch");
  swatch.hidden = colour === null;
  swatch.style.background = colour || "";
  li.querySelector(".text").textContent = item.text;
  const sender = li.querySelector(".sender");
  sender.textContent = item.sender || "";
  sender.hidden = !item.sender;
  li.classList.toggle("pending", item.pending === true);
  li.dataset.pending = String(item.pending === true);  // a hook for scripts and tests
  li.querySelector(".pending-mark").hidden = item.pending !== true;
  const remove = li.querySelector(".delete");
  remove.setAttribute("aria-label", "Delete " + quoted(item.text));
  remove.title = "Delete";
  remove.hidden = context === "past" || !writes.allowed;
  for (const [selector, way] of [[".move-up", "up"], [".move-down", "down"]]) {
    const button = li.querySelector(selector);
    button.setAttribute("aria-label", "Move " + quoted(item.text) + " " + way);
    button.hidden = remove.hidden;
  }
  // A token that may only read: no handle, and no help on picking the card up.
  li.classList.toggle("read-only", !writes.allowed);
  if (writes.allowed) li.setAttribute("aria-describedby", "card-help"); else li.removeAttribute("aria-describedby");
  const eraser = li.querySelector(".erase");
  eraser.hidden = !erase.offers(item, context);
  eraser.setAttribute("aria-label", "Delete for everyone: " + quoted(item.text));
}

export class Board {
  /** The card in the tab order: the one last focused, else the first drawn. */
  #activeCard = null;

  constructor({ shown, screen, writes, undo, erase, say }) {
    this.shown = shown;
    this.screen = screen;
    this.writes = writes;
    this.undo = undo;
    this.erase = erase;
    this.say = say;
    this.list = new ListView($("board"), {
      scroller: $("main"), estimate: 56, create: createCard, fill: (li, item, context) => fillCard(li, item, context, erase, writes),
      drawn: () => this.#rovingFocus(),
    });
    const board = $("board");
    board.addEventListener("focusin", (e) => {
      const card = e.target.closest(".card");
      if (card) { this.#activeCard = card.dataset.id; this.#rovingFocus(); }
    });
    board.addEventListener("click", (e) => {
      const button = e.target.closest("button.delete, button.erase, button.move");
      if (!button) return;
      const id = button.closest(".card").dataset.id;
      if (button.classList.contains("move")) this.#stepCard(id, Number(button.dataset.step), button);
      else if (button.classList.contains("delete")) this.#removeCard(id);
      else erase.ask(id, button);
    });
  }

  /** Whether the page may write or erase here changed: every card is drawn again. */
  redraw() {
    this.list.context = "";
  }

  #rovingFocus() {
    const drawn = [...this.list.list.children];
    const active = drawn.find((c) => c.dataset.id === this.#activeCard) || drawn[0];
    for (const card of drawn) {
      const on = card === active;
      card.tabIndex = on ? 0 : -1;
      for (const button of card.querySelectorAll("button")) button.tabIndex = on ? 0 : -1;
    }
  }

  /** Focuses card `index` (drawn on the way). */
  focusCard(index) {
    const count = this.shown.items().length;
    if (index < 0 || index >= count) return;
    const el = this.list.reveal(index);
    if (!el) return;
    this.#activeCard = el.dataset.id;
    this.#rovingFocus();
    el.focus();
  }

  /**
   * Keeps a move of the list shown as `base` in the outbox and sends it: the
   * card and the cards it was dropped under (the predecessor rule), so that
   * if someone changed the stream meanwhile the server puts it right after
   * the first of them still there, where its person meant it — never back.
   * Shown at once, by the same rule, until the server's list has it.
   */
  async moveCard(base, from, to) {
    if (from === to) return;
    const { id, after } = moveChange(base, from, to);
    try {
      await this.writes.write({ op: "move", id, after: after.slice(0, PREDECESSORS), from, to });
      this.say.note("");
    } catch (e) {
      this.say.note("Your move was not kept: " + e.message + ".");
    }
    this.screen.render();
  }

  /**
   * Moves card `id` one place up (`step` -1) or down (1) with its button:
   * one move event, said, and the keyboard stays on the button pressed, so
   * that the next press moves it on.
   */
  async #stepCard(id, step, button) {
    const shown = this.shown;
    if (shown.isPast() || shown.isMoving() || !this.writes.allowed) return;
    const base = shown.items();
    const from = base.findIndex((item) => item.id === id);
    const to = from + step;
    if (from < 0) return;
    const text = quoted(base[from].text);
    if (to < 0 || to >= base.length) {
      this.say.announce("Card " + text + " is already " + (step < 0 ? "first." : "last."), id);
      return;
    }
    this.#activeCard = id;
    await this.moveCard(base, from, to);
    this.list.reveal(to);
    this.list.elements.get(id)?.querySelector(step < 0 ? ".move-up" : ".move-down")?.focus();
    this.say.announce("Moved card " + text + " to position " + (to + 1) + " of " + base.length + ".", id);
  }

  async #removeCard(id) {
    const shown = this.shown;
    if (shown.isPast() || shown.isMoving() || !this.writes.allowed) return;
    const base = shown.items();
    const index = base.findIndex((item) => item.id === id);
    if (index < 0) return;
    const item = base[index];
    const next = base[index + 1] || base[index - 1];
    const hadFocus = $("board").contains(document.activeElement);
    if (next) this.#activeCard = next.id;
    try {
      // By id: the card is the one meant whatever moved meanwhile.
      const { ref } = await this.writes.write({ op: "remove", id });
      this.screen.render();
      if (hadFocus && next) this.list.elements.get(next.id)?.focus();
      // A card deleted by mistake comes back where it was (after its predecessor).
      this.say.note("Deleted card " + quoted(item.text) + ".", { label: "Undo", run: () => this.undo.undoChange(ref) }, id);
      this.say.announce("Deleted card " + quoted(item.text) + ". Undo is in the note at the top, or Control Z.", id);
    } catch (e) {
      this.say.note("The card " + quoted(item.text) + " was not deleted: " + e.message + ".");
    }
    this.screen.render();
  }
}

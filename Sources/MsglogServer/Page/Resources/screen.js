// What is on screen: the view (chat or board) and its list, drawn from
// what is shown (shown.js), with the items that just changed highlighted;
// the empty state; the address bar; and the mark that the page is ready.
// The chat and the board give their lists (`addView`); the parts of the
// page drawn with them (the history slider, the message box, the undo
// buttons) are told "render" at the start of each render.

import { $ } from "./dom.js";
import { Events } from "./events.js";
import { nextFrame } from "./frame.js";
import { FULL_RENDER_LIMIT } from "./listview.js";
import { shownName } from "./words.js";

/** How long the list waits for the outbox at most (`waitFor`). */
const WAIT_AT_MOST_MS = 1000;

export class Screen extends Events {
  /** name → ListView. */
  #views = {};
  #current = "chat";
  /** Ids to highlight at the next render. */
  #changed = new Set();
  #ready = false;
  /** The stream shown may not be read with the page's token (the server refused it). */
  #refused = false;
  /**
   * What the list waits for before it is drawn (a promise), or null: this
   * browser's changes on their way, read from the outbox as a list is read.
   * Drawn before them, a card moved just before a reload showed at its old
   * place for a moment, then jumped to where it was dropped.
   */
  #waitingFor = null;
  /** A render asked for while waiting: whether it was to scroll to the bottom. */
  #owed = null;
  /** Marked ready while waiting: marked once the list is drawn. */
  #readyOwed = false;
  /** One function each, so that asking again before the frame runs it once (frame.js). */
  #renderInFrame = () => this.render();
  #drawInFrame = () => { if (!this.shown.isHolding()) this.#views[this.#current].draw(); };

  constructor({ model, shown }) {
    super(["render"]);
    this.model = model;
    this.shown = shown;
    $("view-chat").addEventListener("click", () => this.show("chat"));
    $("view-board").addEventListener("click", () => this.show("board"));
    // Drawn again where it is scrolled to, after a scroll or a resize.
    $("main").addEventListener("scroll", () => {
      if (!shown.isHolding() && this.#views[this.#current].items.length > FULL_RENDER_LIMIT) nextFrame(this.#drawInFrame);
    }, { passive: true });
    window.addEventListener("resize", () => nextFrame(this.#drawInFrame));
  }

  addView(name, list) {
    this.#views[name] = list;
  }

  /** "chat" or "board". */
  currentView() {
    return this.#current;
  }

  /** Highlights the items `ids` at the next render. */
  highlight(ids) {
    for (const id of ids) this.#changed.add(id);
  }

  /** An event was folded in: its item highlighted (unless removed), drawn in the next frame. */
  folded(event) {
    if (event.op !== "remove") this.#changed.add(event.id);
    this.scheduleRender();
  }

  /** Another stream: nothing of the last one to highlight. */
  opened() {
    this.#changed.clear();
  }

  /**
   * Draws nothing until `promise` settles (or a second has passed: a
   * browser's storage that never answers holds no list back for ever), then
   * what was asked for meanwhile.
   */
  waitFor(promise) {
    const waiting = Promise.race([promise, new Promise((resolve) => setTimeout(resolve, WAIT_AT_MOST_MS))])
      .catch(() => {})
      .then(() => {
        if (this.#waitingFor !== waiting) return;
        this.#waitingFor = null;
        const owed = this.#owed;
        this.#owed = null;
        if (owed !== null) this.render({ toBottom: owed });
        if (this.#readyOwed) this.markReady();
      });
    this.#waitingFor = waiting;
  }

  /** Draws what is shown now; `toBottom`: a chat scrolls to its end (else it stays there if it was). */
  render({ toBottom = false } = {}) {
    if (this.#waitingFor !== null) {
      this.#owed = (this.#owed ?? false) || toBottom;
      return;
    }
    this.emit("render");
    // A card under a finger or the mouse keeps its place: what arrived
    // meanwhile is shown when it is dropped.
    if (this.shown.isHolding()) return;
    const items = this.shown.items();
    const current = this.#current;
    const view = this.#views[current];
    const other = this.#views[current === "chat" ? "board" : "chat"];
    other.clear();
    other.list.hidden = true;
    view.list.hidden = false;
    this.#showEmpty(items.length === 0);
    const stickToBottom = current === "chat" && (toBottom || view.atBottom());
    view.show(items, {
      context: this.shown.isPast() ? "past" : "now",
      pin: this.shown.pinned(),
      changed: this.#changed,
      toBottom: stickToBottom,
    });
    this.#changed.clear();
  }

  /** Renders in the next frame (once, however often asked before it). */
  scheduleRender() {
    nextFrame(this.#renderInFrame);
  }

  #showEmpty(empty) {
    $("empty").hidden = !empty;
    if (!empty) return;
    const model = this.model;
    const name = "“" + shownName(model.stream) + "”";
    const past = this.shown.past();
    let title, text;
    if (this.#refused && !past) {
      title = "This page's token may not read " + name + ".";
      text = "Pick another stream above, or open a link with a token that may read it.";
    } else if (model.stale && model.items.length === 0 && model.version === 0 && !this.#ready) {
      title = "Loading " + name + "…";
      text = "";
    } else if (past) {
      title = "Nothing here yet at version " + past.version + ".";
      text = "Move the history slider to the right to see what came later.";
    } else if (this.#current === "chat") {
      title = "No messages in " + name + " yet.";
      text = "Write the first one in the box below; it reaches everyone who has this stream open.";
    } else {
      title = "No cards on " + name + " yet.";
      text = "Add one with the box below (a colour name like “teal” gets a swatch). "
        + "Then drag cards by their handle, long-press them on a phone, tap a card and use its ▲ ▼ buttons, "
        + "or press Space on a card and use the arrow keys.";
    }
    $("empty-title").textContent = title;
    $("empty-text").textContent = text;
  }

  /** The view shown: "chat" or "board". */
  get current() {
    return this.#current;
  }

  /** Scrolls the last item into view: a card this page added, at the end of a board. */
  revealLast() {
    this.#views[this.#current].reveal(this.shown.items().length - 1);
  }

  /** Shows `view` ("chat" or "board"). */
  show(view) {
    if (view !== this.#current) this.shown.cancelMoves();
    this.#current = view;
    $("view-chat").setAttribute("aria-pressed", String(view === "chat"));
    $("view-board").setAttribute("aria-pressed", String(view === "board"));
    $("compose-text").placeholder = view === "chat" ? "Write a message…" : "Add a card…";
    $("compose-text").labels[0].textContent = view === "chat" ? "Message" : "New card";
    $("send").textContent = view === "chat" ? "Send" : "Add";
    this.updateAddress();
    this.render({ toBottom: true });
  }

  /** `?stream=S&view=V` in the address bar, for a reload or a bookmark. */
  updateAddress() {
    const query = new URLSearchParams({ stream: this.model.stream, view: this.#current });
    history.replaceState(history.state, "", location.pathname + "?" + query);
  }

  /** Whether the stream shown was refused to the page's token: its empty list says so, not "write the first one". */
  setRefused(refused) {
    if (this.#refused === refused) return;
    this.#refused = refused;
    this.scheduleRender();
  }

  /** `document.body.dataset.ready`, once: the page has read its stream (or knows it cannot, for now). */
  markReady() {
    if (this.#ready) return;
    if (this.#waitingFor !== null) {
      this.#readyOwed = true;
      return;
    }
    this.#ready = true;
    performance.mark("msglog-ready");
    document.body.dataset.ready = "true";
  }
}

// What the page says: the note at the top (with a button when there is
// something to do about it), the connection's status, and what a screen
// reader hears.

import { $ } from "./dom.js";

export class Say {
  /** What the note's button does, when it has one (the "Undo" of a deleted card). */
  #noteAction = null;
  /** The item the note quotes, if any: it goes when that item is erased. */
  #noteAbout = null;
  /** The item the screen reader was last told of, if any: likewise. */
  #announcedAbout = null;

  constructor() {
    $("note-close").addEventListener("click", () => this.note(""));
    $("note-action").addEventListener("click", () => {
      const run = this.#noteAction;
      this.note("");
      if (run) run();
    });
  }

  /** Shows `text` in the note (none: hides it); `action`: { label, run } for its button; `about`: the item it quotes. */
  note(text, action = null, about = null) {
    this.#noteAbout = text ? about : null;
    $("note-text").textContent = text || "";
    $("note").hidden = !text;
    this.#noteAction = action && action.run;
    $("note-action").hidden = !action;
    if (action) $("note-action").textContent = action.label;
  }

  /** The items `ids` were erased: a note or an announcement quoting one goes (it holds the text). */
  forgot(ids) {
    if (this.#noteAbout !== null && ids.includes(this.#noteAbout)) this.note("");
    if (this.#announcedAbout !== null && ids.includes(this.#announcedAbout)) this.announce("");
    for (const line of [...$("arrivals").children]) if (ids.includes(line.dataset.about)) line.remove();
  }

  /**
   * Says `text`, of item `about` someone else added to the `view` shown, to a screen reader
   * when it has finished what it is saying (the polite log of arrivals,
   * which keeps the last few lines: a region that only grew would hold
   * every message).
   */
  arrived(text, about, view = "chat") {
    // A burst (an import, a busy chat) is not read out line by line: past
    // the first few within a second of each other, one line says there
    // are more, and the rest are on the screen until a second passes
    // without one.
    this.#burst += 1;
    clearTimeout(this.#burstEnds);
    this.#burstEnds = setTimeout(() => { this.#burst = 0; }, 1000);
    if (this.#burst > Say.arrivalsKept + 1) return;
    const log = $("arrivals");
    const line = document.createElement("p");
    if (this.#burst > Say.arrivalsKept) {
      line.textContent = view === "board" ? "More new cards." : "More new messages.";
    } else {
      line.textContent = text;
      line.dataset.about = about;
    }
    log.append(line);
    while (log.children.length > Say.arrivalsKept) log.firstElementChild.remove();
  }

  static arrivalsKept = 3;
  /** Arrivals said within a second of each other, and the timer that ends the burst. */
  #burst = 0;
  #burstEnds = null;

  /** Another stream: what was said of the last one's arrivals goes. */
  clearArrivals() {
    $("arrivals").replaceChildren();
    clearTimeout(this.#burstEnds);
    this.#burst = 0;
  }

  /** Says `text` to a screen reader (the aria-live region); `about`: the item it quotes. */
  announce(text, about = null) {
    this.#announcedAbout = text ? about : null;
    $("announce").textContent = text;
  }

  /** Takes the note down if it still says `text` (what it said then no longer holds). */
  withdraw(text) {
    if (!$("note").hidden && $("note-text").textContent === text) this.note("");
  }

  /** The connection's state: `kind` live, connecting, offline or refused, in words. */
  setStatus(kind, text) {
    const status = $("status");
    if (status.dataset.state === kind && status.textContent === text) return;
    status.dataset.state = kind;
    status.textContent = text;
  }
}

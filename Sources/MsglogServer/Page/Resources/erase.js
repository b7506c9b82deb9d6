// "Delete for everyone" (SPEC "Forgetting on purpose"): a message or card
// erased for everyone — gone from the list, and its text from the server,
// every copy that syncs, and this browser (forget.js). Offered only where
// the page's token may erase (signed-in.js asks), confirmed first (it
// cannot be undone), and sent at once with `POST /api/erase`: never kept
// in the outbox to send later, where the text it is meant to remove would
// wait with it.

import { $ } from "./dom.js";
import { eraseFailedInWords, quoted } from "./words.js";

export class Erase {
  /** Whether the page's token may erase on the stream shown; not offered until the server says. */
  allowed = false;
  /** The item being confirmed: `{ id, stream, next, opener }`, or null. */
  #asking = null;

  constructor({ api, model, shown, screen, forgetting, say }) {
    this.api = api;
    this.model = model;
    this.shown = shown;
    this.screen = screen;
    this.forgetting = forgetting;
    this.say = say;
    $("erase-dialog").addEventListener("close", () => this.#closed());
  }

  /** What the page's token may do on `stream` is known: whether it may erase there. Whether that changed. */
  setAllowed(stream, erase) {
    const allowed = erase && stream === this.model.stream;
    if (allowed === this.allowed) return false;
    this.allowed = allowed;
    return true;
  }

  /** Another stream: nothing offered until the server says what the token may do there. */
  opened() {
    this.allowed = false;
    if ($("erase-dialog").open) $("erase-dialog").close();
  }

  /** Whether `item`, drawn in `context`, offers "Delete for everyone": the server has it, and it is now. */
  offers(item, context) {
    return this.allowed && context !== "past" && item.pending !== true;
  }

  /** Asks to confirm erasing item `id` (shown now), from the button `opener` (focus goes back to it on Cancel). */
  ask(id, opener) {
    if (!this.allowed || this.shown.isPast() || this.#asking) return;
    const items = this.shown.items();
    const index = items.findIndex((item) => item.id === id);
    if (index < 0) return;
    const next = items[index + 1] || items[index - 1];
    this.#asking = { id, stream: this.model.stream, next: next ? next.id : null, opener };
    $("erase-text").textContent = quoted(items[index].text, 80) + " goes from the server and from every copy"
      + " of this stream as it syncs: its text now and every earlier version of it. This cannot be undone.";
    $("erase-dialog").returnValue = "";
    $("erase-dialog").showModal();
  }

  #closed() {
    const asking = this.#asking;
    this.#asking = null;
    $("erase-text").textContent = "";  // the dialog keeps no text once closed
    if (!asking) return;
    if ($("erase-dialog").returnValue === "erase") this.#erase(asking);
    else asking.opener?.focus();
  }

  async #erase({ id, stream, next }) {
    let answer;
    try {
      answer = await this.api.request("/api/erase", { stream, ids: [id] });
    } catch (e) {
      this.say.note(eraseFailedInWords(e.status, e.message));
      return;
    }
    // Erased now, or before (nothing to erase): gone either way.
    const erased = Array.isArray(answer?.erased) && answer.erased.length > 0 ? answer.erased : [id];
    const learned = this.forgetting.learn(erased);
    this.screen.render();
    // The focus was on the item's button, gone with it: the next card (the board), else the stream.
    const card = next && this.screen.currentView() === "board" ? document.querySelector(`#board .card[data-id="${next}"]`) : null;
    (card || $("main")).focus();
    this.say.note("");
    this.say.announce("Deleted for everyone.");
    await learned;
  }
}

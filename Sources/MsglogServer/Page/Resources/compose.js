// The message box: Enter sends, Shift+Enter starts a new line. A message
// goes into the outbox (sync.js), which sends it once, however often. The
// name sent with it is kept for the next visit; a named token's page
// sends as the token's name instead, with no name field to type in.

import { $ } from "./dom.js";
import { Events } from "./events.js";
import * as storage from "./storage.js";
import { quoted } from "./words.js";
import { newID } from "./sync.js";

const SENDER_KEY = "msglog.sender";
/**
 * What is typed and not sent yet, kept for this tab and stream (the key
 * and `:` and the stream's name): another page opened in the tab, or a
 * reload, loses nothing, and a draft stays with the stream it was typed
 * for. It stays through another token too: the one typing is the same.
 */
const DRAFT_KEY = "msglog.draft";

/**
 * The drafts of this page's streams: in memory, where they are sure to be
 * (the storage may be off, or a draft too big for it), and in the tab's
 * session storage for a reload or another page opened in the tab.
 */
class Drafts {
  #kept = new Map();

  /** The draft of `stream` ("" for none). */
  of(stream) {
    return this.#kept.get(stream) ?? storage.get("sessionStorage", DRAFT_KEY + ":" + stream) ?? "";
  }

  /** Keeps `text` as the draft of `stream` ("" for none); one too big for the storage leaves no older one there. */
  keep(stream, text) {
    this.#kept.set(stream, text);
    const key = DRAFT_KEY + ":" + stream;
    storage.set("sessionStorage", key, text ? text : null);
    if (text && storage.get("sessionStorage", key) !== text) storage.set("sessionStorage", key, null);
  }
}

/** The message box; tells "sender" (the name) when the name this page sends as changes. */
export class Compose extends Events {
  #sending = false;
  /** The named token's name (signed-in.js), which the page sends as; null without one. */
  #signedIn = null;
  /** Whether the token may write the stream shown (signed-in.js's "may"). */
  #writable = true;
  #drafts = new Drafts();
  /** The stream whose draft the box holds; null before the first is opened. */
  #draftStream = null;

  constructor({ model, shown, screen, writes, say }) {
    super(["sender"]);
    this.model = model;
    this.shown = shown;
    this.screen = screen;
    this.writes = writes;
    this.say = say;
    /** The name this page sends as (kept for the next visit). */
    this.sender = storage.get("localStorage", SENDER_KEY) || "";
    $("compose-sender").value = this.sender;
    $("compose").addEventListener("submit", (e) => this.#send(e));
    $("compose-text").addEventListener("input", () => {
      this.#growBox();
      this.#drafts.keep(this.model.stream, $("compose-text").value);
    });
    $("compose-text").addEventListener("keydown", (e) => {
      // Enter sends, Shift+Enter starts a new line.
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        $("compose").requestSubmit();
      }
    });
  }

  /**
   * Keeps the message in the outbox (shown at once, marked pending, sent
   * once however often it is sent again) and empties the box; the text stays
   * in the box only if the browser would not keep it.
   */
  async #send(event) {
    event.preventDefault();
    if (this.#sending || this.shown.isPast()) return;
    const box = $("compose-text");
    const text = box.value;
    if (!text.trim()) {
      // Only spaces: nothing to send, and said so (an empty box says nothing).
      if (text) this.say.note("A message needs some text: only spaces are not sent.");
      return;
    }
    const sender = this.#signedIn ?? $("compose-sender").value.trim();
    const stream = this.model.stream;
    this.#sending = true;
    this.update();
    try {
      const change = { op: "append", id: newID(), text, seen: this.model.view().length };
      if (sender) change.sender = sender;
      await this.writes.write(change);
      // Sent: its draft goes, also when another stream is shown by now.
      if (this.#drafts.of(stream) === text) this.#drafts.keep(stream, "");
      if (box.value === text && this.model.stream === stream) box.value = "";
      this.#growBox();
      this.say.note("");
      if (this.#signedIn === null && sender !== this.sender) {
        this.sender = sender;
        storage.set("localStorage", SENDER_KEY, sender || null);
        this.emit("sender", sender);
      }
      this.screen.render({ toBottom: true });
      if (this.screen.current === "board") {
        // A new card goes to the end of the board, perhaps far below:
        // brought into view, and said.
        this.screen.revealLast();
        this.say.announce("Added card " + quoted(text) + " at the end of the board.");
      }
    } catch (e) {
      this.say.note("Not sent: " + e.message + ". Your text is still in the box; send it again when you are ready.");
    } finally {
      this.#sending = false;
      this.update();
      if (document.activeElement === document.body || document.activeElement === $("send")) box.focus();
    }
  }

  /**
   * Sends as `name`, a named token's (the server records it whatever is
   * sent): the name field shows it and cannot be changed. null: the name
   * typed in, kept for the next visit, as without a named token.
   */
  signIn(name) {
    this.#signedIn = name;
    const field = $("compose-sender");
    field.value = name ?? this.sender;
    field.readOnly = name !== null;
    field.hidden = name !== null;
  }

  /** The name this page sends as now. */
  get sendsAs() {
    return this.#signedIn ?? this.sender;
  }

  /** Offers the box (`may`: the token may write the stream shown) or not; what is typed stays. */
  allowWrites(may) {
    // The focus in the box goes to the list rather than to nowhere (a disabled field drops it).
    const hadFocus = $("compose-fields").contains(document.activeElement);
    this.#writable = may;
    this.update();
    // Why the box is off, for a screen reader: the line that says whose token it is.
    if (may) $("compose-text").removeAttribute("aria-describedby");
    else $("compose-text").setAttribute("aria-describedby", "signed-in");
    if (hadFocus && !may) $("main").focus();
  }

  /** The box as the page is now: disabled in the past, where the token may not write, and while a message is being kept. */
  update() {
    const past = this.shown.isPast();
    $("compose-fields").disabled = past || !this.#writable;
    $("send").disabled = past || !this.#writable || this.#sending;
    document.body.classList.toggle("past", past);
  }

  /**
   * A stream is shown: the box holds what was typed for it. The same one
   * read afresh (another token, or one refused) keeps what the box holds;
   * the first keeps what the browser itself may have put back in it.
   */
  opened() {
    const stream = this.model.stream;
    if (stream === this.#draftStream) return;
    const box = $("compose-text");
    const draft = this.#drafts.of(stream);
    if (this.#draftStream !== null || draft !== "") box.value = draft;
    this.#draftStream = stream;
    this.#growBox();
  }

  #growBox() {
    const box = $("compose-text");
    box.style.height = "auto";
    box.style.height = box.scrollHeight + 2 + "px";
  }
}

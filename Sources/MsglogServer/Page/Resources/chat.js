// The chat: each message a bubble with its sender and time, the text
// isolated in its own direction, this page's own on the other side; a
// message of its own edited in place; any message deleted for everyone
// where the page's token may erase (erase.js).

import { $, element } from "./dom.js";
import { ListView } from "./listview.js";
import { fullDate, quoted, when } from "./words.js";

/**
 * The mark of a change on its way (in the outbox, not yet in the server's
 * list): words, not a colour alone, read by screen readers with the item.
 */
export function pendingMark() {
  const mark = element("span", "pending-mark");
  mark.textContent = "pending";
  mark.title = "Kept in this browser; sent when the server can be reached";
  mark.hidden = true;
  return mark;
}

/** "Delete for everyone" (erase.js): hidden unless the page's token may erase here. */
export function eraseButton() {
  const button = element("button", "erase");
  button.type = "button";
  button.textContent = "Delete for everyone";
  button.hidden = true;
  return button;
}

function createMessage(item) {
  const li = element("li", "message");
  li.dataset.id = item.id;
  const bubble = element("div", "bubble");
  const meta = element("div", "meta");
  const edited = element("span", "edited");
  edited.textContent = "edited";
  const edit = element("button", "edit");
  edit.type = "button";
  edit.textContent = "Edit";
  meta.append(element("bdi", "sender"), element("time", "time"), edited, pendingMark(), edit, eraseButton());
  const text = element("p", "text");
  text.dir = "auto";
  bubble.append(meta, text);
  li.append(bubble);
  return li;
}

export class Chat {
  /** The name this page sends as: its messages go on the other side, and only they can be edited here. */
  #me = "";
  /** The message being edited: { id, form }. */
  #editing = null;

  constructor({ shown, screen, writes, erase, say }) {
    this.shown = shown;
    this.screen = screen;
    this.writes = writes;
    this.erase = erase;
    this.say = say;
    this.list = new ListView($("chat"), {
      scroller: $("main"), estimate: 64, create: createMessage, fill: (li, item, context) => this.#fill(li, item, context),
    });
    $("chat").addEventListener("click", (e) => {
      const button = e.target.closest("button.edit, button.erase");
      if (!button) return;
      const id = button.closest(".message").dataset.id;
      if (button.classList.contains("edit")) this.startEdit(id); else this.erase.ask(id, button);
    });
  }

  /** This page sends as `name` now. */
  setMe(name) {
    if (name === this.#me) return;
    this.#me = name;
    this.list.context = "";  // whose messages are whose changed: redraw them
  }

  /** Whether the page may write or erase here changed: every message is drawn again. */
  redraw() {
    this.list.context = "";
  }

  /** The items `ids` were erased: an edit of one under way ends (its box holds the text). */
  forgot(ids) {
    if (this.#editing && ids.includes(this.#editing.id)) this.endEdit();
  }

  /** The past is read-only: an edit under way ends when it is shown. */
  update() {
    if (this.shown.isPast()) this.endEdit();
  }

  /** Whether this page may edit a message: its own (sent under its name, or without one when it has none). */
  #editable(item) {
    return (item.sender || "") === this.#me;
  }

  #fill(li, item, context) {
    const me = this.#me;
    const [sender, time, edited, pending, edit, erase] = li.querySelector(".meta").children;
    li.classList.toggle("pending", item.pending === true);
    li.dataset.pending = String(item.pending === true);  // a hook for scripts and tests
    pending.hidden = item.pending !== true;
    li.classList.toggle("mine", me !== "" && item.sender === me);
    sender.textContent = item.sender || "";
    sender.hidden = !item.sender;
    time.dateTime = item.time;
    time.textContent = when(item.time);
    time.title = fullDate.format(new Date(item.time));
    edited.hidden = !item.edited;
    if (item.edited) edited.title = "Edited " + fullDate.format(new Date(item.edited));
    edit.hidden = context === "past" || !this.#editable(item) || !this.writes.allowed;
    edit.setAttribute("aria-label", "Edit " + quoted(item.text));
    erase.hidden = !this.erase.offers(item, context);
    erase.setAttribute("aria-label", "Delete for everyone: " + quoted(item.text));
    li.querySelector(".text").textContent = item.text;
  }

  // MARK: - Editing a message in place

  startEdit(id) {
    if (this.shown.isPast() || this.#editing) return;
    const item = this.shown.items().find((i) => i.id === id);
    const li = this.list.elements.get(id);
    if (!item || !li) return;
    const form = element("form", "edit-form");
    const box = element("textarea", "edit-text");
    // Not kept by the browser as form state (its session files would hold
    // the text after the message is deleted for everyone), as the composer.
    form.autocomplete = "off";
    box.autocomplete = "off";
    box.value = item.text;
    box.rows = Math.min(6, item.text.split("\n").length);
    box.dir = "auto";
    box.setAttribute("aria-label", "New text for " + quoted(item.text));
    const save = element("button", "save");
    save.type = "submit";
    save.textContent = "Save";
    const cancel = element("button", "cancel");
    cancel.type = "button";
    cancel.textContent = "Cancel";
    form.append(box, save, cancel);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.#saveEdit(id, box.value);
    });
    cancel.addEventListener("click", () => this.endEdit({ focus: true }));
    box.addEventListener("keydown", (e) => {
      // Enter saves, Shift+Enter starts a new line, Escape leaves it as it was.
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      } else if (e.key === "Escape") {
        e.preventDefault();
        this.endEdit({ focus: true });
      }
    });
    li.classList.add("editing");
    li.querySelector(".bubble").append(form);
    this.#editing = { id, form };
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  /** Ends an edit under way, if any (another stream has other messages). */
  endEdit({ focus = false } = {}) {
    if (!this.#editing) return;
    const { id, form } = this.#editing;
    this.#editing = null;
    form.remove();
    const li = this.list.elements.get(id);
    if (li) {
      li.classList.remove("editing");
      if (focus) li.querySelector(".edit").focus();
    }
  }

  /** Sends the new text (by id: whatever moved meanwhile); shown at once, the old text back if refused. */
  async #saveEdit(id, text) {
    const item = this.shown.items().find((i) => i.id === id);
    if (!item || text === item.text) {
      this.endEdit({ focus: true });
      return;
    }
    if (!text.trim()) {
      this.say.note("A message needs some text; to take one back, undo it or leave it as it was.");
      return;
    }
    if (!this.writes.allowed) {
      // Rights lost while editing: the form stays, with the text typed.
      this.say.note("The message was not edited: " + this.writes.whyNot() + ".");
      return;
    }
    // Focus back on the message's Edit button, as Escape leaves it: the
    // form that held it goes.
    this.endEdit({ focus: true });
    const sender = $("compose-sender").value.trim();
    const change = { op: "edit", id, text };
    if (sender) change.sender = sender;
    try {
      await this.writes.write(change);
      this.say.note("");
      this.say.announce("Message edited.");
    } catch (e) {
      this.say.note("The message was not edited: " + e.message + ".");
    }
    this.screen.render();
  }
}

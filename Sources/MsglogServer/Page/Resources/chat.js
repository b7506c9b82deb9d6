// The chat: each message a bubble with its sender and time, the text
// isolated in its own direction, this page's own on the other side; a
// message of its own edited in place.

import { $, element } from "./dom.js";
import { ListView } from "./listview.js";
import { model } from "./model.js";
import { announce, note } from "./say.js";
import { addView, onRender, render } from "./screen.js";
import { isPast, shownItems } from "./shown.js";
import { fullDate, quoted, when } from "./words.js";
import { write } from "./writes.js";

/** The name this page sends as: its messages go on the other side, and only they can be edited here. */
let me = "";

/** This page sends as `name` now; whether that changed. */
export function setMe(name) {
  if (name === me) return false;
  me = name;
  messages.context = "";  // whose messages are whose changed: redraw them
  return true;
}

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
  meta.append(element("bdi", "sender"), element("time", "time"), edited, pendingMark(), edit);
  const text = element("p", "text");
  text.dir = "auto";
  bubble.append(meta, text);
  li.append(bubble);
  return li;
}

/** Whether this page may edit a message: its own (sent under its name, or without one when it has none). */
function editable(item) {
  return (item.sender || "") === me;
}

function fillMessage(li, item, context) {
  const [sender, time, edited, pending, edit] = li.querySelector(".meta").children;
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
  edit.hidden = context === "past" || !editable(item);
  edit.setAttribute("aria-label", "Edit " + quoted(item.text));
  li.querySelector(".text").textContent = item.text;
}

const messages = new ListView($("chat"), { scroller: $("main"), estimate: 64, create: createMessage, fill: fillMessage });

// MARK: - Editing a message in place

/** The message being edited: { id, form }. */
let editing = null;

function startEdit(id) {
  if (isPast() || editing) return;
  const item = shownItems().find((i) => i.id === id);
  const li = messages.elements.get(id);
  if (!item || !li) return;
  const form = element("form", "edit-form");
  const box = element("textarea", "edit-text");
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
    saveEdit(id, box.value);
  });
  cancel.addEventListener("click", () => endEdit({ focus: true }));
  box.addEventListener("keydown", (e) => {
    // Enter saves, Shift+Enter starts a new line, Escape leaves it as it was.
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    } else if (e.key === "Escape") {
      e.preventDefault();
      endEdit({ focus: true });
    }
  });
  li.classList.add("editing");
  li.querySelector(".bubble").append(form);
  editing = { id, form };
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

function endEdit({ focus = false } = {}) {
  if (!editing) return;
  const { id, form } = editing;
  editing = null;
  form.remove();
  const li = messages.elements.get(id);
  if (li) {
    li.classList.remove("editing");
    if (focus) li.querySelector(".edit").focus();
  }
}

/** Sends the new text (by id: whatever moved meanwhile); shown at once, the old text back if refused. */
async function saveEdit(id, text) {
  const item = shownItems().find((i) => i.id === id);
  if (!item || text === item.text) {
    endEdit({ focus: true });
    return;
  }
  if (!text.trim()) {
    note("A message needs some text; to take one back, undo it or leave it as it was.");
    return;
  }
  endEdit();
  const sender = $("compose-sender").value.trim();
  const change = { op: "edit", id, text };
  if (sender) change.sender = sender;
  try {
    await write(change);
    note("");
    announce("Message edited.");
  } catch (e) {
    note("The message was not edited: " + e.message + ".");
  }
  render();
}

addView("chat", messages);
// The past is read-only; another stream has other messages.
onRender(() => { if (isPast()) endEdit(); });
model.subscribe((change) => { if (change.kind === "open") endEdit(); });
$("chat").addEventListener("click", (e) => {
  const button = e.target.closest("button.edit");
  if (button) startEdit(button.closest(".message").dataset.id);
});

// The message box: Enter sends, Shift+Enter starts a new line. A message
// is sent once: a retry or a second click sends it with the same id, and a
// failed one keeps its text in the box. The name sent with it is kept for
// the next visit.

import { api } from "./api.js";
import { setMe } from "./chat.js";
import { $ } from "./dom.js";
import { model } from "./model.js";
import { note } from "./say.js";
import { onRender, render } from "./screen.js";
import { isPast } from "./shown.js";
import * as storage from "./storage.js";
import { write } from "./writes.js";

const SENDER_KEY = "msglog.sender";

/** A message on its way: { id, text, sender, stream }. */
let outgoing = null;
let sending = false;

function newID() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return hex.slice(0, 8) + "-" + hex.slice(8, 12) + "-" + hex.slice(12, 16) + "-" + hex.slice(16, 20) + "-" + hex.slice(20);
}

async function send(event) {
  event.preventDefault();
  if (sending || isPast()) return;
  const box = $("compose-text");
  const text = box.value;
  if (!text.trim()) return;
  const sender = $("compose-sender").value.trim();
  if (!outgoing || outgoing.text !== text || outgoing.sender !== sender || outgoing.stream !== model.stream) {
    outgoing = { id: newID(), text, sender, stream: model.stream };
  }
  const message = outgoing;
  sending = true;
  updateCompose();
  try {
    const body = { text, id: message.id };
    if (sender) body.sender = sender;
    try {
      await write("append", body, { event: { op: "insert", text, sender: sender || undefined } });
    } catch (e) {
      // Sent before, its answer lost: the id is in the stream already.
      if (!(e.status === 409 && (await delivered(message.id)))) throw e;
    }
    if (box.value === text) box.value = "";
    growBox();
    outgoing = null;
    note("");
    if (setMe(sender)) storage.set("localStorage", SENDER_KEY, sender || null);
    render({ toBottom: true });
  } catch (e) {
    note("Not sent: " + e.message + ". Your text is still in the box; send it again when you are ready.");
  } finally {
    sending = false;
    updateCompose();
    if (document.activeElement === document.body || document.activeElement === $("send")) box.focus();
  }
}

async function delivered(id) {
  try {
    const list = await api("/api/items?stream=" + encodeURIComponent(model.stream));
    return list.items.some((item) => item.id === id);
  } catch {
    return false;
  }
}

function updateCompose() {
  const past = isPast();
  $("compose-fields").disabled = past;
  $("send").disabled = past || sending;
  document.body.classList.toggle("past", past);
}

function growBox() {
  const box = $("compose-text");
  box.style.height = "auto";
  box.style.height = box.scrollHeight + 2 + "px";
}

const name = storage.get("localStorage", SENDER_KEY) || "";
setMe(name);
$("compose-sender").value = name;
onRender(updateCompose);
$("compose").addEventListener("submit", send);
$("compose-text").addEventListener("input", growBox);
$("compose-text").addEventListener("keydown", (e) => {
  // Enter sends, Shift+Enter starts a new line.
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $("compose").requestSubmit();
  }
});

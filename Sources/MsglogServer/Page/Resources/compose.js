// The message box: Enter sends, Shift+Enter starts a new line. A message
// goes into the outbox (sync.js), which sends it once, however often. The
// name sent with it is kept for the next visit.

import { setMe } from "./chat.js";
import { $ } from "./dom.js";
import { model } from "./model.js";
import { note } from "./say.js";
import { onRender, render } from "./screen.js";
import { isPast } from "./shown.js";
import * as storage from "./storage.js";
import { newID } from "./sync.js";
import { write } from "./writes.js";

const SENDER_KEY = "msglog.sender";

let sending = false;

/**
 * Keeps the message in the outbox (shown at once, marked pending, sent
 * once however often it is sent again) and empties the box; the text stays
 * in the box only if the browser would not keep it.
 */
async function send(event) {
  event.preventDefault();
  if (sending || isPast()) return;
  const box = $("compose-text");
  const text = box.value;
  if (!text.trim()) return;
  const sender = $("compose-sender").value.trim();
  sending = true;
  updateCompose();
  try {
    const change = { op: "append", id: newID(), text, seen: model.view().length };
    if (sender) change.sender = sender;
    await write(change);
    if (box.value === text) box.value = "";
    growBox();
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

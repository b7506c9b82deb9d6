// Which stream the page shows: the picker (the log's streams), a stream
// opened by name, and opening one — read afresh and followed from the
// log's head.

import { owner, readToken } from "./api.js";
import { $ } from "./dom.js";
import { cacheWith, follow, load, readStreams, reportTo, stop, wake } from "./follow.js";
import { showHeld } from "./held.js";
import * as idb from "./idb.js";
import { model } from "./model.js";
import { note, setStatus } from "./say.js";
import { markReady, render, scheduleRender, updateAddress } from "./screen.js";
import * as sync from "./sync.js";
import { cancelMoves } from "./shown.js";
import { changeInWords, signedOutInWords, streamNameProblem } from "./words.js";

/** Shows `stream` with the page's token (at load, or another one typed), read afresh and followed from the log's head. */
export function open(stream) {
  stop();
  cancelMoves();
  model.open(stream);
  sync.useOwner().then(() => sync.push());  // this token's changes on their way, of this stream
  document.body.classList.remove("past");
  setStatus("connecting", "Connecting…");
  updateAddress();
  fillPicker([]);
  render();
  follow();
}

/** Reads the stream's list again (a write was refused: the page shows what the server has). */
export async function reload() {
  try {
    await load();
  } catch (e) {
    note("The stream could not be read: " + e.message + ".");
  }
  render();
}

function fillPicker(names) {
  const select = $("stream");
  if (!names.includes(model.stream)) names.push(model.stream);
  if ([...select.options].map((o) => o.value).join("\n") === names.join("\n")) return;
  select.replaceChildren(...names.map((name) => {
    const option = document.createElement("option");
    option.value = name;
    option.textContent = name;
    return option;
  }));
  select.value = model.stream;
}

async function refreshStreams() {
  try { fillPicker((await readStreams()).map((s) => s.stream)); } catch { /* keep the list shown */ }
}

function openNamed(event) {
  event.preventDefault();
  const input = $("new-stream");
  const problem = streamNameProblem(input.value);
  input.setAttribute("aria-invalid", String(problem !== null));
  if (problem) {
    note(problem);
    input.focus();
    return;
  }
  note("");
  const name = input.value;
  input.value = "";
  open(name);
}

/**
 * The server refused the page's token: what the page showed and kept with
 * it goes (the token form asks for another); says how many changes not
 * sent went with it.
 */
export async function signedOut() {
  stop();
  cancelMoves();
  model.open(model.stream);
  render();
  markReady();  // the page knows it cannot read its stream for now
  const removed = await sync.forgetOwner();
  if (removed.length > 0) note(signedOutInWords(removed.length, Boolean(readToken())));
}

/** Keeps the list shown (the server's layer) for a reload while the server is away, a moment after it changes. */
let keeping = null;
function keepList() {
  if (keeping) return;
  keeping = setTimeout(() => {
    keeping = null;
    if (model.stale && model.version === 0) return;
    const { stream, items, version, head, log } = model;
    if (log === undefined) return;
    idb.keepList({ owner: owner(), log, stream, items, version, seq: head }).catch(() => {});
    sync.prune().catch(() => {});
  }, 300);
}

model.subscribe((change) => {
  if (change.kind !== "open") keepList();
  if (change.kind === "list") sync.refresh();  // the changes shown are the ones made on the log of this list
});
cacheWith({ read: (stream) => idb.list(owner(), stream) });
sync.reportTo({
  changed: scheduleRender,
  refused: (entry, error) => note(changeInWords(entry.change) + " was refused by the server: " + error + "."),
  problem: note,
  held: (held) => showHeld(held, sync.discard),
});
window.addEventListener("online", wake);
reportTo({
  status(kind, text) {
    setStatus(kind, text);
    if (kind === "live") sync.push();  // the server is back: send what waits
  },
  ready: markReady,
  loaded: () => render({ toBottom: true }),
  streams: fillPicker,
  problem: note,
});
$("stream").addEventListener("focus", refreshStreams);
$("stream").addEventListener("change", (e) => open(e.target.value));
$("open-stream").addEventListener("submit", openNamed);
$("new-stream").addEventListener("input", (e) => e.target.removeAttribute("aria-invalid"));

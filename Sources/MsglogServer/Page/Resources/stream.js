// Which stream the page shows: the picker (the log's streams), a stream
// opened by name, and opening one — read afresh and followed from the
// log's head.

import { $ } from "./dom.js";
import { follow, load, readStreams, reportTo, stop } from "./follow.js";
import { model } from "./model.js";
import { note, setStatus } from "./say.js";
import { markReady, render, updateAddress } from "./screen.js";
import { cancelMoves } from "./shown.js";
import { streamNameProblem } from "./words.js";

/** Shows `stream`, read afresh and followed from the log's head. */
export function open(stream) {
  stop();
  cancelMoves();
  model.open(stream);
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

reportTo({
  status: setStatus,
  ready: markReady,
  loaded: () => render({ toBottom: true }),
  streams: fillPicker,
  problem: note,
});
$("stream").addEventListener("focus", refreshStreams);
$("stream").addEventListener("change", (e) => open(e.target.value));
$("open-stream").addEventListener("submit", openNamed);
$("new-stream").addEventListener("input", (e) => e.target.removeAttribute("aria-invalid"));

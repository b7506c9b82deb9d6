// History: the range slider runs over the stream's own versions, 0 to
// now; at a past version the page shows the list as it was (read-only),
// with what differs from the list shown before it highlighted.

import { api } from "./api.js";
import { $ } from "./dom.js";
import { model } from "./model.js";
import { note } from "./say.js";
import { highlight, onRender, render } from "./screen.js";
import { cancelMoves, shownPast, showPast } from "./shown.js";
import { when } from "./words.js";

/** [version] → { seq, time } for the stream, read when the slider is first used. */
let versions = null;
/** The latest slider position asked for: an older one's answer arriving late is not shown. */
let scrubbing = 0;

async function loadVersions() {
  if (versions) return versions;
  const stream = model.stream;
  const read = [];
  let from = 1;
  for (;;) {
    const text = await api("/api/events?stream=" + encodeURIComponent(stream) + "&from=" + from + "&limit=10000", undefined, { raw: true });
    const lines = text.split("\n").filter((line) => line);
    for (const line of lines) {
      const e = JSON.parse(line);
      read[e.version] = { seq: e.seq, time: e.time };
      from = e.seq + 1;
    }
    if (lines.length < 10000) break;
  }
  if (stream === model.stream && !versions) versions = read;
  return read;
}

function updateHistory() {
  const slider = $("slider");
  const at = shownPast();
  slider.max = String(model.version);
  slider.disabled = model.version === 0;
  if (!at) slider.value = String(model.version);
  let label;
  if (!at) {
    label = model.version === 0 ? "No changes yet" : "Now, version " + model.version;
  } else if (at.version === 0) {
    label = "Version 0 of " + model.version + ", before the first change";
  } else {
    label = "Version " + at.version + " of " + model.version + ", " + when(at.time);
  }
  $("history-label").textContent = label;
  slider.setAttribute("aria-valuetext", label);
  $("history-now").hidden = !at;
}

async function scrub() {
  const version = Number($("slider").value);
  const ticket = ++scrubbing;
  if (version >= model.version) {
    backToNow();
    return;
  }
  cancelMoves();
  try {
    let known = await loadVersions();
    if (!known[model.version]) {
      // An event folded in while the versions were read: read them again.
      versions = null;
      known = await loadVersions();
    }
    const first = known[1];
    const point = version === 0 ? { seq: first.seq - 1, time: first.time } : known[version];
    const at = shownPast();
    const from = at ? at.seq : model.head;
    const query = "?stream=" + encodeURIComponent(model.stream);
    const [list, diff] = await Promise.all([
      api("/api/items" + query + "&at=" + point.seq),
      api("/api/diff" + query + "&from=" + from + "&to=" + point.seq),
    ]);
    if (ticket !== scrubbing) return;
    showPast({ version, seq: point.seq, time: point.time, items: list.items });
    highlight(diff.inserted.concat(diff.moved, diff.edited || []).map((item) => item.id));
    render();
  } catch (e) {
    if (ticket === scrubbing) note("The history could not be read: " + e.message + ".");
  }
}

function backToNow() {
  ++scrubbing;
  if (!shownPast()) return;
  showPast(null);
  render();
}

model.subscribe((change) => {
  if (change.kind === "event") {
    if (versions) versions[change.event.version] = { seq: change.event.seq, time: change.event.time };
  } else {
    // The list read again, or another stream: its versions are read when the slider is next used.
    versions = null;
    if (change.kind === "open") showPast(null);
  }
});
onRender(updateHistory);
$("slider").addEventListener("input", scrub);
$("history-now").addEventListener("click", () => {
  backToNow();
  $("slider").focus();
});

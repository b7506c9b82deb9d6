// What is on screen: the view (chat or board) and its list, drawn from
// what is shown (shown.js), with the items that just changed highlighted;
// the empty state; the address bar; and the mark that the page is ready.
// The chat and the board give their lists (`addView`); the parts of the
// page drawn with them (the history slider, the message box, the undo
// buttons) bring themselves up to date at each render (`onRender`).

import { $ } from "./dom.js";
import { nextFrame } from "./frame.js";
import { FULL_RENDER_LIMIT } from "./listview.js";
import { model } from "./model.js";
import { cancelMoves, isHolding, isPast, pinned, shownItems, shownPast } from "./shown.js";

/** name → { list: ListView, rendered: called after each render that drew it }. */
const views = {};
let current = "chat";
/** Ids to highlight at the next render. */
const changed = new Set();
const hooks = [];
let ready = false;

export function addView(name, list, { rendered = null } = {}) {
  views[name] = { list, rendered };
}

/** "chat" or "board". */
export function currentView() {
  return current;
}

/** Calls `hook()` at the start of every render. */
export function onRender(hook) {
  hooks.push(hook);
}

/** Highlights the items `ids` at the next render. */
export function highlight(ids) {
  for (const id of ids) changed.add(id);
}

/** Draws what is shown now; `toBottom`: a chat scrolls to its end (else it stays there if it was). */
export function render({ toBottom = false } = {}) {
  for (const hook of hooks) hook();
  // A card under a finger or the mouse keeps its place: what arrived
  // meanwhile is shown when it is dropped.
  if (isHolding()) return;
  const items = shownItems();
  const view = views[current].list;
  const other = views[current === "chat" ? "board" : "chat"].list;
  other.clear();
  other.list.hidden = true;
  view.list.hidden = false;
  showEmpty(items.length === 0);
  const stickToBottom = current === "chat" && (toBottom || view.atBottom());
  view.show(items, {
    context: isPast() ? "past" : "now",
    pin: pinned(),
    changed,
    toBottom: stickToBottom,
  });
  changed.clear();
  views[current].rendered?.();
}

/** Renders in the next frame (once, however often asked before it). */
export function scheduleRender() {
  nextFrame(render);
}

/** Draws the list again where it is scrolled to (after a scroll or a resize), in the next frame. */
function scheduleDraw() {
  nextFrame(draw);
}

function draw() {
  if (!isHolding()) views[current].list.draw();
}

function showEmpty(empty) {
  $("empty").hidden = !empty;
  if (!empty) return;
  const name = "“" + model.stream + "”";
  const past = shownPast();
  let title, text;
  if (model.stale && model.items.length === 0 && model.version === 0 && !ready) {
    title = "Loading " + name + "…";
    text = "";
  } else if (past) {
    title = "Nothing here yet at version " + past.version + ".";
    text = "Move the history slider to the right to see what came later.";
  } else if (current === "chat") {
    title = "No messages in " + name + " yet.";
    text = "Write the first one in the box below; it reaches everyone who has this stream open.";
  } else {
    title = "No cards on " + name + " yet.";
    text = "Add one with the box below (a colour name like “teal” gets a swatch). "
      + "Then drag cards by their handle, long-press them on a phone, or press Space on a card and use the arrow keys.";
  }
  $("empty-title").textContent = title;
  $("empty-text").textContent = text;
}

/** Shows `view` ("chat" or "board"). */
export function show(view) {
  if (view !== current) cancelMoves();
  current = view;
  $("view-chat").setAttribute("aria-pressed", String(view === "chat"));
  $("view-board").setAttribute("aria-pressed", String(view === "board"));
  $("compose-text").placeholder = view === "chat" ? "Write a message…" : "Add a card…";
  $("compose-text").labels[0].textContent = view === "chat" ? "Message" : "New card";
  $("send").textContent = view === "chat" ? "Send" : "Add";
  updateAddress();
  render({ toBottom: true });
}

/** `?stream=S&view=V` in the address bar, for a reload or a bookmark. */
export function updateAddress() {
  const query = new URLSearchParams({ stream: model.stream, view: current });
  history.replaceState(history.state, "", location.pathname + "?" + query);
}

/** `document.body.dataset.ready`, once: the page has read its stream (or knows it cannot, for now). */
export function markReady() {
  if (ready) return;
  ready = true;
  performance.mark("msglog-ready");
  document.body.dataset.ready = "true";
}

model.subscribe((change) => {
  if (change.kind === "event") {
    if (change.event.op !== "remove") changed.add(change.event.id);
    scheduleRender();
  } else if (change.kind === "open") {
    changed.clear();
  }
});

$("view-chat").addEventListener("click", () => show("chat"));
$("view-board").addEventListener("click", () => show("board"));
$("main").addEventListener("scroll", () => {
  if (!isHolding() && views[current].list.items.length > FULL_RENDER_LIMIT) scheduleDraw();
}, { passive: true });
window.addEventListener("resize", () => scheduleDraw());

"use strict";
// msglog's page: a stream as a chat or a board, kept live with the
// server's event stream. Text is always set with textContent.
const $ = (id) => document.getElementById(id);
const state = { stream: "main", view: "chat", items: [], seq: 0, version: 0, head: 0, at: null, follow: null };
const token = new URLSearchParams(location.hash.slice(1)).get("token");

function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function api(path, body) {
  const init = body === undefined ? { headers: headers() }
    : { method: "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify(body) };
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
  if (!response.ok) { const error = new Error((data && data.error) || response.statusText); error.status = response.status; throw error; }
  return data;
}

function note(text) {
  const n = $("note");
  n.textContent = text || "";
  n.hidden = !text;
}

async function loadStreams() {
  let streams = [];
  try { streams = (await api("/api/streams")).streams; } catch (e) { /* no database yet */ }
  const select = $("stream");
  const names = streams.map((s) => s.stream);
  if (!names.includes(state.stream)) names.push(state.stream);
  select.replaceChildren(...names.map((name) => { const o = document.createElement("option"); o.value = name; o.textContent = name; return o; }));
  select.value = state.stream;
}

async function loadItems() {
  const query = "/api/items?stream=" + encodeURIComponent(state.stream);
  let list;
  try { list = await api(query); } catch (e) {
    if (e.status !== 404) throw e;
    list = { stream: state.stream, seq: 0, version: 0, count: 0, items: [] };
  }
  state.items = list.items; state.version = list.version;
  state.seq = Math.max(state.seq, list.seq);
  state.head = Math.max(state.head, list.seq);
  if (state.at === null) render(list.items, []);
  updateSlider();
}

function render(items, changedIds) {
  const changed = new Set(changedIds);
  const chat = $("chat"), board = $("board");
  chat.replaceChildren(...items.map((item) => {
    const li = document.createElement("li");
    li.className = "message" + (changed.has(item.id) ? " changed" : "");
    li.dataset.id = item.id;
    const sender = document.createElement("span"); sender.className = "sender"; sender.textContent = item.sender || "—";
    const text = document.createElement("span"); text.className = "text"; text.textContent = item.text;
    const time = document.createElement("time"); time.className = "time"; time.textContent = new Date(item.time).toLocaleTimeString();
    li.append(sender, text, time);
    return li;
  }));
  board.replaceChildren(...items.map((item, index) => {
    const li = document.createElement("li");
    li.className = "card" + (changed.has(item.id) ? " changed" : "");
    li.dataset.id = item.id; li.dataset.index = index;
    const text = document.createElement("span"); text.className = "text"; text.textContent = item.text;
    const sender = document.createElement("span"); sender.className = "sender"; sender.textContent = item.sender || "";
    const remove = document.createElement("button"); remove.type = "button"; remove.className = "delete"; remove.title = "delete"; remove.textContent = "×";
    remove.addEventListener("click", () => removeItem(item.id));
    li.append(text, sender, remove);
    li.addEventListener("pointerdown", startDrag);
    return li;
  }));
}

// Dragging a card: pointer events (mouse, pen, touch); the drop sends a
// move with the version this page showed, so a stale drag is refused.
let drag = null;
function startDrag(event) {
  if (state.at !== null || event.target.closest("button")) return;
  const card = event.currentTarget;
  drag = { card, from: Number(card.dataset.index), target: null };
  card.classList.add("dragging");
  card.setPointerCapture(event.pointerId);
  card.addEventListener("pointermove", moveDrag);
  card.addEventListener("pointerup", endDrag, { once: true });
  card.addEventListener("pointercancel", cancelDrag, { once: true });
}
function moveDrag(event) {
  if (!drag) return;
  const under = document.elementFromPoint(event.clientX, event.clientY);
  const target = under && under.closest(".card");
  if (drag.target && drag.target !== target) drag.target.classList.remove("drop-target");
  drag.target = target && target !== drag.card ? target : null;
  if (drag.target) drag.target.classList.add("drop-target");
}
function cancelDrag() { finishDrag(); }
function finishDrag() {
  if (!drag) return null;
  const d = drag; drag = null;
  d.card.classList.remove("dragging");
  d.card.removeEventListener("pointermove", moveDrag);
  if (d.target) d.target.classList.remove("drop-target");
  return d;
}
async function endDrag(event) {
  moveDrag(event);
  const d = finishDrag();
  if (!d || !d.target) return;
  await moveItem(d.from, Number(d.target.dataset.index));
}

async function moveItem(from, to) {
  // Show the move at once; the server decides.
  const items = state.items.slice();
  const [moved] = items.splice(from, 1);
  items.splice(to, 0, moved);
  render(items, [moved.id]);
  try {
    const result = await api("/api/move", { stream: state.stream, from, to, expectVersion: state.version });
    note("");
    if (result.version) { state.version = result.version; state.items = items; }
  } catch (e) {
    render(state.items, []);  // put the card back
    note("Your move was not applied: " + e.message + ". The board was reloaded.");
    await loadItems();
  }
}

async function removeItem(id) {
  try {
    await api("/api/remove", { stream: state.stream, id, expectVersion: state.version });
    note("");
  } catch (e) {
    note("The card was not deleted: " + e.message + ". The board was reloaded.");
    await loadItems();
  }
}

async function send(event) {
  event.preventDefault();
  const text = $("compose-text").value;
  if (!text) return;
  const body = { stream: state.stream, text };
  const sender = $("compose-sender").value;
  if (sender) body.sender = sender;
  try {
    await api("/api/append", body);
    $("compose-text").value = "";
    note("");
  } catch (e) { note("Not sent: " + e.message); }
}

// History: the slider runs over the log's seqs; a past seq shows the
// stream as it was (replay --at), and moving between two seqs
// highlights what the diff says changed.
function updateSlider() {
  const slider = $("slider");
  slider.max = String(state.head);
  if (state.at === null) slider.value = String(state.head);
  $("history-label").textContent = state.at === null ? "now (seq " + state.head + ")" : "as of seq " + state.at;
}
let scrubbing = 0;
async function scrub() {
  const value = Number($("slider").value);
  const ticket = ++scrubbing;
  const from = state.at === null ? state.head : state.at;
  if (value >= state.head) {
    state.at = null;
    document.body.classList.remove("past");
    render(state.items, []);
    updateSlider();
    return;
  }
  const [list, diff] = await Promise.all([
    api("/api/items?stream=" + encodeURIComponent(state.stream) + "&at=" + value),
    api("/api/diff?stream=" + encodeURIComponent(state.stream) + "&from=" + from + "&to=" + value),
  ]);
  if (ticket !== scrubbing) return;
  state.at = value;
  document.body.classList.add("past");
  render(list.items, diff.inserted.map((i) => i.id).concat(diff.moved.map((m) => m.id)));
  updateSlider();
}

// Live updates: the event stream from the seq this page has shown, so
// nothing is missed between the load and the stream; a reconnect
// resumes after the last event received.
async function follow() {
  const controller = new AbortController();
  state.follow = controller;
  let last = state.seq;
  while (!controller.signal.aborted) {
    try {
      const response = await fetch("/api/follow?from=" + (last + 1), { headers: headers(), signal: controller.signal });
      if (!response.ok) throw new Error(response.statusText);
      $("status").textContent = "live";
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end); buffer = buffer.slice(end + 2);
          let id = null, data = null;
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = Number(line.slice(4));
            else if (line.startsWith("data: ")) data = JSON.parse(line.slice(6));
          }
          if (id !== null && data) { last = id; received(data); }
        }
      }
    } catch (e) {
      if (controller.signal.aborted) return;
    }
    $("status").textContent = "reconnecting…";
    await new Promise((r) => setTimeout(r, 1000));
  }
}

let reload = null;
function received(event) {
  state.head = Math.max(state.head, event.seq);
  if (event.stream !== state.stream) {
    if (![...$("stream").options].some((o) => o.value === event.stream)) loadStreams();
    updateSlider();
    return;
  }
  clearTimeout(reload);
  reload = setTimeout(() => loadItems().catch((e) => note(e.message)), 20);
}

function show(view) {
  state.view = view;
  $("chat").hidden = view !== "chat";
  $("board").hidden = view !== "board";
  $("view-chat").setAttribute("aria-pressed", String(view === "chat"));
  $("view-board").setAttribute("aria-pressed", String(view === "board"));
  history.replaceState(null, "", "?stream=" + encodeURIComponent(state.stream) + "&view=" + view + location.hash);
}

async function open(stream) {
  state.stream = stream; state.at = null; state.seq = 0;
  document.body.classList.remove("past");
  show(state.view);
  await loadStreams();
  await loadItems();
}

async function start() {
  const params = new URLSearchParams(location.search);
  state.stream = params.get("stream") || "main";
  state.view = params.get("view") === "board" ? "board" : "chat";
  $("view-chat").addEventListener("click", () => show("chat"));
  $("view-board").addEventListener("click", () => show("board"));
  $("stream").addEventListener("change", (e) => open(e.target.value));
  $("new-stream").addEventListener("change", (e) => { if (e.target.value) open(e.target.value); e.target.value = ""; });
  $("compose").addEventListener("submit", send);
  $("slider").addEventListener("input", () => scrub().catch((e) => note(e.message)));
  await open(state.stream);
  document.body.dataset.ready = "true";
  follow();
}
start().catch((e) => note(e.message));

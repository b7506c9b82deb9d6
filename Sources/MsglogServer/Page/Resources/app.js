"use strict";
// msglog's page: one stream as a chat or as a board, kept live by the
// server's event stream.
//
// How it holds together:
// - The model (state.items at state.version) is the stream at its head: the
//   list from /api/items, then each event of the stream folded in by version
//   (`apply`, the event table of docs/REFERENCE.md). An event out of order
//   means the page lost track of the log (a restart on another log): it
//   reads the list again.
// - What is shown is `shownItems()`: the past (the history slider), a card
//   being moved, a write on its way, or the model.
// - Every write goes through `write()` with the version the page showed (a
//   drag with `rebase`, so that it lands where it was meant even when the
//   stream moved meanwhile); its answer is folded in like the event it is,
//   and its seq kept, so that Ctrl+Z undoes this page's own last change.
// - A write's list is shown at once (`state.pending`) and stays until the
//   model reaches the write's version: a card never goes back in between.
// - Lists are drawn by ListView, which keeps only what is on screen in the
//   DOM, so that 10,000 items cost what 50 do.
// Text from the log is only ever set with textContent.

const $ = (id) => document.getElementById(id);

/** Above this many items a list is drawn a screenful at a time. */
const FULL_RENDER_LIMIT = 200;
/** Pixels drawn above and below the screen. */
const OVERSCAN = 800;
/** A touch held this long without moving picks a card up (as iOS does). */
const LONG_PRESS_MS = 450;
/** The longest wait between two tries to reach the server. */
const MAX_BACKOFF_MS = 5000;
const TOKEN_KEY = "msglog.token";
const SENDER_KEY = "msglog.sender";

const state = {
  stream: "main",
  view: "chat",
  /** The stream at its head (version `version`), as this page knows it. */
  items: [],
  version: 0,
  /** The log's head seq as last read: following resumes after it. */
  head: 0,
  /** Whether the model must be read again before following. */
  stale: true,
  /** The history slider's position: null for now, else { version, seq, time, items }. */
  at: null,
  /** [version] → { seq, time } for the stream, read when the slider is first used. */
  versions: null,
  /** The list shown while a write is on its way (and until the model reaches it). */
  pending: null,
  /** The version the model must reach before `pending` gives way to it. */
  pendingUntil: 0,
  /** Items removed while this page followed the stream, by id: a restore brings one back. */
  removed: new Map(),
  /** The AbortController of the live event stream; abort() stops following. */
  follow: null,
  /** The name this page sends as: its messages go on the other side. */
  me: "",
  /** Ids to highlight at the next render. */
  changed: new Set(),
};

// MARK: - Storage and the token

const storage = {
  get(area, key) {
    try { return window[area].getItem(key); } catch { return null; }
  },
  set(area, key, value) {
    try {
      if (value === null) window[area].removeItem(key); else window[area].setItem(key, value);
    } catch { /* storage off: the value lives as long as the page */ }
  },
};

let token = takeTokenFromFragment() ?? storage.get("sessionStorage", TOKEN_KEY);

// `#token=…` is read as written (URLSearchParams would turn a `+` into a
// space), then leaves the address bar, so that no bookmark, screenshot or
// shared link carries it; sessionStorage keeps it for reloads of this tab.
function takeTokenFromFragment() {
  let found = null;
  for (const part of location.hash.slice(1).split("&")) {
    if (!part.startsWith("token=")) continue;
    const raw = part.slice("token=".length);
    try { found = decodeURIComponent(raw); } catch { found = raw; }
  }
  if (found === null) return null;
  storage.set("sessionStorage", TOKEN_KEY, found);
  history.replaceState(history.state, "", location.pathname + location.search);
  return found;
}

function askForToken() {
  const form = $("token-form");
  $("token-why").textContent = token
    ? "The server did not accept this page's token. Enter the access token it was started with (MSGLOG_TOKEN)."
    : "This server needs its access token: the MSGLOG_TOKEN (or --token) it was started with.";
  setStatus("offline", "Needs a token");
  if (form.hidden) {
    form.hidden = false;
    $("token-input").focus();
  }
}

function useToken(event) {
  event.preventDefault();
  token = $("token-input").value;
  storage.set("sessionStorage", TOKEN_KEY, token);
  $("token-input").value = "";
  $("token-form").hidden = true;
  note("");
  open(state.stream);
}

// MARK: - The API

class HTTPError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function headers(extra) {
  const h = Object.assign({}, extra);
  if (token) h.Authorization = "Bearer " + token;
  return h;
}

/** GET (no body) or POST a JSON body; the answer as JSON, or as text with `raw`. */
async function api(path, body, { raw = false } = {}) {
  const init = body === undefined
    ? { headers: headers(), cache: "no-store" }
    : { method: "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify(body) };
  let response, text;
  try {
    response = await fetch(path, init);
    text = await response.text();
  } catch {
    throw new HTTPError(0, "the server cannot be reached");
  }
  if (!response.ok) {
    let message = response.statusText || "HTTP " + response.status;
    try { message = JSON.parse(text).error || message; } catch { /* not JSON: keep the status text */ }
    if (response.status === 401) askForToken();
    throw new HTTPError(response.status, message);
  }
  if (raw) return text;
  return text ? JSON.parse(text) : null;
}

/** This page's own changes, by seq: Ctrl+Z (or Undo) undoes the last, Shift+Ctrl+Z redoes. */
const changes = { undo: [], redo: [], busy: false };

// Every write goes through here: one place for what all writes share (the
// stream, and the record of this page's own changes, by seq, for undo).
async function write(op, body) {
  const answer = await api("/api/" + op, Object.assign({ stream: state.stream }, body));
  if (answer && answer.seq) {
    changes.undo.push(answer.seq);
    changes.redo = [];
    updateUndo();
  }
  return answer;
}

/**
 * Shows the model again once it has the write answered by `answer`: at
 * once when it has folded it in, else when the events between (which the
 * follow brings) have arrived — until then the write's own list stays.
 */
function settle(answer) {
  if (answer && answer.version && state.version < answer.version) {
    state.pendingUntil = Math.max(state.pendingUntil, answer.version);
  } else {
    state.pending = null;
  }
}

// MARK: - What the page says

/** What the note's button does, when it has one (the "Undo" of a deleted card). */
let noteAction = null;

function note(text, action = null) {
  $("note-text").textContent = text || "";
  $("note").hidden = !text;
  noteAction = action && action.run;
  $("note-action").hidden = !action;
  if (action) $("note-action").textContent = action.label;
}

/** Says `text` to a screen reader (the aria-live region). */
function announce(text) {
  $("announce").textContent = text;
}

function setStatus(kind, text) {
  const status = $("status");
  if (status.dataset.state === kind && status.textContent === text) return;
  status.dataset.state = kind;
  status.textContent = text;
}

function quoted(text, limit = 40) {
  const one = text.replace(/\s+/g, " ").trim();
  return "'" + (one.length > limit ? one.slice(0, limit - 1) + "…" : one) + "'";
}

const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dayThisYear = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
const dayOtherYear = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric" });
const fullDate = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" });

/** A time as people read it: the clock today, with the date on any other day. */
function when(iso) {
  const date = new Date(iso);
  if (isNaN(date)) return iso;
  const now = new Date();
  if (date.toDateString() === now.toDateString()) return clock.format(date);
  const day = date.getFullYear() === now.getFullYear() ? dayThisYear : dayOtherYear;
  return day.format(date) + ", " + clock.format(date);
}

// MARK: - The model: events folded into the list

/** Each kind of event, applied to a list (docs/REFERENCE.md's event table); false when it does not fit. */
const apply = {
  insert(items, e) {
    if (e.index > items.length) return false;
    const item = { id: e.id, text: e.text, time: e.time, seq: e.seq };
    if (e.sender !== undefined) item.sender = e.sender;
    items.splice(e.index, 0, item);
  },
  remove(items, e) {
    const index = items.findIndex((item) => item.id === e.id);
    if (index < 0) return false;
    const [item] = items.splice(index, 1);
    state.removed.set(item.id, item);
  },
  move(items, e) {
    if (!items[e.from] || items[e.from].id !== e.id || e.to >= items.length) return false;
    const [item] = items.splice(e.from, 1);
    items.splice(e.to, 0, item);
  },
  edit(items, e) {
    const index = items.findIndex((item) => item.id === e.id);
    if (index < 0) return false;
    items[index] = Object.assign({}, items[index], { text: e.text, edited: e.time });
  },
  restore(items, e) {
    // The item as it was removed (its text, author, time); one removed
    // before this page read the list is not known here: read it again.
    const item = state.removed.get(e.id);
    if (!item || e.index > items.length) return false;
    state.removed.delete(e.id);
    items.splice(e.index, 0, item);
  },
};

/**
 * Folds one event of the stream into the model. `fromWrite`: the answer
 * to this page's own write, which may arrive before events it follows.
 * False when the page has lost track of the log and must read it again.
 */
function fold(event, { fromWrite = false } = {}) {
  if (event.stream !== state.stream) return true;
  if (event.version <= state.version) {  // already in the list
    state.head = Math.max(state.head, event.seq);
    return true;
  }
  // The follow brings the ones between (and resumes after the last folded in, not after this one).
  if (event.version !== state.version + 1) return fromWrite;
  state.head = Math.max(state.head, event.seq);
  const step = apply[event.op];
  if (!step || step(state.items, event) === false) return false;
  state.version = event.version;
  if (state.versions) state.versions[event.version] = { seq: event.seq, time: event.time };
  if (event.op !== "remove") state.changed.add(event.id);
  if (state.pendingUntil && state.version >= state.pendingUntil) {
    state.pending = null;
    state.pendingUntil = 0;
  }
  scheduleRender();
  return true;
}

/**
 * Reads the stream's list: the model from scratch, at the log's head. The
 * streams come first: a stream no event names yet has no list (404) and is
 * followed from the log's head, not from seq 1 (which would send every
 * other stream's events to this page).
 */
async function load() {
  const stream = state.stream;
  const streams = await readStreams();
  fillPicker(streams.map((s) => s.stream));
  let list = { seq: streams.reduce((head, s) => Math.max(head, s.seq), 0), version: 0, items: [] };
  if (streams.some((s) => s.stream === stream)) {
    list = await api("/api/items?stream=" + encodeURIComponent(stream));
  }
  if (stream !== state.stream) return;
  state.items = list.items.map(({ index, ...item }) => item);
  state.version = list.version;
  state.head = list.seq;
  state.versions = null;
  state.stale = false;
  if (state.pendingUntil && state.version >= state.pendingUntil) {
    state.pending = null;
    state.pendingUntil = 0;
  }
}

async function reload() {
  try {
    await load();
  } catch (e) {
    note("The stream could not be read: " + e.message + ".");
  }
  render();
}

// MARK: - Following the log

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

/**
 * Keeps the page live: reads the list when it must, then follows the
 * stream's events from the head it read. A dropped stream is resumed after
 * the last event received, with backoff while the server is away; a stream
 * that cannot resume there (a restart on a shorter log) or events that do
 * not follow (another log) make the page read the list again.
 */
async function connect(controller) {
  const signal = controller.signal;
  let failures = 0;
  while (!signal.aborted) {
    try {
      if (state.stale) {
        await load();
        render({ toBottom: true });
      }
      markReady();
      const path = "/api/follow?stream=" + encodeURIComponent(state.stream) + "&from=" + (state.head + 1);
      const response = await fetch(path, { headers: headers(), signal, cache: "no-store" });
      if (response.status === 401) {
        askForToken();
        return;
      }
      if (!response.ok) {
        // Not resumable here (the log is shorter than the page's head, or gone): read it again.
        state.stale = true;
        throw new LostTrack("the event stream was refused");
      }
      failures = 0;
      setStatus("live", "Live");
      await readEvents(response, signal);
      // The server ended the stream (it stopped): resume after the last event.
    } catch (e) {
      if (signal.aborted) return;
      markReady();
      if (e.status === 401) return;  // the page asks for the token
      if (e.status >= 400) note("The stream could not be read: " + e.message + ".");
    }
    if (signal.aborted) return;
    failures += 1;
    const wait = Math.min(MAX_BACKOFF_MS, 250 * 2 ** failures);
    setStatus("offline", "Offline, retrying in " + Math.ceil(wait / 1000) + " s");
    await sleep(wait, signal);
    if (!signal.aborted) setStatus("connecting", "Reconnecting…");
  }
}

class LostTrack extends Error {}

/** Server-Sent Events, read from a fetch (EventSource cannot send a token). */
async function readEvents(response, signal) {
  const reader = response.body.getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let data = null;
      for (const line of block.split("\n")) {
        if (line.startsWith("data: ")) data = line.slice(6);
      }
      if (data === null) continue;  // retry: and keep-alive comments
      if (!fold(JSON.parse(data))) {
        state.stale = true;
        reader.cancel().catch(() => {});
        throw new LostTrack("the events do not follow the list");
      }
    }
  }
}

let ready = false;
function markReady() {
  if (ready) return;
  ready = true;
  performance.mark("msglog-ready");
  document.body.dataset.ready = "true";
}

// MARK: - Streams

async function readStreams() {
  try {
    return (await api("/api/streams")).streams;
  } catch (e) {
    if (e.status === 404) return [];  // no database yet
    throw e;
  }
}

async function refreshStreams() {
  try { fillPicker((await readStreams()).map((s) => s.stream)); } catch { /* keep the list shown */ }
}

function fillPicker(names) {
  const select = $("stream");
  if (!names.includes(state.stream)) names.push(state.stream);
  if ([...select.options].map((o) => o.value).join("\n") === names.join("\n")) return;
  select.replaceChildren(...names.map((name) => {
    const option = document.createElement("option");
    option.value = name;
    option.textContent = name;
    return option;
  }));
  select.value = state.stream;
}

/** Why `name` cannot be a stream (docs/REFERENCE.md: 1–200 bytes, no control characters), or null. */
function streamNameProblem(name) {
  if (!name.trim()) return "A stream name needs a character other than a space.";
  const bytes = new TextEncoder().encode(name).length;
  if (bytes > 200) return "A stream name is at most 200 bytes; this one is " + bytes + ".";
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return "A stream name cannot contain control characters.";
  return null;
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

/** Shows `stream`, read afresh and followed from the log's head. */
function open(stream) {
  if (state.follow) state.follow.abort();
  cancelMoves();
  Object.assign(state, {
    stream, items: [], version: 0, head: 0, stale: true, at: null, versions: null, pending: null, pendingUntil: 0,
  });
  state.changed.clear();
  state.removed.clear();
  endEdit();
  changes.undo = [];
  changes.redo = [];
  updateUndo();
  document.body.classList.remove("past");
  setStatus("connecting", "Connecting…");
  updateAddress();
  fillPicker([]);
  render();
  state.follow = new AbortController();
  connect(state.follow);
}

function updateAddress() {
  const query = new URLSearchParams({ stream: state.stream, view: state.view });
  history.replaceState(history.state, "", location.pathname + "?" + query);
}

// MARK: - Lists drawn a screenful at a time

/**
 * A list of items drawn into an <ol>: every item when there are few, else
 * only those on screen and OVERSCAN around them, with padding standing in
 * for the rest (heights measured once drawn, estimated before). Elements
 * are kept per id, so a redraw moves nodes instead of making them, and the
 * focused or lifted card is never taken out of the document.
 */
class ListView {
  constructor(list, { estimate, create, fill }) {
    this.list = list;
    this.scroller = $("main");
    this.estimate = estimate;
    this.create = create;
    this.fill = fill;
    this.items = [];
    this.elements = new Map();
    this.heights = new Map();
    this.measured = { total: 0, count: 0 };
    this.context = "";
    this.pin = null;
  }

  height(item) {
    const known = this.heights.get(item.id);
    if (known !== undefined) return known;
    return this.measured.count ? this.measured.total / this.measured.count : this.estimate;
  }

  atBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 48;
  }

  clear() {
    this.list.replaceChildren();
    this.elements.clear();
    this.list.style.paddingTop = this.list.style.paddingBottom = "";
    this.items = [];
  }

  /** Draws `items`; `toBottom` scrolls to the end, else what is on screen stays in place. */
  show(items, { context = "", pin = null, changed = new Set(), toBottom = false } = {}) {
    const redraw = context !== this.context;
    this.items = items;
    this.context = context;
    this.pin = pin;
    this.draw({ toBottom, changed, redraw });
  }

  range() {
    const n = this.items.length;
    if (n <= FULL_RENDER_LIMIT) return [0, n];
    const top = this.scroller.scrollTop - this.list.offsetTop - OVERSCAN;
    const bottom = top + this.scroller.clientHeight + 2 * OVERSCAN;
    let y = 0, start = 0;
    while (start < n - 1 && y + this.height(this.items[start]) <= top) y += this.height(this.items[start++]);
    let end = start;
    while (end < n && y < bottom) y += this.height(this.items[end++]);
    // Keep the lifted or focused card drawn when it is near.
    const pinned = this.pin === null ? -1 : this.indexOf(this.pin);
    if (pinned >= 0 && pinned < start && start - pinned < 100) start = pinned;
    if (pinned >= end && pinned - end < 100) end = pinned + 1;
    return [start, Math.max(end, start)];
  }

  indexOf(id) {
    return this.items.findIndex((item) => item.id === id);
  }

  draw({ toBottom = false, changed = new Set(), redraw = false } = {}) {
    const scroller = this.scroller;
    // The first drawn element on screen stays where it is on screen.
    let anchor = null, anchorTop = 0;
    if (!toBottom) {
      const top = scroller.getBoundingClientRect().top;
      for (const el of this.list.children) {
        const rect = el.getBoundingClientRect();
        if (rect.bottom > top) { anchor = el; anchorTop = rect.top; break; }
      }
    }
    let previous = null;
    for (let pass = 0; pass < 4; pass++) {
      if (toBottom) scroller.scrollTop = scroller.scrollHeight;
      const [start, end] = this.range();
      const resized = this.place(start, end, changed, redraw && pass === 0);
      if (toBottom) scroller.scrollTop = scroller.scrollHeight;
      else if (anchor && anchor.isConnected) {
        const shift = anchor.getBoundingClientRect().top - anchorTop;
        if (Math.abs(shift) >= 1) scroller.scrollTop += shift;
      }
      const now = start + ":" + end;
      if (!resized && now === previous) break;
      previous = now;
    }
  }

  /** Puts items start..<end in the list, in order; true when a height changed. */
  place(start, end, changed, redraw) {
    const wanted = [];
    for (let i = start; i < end; i++) {
      const item = this.items[i];
      let el = this.elements.get(item.id);
      if (!el) {
        el = this.create(item);
        this.elements.set(item.id, el);
      }
      if (redraw || el.shownItem !== item || el.shownContext !== this.context) {
        this.fill(el, item, this.context);
        el.shownItem = item;
        el.shownContext = this.context;
      }
      el.dataset.index = String(i);
      el.setAttribute("aria-posinset", String(i + 1));
      el.setAttribute("aria-setsize", String(this.items.length));
      if (changed.has(item.id)) flash(el);
      wanted.push(el);
    }
    const keep = new Set(wanted);
    for (const el of [...this.list.children]) {
      if (!keep.has(el)) {
        el.remove();
        this.elements.delete(el.dataset.id);
      }
    }
    for (const [id, el] of this.elements) if (!keep.has(el)) this.elements.delete(id);
    this.order(wanted);
    let above = 0, below = 0;
    for (let i = 0; i < start; i++) above += this.height(this.items[i]);
    for (let i = end; i < this.items.length; i++) below += this.height(this.items[i]);
    let resized = false;
    for (const el of wanted) {
      const h = el.offsetHeight;
      const id = el.dataset.id;
      const old = this.heights.get(id);
      if (old === h) continue;
      if (old === undefined) { this.measured.total += h; this.measured.count += 1; } else { this.measured.total += h - old; }
      this.heights.set(id, h);
      resized = true;
    }
    this.list.style.paddingTop = above ? above + "px" : "";
    this.list.style.paddingBottom = below ? below + "px" : "";
    return resized;
  }

  /**
   * Orders the list's children as `wanted`, moving the others around the
   * focused (or lifted) element: a moved element would lose focus, and a
   * touch that started on it would lose its events.
   */
  order(wanted) {
    const list = this.list;
    const focused = list.contains(document.activeElement) ? document.activeElement.closest("li") : null;
    const fixed = wanted.find((el) => el.dataset.id === this.pin) || (wanted.includes(focused) ? focused : null);
    if (!fixed) {
      let ref = list.firstChild;
      for (const el of wanted) {
        if (el === ref) ref = ref.nextSibling;
        else list.insertBefore(el, ref);
      }
      return;
    }
    const at = wanted.indexOf(fixed);
    if (!fixed.parentNode) list.append(fixed);
    let ref = fixed;
    for (let i = at - 1; i >= 0; i--) {
      if (wanted[i].nextSibling !== ref) list.insertBefore(wanted[i], ref);
      ref = wanted[i];
    }
    ref = fixed;
    for (let i = at + 1; i < wanted.length; i++) {
      if (ref.nextSibling !== wanted[i]) list.insertBefore(wanted[i], ref.nextSibling);
      ref = wanted[i];
    }
  }

  /** Scrolls item `index` into view and returns its element. */
  reveal(index) {
    const item = this.items[index];
    if (!item) return null;
    if (!this.elements.has(item.id)) {
      let y = 0;
      for (let i = 0; i < index; i++) y += this.height(this.items[i]);
      this.scroller.scrollTop = this.list.offsetTop + y - this.scroller.clientHeight / 2;
      this.draw();
    }
    const el = this.elements.get(item.id);
    if (el) el.scrollIntoView({ block: "nearest" });
    return el || null;
  }
}

function flash(el) {
  el.classList.remove("changed");
  void el.offsetWidth;  // restart the animation
  el.classList.add("changed");
  el.addEventListener("animationend", () => el.classList.remove("changed"), { once: true });
}

function element(tag, className) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  return el;
}

// A chat message: a bubble with the sender and time, the text isolated in
// its own direction, yours on the other side.
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
  meta.append(element("bdi", "sender"), element("time", "time"), edited, edit);
  const text = element("p", "text");
  text.dir = "auto";
  bubble.append(meta, text);
  li.append(bubble);
  return li;
}

/** Whether this page may edit a message: its own (sent under its name, or without one when it has none). */
function editable(item) {
  return (item.sender || "") === state.me;
}

function fillMessage(li, item, context) {
  const [sender, time, edited, edit] = li.querySelector(".meta").children;
  li.classList.toggle("mine", state.me !== "" && item.sender === state.me);
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

const notColours = new Set(["inherit", "initial", "unset", "revert", "revert-layer", "currentcolor", "transparent"]);
/** The CSS colour a card's text names (as on the colour board), or null. */
function colourOf(text) {
  const t = text.trim();
  if (!t || t.length > 64 || notColours.has(t.toLowerCase())) return null;
  return CSS.supports("color", t) ? t : null;
}

// A board card: takes focus (one card in the tab order, arrows between
// cards), picked up from the handle, a long press or the keyboard.
function createCard(item) {
  const li = element("li", "card");
  li.dataset.id = item.id;
  li.tabIndex = -1;
  li.setAttribute("aria-describedby", "card-help");
  const face = element("div", "face");
  const handle = element("span", "handle");
  handle.setAttribute("aria-hidden", "true");
  const swatch = element("span", "swatch");
  swatch.setAttribute("aria-hidden", "true");
  const text = element("span", "text");
  text.dir = "auto";
  const remove = element("button", "delete");
  remove.type = "button";
  remove.tabIndex = -1;
  remove.textContent = "×";
  face.append(handle, swatch, text, element("bdi", "sender"), remove);
  li.append(face);
  return li;
}

function fillCard(li, item, context) {
  const colour = colourOf(item.text);
  const swatch = li.querySelector(".swatch");
  swatch.hidden = colour === null;
  swatch.style.background = colour || "";
  li.querySelector(".text").textContent = item.text;
  const sender = li.querySelector(".sender");
  sender.textContent = item.sender || "";
  sender.hidden = !item.sender;
  const remove = li.querySelector(".delete");
  remove.setAttribute("aria-label", "Delete " + quoted(item.text));
  remove.title = "Delete";
  remove.hidden = context === "past";
}

const views = {
  chat: new ListView($("chat"), { estimate: 64, create: createMessage, fill: fillMessage }),
  board: new ListView($("board"), { estimate: 56, create: createCard, fill: fillCard }),
};

// MARK: - Rendering

function shownItems() {
  if (state.at) return state.at.items;
  if (lift) return moved(lift.base, lift.from, lift.to);
  if (drag) return drag.base;
  return state.pending || state.items;
}

function moved(items, from, to) {
  const copy = items.slice();
  const [item] = copy.splice(from, 1);
  copy.splice(to, 0, item);
  return copy;
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function render({ toBottom = false } = {}) {
  updateHistory();
  updateCompose();
  // A card under a finger or the mouse keeps its place: what arrived
  // meanwhile is shown when it is dropped.
  if (drag) return;
  const items = shownItems();
  const view = views[state.view];
  const other = views[state.view === "chat" ? "board" : "chat"];
  other.clear();
  other.list.hidden = true;
  view.list.hidden = false;
  showEmpty(items.length === 0);
  const stickToBottom = state.view === "chat" && (toBottom || view.atBottom());
  view.show(items, {
    context: state.at ? "past" : "now",
    pin: lift ? lift.id : null,
    changed: state.changed,
    toBottom: stickToBottom,
  });
  state.changed.clear();
  if (state.view === "board") rovingFocus();
}

function showEmpty(empty) {
  $("empty").hidden = !empty;
  if (!empty) return;
  const name = "“" + state.stream + "”";
  let title, text;
  if (state.stale && state.items.length === 0 && state.version === 0 && !ready) {
    title = "Loading " + name + "…";
    text = "";
  } else if (state.at) {
    title = "Nothing here yet at version " + state.at.version + ".";
    text = "Move the history slider to the right to see what came later.";
  } else if (state.view === "chat") {
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

/** One card in the tab order: the one last focused, else the first drawn. */
let activeCard = null;
function rovingFocus() {
  const cards = [...$("board").children];
  const active = cards.find((c) => c.dataset.id === activeCard) || cards[0];
  for (const card of cards) {
    const on = card === active;
    card.tabIndex = on ? 0 : -1;
    card.querySelector(".delete").tabIndex = on ? 0 : -1;
  }
}

function show(view) {
  if (view !== state.view) cancelMoves();
  state.view = view;
  $("view-chat").setAttribute("aria-pressed", String(view === "chat"));
  $("view-board").setAttribute("aria-pressed", String(view === "board"));
  $("compose-text").placeholder = view === "chat" ? "Write a message…" : "Add a card…";
  $("compose-text").labels[0].textContent = view === "chat" ? "Message" : "New card";
  $("send").textContent = view === "chat" ? "Send" : "Add";
  updateAddress();
  render({ toBottom: true });
}

// MARK: - Writing

/** A message on its way: a retry or a second click sends it with the same id, so it is appended once. */
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
  if (sending || state.at) return;
  const box = $("compose-text");
  const text = box.value;
  if (!text.trim()) return;
  const sender = $("compose-sender").value.trim();
  if (!outgoing || outgoing.text !== text || outgoing.sender !== sender || outgoing.stream !== state.stream) {
    outgoing = { id: newID(), text, sender, stream: state.stream };
  }
  const message = outgoing;
  sending = true;
  updateCompose();
  try {
    const body = { text, id: message.id };
    if (sender) body.sender = sender;
    let answer;
    try {
      answer = await write("append", body);
    } catch (e) {
      // Sent before, its answer lost: the id is in the stream already.
      if (!(e.status === 409 && (await delivered(message.id)))) throw e;
    }
    if (answer) fold({ op: "insert", ...answer, text, sender: sender || undefined }, { fromWrite: true });
    if (box.value === text) box.value = "";
    growBox();
    outgoing = null;
    note("");
    if (sender !== state.me) {
      state.me = sender;
      storage.set("localStorage", SENDER_KEY, sender || null);
      views.chat.context = "";  // whose messages are whose changed: redraw them
    }
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
    const list = await api("/api/items?stream=" + encodeURIComponent(state.stream));
    return list.items.some((item) => item.id === id);
  } catch {
    return false;
  }
}

function updateCompose() {
  const past = state.at !== null;
  updateUndo();
  if (past) endEdit();
  $("compose-fields").disabled = past;
  $("send").disabled = past || sending;
  document.body.classList.toggle("past", past);
}

function growBox() {
  const box = $("compose-text");
  box.style.height = "auto";
  box.style.height = box.scrollHeight + 2 + "px";
}

/**
 * Sends a move computed on the list shown at `version`, with `rebase`: if
 * someone changed the stream meanwhile, the server puts the card right
 * after the card it was dropped under (or the first one before it still
 * there), where its person meant it — never back. Shown at once; the list
 * shown stays until the model has the move. Put back only if refused (the
 * card was deleted meanwhile).
 */
async function moveCard(base, from, to, version) {
  if (from === to) return;
  state.pending = moved(base, from, to);
  render();
  try {
    const answer = await write("move", { from, to, expectVersion: version, rebase: true });
    if (answer && answer.version) {
      fold({ op: "move", ...answer }, { fromWrite: true });
      settle(answer);
    } else {
      state.pending = null;  // already where it was meant: nothing written
    }
    note("");
  } catch (e) {
    state.pending = null;
    render();  // the card goes back, visibly
    note("Your move was not applied: " + e.message + ". The board was reloaded.");
    await reload();
  }
  render();
}

async function removeCard(id) {
  if (state.at || lift || drag) return;
  const base = shownItems();
  const index = base.findIndex((item) => item.id === id);
  if (index < 0) return;
  const item = base[index];
  const next = base[index + 1] || base[index - 1];
  const hadFocus = $("board").contains(document.activeElement);
  state.pending = base.filter((i) => i.id !== id);
  if (next) activeCard = next.id;
  render();
  if (hadFocus && next) views.board.elements.get(next.id)?.focus();
  try {
    // By id: the card is the one meant whatever moved meanwhile.
    const answer = await write("remove", { id });
    fold({ op: "remove", ...answer }, { fromWrite: true });
    settle(answer);
    // A card deleted by mistake comes back where it was (after its predecessor).
    note("Deleted card " + quoted(item.text) + ".", { label: "Undo", run: () => undoChange(answer.seq) });
    announce("Deleted card " + quoted(item.text) + ". Undo is in the note at the top, or Control Z.");
  } catch (e) {
    state.pending = null;
    note("The card " + quoted(item.text) + " was not deleted: " + e.message + ".");
    await reload();
  }
  render();
}

// MARK: - Undo and redo: this page's own changes, by seq

/**
 * Undoes change `seq` (the server appends the event that undoes it: a
 * remove for an append, a restore after its predecessor for a delete, the
 * text before for an edit, a move back for a move); its undo goes on the
 * redo list. `redoing`: `seq` is an undo, and undoing it redoes.
 */
async function undoChange(seq, { redoing = false } = {}) {
  if (changes.busy || state.at) return;
  for (const list of [changes.undo, changes.redo]) {
    const at = list.lastIndexOf(seq);
    if (at >= 0) list.splice(at, 1);
  }
  changes.busy = true;
  updateUndo();
  const what = redoing ? "redo" : "undo";
  try {
    // The event comes back through the follow, like anyone's.
    const answer = await api("/api/undo", { stream: state.stream, seq });
    if (answer && answer.seq) {
      (redoing ? changes.undo : changes.redo).push(answer.seq);
      announce(redoing ? "Redone." : "Undone.");
    } else {
      announce("Nothing to " + what + ": it is as it was already.");
    }
    note("");
  } catch (e) {
    note("Could not " + what + " that: " + e.message + ".");
  } finally {
    changes.busy = false;
    updateUndo();
  }
}

function undoLast() {
  const seq = changes.undo[changes.undo.length - 1];
  if (seq === undefined) announce("Nothing of yours to undo.");
  else undoChange(seq);
}

function redoLast() {
  const seq = changes.redo[changes.redo.length - 1];
  if (seq === undefined) announce("Nothing to redo.");
  else undoChange(seq, { redoing: true });
}

function updateUndo() {
  const past = state.at !== null;
  $("undo").disabled = changes.busy || past || changes.undo.length === 0;
  $("redo").disabled = changes.busy || past || changes.redo.length === 0;
}

/** Ctrl+Z (Cmd+Z on a Mac) undoes, Shift+Ctrl+Z redoes — except in a text field, which keeps its own. */
function onUndoKey(event) {
  if (event.key.toLowerCase() !== "z" || !(event.ctrlKey || event.metaKey) || event.altKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
  if (drag || lift) return;
  event.preventDefault();
  if (event.shiftKey) redoLast(); else undoLast();
}

// MARK: - Editing a message in place

/** The message being edited: { id, form }. */
let editing = null;

function startEdit(id) {
  if (state.at || editing) return;
  const item = shownItems().find((i) => i.id === id);
  const li = views.chat.elements.get(id);
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
  const li = views.chat.elements.get(id);
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
  state.pending = (state.pending || state.items).map((i) => (i.id === id ? { ...i, text, edited: new Date().toISOString() } : i));
  render();
  try {
    const body = { id, text };
    if (sender) body.sender = sender;
    const answer = await write("edit", body);
    if (answer && answer.version) {
      fold({ op: "edit", ...answer, text }, { fromWrite: true });
      settle(answer);
    } else {
      state.pending = null;
    }
    note("");
    announce("Message edited.");
  } catch (e) {
    state.pending = null;
    note("The message was not edited: " + e.message + ".");
    await reload();
  }
  render();
}

// MARK: - Moving cards with the keyboard (dnd-kit's keyboard sensor)

/** A card picked up from the keyboard: { id, text, from, to, version, base }. */
let lift = null;

function onBoardKey(event) {
  const card = event.target;
  if (!card.classList || !card.classList.contains("card")) return;  // keys on the delete button are its own
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const index = Number(card.dataset.index);
  const count = shownItems().length;
  let handled = true;
  if (lift) {
    switch (event.key) {
      case "ArrowUp": stepLift(-1); break;
      case "ArrowDown": stepLift(1); break;
      case " ": case "Enter": dropLift(); break;
      case "Escape": cancelLift(); break;
      case "Tab": cancelLift(); handled = false; break;
      default: handled = false;
    }
  } else {
    switch (event.key) {
      case " ": case "Enter": pickUp(card); break;
      case "ArrowUp": focusCard(index - 1); break;
      case "ArrowDown": focusCard(index + 1); break;
      case "Home": focusCard(0); break;
      case "End": focusCard(count - 1); break;
      default: handled = false;
    }
  }
  if (handled) event.preventDefault();
}

function focusCard(index) {
  const count = shownItems().length;
  if (index < 0 || index >= count) return;
  const el = views.board.reveal(index);
  if (!el) return;
  activeCard = el.dataset.id;
  rovingFocus();
  el.focus();
}

function pickUp(card) {
  if (state.at) {
    announce("This is the board as it was. Go back to now to move cards.");
    return;
  }
  if (drag || state.pending) return;
  const base = shownItems().slice();
  const from = base.findIndex((item) => item.id === card.dataset.id);
  if (from < 0) return;
  lift = { id: card.dataset.id, text: base[from].text, from, to: from, version: state.version, base };
  card.classList.add("lifted");
  announce("Picked up card " + quoted(lift.text) + ". It is at position " + (from + 1) + " of " + base.length
    + ". Use the up and down arrow keys to move it, Space or Enter to drop it, Escape to cancel.");
}

function stepLift(delta) {
  const count = lift.base.length;
  const to = lift.to + delta;
  if (to < 0 || to >= count) {
    announce("Card " + quoted(lift.text) + " is already at the " + (to < 0 ? "top" : "bottom") + ", position " + (lift.to + 1) + " of " + count + ".");
    return;
  }
  lift.to = to;
  render();
  views.board.reveal(to);
  announce("Card " + quoted(lift.text) + " moved to position " + (to + 1) + " of " + count + ".");
}

function dropLift() {
  const l = lift;
  lift = null;
  views.board.elements.get(l.id)?.classList.remove("lifted");
  const count = l.base.length;
  if (l.to === l.from) {
    announce("Card " + quoted(l.text) + " dropped at its original position, " + (l.from + 1) + " of " + count + ".");
    render();
    return;
  }
  announce("Card " + quoted(l.text) + " dropped at position " + (l.to + 1) + " of " + count + ".");
  moveCard(l.base, l.from, l.to, l.version);
}

function cancelLift() {
  const l = lift;
  lift = null;
  views.board.elements.get(l.id)?.classList.remove("lifted");
  render();
  views.board.reveal(l.from);
  announce("Moving cancelled. Card " + quoted(l.text) + " is back at position " + (l.from + 1) + " of " + l.base.length + ".");
}

// MARK: - Moving cards with a pointer: mouse, pen, or touch (handle or long press)

/** A pointer down on a card that may become a drag. */
let press = null;
/** A card being dragged: { id, from, to, version, base, card, slots, size, startY, startScroll, lastY }. */
let drag = null;

function onPointerDown(event) {
  if (event.button !== 0 || !event.isPrimary || state.at || lift || drag || state.pending) return;
  const card = event.target.closest(".card");
  if (!card || event.target.closest("button")) return;
  cancelPress();
  press = { card, id: card.dataset.id, x: event.clientX, y: event.clientY, type: event.pointerType, timer: 0 };
  if (event.target.closest(".handle")) {
    // From the handle a drag starts at once, on any pointer (it does not scroll).
    event.preventDefault();
    startDrag(event.clientY);
  } else if (event.pointerType === "touch") {
    // On the card, scrolling wins: only a touch held still picks it up.
    card.classList.add("pressing");
    press.timer = setTimeout(() => {
      if (press) startDrag(press.y);
    }, LONG_PRESS_MS);
  }
}

function onPointerMove(event) {
  if (drag) {
    moveDrag(event.clientY);
    return;
  }
  if (!press) return;
  const distance = Math.hypot(event.clientX - press.x, event.clientY - press.y);
  if (press.type === "touch") {
    if (distance > 10) cancelPress();  // a swipe: the page scrolls
  } else if (distance > 4) {
    startDrag(press.y);
    moveDrag(event.clientY);
  }
}

function onPointerUp(event) {
  if (drag) {
    moveDrag(event.clientY);
    endDrag(true);
  }
  cancelPress();
}

function onPointerCancel() {
  if (drag) endDrag(false);
  cancelPress();
}

function cancelPress() {
  if (!press) return;
  clearTimeout(press.timer);
  press.card.classList.remove("pressing");
  press = null;
}

function startDrag(startY) {
  const card = press.card;
  clearTimeout(press.timer);
  card.classList.remove("pressing");
  const base = shownItems().slice();
  const from = base.findIndex((item) => item.id === press.id);
  if (from < 0 || !card.isConnected) { cancelPress(); return; }
  const scroller = $("main");
  const top = scroller.getBoundingClientRect().top - scroller.scrollTop;
  // Where each drawn card sits (in the scrolled content), to find the slot under the dragged one.
  const slots = [...$("board").children].map((el) => {
    const rect = el.getBoundingClientRect();
    return { el, index: Number(el.dataset.index), top: rect.top - top, height: rect.height };
  });
  drag = {
    id: press.id, from, to: from, version: state.version, base, card, slots, size: card.offsetHeight,
    startY, startScroll: scroller.scrollTop, lastY: startY, edge: 0,
  };
  card.classList.add("dragging");
  $("board").classList.add("sorting");
  if (press.type === "touch" && navigator.vibrate) navigator.vibrate(10);
}

function moveDrag(clientY) {
  const scroller = $("main");
  drag.lastY = clientY;
  const dy = clientY - drag.startY + scroller.scrollTop - drag.startScroll;
  drag.card.style.transform = "translateY(" + dy + "px)";
  const self = drag.slots.find((slot) => slot.el === drag.card);
  const centre = self.top + self.height / 2 + dy;
  let to = drag.to, best = Infinity;
  for (const slot of drag.slots) {
    const distance = Math.abs(slot.top + slot.height / 2 - centre);
    if (distance < best) { best = distance; to = slot.index; }
  }
  if (to !== drag.to) {
    drag.to = to;
    // The cards between make room, as they will be once it is dropped.
    for (const slot of drag.slots) {
      if (slot.el === drag.card) continue;
      let shift = 0;
      if (drag.from < to && slot.index > drag.from && slot.index <= to) shift = -drag.size;
      if (drag.from > to && slot.index >= to && slot.index < drag.from) shift = drag.size;
      slot.el.style.transform = shift ? "translateY(" + shift + "px)" : "";
    }
  }
  // Near the top or bottom edge, the list scrolls under the card.
  const rect = scroller.getBoundingClientRect();
  const edge = clientY < rect.top + 40 ? -1 : clientY > rect.bottom - 40 ? 1 : 0;
  if (edge && !drag.edge) requestAnimationFrame(autoScroll);
  drag.edge = edge;
}

function autoScroll() {
  if (!drag || !drag.edge) return;
  const scroller = $("main");
  const before = scroller.scrollTop;
  scroller.scrollTop += drag.edge * 10;
  if (scroller.scrollTop !== before) moveDrag(drag.lastY);
  requestAnimationFrame(autoScroll);
}

function endDrag(drop) {
  const d = drag;
  drag = null;
  for (const slot of d.slots) slot.el.style.transform = "";
  d.card.classList.remove("dragging");
  $("board").classList.remove("sorting");
  if (drop && d.to !== d.from) moveCard(d.base, d.from, d.to, d.version);
  else render();
}

/** Puts back a card being moved (another view or stream is shown). */
function cancelMoves() {
  cancelPress();
  if (drag) endDrag(false);
  if (lift) {
    views.board.elements.get(lift.id)?.classList.remove("lifted");
    lift = null;
  }
}

// MARK: - History: the stream's own versions

async function loadVersions() {
  if (state.versions) return state.versions;
  const stream = state.stream;
  const versions = [];
  let from = 1;
  for (;;) {
    const text = await api("/api/events?stream=" + encodeURIComponent(stream) + "&from=" + from + "&limit=10000", undefined, { raw: true });
    const lines = text.split("\n").filter((line) => line);
    for (const line of lines) {
      const e = JSON.parse(line);
      versions[e.version] = { seq: e.seq, time: e.time };
      from = e.seq + 1;
    }
    if (lines.length < 10000) break;
  }
  if (stream === state.stream && !state.versions) state.versions = versions;
  return versions;
}

function updateHistory() {
  const slider = $("slider");
  slider.max = String(state.version);
  slider.disabled = state.version === 0;
  if (!state.at) slider.value = String(state.version);
  let label;
  if (!state.at) {
    label = state.version === 0 ? "No changes yet" : "Now, version " + state.version;
  } else if (state.at.version === 0) {
    label = "Version 0 of " + state.version + ", before the first change";
  } else {
    label = "Version " + state.at.version + " of " + state.version + ", " + when(state.at.time);
  }
  $("history-label").textContent = label;
  slider.setAttribute("aria-valuetext", label);
  $("history-now").hidden = !state.at;
}

let scrubbing = 0;
async function scrub() {
  const version = Number($("slider").value);
  const ticket = ++scrubbing;
  if (version >= state.version) {
    backToNow();
    return;
  }
  cancelMoves();
  try {
    let versions = await loadVersions();
    if (!versions[state.version]) {
      // An event folded in while the versions were read: read them again.
      state.versions = null;
      versions = await loadVersions();
    }
    const first = versions[1];
    const point = version === 0 ? { seq: first.seq - 1, time: first.time } : versions[version];
    const from = state.at ? state.at.seq : state.head;
    const query = "?stream=" + encodeURIComponent(state.stream);
    const [list, diff] = await Promise.all([
      api("/api/items" + query + "&at=" + point.seq),
      api("/api/diff" + query + "&from=" + from + "&to=" + point.seq),
    ]);
    if (ticket !== scrubbing) return;
    state.at = { version, seq: point.seq, time: point.time, items: list.items };
    for (const item of diff.inserted.concat(diff.moved, diff.edited || [])) state.changed.add(item.id);
    render();
  } catch (e) {
    if (ticket === scrubbing) note("The history could not be read: " + e.message + ".");
  }
}

function backToNow() {
  ++scrubbing;
  if (!state.at) return;
  state.at = null;
  render();
}

// MARK: - Start

function start() {
  const params = new URLSearchParams(location.search);
  let stream = params.get("stream") ?? "main";
  const problem = streamNameProblem(stream);
  if (problem) {
    note(problem + " Showing “main” instead.");
    stream = "main";
  }
  state.view = params.get("view") === "board" ? "board" : "chat";
  state.me = storage.get("localStorage", SENDER_KEY) || "";
  $("compose-sender").value = state.me;

  $("view-chat").addEventListener("click", () => show("chat"));
  $("view-board").addEventListener("click", () => show("board"));
  $("stream").addEventListener("focus", refreshStreams);
  $("stream").addEventListener("change", (e) => open(e.target.value));
  $("open-stream").addEventListener("submit", openNamed);
  $("new-stream").addEventListener("input", (e) => e.target.removeAttribute("aria-invalid"));
  $("note-close").addEventListener("click", () => note(""));
  $("note-action").addEventListener("click", () => {
    const run = noteAction;
    note("");
    if (run) run();
  });
  $("undo").addEventListener("click", undoLast);
  $("redo").addEventListener("click", redoLast);
  window.addEventListener("keydown", onUndoKey);
  $("chat").addEventListener("click", (e) => {
    const button = e.target.closest("button.edit");
    if (button) startEdit(button.closest(".message").dataset.id);
  });
  $("token-form").addEventListener("submit", useToken);
  $("compose").addEventListener("submit", send);
  $("compose-text").addEventListener("input", growBox);
  $("compose-text").addEventListener("keydown", (e) => {
    // Enter sends, Shift+Enter starts a new line.
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("compose").requestSubmit();
    }
  });
  $("slider").addEventListener("input", scrub);
  $("history-now").addEventListener("click", () => {
    backToNow();
    $("slider").focus();
  });

  const board = $("board");
  board.addEventListener("keydown", onBoardKey);
  board.addEventListener("focusin", (e) => {
    const card = e.target.closest(".card");
    if (card) { activeCard = card.dataset.id; rovingFocus(); }
  });
  board.addEventListener("focusout", (e) => {
    if (lift && e.target.dataset && e.target.dataset.id === lift.id && !board.contains(e.relatedTarget)) cancelLift();
  });
  board.addEventListener("click", (e) => {
    const button = e.target.closest("button.delete");
    if (button) removeCard(button.closest(".card").dataset.id);
  });
  board.addEventListener("pointerdown", onPointerDown);
  window.addEventListener("pointermove", onPointerMove);
  window.addEventListener("pointerup", onPointerUp);
  window.addEventListener("pointercancel", onPointerCancel);
  // Once a card is picked up by a long press, the finger moves it instead of the page.
  board.addEventListener("touchmove", (e) => { if (drag) e.preventDefault(); }, { passive: false });
  board.addEventListener("contextmenu", (e) => { if (press || drag) e.preventDefault(); });
  window.addEventListener("keydown", (e) => { if (drag && e.key === "Escape") endDrag(false); });

  const main = $("main");
  main.addEventListener("scroll", () => {
    if (!drag && views[state.view].items.length > FULL_RENDER_LIMIT) scheduleDraw();
  }, { passive: true });
  window.addEventListener("resize", () => scheduleDraw());

  show(state.view);
  open(stream);
}

let drawQueued = false;
function scheduleDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    if (!drag) views[state.view].draw();
  });
}

start();

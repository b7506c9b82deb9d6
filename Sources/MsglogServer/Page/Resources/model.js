// The stream as this page knows it, free of the DOM (node's test runner
// runs it: Tests/Page/model.test.mjs).
//
// Two layers:
// - what the server has: the list read from /api/items, then each event of
//   the stream folded in by version (`fold`, the event table of
//   docs/REFERENCE.md), up to `version`;
// - this page's changes on their way, replayed on top of it (`view`), each
//   item one of them touched marked `pending: true`. A change stays until
//   the server's layer has it (the event its push's outcome named), so that a
//   card never goes back in between.
// A change is replayed by what its user meant, the server's own rule for a
// drag sent with `rebase` (SPEC "Working together"): a moved card goes
// right after the card it was dropped under, or the first one before that
// still there (the top when none), whatever else arrived meanwhile.

import { Events } from "./events.js";

/** A copy of `items` with the item at `from` moved to `to` (the final index, as `move`). */
export function moved(items, from, to) {
  const copy = items.slice();
  const [item] = copy.splice(from, 1);
  copy.splice(to, 0, item);
  return copy;
}

/** At most this many predecessors go with a change (the sync protocol's bound). */
export const PREDECESSORS = 16;

/** The ids before index `index` of `items`, nearest first: where an item placed at `index` goes, by what it follows. */
export function predecessors(items, index) {
  const ids = [];
  for (let i = Math.min(index, items.length) - 1; i >= 0; i--) ids.push(items[i].id);
  return ids;
}

/** A move of the list shown as `base` (item `from` to `to`), as a change to propose: the item and what it follows there. */
export function moveChange(base, from, to) {
  return { op: "move", id: base[from].id, after: predecessors(moved(base, from, to), to) };
}

/** Where an item that follows `after` (ids, nearest first) goes in `items`: right after the first still there, else 0. */
function placeAfter(items, after) {
  if (after.length === 0) return 0;
  const index = new Map(items.map((item, i) => [item.id, i]));  // one pass, however many are gone
  for (const id of after) {
    const at = index.get(id);
    if (at !== undefined) return at + 1;
  }
  return 0;
}

/**
 * Each kind of event, applied to a list (docs/REFERENCE.md's event table);
 * false when it does not fit. `removed`: the items removed while this page
 * followed the stream, by id, for a restore.
 */
const apply = {
  insert(items, e) {
    if (e.index > items.length) return false;
    const item = { id: e.id, text: e.text, time: e.time, seq: e.seq };
    if (e.sender !== undefined) item.sender = e.sender;
    items.splice(e.index, 0, item);
  },
  remove(items, e, removed) {
    const index = items.findIndex((item) => item.id === e.id);
    if (index < 0) return false;
    const [item] = items.splice(index, 1);
    removed.set(item.id, item);
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
  /**
   * Erased for everyone: gone as by a remove (a removed item stays gone),
   * and never restored, so the text kept for a restore goes too. Applies
   * whether or not the item is in the list (SPEC "Forgetting on purpose").
   */
  erase(items, e, removed) {
    const index = items.findIndex((item) => item.id === e.id);
    if (index >= 0) items.splice(index, 1);
    removed.delete(e.id);
  },
  // An edit's sender taken off (erase --sender): the list does not show it; nothing changes.
  unsign() {},
  restore(items, e, removed) {
    // The item as it was removed (its text, author, time); one removed
    // before this page read the list is not known here: read it again.
    const item = removed.get(e.id);
    if (!item || e.index > items.length) return false;
    removed.delete(e.id);
    items.splice(e.index, 0, item);
  },
};

/** Each kind of change of this page, replayed on a list; false when it no longer applies (its item is gone). */
const replay = {
  /** A message sent: at the end, as the server puts an append (after what others sent meanwhile). */
  append(items, c) {
    const item = { id: c.id, text: c.text, time: c.time, pending: true };
    if (c.sender !== undefined) item.sender = c.sender;
    items.push(item);
  },
  /** An undo shows when its event arrives; one of a change still on its way takes that change off (`cancelled`). */
  undo() {},
  insert(items, c) {
    const item = { id: c.id, text: c.text, time: c.time, pending: true };
    if (c.sender !== undefined) item.sender = c.sender;
    items.splice(c.after ? placeAfter(items, c.after) : items.length, 0, item);
  },
  move(items, c) {
    const index = items.findIndex((item) => item.id === c.id);
    if (index < 0) return false;
    const [item] = items.splice(index, 1);
    items.splice(placeAfter(items, c.after), 0, { ...item, pending: true });
  },
  remove(items, c) {
    const index = items.findIndex((item) => item.id === c.id);
    if (index < 0) return false;
    items.splice(index, 1);
  },
  edit(items, c) {
    const index = items.findIndex((item) => item.id === c.id);
    if (index < 0) return false;
    items[index] = { ...items[index], text: c.text, edited: c.edited, pending: true };
  },
};

/**
 * The keys of the changes in `pending` that a later undo on its way takes
 * back (`undoesKey`), walking back from the last: an undo itself taken back
 * by a later one takes nothing back.
 */
export function cancelled(pending) {
  const out = new Set();
  for (let i = pending.length - 1; i >= 0; i--) {
    const c = pending[i];
    if (c.op === "undo" && c.undoesKey !== undefined && !out.has(c.key)) out.add(c.undoesKey);
  }
  return out;
}

/**
 * Tells (`on`) every change of the server's layer: "open" for another
 * stream, "list" when the list was read again, "event" (the event) for
 * each event folded in, and "arrived" (the event) after it for an item
 * someone else added (not one of this browser's changes on their way).
 */
export class StreamModel extends Events {
  constructor(stream = "main") {
    super(["open", "list", "event", "arrived"]);
    this.open(stream);
  }

  /** Starts over on `stream`: nothing known, to be read. */
  open(stream) {
    this.stream = stream;
    /**
     * The log the list was read from (the sync hello's id; the one a kept
     * list was read from): undefined until read, null when the server has
     * no log yet (or one without an id). This page's changes are made on it.
     */
    this.log = undefined;
    /** The stream at `version`, as the server has it. */
    this.items = [];
    this.version = 0;
    /** The log's head seq as last read: following resumes after it. */
    this.head = 0;
    /** The seq the log's kept history begins at, as the list was read (0: never trimmed, or not known). */
    this.horizon = 0;
    /** Whether the list must be read again (the page lost track of the log). */
    this.stale = true;
    /** Items removed while this page followed the stream, by id: a restore brings one back. */
    this.removed = new Map();
    /** Items known erased (`forget`) whose erase event is not folded in yet: blanked in `items`, never shown. */
    this.blanked = new Set();
    /** This page's changes on their way, in the order made. */
    this.pending = [];
    this.shown = null;
    this.emit("open");
  }

  /** The list read from the server (`/api/items`) of `log`: the server's layer from scratch, at the log's head `seq`. */
  reset({ items, version, seq, log, horizon }) {
    this.log = log;
    this.horizon = horizon ?? 0;
    this.items = items.map(({ index, ...item }) => item);
    this.version = version;
    this.head = seq;
    this.stale = false;
    // A list kept for a reload holds the items this page knew erased, blanked.
    this.blanked = new Set(this.items.filter((item) => item.erased).map((item) => item.id));
    this.expire();
    this.shown = null;
    this.emit("list");
  }

  /** Marks the list as one to read again: the events do not follow it (another log), or its stream cannot be resumed. */
  lostTrack() {
    this.stale = true;
  }

  /** Folds one event of the stream in; false when the page has lost track of the log and must read it again. */
  fold(event) {
    if (event.stream !== this.stream) return true;
    if (event.version <= this.version) {  // already in the list
      this.head = Math.max(this.head, event.seq);
      this.expire();
      return true;
    }
    // Following brings the ones between (and resumes after the last folded in, not after this one).
    if (event.version !== this.version + 1) return false;
    this.head = Math.max(this.head, event.seq);
    // Asked before `expire` drops the change this event answers.
    const arrived = event.op === "insert" && event.text !== "" && !this.pending.some((change) => change.id === event.id);
    const step = apply[event.op];
    if (!step || step(this.items, event, this.removed) === false) return false;
    if (event.op === "erase") this.blanked.delete(event.id);
    // An insert or edit whose text was erased since (following from before the erase): its erase follows.
    // (An edit unsigned since keeps its text: texts are never empty otherwise.)
    else if (event.erased !== undefined && event.text === "") this.forget([event.id]);
    this.version = event.version;
    this.expire();
    this.shown = null;
    this.emit("event", event);
    if (arrived) this.emit("arrived", event);
    return true;
  }

  /**
   * The items `ids` were erased (this page's own erase was answered, or a
   * push was refused for it), ahead of their erase events: their text and
   * sender go from the list at once — blanked in place, so that the events
   * before the erase still fold in by index — and they are no longer
   * shown; their text kept for a restore goes, and so do this page's
   * changes of them on their way. Whether anything was forgotten.
   */
  forget(ids) {
    const gone = new Set(ids);
    let forgot = false;
    this.items = this.items.map((item) => {
      if (!gone.has(item.id) || item.erased) return item;
      forgot = true;
      this.blanked.add(item.id);
      return { id: item.id, text: "", time: item.time, seq: item.seq, erased: true };
    });
    for (const id of gone) forgot = this.removed.delete(id) || forgot;
    const before = this.pending.length;
    this.pending = this.pending.filter((change) => !gone.has(change.id));
    forgot = forgot || this.pending.length !== before;
    if (forgot) this.shown = null;
    return forgot;
  }

  // MARK: - This page's changes on their way

  /**
   * Shows one of this page's changes at once, on top of the server's
   * layer, until it is dropped (kept in the outbox, it comes back with
   * `adopt`). A change is one of
   * `{ op: "move", id, after }`, `{ op: "remove", id }`,
   * `{ op: "edit", id, text, edited }`, `{ op: "insert", id, text, sender?, time, after? }`,
   * `{ op: "append", id, text, sender?, time }`, `{ op: "undo", undoesKey? | seq }`
   * (`after`: the ids the item follows, nearest first, as `predecessors`
   * gives them; an insert without it goes at the end). Returns the change
   * as shown (to `drop`).
   */
  propose(change) {
    const pending = { ...change };
    this.pending.push(pending);
    this.shown = null;
    return pending;
  }

  /** Takes `change` off the list (refused, or done). */
  drop(change) {
    const index = this.pending.indexOf(change);
    if (index < 0) return;
    this.pending.splice(index, 1);
    this.shown = null;
  }

  /**
   * This page's changes on their way are `changes` (the outbox's, in the
   * order made, each with its `key`; `untilSeq`: the event the server made
   * of it, once it has answered), with the ones proposed and not yet kept
   * there (no `key`) after them. Whether the list shown may have changed
   * (none was on its way, and none is: it has not).
   */
  adopt(changes) {
    const before = this.pending.length;
    this.pending = [...changes, ...this.pending.filter((c) => c.key === undefined)];
    this.shown = null;
    this.expire();
    return before > 0 || this.pending.length > 0;
  }

  /** Drops the answered changes the server's layer now has (its head reached their event). */
  expire() {
    const before = this.pending.length;
    this.pending = this.pending.filter((change) => !(change.untilSeq !== undefined && this.head >= change.untilSeq));
    if (this.pending.length !== before) this.shown = null;
  }

  /** The list to show: the server's layer with this page's changes on their way replayed on top. */
  view() {
    if (this.pending.length === 0 && this.blanked.size === 0) return this.items;
    if (this.shown) return this.shown;
    const items = this.blanked.size === 0 ? this.items.slice() : this.items.filter((item) => !item.erased);
    const off = cancelled(this.pending);
    for (const change of this.pending) {
      if (change.key === undefined || !off.has(change.key)) replay[change.op](items, change);
    }
    this.shown = items;
    return items;
  }
}

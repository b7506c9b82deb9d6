// Lists drawn a screenful at a time: 10,000 items cost what 50 do.

/** Above this many items a list is drawn a screenful at a time. */
export const FULL_RENDER_LIMIT = 200;
/** Pixels drawn above and below the screen. */
const OVERSCAN = 800;

/**
 * A list of items drawn into an <ol>: every item when there are few, else
 * only those on screen and OVERSCAN around them, with padding standing in
 * for the rest (heights measured once drawn, estimated before). Elements
 * are kept per id, so a redraw moves nodes instead of making them, and the
 * focused or lifted card is never taken out of the document. `create(item)`
 * makes an item's element, `fill(element, item, context)` shows the item
 * in it, `drawn()` (optional) follows each draw.
 */
export class ListView {
  constructor(list, { scroller, estimate, create, fill, drawn = () => {} }) {
    this.list = list;
    this.scroller = scroller;
    this.estimate = estimate;
    this.create = create;
    this.fill = fill;
    this.drawn = drawn;
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
    // Keep the lifted or focused card drawn when it is near, and the
    // element a draw holds in place on screen while it settles.
    for (const id of [this.pin, this.#anchor]) {
      const kept = id === null ? -1 : this.indexOf(id);
      if (kept >= 0 && kept < start && start - kept < 100) start = kept;
      if (kept >= end && kept - end < 100) end = kept + 1;
    }
    return [start, Math.max(end, start)];
  }

  indexOf(id) {
    return this.items.findIndex((item) => item.id === id);
  }

  /** The id of the element the draw under way holds in place (kept drawn: see `range`). */
  #anchor = null;

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
    // Kept drawn until the draw settles: a change of height above it moves
    // the estimates of every item not yet measured, and a pass that drew
    // the range those gave, without it, left nothing to hold the screen by
    // (an edit that made a message above the screen taller moved a
    // 2,000-message chat by about 55 messages).
    this.#anchor = anchor?.dataset.id ?? null;
    try {
      this.#settle(toBottom, changed, redraw, anchor, anchorTop);
    } finally {
      this.#anchor = null;
    }
    this.drawn();
  }

  #settle(toBottom, changed, redraw, anchor, anchorTop) {
    const scroller = this.scroller;
    let previous = null;
    // Until what is drawn stops changing: each pass measures the items it drew, which moves the estimates of the rest.
    for (let pass = 0; pass < 8; pass++) {
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
    // Where it is comes from heights estimated until drawn: each draw measures more, so a few tries find it.
    for (let tries = 0; tries < 4 && !this.elements.has(item.id); tries++) {
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

export function flash(el) {
  el.classList.remove("changed");
  void el.offsetWidth;  // restart the animation
  el.classList.add("changed");
  el.addEventListener("animationend", () => el.classList.remove("changed"), { once: true });
}

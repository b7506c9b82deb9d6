// History: the range slider runs over the stream's own versions, 0 to
// now — in a trimmed log, from the stream's version at the horizon, where
// its kept history begins; at a past version the page shows the list as it
// was (read-only), with what differs from the list shown before it
// highlighted.

import { $ } from "./dom.js";
import { readHello } from "./follow.js";
import { when } from "./words.js";

export class HistorySlider {
  /** [version] → { seq, time } for the stream, read when the slider is first used. */
  #versions = null;
  /** The earliest version the log still holds (a trimmed log's base): 0 unless trimmed. */
  #floor = 0;
  /** The reading of `#floor` under way (`#readFloor`), for the versions to wait for. */
  #floorRead = Promise.resolve();
  /** The latest slider position asked for: an older one's answer arriving late is not shown. */
  #scrubbing = 0;

  constructor({ api, model, shown, screen, say }) {
    this.api = api;
    this.model = model;
    this.shown = shown;
    this.screen = screen;
    this.say = say;
    $("slider").addEventListener("input", () => this.#scrub());
    $("history-now").addEventListener("click", () => {
      this.#backToNow();
      // (A slider with nothing before now is disabled, and takes no focus.)
      if ($("slider").disabled) $("main").focus(); else $("slider").focus();
    });
  }

  /** An event was folded in: its version is known. */
  folded(event) {
    if (this.#versions) this.#versions[event.version] = { seq: event.seq, time: event.time };
  }

  /** The items `ids` were erased: a past that shows one is left for now (it was read with their text). */
  forgot(ids) {
    const at = this.shown.past();
    if (at && at.items.some((item) => ids.includes(item.id))) this.#backToNow();
  }

  /** The list was read again: its versions are read when the slider is next used; its floor now. */
  listRead() {
    this.#versions = null;
    this.#floorRead = this.#readFloor();
  }

  /** Another stream: now, its versions read when the slider is next used. */
  opened() {
    this.#versions = null;
    this.#floor = 0;
    this.shown.showPast(null);
  }

  /** The slider and its label as the stream is now. */
  update() {
    const model = this.model;
    const slider = $("slider");
    const at = this.shown.past();
    const floor = Math.min(this.#floor, model.version);
    slider.min = String(floor);
    slider.max = String(model.version);
    slider.disabled = model.version <= floor;
    if (!at) slider.value = String(model.version);
    let label;
    if (!at) {
      label = model.version === 0 ? "No changes yet" : "Now, version " + model.version;
    } else if (at.version === 0) {
      label = "Version 0 of " + model.version + ", before the first change";
    } else if (at.version === this.#floor) {
      label = "Version " + at.version + " of " + model.version + ", where the kept history begins (older was trimmed)";
    } else {
      label = "Version " + at.version + " of " + model.version + ", " + when(at.time);
    }
    $("history-label").textContent = label;
    slider.setAttribute("aria-valuetext", label);
    $("history-now").hidden = !at;
  }

  /**
   * The stream's version at the seq before a trimmed log's horizon, where
   * its kept history begins: one less than its first event after it, or
   * the version it is at when it has none. 0 for a log never trimmed.
   */
  async #readFloor() {
    const model = this.model;
    const stream = model.stream;
    const horizon = model.horizon;
    let floor = 0;
    if (horizon > 1) {
      try {
        const path = "/api/events?stream=" + encodeURIComponent(stream) + "&from=" + (horizon - 1) + "&limit=1";
        const line = (await this.api.request(path, undefined, { raw: true })).split("\n").find((l) => l);
        floor = line ? JSON.parse(line).version - 1 : model.version;
      } catch {
        return;  // read again with the versions, when the slider is used
      }
    }
    if (stream !== model.stream || horizon !== model.horizon) return;
    this.#floor = floor;
    this.update();
  }

  /** The server's horizon, read again (a trim since the list was read), and the floor with it. */
  async #readHorizonAgain() {
    this.model.horizon = (await readHello(this.api)).horizon;
    this.#versions = null;
    this.#floorRead = this.#readFloor();
  }

  async #loadVersions() {
    if (this.#versions) return this.#versions;
    await this.#floorRead;
    const model = this.model;
    const stream = model.stream;
    const horizon = model.horizon;
    const read = [];
    // A trimmed log holds the stream's list at the seq before its horizon, and its events after.
    if (horizon > 1 && this.#floor > 0) read[this.#floor] = { seq: horizon - 1, time: null };
    let from = horizon > 1 ? horizon - 1 : 1;
    for (;;) {
      const path = "/api/events?stream=" + encodeURIComponent(stream) + "&from=" + from + "&limit=10000";
      const text = await this.api.request(path, undefined, { raw: true });
      const lines = text.split("\n").filter((line) => line);
      for (const line of lines) {
        const e = JSON.parse(line);
        read[e.version] = { seq: e.seq, time: e.time };
        from = e.seq + 1;
      }
      if (lines.length < 10000) break;
    }
    if (stream === model.stream && !this.#versions) this.#versions = read;
    return read;
  }

  /** Shows the version the slider asks for; `again`: after reading a horizon that moved (410). */
  async #scrub(again = false) {
    const model = this.model;
    const slider = $("slider");
    const ticket = ++this.#scrubbing;
    if (Number(slider.value) >= model.version) {
      this.#backToNow();
      return;
    }
    this.shown.cancelMoves();
    try {
      let known = await this.#loadVersions();
      if (!known[model.version]) {
        // An event folded in while the versions were read: read them again.
        this.#versions = null;
        known = await this.#loadVersions();
      }
      // Not below what a trimmed log keeps (its first version); from there, now may be all there is.
      const version = Math.max(Number(slider.value), this.#floor);
      if (version >= model.version) {
        this.#backToNow();
        return;
      }
      const first = known[1];
      const point = version === 0 ? { seq: first.seq - 1, time: first.time } : known[version];
      const at = this.shown.past();
      // What changed since the list shown, or since where the kept history begins if that is later now.
      const from = Math.max(at ? at.seq : model.head, model.horizon > 1 ? model.horizon - 1 : 0);
      const query = "?stream=" + encodeURIComponent(model.stream);
      const [list, diff] = await Promise.all([
        this.api.request("/api/items" + query + "&at=" + point.seq),
        this.api.request("/api/diff" + query + "&from=" + from + "&to=" + point.seq),
      ]);
      if (ticket !== this.#scrubbing) return;
      this.shown.showPast({ version, seq: point.seq, time: point.time, items: list.items });
      // The thumb where the list shown is (the render drew it with the past not yet shown).
      slider.value = String(version);
      this.screen.highlight(diff.inserted.concat(diff.moved, diff.edited || []).map((item) => item.id));
      this.screen.render();
    } catch (e) {
      if (ticket !== this.#scrubbing) return;
      // Trimmed while this page was open: its kept history begins later now.
      if (e.status === 410 && !again) {
        try {
          await this.#readHorizonAgain();
          await this.#floorRead;
        } catch { /* said below, as the first failure */ }
        if (ticket === this.#scrubbing) return this.#scrub(true);
        return;
      }
      slider.value = String(this.shown.past()?.version ?? model.version);
      this.say.note("The history could not be read: " + e.message + ".");
    }
  }

  #backToNow() {
    ++this.#scrubbing;
    if (!this.shown.past()) return;
    this.shown.showPast(null);
    this.screen.render();
  }
}

// Which stream the page shows: the picker (the log's streams), a stream
// opened by name, and opening one — read afresh and followed from the
// log's head — or emptying it when the server refuses the page's token.

import { $ } from "./dom.js";
import { shownName, signedOutInWords, streamNameProblem } from "./words.js";

export class StreamPicker {
  constructor({ api, model, follower, sync, shown, screen, say }) {
    this.api = api;
    this.model = model;
    this.follower = follower;
    this.sync = sync;
    this.shown = shown;
    this.screen = screen;
    this.say = say;
    const select = $("stream");
    select.addEventListener("focus", () => this.#refresh());
    select.addEventListener("change", (e) => this.open(e.target.value));
    $("open-stream").addEventListener("submit", (e) => this.#openNamed(e));
    $("new-stream").addEventListener("input", (e) => e.target.removeAttribute("aria-invalid"));
  }

  /** Shows `stream` with the page's token (at load, or another one typed), read afresh and followed from the log's head. */
  open(stream) {
    const sync = this.sync;
    this.follower.stop();
    this.shown.cancelMoves();
    this.model.open(stream);
    sync.useOwner().then(() => sync.push());  // this token's changes on their way, of this stream
    document.body.classList.remove("past");
    this.say.setStatus("connecting", "Connecting…");
    this.screen.updateAddress();
    this.fill([]);
    this.screen.render();
    this.follower.follow();
  }

  /**
   * The server refused the page's token: what the page showed and kept with
   * it goes (the token form asks for another); says how many changes not
   * sent went with it.
   */
  async signedOut() {
    this.follower.stop();
    this.shown.cancelMoves();
    this.model.open(this.model.stream);
    this.screen.render();
    this.screen.markReady();  // the page knows it cannot read its stream for now
    const removed = await this.sync.forgetOwner();
    if (removed.length > 0) this.say.note(signedOutInWords(removed.length, Boolean(this.api.readToken())));
  }

  /** The picker lists `names` (the log's streams) and the stream shown. */
  fill(names) {
    const select = $("stream");
    const stream = this.model.stream;
    if (!names.includes(stream)) names.push(stream);
    if ([...select.options].map((o) => o.value).join("\n") === names.join("\n")) return;
    select.replaceChildren(...names.map((name) => {
      const option = document.createElement("option");
      option.value = name;
      option.textContent = shownName(name);
      return option;
    }));
    select.value = stream;
  }

  async #refresh() {
    try { this.fill((await this.follower.readStreams()).map((s) => s.stream)); } catch { /* keep the list shown */ }
  }

  #openNamed(event) {
    event.preventDefault();
    const input = $("new-stream");
    const problem = streamNameProblem(input.value);
    input.setAttribute("aria-invalid", String(problem !== null));
    if (problem) {
      this.say.note(problem);
      input.focus();
      return;
    }
    this.say.note("");
    const name = input.value;
    input.value = "";
    this.open(name);
  }
}

// Whose token the page has (`GET /api/whoami?stream=S`): a named token's
// name is shown ("Signed in as ann") and is the sender of everything the
// page writes, since the server records that name whatever a body says.
// The operator's token, or none on localhost, has no name: the page then
// sends the name typed in the message box, as before. What the token may
// do on the stream shown comes with it: "Delete for everyone" is offered
// only where it may erase.

import { $ } from "./dom.js";
import { Events } from "./events.js";

/**
 * The signed-in name; tells "name" (a name, or null) whenever it changes,
 * and "may" (`{ stream, erase, write, read }`) whenever what the token may do on
 * the model's stream is learned.
 */
export class SignedIn extends Events {
  /** The token's name; null for none (or not known yet). */
  name = null;
  /** Counts the questions, so that only the latest answer counts. */
  #asked = 0;

  constructor({ api, model }) {
    super(["name", "may"]);
    this.api = api;
    this.model = model;
  }

  /** Asks the server whose the page's token is, and what it may do on the stream shown (once live, again for another token or stream). */
  async ask() {
    const asked = ++this.#asked;
    const stream = this.model.stream;
    let name = null, may = [], write = true, read = true;
    try {
      const answer = await this.api.request("/api/whoami?stream=" + encodeURIComponent(stream));
      name = typeof answer?.name === "string" ? answer.name : null;
      // A server from before rights were told says none: nothing more is offered than it can do.
      may = Array.isArray(answer?.may) ? answer.may : [];
      // A server from before rights were told takes writes as it always did.
      write = !Array.isArray(answer?.may) || may.includes("write");
      read = !Array.isArray(answer?.may) || may.includes("read");
    } catch {
      // Refused (the token form asks, and `signedOut` follows), or unreachable: asked again when live.
      return;
    }
    if (asked !== this.#asked) return;
    this.#set(name, write ? "write" : read ? "read" : "none");
    this.emit("may", { stream, erase: may.includes("erase"), write, read });
  }

  /** The token was refused: nobody is signed in, and nothing may be done. */
  signedOut() {
    this.#asked++;
    this.#set(null, "write");
    // Nothing may be written while the page asks for a token: what is typed stays in the box.
    this.emit("may", { stream: this.model.stream, erase: false, write: false, read: false });
  }

  /** Shows the name and, short of writing, what it may do on the stream shown (`rights`: write, read or none). */
  #set(name, rights) {
    const line = $("signed-in");
    const short = { write: "", read: ", who may only read this stream", none: ", who may not read this stream" };
    line.textContent = name === null ? "" : "Signed in as " + name + short[rights];
    line.hidden = name === null;
    if (name === this.name) return;
    this.name = name;
    this.emit("name", name);
  }
}

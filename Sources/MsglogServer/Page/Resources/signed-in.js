// Whose token the page has (`GET /api/whoami`): a named token's name is
// shown ("Signed in as ann") and is the sender of everything the page
// writes, since the server records that name whatever a body says. The
// operator's token, or none on localhost, has no name: the page then
// sends the name typed in the message box, as before.

import { $ } from "./dom.js";
import { Events } from "./events.js";

/** The signed-in name; tells "name" (a name, or null) whenever it changes. */
export class SignedIn extends Events {
  /** The token's name; null for none (or not known yet). */
  name = null;
  /** Counts the questions, so that only the latest answer counts. */
  #asked = 0;

  constructor({ api }) {
    super(["name"]);
    this.api = api;
  }

  /** Asks the server whose the page's token is (once it has one, and again for another). */
  async ask() {
    const asked = ++this.#asked;
    let name = null;
    try {
      const answer = await this.api.request("/api/whoami");
      name = typeof answer?.name === "string" ? answer.name : null;
    } catch {
      // Refused (the token form asks, and `signedOut` follows), or unreachable: asked again when live.
      return;
    }
    if (asked === this.#asked) this.#set(name);
  }

  /** The token was refused: nobody is signed in. */
  signedOut() {
    this.#asked++;
    this.#set(null);
  }

  #set(name) {
    const line = $("signed-in");
    line.textContent = name === null ? "" : "Signed in as " + name;
    line.hidden = name === null;
    if (name === this.name) return;
    this.name = name;
    this.emit("name", name);
  }
}

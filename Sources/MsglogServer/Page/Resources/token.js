// The access token, when the server asks for one: the form that takes it
// (the one the server was started with, MSGLOG_TOKEN or --token). A
// refused token takes with it what the page showed and kept with it
// (stream.js's `signedOut`); another token typed shows only its own.

import { $ } from "./dom.js";
import { Events } from "./events.js";

/** The token form; tells "token" once another token is typed in (the page opens its stream with it). */
export class TokenForm extends Events {
  constructor({ api, say }) {
    super(["token"]);
    this.api = api;
    this.say = say;
    $("token-form").addEventListener("submit", (e) => this.#submit(e));
  }

  /** Asks for the token: the server refused the page's, or wants one. */
  ask() {
    const form = $("token-form");
    $("token-why").textContent = this.api.readToken()
      ? "The server did not accept this page's token. Enter the access token it was started with (MSGLOG_TOKEN)."
      : "This server needs its access token: the MSGLOG_TOKEN (or --token) it was started with.";
    this.say.setStatus("offline", "Needs a token");
    if (form.hidden) {
      form.hidden = false;
      $("token-input").focus();
    }
  }

  /** Whether the page is asking for a token (the form is shown). */
  get asking() {
    return !$("token-form").hidden;
  }

  #submit(event) {
    event.preventDefault();
    this.api.useToken($("token-input").value);
    $("token-input").value = "";
    $("token-form").hidden = true;
    this.say.note("");
    // The message box is offered again first (app.js), then the keyboard
    // goes on in it (the page's next step; the list itself while the box
    // is off, in the past), not from the top of the page.
    this.emit("token");
    $("compose-text").focus();
    if (document.activeElement !== $("compose-text")) $("main").focus();
  }
}

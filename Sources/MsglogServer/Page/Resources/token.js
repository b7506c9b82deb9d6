// The access token, when the server asks for one: the form that takes it
// (a named token, or the one the server was started with). A
// refused token takes with it what the page showed and kept with it
// (stream.js's `signedOut`); another token typed shows only its own.

import { $ } from "./dom.js";
import { Events } from "./events.js";
import { quoted } from "./words.js";

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
    // The input is described by these words, and the status (a live
    // region) says which it is: after a token typed in, "Needs a token"
    // again was all a screen reader heard of its refusal.
    const refused = Boolean(this.api.readToken());
    $("token-why").textContent = refused
      ? "The server did not accept this page's token. Enter another: yours (made with msglog token add), "
        + "or the one the server was started with (MSGLOG_TOKEN)."
      : "This server needs an access token: yours (made with msglog token add), "
        + "or the one it was started with (MSGLOG_TOKEN or --token).";
    this.say.setStatus("offline", refused ? "Token not accepted" : "Needs a token");
    if (form.hidden) {
      form.hidden = false;
      // A link's token offered meanwhile keeps the keyboard (TokenOffer).
      if ($("offer-form").hidden) $("token-input").focus();
    }
  }

  /** Stops asking: another token was taken (a link's, accepted). */
  close() {
    $("token-form").hidden = true;
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

/** How long an offer is shown before Sign in takes a click. */
export const OFFER_SETTLES_MS = 500;

/** What the page says of a link's token the server refused. */
const REFUSED_LINK = "The link you opened carries a token this server does not accept; this page goes on as it was.";

/**
 * A token a link carried (`#token=…`), offered before it is used: any page
 * the browser opens may send this tab to such a link, with its own token
 * (this tab would then write as its maker) or one the server refuses (the
 * page would drop what it keeps for the token it has). The server is asked
 * whose it is first; a refused one is said and changes nothing. The server
 * counts these checks apart from failed tokens (`X-Msglog-Offer`), so that
 * links with made-up tokens never get the address turned away, and answers
 * 429 past a few failed a minute (from the address, whatever name of the
 * server its tabs use): the token is then offered unchecked, and checked
 * once the user agrees. Tells "token" once the user signs in with it (the
 * page opens its stream with it).
 */
export class TokenOffer extends Events {
  /** When the offer was shown (performance.now()): a click sooner is not taken. */
  #shownAt = 0;
  /** Whether the token offered now was checked with the server before it was shown. */
  #checked = false;

  constructor({ api, say, model }) {
    super(["token"]);
    this.api = api;
    this.say = say;
    this.model = model;
    $("offer-form").addEventListener("submit", (e) => this.#accept(e));
    $("offer-decline").addEventListener("click", () => this.#decline());
    $("offer-form").addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.#decline();
    });
    // A link to the address the tab shows changes only its fragment: no new page.
    window.addEventListener("hashchange", () => {
      if (this.api.takeFragment()) this.show();
    });
  }

  /**
   * Offers the link's token, if any, once the server said whose it is.
   * One it refuses is said and dropped; with the server away it is offered
   * once the page is live again; past the server's few failed checks a
   * minute (429) it is offered unchecked, and checked when the user agrees.
   */
  async show() {
    const token = this.api.offered;
    if (token === null) return;
    let name = null, reads = true;
    try {
      const answer = await this.api.whose(token, this.model.stream, { offer: true });
      name = typeof answer?.name === "string" ? answer.name : null;
      // Said before signing in: such a tab would show an empty list, refused.
      reads = !Array.isArray(answer?.may) || answer.may.includes("read");
    } catch (e) {
      if (this.api.offered !== token) return;
      if (e.status === 0) return;  // the server away: asked again once the page is live (app.js)
      if (e.status === 429) {
        // Too many links' tokens failed from this address lately, or too many tokens: checked once the user agrees.
        this.#offer(false, "The link you opened carries a token for this server (not checked yet: too many tokens "
          + "failed from this address in the last minute). Sign in with it?");
        return;
      }
      this.api.declineOffered();
      this.say.note(
        e.status === 401
          ? REFUSED_LINK
          : "The link you opened carries a token that cannot be checked now (" + e.message
            + "); this page goes on as it was. Open the link again later.");
      return;
    }
    if (this.api.offered !== token) return;
    this.#offer(true, name === null
      ? "The link you opened carries this server's access token. Sign in with it?"
      : "The link you opened signs this tab in as " + quoted(name)
        + (reads ? "" : ", who may not read this stream") + ". Sign in?");
  }

  /** Shows the offer of the link's token in `words`; `checked`: the server took it just now. */
  #offer(checked, words) {
    this.#checked = checked;
    $("offer-why").textContent = words;
    const form = $("offer-form");
    const wasShown = !form.hidden;
    form.hidden = false;
    this.#shownAt = performance.now();
    // Not from under someone typing: what they type goes on where it went. (An empty
    // field is not typing: the token form, asking before the offer came, has the focus.)
    const active = document.activeElement;
    const typing = active?.matches?.("input, textarea") ? active.value !== "" : active?.isContentEditable === true;
    if (!wasShown && !typing) form.focus();
  }

  /** Whether a link's token waits for the server to be asked about it. */
  get waiting() {
    return this.api.offered !== null && $("offer-form").hidden;
  }

  async #accept(event) {
    event.preventDefault();
    // A click the instant it appears is not a choice (a page that opened this tab may time one).
    if (performance.now() - this.#shownAt < OFFER_SETTLES_MS) return;
    const token = this.api.offered;
    if (token === null) return;
    if (!this.#checked) {
      // Checked now that the user chose it: a refused one changes nothing.
      try {
        await this.api.whose(token, this.model.stream);
      } catch (e) {
        if (this.api.offered !== token) return;
        if (e.status === 0 || e.status === 429) {
          // The server away, or turning this address away for a while: the offer stays, to be tried again.
          this.say.note("The link's token cannot be checked now (" + e.message + "); try Sign in again later.");
          return;
        }
        this.#decline();
        this.say.note(e.status === 401
          ? REFUSED_LINK
          : "The link's token cannot be checked now (" + e.message + "); this page goes on as it was.");
        return;
      }
      if (this.api.offered !== token) return;
    }
    this.api.acceptOffered();
    $("offer-form").hidden = true;
    this.say.note("");
    this.emit("token");
    // As after a token typed in: the message box, else the list.
    $("compose-text").focus();
    if (document.activeElement !== $("compose-text")) $("main").focus();
  }

  #decline() {
    this.api.declineOffered();
    $("offer-form").hidden = true;
    $("main").focus();
  }
}

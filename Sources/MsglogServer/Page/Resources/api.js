// The server's API: every request goes through `request`, with the token
// when the page has one. A 401 is told ("unauthorized": the token form
// asks for another) instead of being shown as an error of its own.

import { Events } from "./events.js";
import { ownerOf } from "./fingerprint.js";
import * as storage from "./storage.js";

const TOKEN_KEY = "msglog.token";
/**
 * How long a request may go unanswered before it is given up (a failed
 * request, tried again as any is): a push whose answer never came — a
 * phone's network changed under it — held the outbox and its lock until a
 * reload. A change sent again is done once (its number), so giving up on
 * a write is safe. A read may take longer: its answer can be large.
 */
export const WRITE_TIMEOUT_MS = 20_000;
export const READ_TIMEOUT_MS = 60_000;

export class HTTPError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The server and the page's token; tells "unauthorized" whenever the server refuses the token (or asks for one). */
export class Api extends Events {
  /** The token sent as `Authorization: Bearer`; undefined until first read (`readToken`). */
  #token;
  /** A token a link carried (`#token=…`) that is not this tab's: used only once the user accepts it (token.js's `TokenOffer`). */
  #offered = null;
  /** The owner of the token last asked about (a fingerprint costs a SHA-256). */
  #owned = { token: null, owner: ownerOf(null) };

  constructor() {
    super(["unauthorized"]);
  }

  /**
   * Reads the token kept for reloads of this tab (sessionStorage). A token
   * in the address (`#token=…`, read as written: URLSearchParams would turn
   * a `+` into a space) leaves the address bar at once, so that no
   * bookmark, screenshot or shared link carries it, and is only offered
   * (`offered`): any page the browser opens can send it to a link, and a
   * token taken as it comes would sign this tab in as whoever made the
   * link, or drop what the page keeps for its own token.
   */
  readToken() {
    if (this.#token !== undefined) return this.#token;
    this.#token = storage.get("sessionStorage", TOKEN_KEY);
    this.takeFragment();
    return this.#token;
  }

  /**
   * Takes a `#token=…` from the address, which leaves it at once, as the
   * token offered (when it is not the tab's); whether there was one. Also
   * for a link to the address the tab shows, which the browser follows
   * without loading the page again (`hashchange`).
   */
  takeFragment() {
    let found = null;
    for (const part of location.hash.slice(1).split("&")) {
      if (!part.startsWith("token=")) continue;
      const raw = part.slice("token=".length);
      try { found = decodeURIComponent(raw); } catch { found = raw; }
    }
    if (found === null) return false;
    history.replaceState(history.state, "", location.pathname + location.search);
    this.#offered = found && found !== this.readToken() ? found : null;
    return true;
  }

  /** The token a link offered this tab, not yet accepted or declined; null for none. */
  get offered() {
    this.readToken();
    return this.#offered;
  }

  /** Signs this tab in with the token the link offered. */
  acceptOffered() {
    if (this.#offered !== null) this.useToken(this.#offered);
    this.#offered = null;
  }

  /** Forgets the token the link offered. */
  declineOffered() {
    this.#offered = null;
  }

  /**
   * Whose `token` is and what it may do on `stream` (`GET /api/whoami`),
   * without taking it or telling "unauthorized": a token refused fails
   * with its 401 and changes nothing. `offer`: a link's token nobody
   * agreed to yet, which the server counts apart from failed tokens
   * (`X-Msglog-Offer`), so that links with made-up ones never get the
   * address turned away; past its own few a minute, it answers 429.
   */
  async whose(token, stream, { offer = false } = {}) {
    const headers = offer ? { "X-Msglog-Offer": "1" } : {};
    return this.request("/api/whoami?stream=" + encodeURIComponent(stream), undefined, { token, headers });
  }

  /** The token the user typed in, kept for reloads of this tab. */
  useToken(value) {
    this.#token = value;
    storage.set("sessionStorage", TOKEN_KEY, value);
  }

  /** Whose what this page keeps is (fingerprint.js): its token's fingerprint, or none's. */
  owner() {
    const t = this.readToken() || null;
    if (t !== this.#owned.token) this.#owned = { token: t, owner: ownerOf(t) };
    return this.#owned.owner;
  }

  /** `extra` with the Authorization header, when the page has a token (or with `token`). */
  headers(extra, token = this.readToken()) {
    const h = Object.assign({}, extra);
    if (token) h.Authorization = "Bearer " + token;
    return h;
  }

  /** Tells that the server answered 401. */
  unauthorized() {
    this.emit("unauthorized");
  }

  /**
   * GET (no body) or POST a JSON body; the answer as JSON, or as text with
   * `raw`. One not answered whole within `timeout` ms (by default
   * WRITE_TIMEOUT_MS or READ_TIMEOUT_MS) fails as one that could not be sent.
   * With `token`, sent with that token, not the page's: a 401 is not told.
   */
  async request(path, body, { raw = false, timeout, token, headers = {} } = {}) {
    const signal = AbortSignal.timeout(timeout ?? (body === undefined ? READ_TIMEOUT_MS : WRITE_TIMEOUT_MS));
    const sent = token ?? this.readToken();
    const init = body === undefined
      ? { headers: this.headers(headers, sent), cache: "no-store", signal }
      : {
        method: "POST", headers: this.headers({ ...headers, "Content-Type": "application/json" }, sent),
        body: JSON.stringify(body),
        signal,
      };
    let response, text;
    try {
      response = await fetch(path, init);
      text = await response.text();
    } catch {
      throw new HTTPError(0, signal.aborted ? "the server did not answer in time" : "the server cannot be reached");
    }
    if (!response.ok) {
      let message = response.statusText || "HTTP " + response.status;
      try { message = JSON.parse(text).error || message; } catch { /* not JSON: keep the status text */ }
      if (response.status === 401 && token === undefined) this.unauthorized();
      throw new HTTPError(response.status, message);
    }
    if (raw) return text;
    return text ? JSON.parse(text) : null;
  }
}

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
  /** The owner of the token last asked about (a fingerprint costs a SHA-256). */
  #owned = { token: null, owner: ownerOf(null) };

  constructor() {
    super(["unauthorized"]);
  }

  /**
   * Reads the token: from `#token=…` in the address, read as written
   * (URLSearchParams would turn a `+` into a space), which then leaves the
   * address bar, so that no bookmark, screenshot or shared link carries it;
   * else from sessionStorage, which keeps it for reloads of this tab.
   */
  readToken() {
    if (this.#token !== undefined) return this.#token;
    let found = null;
    for (const part of location.hash.slice(1).split("&")) {
      if (!part.startsWith("token=")) continue;
      const raw = part.slice("token=".length);
      try { found = decodeURIComponent(raw); } catch { found = raw; }
    }
    if (found !== null) {
      storage.set("sessionStorage", TOKEN_KEY, found);
      history.replaceState(history.state, "", location.pathname + location.search);
    }
    this.#token = found ?? storage.get("sessionStorage", TOKEN_KEY);
    return this.#token;
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

  /** `extra` with the Authorization header, when the page has a token. */
  headers(extra) {
    const h = Object.assign({}, extra);
    const t = this.readToken();
    if (t) h.Authorization = "Bearer " + t;
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
   */
  async request(path, body, { raw = false, timeout } = {}) {
    const signal = AbortSignal.timeout(timeout ?? (body === undefined ? READ_TIMEOUT_MS : WRITE_TIMEOUT_MS));
    const init = body === undefined
      ? { headers: this.headers(), cache: "no-store", signal }
      : {
        method: "POST", headers: this.headers({ "Content-Type": "application/json" }), body: JSON.stringify(body), signal,
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
      if (response.status === 401) this.unauthorized();
      throw new HTTPError(response.status, message);
    }
    if (raw) return text;
    return text ? JSON.parse(text) : null;
  }
}

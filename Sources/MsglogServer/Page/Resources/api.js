// The server's API: every request goes through `api`, with the token when
// the page has one. A 401 tells whoever listens (the token form) instead
// of being shown as an error of its own.

import { ownerOf } from "./fingerprint.js";
import * as storage from "./storage.js";

const TOKEN_KEY = "msglog.token";

/** The token sent as `Authorization: Bearer`; undefined until first read (`readToken`). */
let token;
const unauthorizedListeners = [];

export class HTTPError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Reads the token: from `#token=…` in the address, read as written
 * (URLSearchParams would turn a `+` into a space), which then leaves the
 * address bar, so that no bookmark, screenshot or shared link carries it;
 * else from sessionStorage, which keeps it for reloads of this tab.
 */
export function readToken() {
  if (token !== undefined) return token;
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
  token = found ?? storage.get("sessionStorage", TOKEN_KEY);
  return token;
}

/** The token the user typed in, kept for reloads of this tab. */
export function useToken(value) {
  token = value;
  storage.set("sessionStorage", TOKEN_KEY, value);
}

/** The owner of the token last asked about (a fingerprint costs a SHA-256). */
let owned = { token: null, owner: ownerOf(null) };

/** Whose what this page keeps is (fingerprint.js): its token's fingerprint, or none's. */
export function owner() {
  const t = readToken() || null;
  if (t !== owned.token) owned = { token: t, owner: ownerOf(t) };
  return owned.owner;
}

/** Calls `listener()` whenever the server refuses the token (or asks for one). */
export function onUnauthorized(listener) {
  unauthorizedListeners.push(listener);
}

/** Tells the listeners that the server answered 401. */
export function unauthorized() {
  for (const listener of unauthorizedListeners) listener();
}

/** `extra` with the Authorization header, when the page has a token. */
export function headers(extra) {
  const h = Object.assign({}, extra);
  const t = readToken();
  if (t) h.Authorization = "Bearer " + t;
  return h;
}

/** GET (no body) or POST a JSON body; the answer as JSON, or as text with `raw`. */
export async function api(path, body, { raw = false } = {}) {
  const init = body === undefined
    ? { headers: headers(), cache: "no-store" }
    : { method: "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify(body) };
  let response, text;
  try {
    response = await fetch(path, init);
    text = await response.text();
  } catch {
    throw new HTTPError(0, "the server cannot be reached");
  }
  if (!response.ok) {
    let message = response.statusText || "HTTP " + response.status;
    try { message = JSON.parse(text).error || message; } catch { /* not JSON: keep the status text */ }
    if (response.status === 401) unauthorized();
    throw new HTTPError(response.status, message);
  }
  if (raw) return text;
  return text ? JSON.parse(text) : null;
}

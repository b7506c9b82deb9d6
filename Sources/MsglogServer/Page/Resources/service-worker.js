// The page's service worker: keeps the page's own files (the page, its
// modules, style and icon — never anything under /api/), one copy per
// version of them, so that a page opens from them without asking the
// server for each file again, and a reload while the server is away still
// shows the page (which then shows the list it last read and this
// browser's changes on their way: kept.js, idb.js).
//
// The page itself is always asked of the network first, so a server with
// a newer page serves it at once. Its ETag is the version of every file of
// the page (Page.swift fingerprints them all): a page whose version the
// worker holds whole takes its modules, style and icon from that copy; a
// page of another version takes them from the network while the worker
// keeps that version whole (the page, then each file it names), and drops
// the copies of the others. With the server away, the last version kept.

const PREFIX = "msglog-page-";

/** Per page (its client id): the version of the files it was opened with. At most a few dozen are remembered. */
const versions = new Map();

const cacheOf = (version) => PREFIX + version.replace(/^W\//, "").replace(/"/g, "");

/** The paths a page names: every module of its `Link: rel=modulepreload` header, its style and icon. */
function filesOf(page) {
  const modules = [...(page.headers.get("Link") || "").matchAll(/<([^>]+)>;\s*rel=modulepreload/g)].map((m) => m[1]);
  return [...modules, "/app.css", "/favicon.svg"];
}

/**
 * Keeps `page` (the network's answer for `/`, of `version`) and every file
 * it names under its version, the page last, so that a copy holding `/`
 * is whole; then drops the other versions' copies.
 */
async function keep(version, page) {
  const name = cacheOf(version);
  const cache = await caches.open(name);
  if (!(await cache.match("/"))) {
    await cache.addAll(filesOf(page));
    await cache.put("/", page);
  }
  for (const other of await caches.keys()) if (other !== name) await caches.delete(other);
}

/** The copy of the last version kept whole, and its version; null when none is. */
async function lastKept() {
  for (const name of (await caches.keys()).reverse()) {
    if (!name.startsWith(PREFIX)) continue;
    const cache = await caches.open(name);
    const page = await cache.match("/");
    if (page) return { cache, page };
  }
  return null;
}

function remember(client, version) {
  if (!client) return;
  versions.set(client, version);
  if (versions.size > 64) versions.delete(versions.keys().next().value);
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const page = await fetch("/", { cache: "no-store" });
    const version = page.headers.get("ETag");
    if (page.ok && version) await keep(version, page);
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    // The copies kept before versions (msglog-page-v1) go; a version's own goes when another is kept.
    for (const name of await caches.keys()) if (!name.startsWith(PREFIX) || name === PREFIX + "v1") await caches.delete(name);
    await self.clients.claim();
  })());
});

async function openPage(event) {
  try {
    const page = await fetch(event.request);
    const version = page.headers.get("ETag");
    if (page.ok && version) {
      remember(event.resultingClientId, version);
      event.waitUntil(keep(version, page.clone()).catch(() => {}));
    }
    return page;
  } catch (e) {
    const kept = await lastKept();
    if (!kept) throw e;
    remember(event.resultingClientId, kept.page.headers.get("ETag"));
    return kept.page;
  }
}

async function openFile(event, path) {
  const version = versions.get(event.clientId);
  if (version) {
    // Kept by one addAll: a file there is of that version, as every other there.
    const kept = await caches.match(path, { cacheName: cacheOf(version) });
    if (kept) return kept;
  }
  try {
    return await fetch(event.request);
  } catch (e) {
    const kept = await caches.match(path);
    if (kept) return kept;
    throw e;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin || url.pathname.startsWith("/api/")) return;
  event.respondWith(request.mode === "navigate" ? openPage(event) : openFile(event, url.pathname));
});

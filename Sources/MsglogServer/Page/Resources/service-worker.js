// The page's service worker: keeps the page's own files (the page, its
// modules, style and icon — never anything under /api/) so that a reload
// while the server is away still shows the page, which then shows the list
// it last read and this browser's changes on their way (idb.js). Always
// the network first, so a server with a newer page serves it at once; the
// kept copy only when the server cannot be reached.

const CACHE = "msglog-page-v1";

/** The page's files: `/`, every module it names for preloading, its style and icon. */
async function pageFiles() {
  const response = await fetch("/", { cache: "no-store" });
  const modules = [...(response.headers.get("Link") || "").matchAll(/<([^>]+)>;\s*rel=modulepreload/g)].map((m) => m[1]);
  return { response, paths: [...modules, "/app.css", "/favicon.svg"] };
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const { response, paths } = await pageFiles();
    if (response.ok) await cache.put("/", response);
    await cache.addAll(paths);
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin || url.pathname.startsWith("/api/")) return;
  const path = request.mode === "navigate" ? "/" : url.pathname;
  event.respondWith((async () => {
    try {
      const response = await fetch(request);
      if (response.ok && url.pathname === path) {
        const copy = response.clone();
        caches.open(CACHE).then((cache) => cache.put(path, copy)).catch(() => {});
      }
      return response;
    } catch (e) {
      const kept = await caches.match(path, { ignoreSearch: true });
      if (kept) return kept;
      throw e;
    }
  })());
});

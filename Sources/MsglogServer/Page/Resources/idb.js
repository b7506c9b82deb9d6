// The browser's own database (IndexedDB), shared by every tab of this
// server's origin: the outbox (this page's changes until the server has
// them), the replica's identity and counter per log and token, and the
// last list read of each stream (what a reload shows while the server is
// away), under the token it was read with and the log it was read from:
// the lists kept are those of the log last seen at this address, and a
// page reads only its own token's. Each call is one transaction: a
// readwrite one is serialised with every other tab's on the same stores,
// so the outbox never loses or doubles an entry. The texts in them are
// sealed (seal.js) where the browser can, so that forgetting an erased
// one (`forgetTexts`) takes it from the profile's files too.

import { FileKeys, Sealer, Unreadable } from "./seal.js";

const NAME = "msglog";
/**
 * 2: the lists keyed by owner, log and stream; the outbox's entries carry
 * their owner and log. 3: the lists indexed by what they are of, version
 * and head too (`at`), so that a list kept already is not written again.
 */
const VERSION = 3;
/** The meta record of the log last seen at this address (`{ name, log }`). */
const LAST_LOG = "log";

let opening = null;

/** What seals the texts kept, where the browser can (https or localhost); null where it cannot: kept as they are. */
let sealing;
function sealer() {
  if (sealing === undefined) sealing = Sealer.available() ? new Sealer(new FileKeys()) : null;
  return sealing;
}
/** Held shared by every use of sealed records, every tab's, and alone by `forgetTexts` while it renews the key. */
const SEAL_LOCK = "msglog-seal";

function underKey(mode, body) {
  return sealer() ? navigator.locks.request(SEAL_LOCK, { mode }, body) : body();
}

const sealEntry = (entry) => (sealer() ? sealer().sealEntry(entry) : entry);

/**
 * Only a record sealed under a key that is gone is unreadable for good
 * (and deleted by `forgetTexts`); a key that could not be read now is
 * thrown, and what it sealed stays.
 */
function unlessUnreadable(e) {
  if (!(e instanceof Unreadable)) throw e;
}

/** The entries kept, opened; one whose key is gone (it can never be sent) is left out; any other failure thrown. */
async function openEntries(entries) {
  if (!sealer()) return entries;
  const opened = [];
  for (const entry of entries) {
    try { opened.push(await sealer().openEntry(entry)); } catch (e) { unlessUnreadable(e); /* `forgetTexts` deletes it */ }
  }
  return opened;
}

/** A list kept, opened; undefined when its key is gone; any other failure thrown. */
async function openList(record) {
  if (!record || !sealer()) return record;
  try { return await sealer().openList(record); } catch (e) { unlessUnreadable(e); return undefined; }
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function database() {
  if (!opening) {
    opening = new Promise((resolve, reject) => {
      const req = indexedDB.open(NAME, VERSION);
      req.onupgradeneeded = (event) => {
        const db = req.result;
        const has = (name) => db.objectStoreNames.contains(name);
        if (!has("outbox")) db.createObjectStore("outbox", { keyPath: "key", autoIncrement: true });
        if (!has("meta")) db.createObjectStore("meta", { keyPath: "name" });
        let lists = has("lists") ? req.transaction.objectStore("lists") : null;
        if (event.oldVersion < 2) {
          // Version 1's lists said neither whose nor of which log they were: gone (a cache).
          if (lists) db.deleteObjectStore("lists");
          lists = db.createObjectStore("lists", { keyPath: ["owner", "log", "stream"] });
        }
        if (!lists.indexNames.contains("at")) lists.createIndex("at", ["owner", "log", "stream", "version", "seq"]);
      };
      req.onsuccess = () => {
        // Another tab's newer version asks: close, it reloads us next time.
        req.result.onversionchange = () => { req.result.close(); opening = null; };
        resolve(req.result);
      };
      req.onerror = () => { opening = null; reject(req.error); };
      req.onblocked = () => reject(new Error("the browser's storage is held by an older tab"));
    });
  }
  return opening;
}

/** Runs `body(stores)` in one transaction on `names`; its result once committed. */
async function transaction(names, mode, body) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const tx = db.transaction(names, mode);
    const stores = Object.fromEntries(names.map((name) => [name, tx.objectStore(name)]));
    let result;
    Promise.resolve(body(stores)).then((value) => { result = value; }, (e) => { tx.abort(); reject(e); });
    tx.oncomplete = () => resolve(result);
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new Error("the browser's storage refused the change"));
  });
}

/** Every entry of the outbox, in the order made. */
export function entries() {
  return underKey("shared", async () => openEntries(await transaction(["outbox"], "readonly", (s) => request(s.outbox.getAll()))));
}

/** Keeps a new entry (without `key`): it gets the next key; the entry with it. */
export function add(entry) {
  return underKey("shared", async () => {
    const sealed = await sealEntry(entry);
    const key = await transaction(["outbox"], "readwrite", (s) => request(s.outbox.add(sealed)));
    return { ...entry, key };
  });
}

/** In one transaction: the entries `put` kept (replacing theirs), the keys `drop` removed, the meta records `meta` kept. */
export function update({ put = [], drop = [], meta = [] }) {
  return underKey("shared", async () => {
    const sealed = await Promise.all(put.map(sealEntry));
    return transaction(["outbox", "meta"], "readwrite", (s) => {
      for (const entry of sealed) s.outbox.put(entry);
      for (const key of drop) s.outbox.delete(key);
      for (const record of meta) s.meta.put(record);
    });
  });
}

/** The meta record `name` (`{ name, … }`), or undefined. */
export function meta(name) {
  return transaction(["meta"], "readonly", (s) => request(s.meta.get(name)));
}

/** The log last seen at this address (a string), null when it had none, undefined when none was ever seen. */
export async function lastLog() {
  return (await meta(LAST_LOG))?.log;
}

/**
 * The last list of `stream` read by `owner` from the log last seen at this
 * address (`{ owner, log, stream, items, version, seq }`), or undefined.
 */
export function list(owner, stream) {
  return underKey("shared", async () => openList(await transaction(["lists", "meta"], "readonly", async (s) => {
    const log = (await request(s.meta.get(LAST_LOG)))?.log;
    if (typeof log !== "string") return undefined;
    return request(s.lists.get([owner, log, stream]));
  })));
}

/** Every list kept, opened (the browser tests read what the page keeps through it). */
export function lists() {
  return underKey("shared", async () => {
    const records = await transaction(["lists"], "readonly", (s) => request(s.lists.getAll()));
    return (await Promise.all(records.map(openList))).filter((record) => record !== undefined);
  });
}

/**
 * Keeps the list of `record.stream` as `record.owner` last read it from
 * `record.log` (with the events folded in since), which becomes the log
 * last seen here; the lists of every other log go. A log without an id
 * (null: none yet, or one made before logs had ids) keeps no list. The
 * same list at the same version and head, of the log last seen, is kept
 * already: not written again (a list of 10,000 items costs a copy on the
 * page's thread, and a write).
 * `{ written, gone }`: whether it was written, and with `counting`, how
 * many items of the copy it replaced are not in it (removed, or erased
 * while the page was away: a list read afresh cannot tell which).
 */
export function keepList(record, { counting = false } = {}) {
  return underKey("shared", async () => keepSealed(record, sealer() ? await sealer().sealList(record) : record, counting));
}

function keepSealed(record, sealed, counting) {
  return transaction(["lists", "meta"], "readwrite", async (s) => {
    const last = (await request(s.meta.get(LAST_LOG)))?.log;
    const key = [record.owner, record.log, record.stream];
    if (typeof record.log === "string" && last === record.log) {
      if ((await request(s.lists.index("at").count([...key, record.version, record.seq]))) > 0) return { written: false, gone: 0 };
    }
    let gone = 0;
    if (counting && typeof record.log === "string") {
      const before = await request(s.lists.get(key));
      const now = new Set(record.items.map((item) => item.id));
      for (const item of before?.items ?? []) if (!now.has(item.id) && !item.erased) gone += 1;
    }
    s.meta.put({ name: LAST_LOG, log: record.log });
    for (const key of await request(s.lists.getAllKeys())) {
      if (key[1] !== record.log) {
        s.lists.delete(key);
        gone += 1;  // another log's list, its texts with it
      }
    }
    if (typeof record.log === "string") s.lists.put(sealed);
    return { written: true, gone };
  });
}

/** An item erased for everyone, as the lists kept hold it: in place (the list stays the one of its version), never shown. */
function blanked(item) {
  return { id: item.id, text: "", time: item.time, seq: item.seq, erased: true };
}

/**
 * The items `ids` (none: only what a list read afresh dropped) were erased
 * for everyone: every list kept (any token's, any stream's) blanks them,
 * any outbox entry naming one goes, and — where texts are sealed —
 * everything kept is sealed again under a new key and the old key's file
 * deleted, so that the copies IndexedDB's files still hold of what went
 * can never be read (seal.js says why). Alone: every other use of the
 * records, in every tab, waits for it.
 */
export function forgetTexts(ids) {
  const gone = new Set(ids);
  const blank = (items) => items.map((item) => (gone.has(item.id) && !item.erased ? blanked(item) : item));
  return underKey("exclusive", async () => {
    const kept = await transaction(["lists", "outbox"], "readonly", async (s) => (
      { lists: await request(s.lists.getAll()), entries: await request(s.outbox.getAll()) }));
    const renewed = sealer() ? await sealer().renew() : null;
    const put = [], unreadable = [], entries = [], drop = [];
    for (const record of kept.lists) {
      const opened = await openList(record);
      if (opened === undefined) { unreadable.push([record.owner, record.log, record.stream]); continue; }
      const again = { ...opened, items: blank(opened.items) };
      put.push(sealer() ? await sealer().sealList(again) : again);
    }
    for (const entry of kept.entries) {
      let opened;
      try {
        opened = sealer() ? await sealer().openEntry(entry) : entry;
      } catch (e) {
        unlessUnreadable(e);
        drop.push(entry.key);
        continue;
      }
      if (gone.has(opened.change.id)) drop.push(entry.key);
      else if (sealer()) entries.push(await sealer().sealEntry(opened));
    }
    await transaction(["lists", "outbox"], "readwrite", (s) => {
      for (const record of put) s.lists.put(record);
      for (const key of unreadable) s.lists.delete(key);
      for (const entry of entries) s.outbox.put(entry);
      for (const key of drop) s.outbox.delete(key);
    });
    if (renewed) await sealer().dropAllBut(renewed);
  });
}

/**
 * What `owner` kept, gone (the server refused its token): its lists and
 * every entry of the outbox it made. The entries removed that were not
 * sent yet.
 */
export function forget(owner) {
  return underKey("shared", () => transaction(["lists", "outbox"], "readwrite", async (s) => {
    for (const key of await request(s.lists.getAllKeys())) {
      if (key[0] === owner) s.lists.delete(key);
    }
    const removed = [];
    for (const entry of await request(s.outbox.getAll())) {
      if (entry.owner !== owner) continue;
      s.outbox.delete(entry.key);
      if (entry.seq === undefined) removed.push(entry);
    }
    return removed;
  }));
}

/**
 * This browser is used with `owner`'s token now: the lists other tokens
 * read go (a page shows only its own token's anyway), and the entries
 * kept before entries had owners become `owner`'s (the first page to use
 * the storage after the upgrade is the one that made them). Another
 * token's changes not sent yet stay, for it.
 */
export function keepOnly(owner) {
  return underKey("shared", () => transaction(["lists", "outbox"], "readwrite", async (s) => {
    for (const key of await request(s.lists.getAllKeys())) {
      if (key[0] !== owner) s.lists.delete(key);
    }
    for (const entry of await request(s.outbox.getAll())) {
      if (entry.owner === undefined) s.outbox.put({ ...entry, owner });
    }
  }));
}

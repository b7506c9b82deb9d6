// The browser's own database (IndexedDB), shared by every tab of this
// server's origin: the outbox (this page's changes until the server has
// them), the replica's identity and counter per log and token, and the
// last list read of each stream (what a reload shows while the server is
// away), under the token it was read with and the log it was read from:
// the lists kept are those of the log last seen at this address, and a
// page reads only its own token's. Each call is one transaction: a
// readwrite one is serialised with every other tab's on the same stores,
// so the outbox never loses or doubles an entry.

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
  return transaction(["outbox"], "readonly", (s) => request(s.outbox.getAll()));
}

/** Keeps a new entry (without `key`): it gets the next key; the entry with it. */
export function add(entry) {
  return transaction(["outbox"], "readwrite", async (s) => {
    const key = await request(s.outbox.add(entry));
    return { ...entry, key };
  });
}

/** In one transaction: the entries `put` kept (replacing theirs), the keys `drop` removed, the meta records `meta` kept. */
export function update({ put = [], drop = [], meta = [] }) {
  return transaction(["outbox", "meta"], "readwrite", (s) => {
    for (const entry of put) s.outbox.put(entry);
    for (const key of drop) s.outbox.delete(key);
    for (const record of meta) s.meta.put(record);
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
  return transaction(["lists", "meta"], "readonly", async (s) => {
    const log = (await request(s.meta.get(LAST_LOG)))?.log;
    if (typeof log !== "string") return undefined;
    return request(s.lists.get([owner, log, stream]));
  });
}

/**
 * Keeps the list of `record.stream` as `record.owner` last read it from
 * `record.log` (with the events folded in since), which becomes the log
 * last seen here; the lists of every other log go. A log without an id
 * (null: none yet, or one made before logs had ids) keeps no list. The
 * same list at the same version and head, of the log last seen, is kept
 * already: not written again (a list of 10,000 items costs a copy on the
 * page's thread, and a write). Whether it was written.
 */
export function keepList(record) {
  return transaction(["lists", "meta"], "readwrite", async (s) => {
    const last = (await request(s.meta.get(LAST_LOG)))?.log;
    if (typeof record.log === "string" && last === record.log) {
      const at = [record.owner, record.log, record.stream, record.version, record.seq];
      if ((await request(s.lists.index("at").count(at))) > 0) return false;
    }
    s.meta.put({ name: LAST_LOG, log: record.log });
    for (const key of await request(s.lists.getAllKeys())) {
      if (key[1] !== record.log) s.lists.delete(key);
    }
    if (typeof record.log === "string") s.lists.put(record);
    return true;
  });
}

/**
 * What `owner` kept, gone (the server refused its token): its lists and
 * every entry of the outbox it made. The entries removed that were not
 * sent yet.
 */
export function forget(owner) {
  return transaction(["lists", "outbox"], "readwrite", async (s) => {
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
  });
}

/**
 * This browser is used with `owner`'s token now: the lists other tokens
 * read go (a page shows only its own token's anyway), and the entries
 * kept before entries had owners become `owner`'s (the first page to use
 * the storage after the upgrade is the one that made them). Another
 * token's changes not sent yet stay, for it.
 */
export function keepOnly(owner) {
  return transaction(["lists", "outbox"], "readwrite", async (s) => {
    for (const key of await request(s.lists.getAllKeys())) {
      if (key[0] !== owner) s.lists.delete(key);
    }
    for (const entry of await request(s.outbox.getAll())) {
      if (entry.owner === undefined) s.outbox.put({ ...entry, owner });
    }
  });
}

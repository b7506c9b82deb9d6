// The browser's own database (IndexedDB), shared by every tab of this
// server's origin: the outbox (this page's changes until the server has
// them), the replica's identity and counter per log, and the last list read
// of each stream (what a reload shows while the server is away). Each
// call is one transaction: a readwrite one is serialised with every other
// tab's on the same stores, so the outbox never loses or doubles an entry.

const NAME = "msglog";
const VERSION = 1;

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
      req.onupgradeneeded = () => {
        const db = req.result;
        db.createObjectStore("outbox", { keyPath: "key", autoIncrement: true });
        db.createObjectStore("meta", { keyPath: "name" });
        db.createObjectStore("lists", { keyPath: "stream" });
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

/** The last list read of `stream` (`{ stream, log, items, version, seq }`), or undefined. */
export function list(stream) {
  return transaction(["lists"], "readonly", (s) => request(s.lists.get(stream)));
}

/** Keeps the list of `stream` as last read (with the events folded in since). */
export function keepList(record) {
  return transaction(["lists"], "readwrite", (s) => { s.lists.put(record); });
}

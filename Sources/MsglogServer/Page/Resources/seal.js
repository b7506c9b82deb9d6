// The texts this page keeps in the browser (the lists kept for a reload,
// the outbox's changes) are sealed: encrypted (AES-GCM) under a key kept
// in a file of its own, in the origin's private file system, and never
// in IndexedDB. Forgetting an erased text (forget.js) seals what remains
// under a new key and deletes the old key's file.
//
// Why: Chromium keeps IndexedDB in a LevelDB that appends — a record
// overwritten or deleted keeps its old bytes in the profile's files (the
// log, then its tables) until a compaction happens to merge them, which
// neither `clear()`, deleting and making the database again, nor deleting
// another database brings about for sure (Tests/Browser/erase.py reads
// the bytes). A file removed or written over is gone from the profile at
// once: with its key gone, what IndexedDB still holds of an erased text
// can no longer be read by anyone.
//
// Free of the DOM and of IndexedDB (node's test runner runs it with keys
// kept in memory: Tests/Page/seal.test.mjs). Without what it needs (a
// secure context: https or localhost) texts are kept as they are.

/** The cipher: AES-GCM, a 256-bit key, a random 96-bit nonce per value sealed. */
const ALGORITHM = "AES-GCM";

/** A key's name: "key-", when it was made (15 digits of milliseconds), "-", 8 random bytes in hex. */
const KEY_NAME = /^key-\d{15}-[0-9a-f]{16}$/;
/** A key's length: 256 bits. */
const KEY_BYTES = 32;

/**
 * Keys in the origin's private file system: a directory of files, one raw
 * 256-bit key each. A file is there under its name from the moment it is
 * made, empty until its bytes are written: a key is written under a name
 * of its own and moved to its name once whole, so that a page listing
 * the keys meanwhile (another tab's) never takes an empty file for the
 * newest key.
 */
export class FileKeys {
  /** `directory`: the private file system's directory of the keys (the page's is "msglog-keys"). */
  constructor(directory = "msglog-keys") {
    this.directory = directory;
  }

  /** Whether the browser has the private file system and can write and move a file of it from the page (not every one can). */
  static available() {
    return typeof navigator !== "undefined" && typeof navigator.storage?.getDirectory === "function"
      && typeof FileSystemFileHandle === "function" && typeof FileSystemFileHandle.prototype.createWritable === "function"
      && typeof FileSystemFileHandle.prototype.move === "function";
  }

  async #directory() {
    const root = await navigator.storage.getDirectory();
    return root.getDirectoryHandle(this.directory, { create: true });
  }

  /**
   * The names of the keys kept, whole ones only; `whole: false`, every
   * file of the directory (a key being made, one a closed tab left half
   * made, the browser's own swap files), for `dropAllBut`.
   */
  async names({ whole = true } = {}) {
    const names = [];
    for await (const name of (await this.#directory()).keys()) if (!whole || KEY_NAME.test(name)) names.push(name);
    return names;
  }

  /**
   * Key `name`'s bytes, or null when there is no key file by that name
   * (none, a name no file can have, a directory). Any other failure is
   * thrown: a key that could not be read now is not a key that is gone
   * (what it sealed would be deleted as unreadable for good).
   */
  async read(name) {
    let handle;
    try {
      handle = await (await this.#directory()).getFileHandle(name);
    } catch (e) {
      if (["NotFoundError", "TypeError", "TypeMismatchError"].includes(e?.name)) return null;
      throw e;
    }
    return new Uint8Array(await (await handle.getFile()).arrayBuffer());
  }

  async write(name, bytes) {
    const directory = await this.#directory();
    const making = "making-" + name;
    const handle = await directory.getFileHandle(making, { create: true });
    try {
      const writable = await handle.createWritable();
      await writable.write(bytes);
      await writable.close();
      await handle.move(directory, name);  // the form every browser with move has
    } catch (e) {
      await directory.removeEntry(making).catch(() => {});
      throw e;
    }
  }

  async remove(name) {
    try { await (await this.#directory()).removeEntry(name); } catch { /* gone already */ }
  }
}

/** Keys in memory (node's tests). */
export class MemoryKeys {
  files = new Map();
  async names() { return [...this.files.keys()]; }
  async read(name) { return this.files.get(name) ?? null; }
  async write(name, bytes) { this.files.set(name, new Uint8Array(bytes)); }
  async remove(name) { this.files.delete(name); }
}

/** A value sealed under a key that is gone (or a record no key can open): it can never be read again. */
export class Unreadable extends Error {}

/**
 * Seals and opens values under the newest of `keys` (FileKeys or
 * MemoryKeys). Key names sort by when they were made, so the newest is
 * the last: `renew` makes a newer one, `dropAllBut` deletes the others.
 */
export class Sealer {
  /** Name → CryptoKey, for the keys read or made (a name is never reused). */
  #loaded = new Map();

  /**
   * `alone(body)`: runs `body` while no other page of this browser makes a
   * key (Web Locks by default; one turn at a time within this page where
   * there are none, as under node).
   */
  constructor(keys, { alone = keyLock() } = {}) {
    this.keys = keys;
    this.alone = alone;
  }

  /** Whether this browser can seal (else texts are kept as they are): a secure context's crypto, files and locks. */
  static available() {
    return typeof crypto !== "undefined" && typeof crypto.subtle?.encrypt === "function" && FileKeys.available()
      && typeof navigator.locks?.request === "function";
  }

  async #import(name, bytes) {
    const key = await crypto.subtle.importKey("raw", bytes, ALGORITHM, false, ["encrypt", "decrypt"]);
    this.#loaded.set(name, key);
    return key;
  }

  /** The key `name`, or null when its file is gone. */
  async #key(name) {
    if (this.#loaded.has(name)) return this.#loaded.get(name);
    if (!KEY_NAME.test(name)) return null;
    const bytes = await this.keys.read(name);
    // Not 32 bytes: never a whole key (an older page's key file, made empty and left so by a tab closed before
    // it was written), and what names it can never be opened.
    return bytes?.length === KEY_BYTES ? this.#import(name, bytes) : null;
  }

  /**
   * The newest key's name (read each time: another tab may have renewed
   * it), made when there is none — by one page alone, so that two first
   * writes at once (a tab keeping its list, another sending) share one.
   */
  async current() {
    return (await this.#usableNewest()) ?? this.alone(async () => (await this.#usableNewest()) ?? this.#make());
  }

  /** The newest key's name; undefined when there is none, or it is no whole key (a new one is made, newer). */
  async #usableNewest() {
    const newest = await this.#newest();
    return newest !== undefined && (await this.#key(newest)) ? newest : undefined;
  }

  /** Makes a new key, newer than every other, and seals with it from now on; its name. */
  renew() {
    return this.alone(() => this.#make());
  }

  async #newest() {
    return (await this.keys.names()).sort().pop();
  }

  async #make() {
    // Later than the newest name even within its millisecond: a renewal
    // whose name sorted first would leave the old key the current one.
    const newest = await this.#newest();
    const stamp = Math.max(Date.now(), newest ? Number(newest.slice(4, 19)) + 1 : 0);
    const name = "key-" + String(stamp).padStart(15, "0") + "-" + hex(crypto.getRandomValues(new Uint8Array(8)));
    const bytes = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
    await this.keys.write(name, bytes);
    await this.#import(name, bytes);
    return name;
  }

  /**
   * Deletes every key but `name` (the file and this page's copy): what they
   * sealed can never be read again. Every other file of the keys goes too
   * (a key half made: the caller keeps every other page from making one).
   */
  async dropAllBut(name) {
    for (const other of await this.keys.names({ whole: false })) {
      if (other === name) continue;
      await this.keys.remove(other);
      this.#loaded.delete(other);
    }
  }

  /** `value` (anything JSON holds) sealed under the newest key: `{ key, iv, data }`. */
  async seal(value) {
    const name = await this.current();
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const plain = new TextEncoder().encode(JSON.stringify(value));
    const data = new Uint8Array(await crypto.subtle.encrypt({ name: ALGORITHM, iv }, await this.#key(name), plain));
    return { key: name, iv, data };
  }

  /** The value `sealed` holds; throws Unreadable when its key is gone. */
  async open(sealed) {
    const key = sealed && typeof sealed.key === "string" ? await this.#key(sealed.key) : null;
    if (!key) throw new Unreadable("sealed under a key that is gone");
    try {
      const plain = await crypto.subtle.decrypt({ name: ALGORITHM, iv: sealed.iv }, key, sealed.data);
      return JSON.parse(new TextDecoder().decode(plain));
    } catch {
      throw new Unreadable("not sealed by this page");
    }
  }

  // MARK: - The records this page keeps

  /** An outbox entry as kept: its change's text and sender sealed (the rest says what the change is and whose). */
  async sealEntry(entry) {
    const { text, sender, ...change } = entry.change;
    if (text === undefined && sender === undefined) return entry;
    return { ...entry, change: { ...change, sealed: await this.seal({ text, sender }) } };
  }

  /** An outbox entry as kept, opened (one kept before sealing, as it is). */
  async openEntry(entry) {
    const { sealed, ...change } = entry.change;
    if (sealed === undefined) return entry;
    const { text, sender } = await this.open(sealed);
    if (text !== undefined) change.text = text;
    if (sender !== undefined && sender !== null) change.sender = sender;
    return { ...entry, change };
  }

  /** A list as kept: each item's text and sender sealed, together (its ids, times and seqs as they are). */
  async sealList(record) {
    const items = record.items.map(({ text, sender, ...rest }) => rest);
    const texts = record.items.map((item) => [item.text, item.sender ?? null]);
    return { ...record, items, sealed: await this.seal(texts) };
  }

  /** A list as kept, opened (one kept before sealing, as it is). */
  async openList(record) {
    if (record.sealed === undefined) return record;
    const texts = await this.open(record.sealed);
    const { sealed, ...rest } = record;
    const items = record.items.map((item, i) => {
      const [text, sender] = texts[i] ?? ["", null];
      return sender === null ? { ...item, text } : { ...item, text, sender };
    });
    return { ...rest, items };
  }
}

/** The last turn at making a key taken in this page, where there are no Web Locks. */
let lastTurn = Promise.resolve();

/** Web Locks' exclusive lock on making a key, shared by every tab; where there are none, this page's own turns. */
function keyLock() {
  if (typeof navigator !== "undefined" && typeof navigator.locks?.request === "function") {
    return (body) => navigator.locks.request("msglog-seal-key", body);
  }
  return (body) => {
    const turn = lastTurn.then(body);
    lastTurn = turn.catch(() => {});
    return turn;
  };
}

function hex(bytes) {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

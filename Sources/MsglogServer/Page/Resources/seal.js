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

/** Keys in the origin's private file system: a directory of files, one raw 256-bit key each. */
export class FileKeys {
  /** Whether the browser has the private file system and can write a file of it from the page (not every one can). */
  static available() {
    return typeof navigator !== "undefined" && typeof navigator.storage?.getDirectory === "function"
      && typeof FileSystemFileHandle === "function" && typeof FileSystemFileHandle.prototype.createWritable === "function";
  }

  async #directory() {
    const root = await navigator.storage.getDirectory();
    return root.getDirectoryHandle("msglog-keys", { create: true });
  }

  /** The names of the keys kept. */
  async names() {
    const names = [];
    for await (const name of (await this.#directory()).keys()) names.push(name);
    return names;
  }

  /** Key `name`'s bytes, or null when there is none. */
  async read(name) {
    try {
      const handle = await (await this.#directory()).getFileHandle(name);
      return new Uint8Array(await (await handle.getFile()).arrayBuffer());
    } catch {
      return null;
    }
  }

  async write(name, bytes) {
    const handle = await (await this.#directory()).getFileHandle(name, { create: true });
    const writable = await handle.createWritable();
    await writable.write(bytes);
    await writable.close();
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

  constructor(keys) {
    this.keys = keys;
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
    const bytes = await this.keys.read(name);
    return bytes ? this.#import(name, bytes) : null;
  }

  /** The newest key's name, made when there is none (read each time: another tab may have renewed it). */
  async current() {
    const names = (await this.keys.names()).sort();
    return names.length > 0 ? names[names.length - 1] : this.renew();
  }

  /** Makes a new key, newer than every other, and seals with it from now on; its name. */
  async renew() {
    // Later than the newest name even within its millisecond: a renewal
    // whose name sorted first would leave the old key the current one.
    const newest = (await this.keys.names()).sort().pop();
    const stamp = Math.max(Date.now(), newest ? Number(newest.slice(4, 19)) + 1 : 0);
    const name = "key-" + String(stamp).padStart(15, "0") + "-" + hex(crypto.getRandomValues(new Uint8Array(8)));
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    await this.keys.write(name, bytes);
    await this.#import(name, bytes);
    return name;
  }

  /** Deletes every key but `name` (the file and this page's copy): what they sealed can never be read again. */
  async dropAllBut(name) {
    for (const other of await this.keys.names()) {
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

function hex(bytes) {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

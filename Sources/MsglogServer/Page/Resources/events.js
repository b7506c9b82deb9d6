// The page's one way to subscribe, free of the DOM (node's test runner
// runs it: Tests/Page/modules.test.mjs). A part with something to tell —
// the model's changes, a render, a refused token, the connection's state,
// the outbox's news — is an `Events` of the kinds it names, and the
// composition root (app.js) connects each kind to whoever acts on it with
// `on`: nothing subscribes on its own, so every connection is in that one
// file.

export class Events {
  #listeners = new Map();

  /** `kinds`: what this part tells (a listener for any other is a slip, refused at once). */
  constructor(kinds) {
    for (const kind of kinds) this.#listeners.set(kind, []);
  }

  /** Calls `listener(value)` at each `emit(kind, value)`, after the listeners before it. */
  on(kind, listener) {
    const listeners = this.#listeners.get(kind);
    if (!listeners) throw new TypeError(this.constructor.name + " tells no \u201c" + kind + "\u201d");
    listeners.push(listener);
  }

  /** Tells `kind`'s listeners `value`. */
  emit(kind, value) {
    const listeners = this.#listeners.get(kind);
    if (!listeners) throw new TypeError(this.constructor.name + " tells no \u201c" + kind + "\u201d");
    for (const listener of listeners) listener(value);
  }
}

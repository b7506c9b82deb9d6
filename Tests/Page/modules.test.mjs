// How the page's modules (Sources/MsglogServer/Page/Resources/*.js) are put
// together: one composition root, app.js, builds and connects the parts;
// every other module does nothing when imported (it touches no browser
// object, starts no timer and adds no global), the imports between them
// form no cycle, and a part tells what happens with events.js's `on`, the
// page's one way to subscribe.
//
//     node --test Tests/Page/*.test.mjs

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const folder = fileURLToPath(new URL("../../Sources/MsglogServer/Page/Resources/", import.meta.url));
const scripts = readdirSync(folder).filter((name) => name.endsWith(".js")).sort();
/** The composition root, and the service worker (a script of its own, not one of the page's modules). */
const ROOTS = ["app.js", "service-worker.js"];

/** The modules `name` imports, by file name. */
function importsOf(name) {
  const text = readFileSync(folder + name, "utf8");
  return [...text.matchAll(/^import\s[^;]*?from\s+"\.\/([^"]+)";/gms)].map((m) => m[1]);
}

describe("the page's modules", () => {
  test("importing every module but the root touches no browser object, starts no timer and adds no global", async () => {
    const touched = [];
    /** An object of the browser's that records whoever reaches for it from the page's modules. */
    const watched = (name) => new Proxy(function () {}, {
      get(_, key) {
        if (typeof key === "string" && fromPage()) touched.push(name + "." + key);
        return watched(name + "." + String(key));
      },
      apply() {
        if (fromPage()) touched.push(name + "()");
        return watched(name + "()");
      },
      construct() {
        if (fromPage()) touched.push("new " + name);
        return watched("new " + name);
      },
    });
    const fromPage = () => (new Error().stack || "").split("\n").slice(2).some((line) => line.includes(folder));
    const browser = ["document", "window", "navigator", "location", "history", "localStorage", "sessionStorage",
      "indexedDB", "BroadcastChannel", "requestAnimationFrame", "fetch", "CSS", "performance", "crypto"];
    const saved = Object.fromEntries(browser.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)]));
    const timers = ["setTimeout", "setInterval", "queueMicrotask"];
    const savedTimers = Object.fromEntries(timers.map((name) => [name, globalThis[name]]));
    for (const name of browser) Object.defineProperty(globalThis, name, { value: watched(name), configurable: true, writable: true });
    for (const name of timers) {
      globalThis[name] = (...args) => {
        if (fromPage()) touched.push(name + "()");
        return savedTimers[name](...args);
      };
    }
    const before = new Set(Object.getOwnPropertyNames(globalThis));
    try {
      for (const name of scripts.filter((n) => !ROOTS.includes(n))) await import(folder + name);
    } finally {
      for (const name of browser) {
        if (saved[name]) Object.defineProperty(globalThis, name, saved[name]); else delete globalThis[name];
      }
      for (const name of timers) globalThis[name] = savedTimers[name];
    }
    const added = Object.getOwnPropertyNames(globalThis).filter((name) => !before.has(name));
    assert.deepEqual(touched, [], "a module did something when imported");
    assert.deepEqual(added, [], "a module added a global");
  });

  test("the imports between the modules form no cycle, and nothing imports the root", () => {
    const graph = Object.fromEntries(scripts.map((name) => [name, importsOf(name)]));
    assert.ok(graph["app.js"].length > 10, "app.js imports the parts: " + graph["app.js"]);
    for (const [name, imports] of Object.entries(graph)) {
      for (const imported of imports) assert.ok(scripts.includes(imported), name + " imports " + imported + ", not a file");
      assert.ok(!imports.includes("app.js"), name + " imports the root");
    }
    const state = {};  // name → "visiting" | "done"
    const visit = (name, path) => {
      if (state[name] === "done") return;
      assert.notEqual(state[name], "visiting", "a cycle: " + [...path, name].join(" → "));
      state[name] = "visiting";
      for (const imported of graph[name]) visit(imported, [...path, name]);
      state[name] = "done";
    };
    for (const name of scripts) visit(name, []);
  });

  test("only the root subscribes: `on` is called in app.js alone", () => {
    for (const name of scripts.filter((n) => !ROOTS.includes(n))) {
      const text = readFileSync(folder + name, "utf8");
      assert.doesNotMatch(text, /\.on\(\s*"/, name + " subscribes on its own");
      assert.doesNotMatch(text, /\b(subscribe|reportTo|onRender|onCancelMoves|onUnauthorized|cacheWith)\(/, name);
    }
    assert.match(readFileSync(folder + "app.js", "utf8"), /\.on\("event"/);
  });
});

describe("the page's one way to subscribe", async () => {
  const { Events } = await import(folder + "events.js");

  test("each listener of a kind hears each value told, in the order subscribed", () => {
    const part = new Events(["changed", "other"]);
    const heard = [];
    part.on("changed", (value) => heard.push("first " + value));
    part.on("changed", (value) => heard.push("second " + value));
    part.on("other", () => heard.push("other"));
    part.emit("changed", 1);
    part.emit("changed", 2);
    assert.deepEqual(heard, ["first 1", "second 1", "first 2", "second 2"]);
  });

  test("a kind the part does not tell is a slip, refused at once (listening or telling)", () => {
    class Model extends Events {
      constructor() { super(["open"]); }
    }
    const model = new Model();
    assert.throws(() => model.on("opened", () => {}), /Model tells no “opened”/);
    assert.throws(() => model.emit("list"), /Model tells no “list”/);
    model.emit("open");  // no listener: nothing happens
  });
});

// What this browser keeps and does not send, and why (sync.js's "held"):
// this page's changes made on another log than the one the server keeps
// now, the changes a page with another access token left, and this page's
// changes the server refused whole (its token may not write). Said in a
// live region (index.html's #held), each kind with a button that discards
// it; nothing is discarded without that press.

import { $ } from "./dom.js";
import { changeInWords, heldInWords } from "./words.js";

/** At most this many held changes are named one by one. */
const NAMED = 5;

export class Held {
  /** What is drawn: the kinds and their entries' keys (the same told again draws, and says, nothing). */
  #drawn = "";

  /** `sync`: where the changes are kept (its `discard(entries)` drops them for good). */
  constructor({ sync, say }) {
    this.sync = sync;
    this.say = say;
  }

  /** Shows `held` (`{ otherLog, otherOwner, forbidden }`: the entries of each kind; `why`: the server's words for the last). */
  show(held) {
    const groups = ["otherLog", "otherOwner", "forbidden"].filter((kind) => held[kind].length > 0)
      .map((kind) => [kind, held[kind]]);
    const signature = groups.map(([kind, entries]) => kind + ":" + entries.map((e) => e.key).join(",")).join(";")
      + (held.forbidden.length > 0 ? "|" + held.why : "");
    if (signature === this.#drawn) return;
    this.#drawn = signature;
    const region = $("held");
    const hadFocus = region.contains(document.activeElement);
    region.replaceChildren(...groups.map(([kind, entries]) => group(kind, entries, held.why, this.sync, this.say)));
    // A keyboard user who discarded one kind goes on from the next button, or the stream.
    if (hadFocus) (region.querySelector("button") || $("main")).focus();
  }
}

/** One kind of held changes, said, with the button that discards them. */
function group(kind, entries, why, sync, say) {
  const words = heldInWords(kind, entries.length, why);
  const box = document.createElement("div");
  box.className = "held-group";
  const text = document.createElement("p");
  text.textContent = words.text;
  box.append(text);
  // This page's own changes are named (what the user is asked to discard); another token's are not shown.
  if (kind !== "otherOwner") {
    const list = document.createElement("ul");
    for (const entry of entries.slice(0, NAMED)) {
      const item = document.createElement("li");
      item.dir = "auto";
      item.textContent = changeInWords(entry.change);
      list.append(item);
    }
    if (entries.length > NAMED) {
      const more = document.createElement("li");
      more.textContent = "and " + (entries.length - NAMED) + " more";
      list.append(more);
    }
    box.append(list);
  }
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = words.button;
  let discarding = false;
  button.addEventListener("click", async () => {
    if (discarding) return;
    discarding = true;
    try {
      await sync.discard(entries);
      say.announce(words.done);
    } finally {
      discarding = false;
    }
  });
  box.append(button);
  return box;
}

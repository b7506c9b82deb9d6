// msglog's page: one stream as a chat or as a board, kept live by the
// server's event stream. This file is its composition root (TodoMVC's
// vanilla-es6 app.js): every other module exports what it is and does
// nothing when imported; here each part is built, given the parts it uses,
// and connected to the others — a part with something to tell is an
// `Events` (events.js), and every `on` of the page is below — and then the
// stream the address names is opened.
// - model.js: the stream as the page knows it (the server's events folded
//   in, and this page's changes on their way replayed on top); shown.js:
//   what is shown instead (the past, a card being moved);
// - api.js, follow.js, sync.js (with idb.js and outbox.js), writes.js,
//   kept.js: the server (requests and the token, following its events,
//   this page's changes as a replica, every write, the list kept for a
//   reload);
// - forget.js: what the page does when it learns an item was erased for
//   everyone (its text gone from everything the page keeps);
// - screen.js and listview.js draw; chat.js, board.js, board-keyboard.js,
//   board-pointer.js, compose.js, history.js, undo.js, erase.js, stream.js,
//   token.js, signed-in.js and held.js are the parts of the page; say.js
//   what it says.
// Text from the log is only ever set with textContent.

import { Api } from "./api.js";
import { BoardKeyboard } from "./board-keyboard.js";
import { BoardPointer } from "./board-pointer.js";
import { Board } from "./board.js";
import { Chat } from "./chat.js";
import { Compose } from "./compose.js";
import { Erase } from "./erase.js";
import { Follower } from "./follow.js";
import { Forgetting } from "./forget.js";
import { Held } from "./held.js";
import { HistorySlider } from "./history.js";
import * as idb from "./idb.js";
import { KeptList } from "./kept.js";
import { StreamModel } from "./model.js";
import { Say } from "./say.js";
import { Screen } from "./screen.js";
import { Shown } from "./shown.js";
import { SignedIn } from "./signed-in.js";
import { StreamPicker } from "./stream.js";
import { Sync } from "./sync.js";
import { TokenForm, TokenOffer } from "./token.js";
import { Undo } from "./undo.js";
import { arrivalInWords, changeInWords, erasedChangeInWords, streamNameProblem } from "./words.js";
import { Writes } from "./writes.js";

// MARK: - The parts

const api = new Api();
const model = new StreamModel();
const shown = new Shown(model);
const say = new Say();
const screen = new Screen({ model, shown });
// Every tab of this server's origin hears of every change of the outbox.
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("msglog-outbox") : null;
const sync = new Sync({ model, api, idb, channel });
const kept = new KeptList({ model, api, idb });
const follower = new Follower({ model, api, kept });
const writes = new Writes({ model, sync, whyNot: () => whyNoWrites() });
const forgetting = new Forgetting({ model, sync, idb });
const erase = new Erase({ api, model, shown, screen, forgetting, say });
const undo = new Undo({ writes, shown, say });
const chat = new Chat({ shown, screen, writes, erase, say });
const board = new Board({ shown, screen, writes, undo, erase, say });
const keyboard = new BoardKeyboard({ board, shown, screen, say });
const pointer = new BoardPointer({ board, shown, screen });
const compose = new Compose({ model, shown, screen, writes, say });
const slider = new HistorySlider({ api, model, shown, screen, say });
const held = new Held({ sync, say });
const picker = new StreamPicker({ api, model, follower, sync, shown, screen, say });
const tokenForm = new TokenForm({ api, say });
const tokenOffer = new TokenOffer({ api, say, model });
const signedIn = new SignedIn({ api, model });
screen.addView("chat", chat.list);
screen.addView("board", board.list);

// MARK: - Their connections

// What the page said of a stream its token may not read, taken down once another is shown.
let refusal = null;
// The model: another stream, the list read again, an event folded in.
model.on("open", () => {
  // Another stream (or this one afresh): what was said of a refused one no longer holds.
  if (refusal !== null) say.withdraw(refusal);
  refusal = null;
  compose.opened();
  compose.allowWrites(mayWrite());
  screen.opened();
  undo.clear();
  chat.endEdit();
  slider.opened();
  erase.opened();
  say.clearArrivals();
});
model.on("list", () => {
  kept.readAfresh();
  // The changes shown are the ones made on the log of this list; it is
  // drawn with them, never without them first.
  screen.waitFor(sync.refresh());
  slider.listRead();
});
model.on("event", (event) => {
  screen.folded(event);
  kept.keepSoon();
  slider.folded(event);
  if (event.op === "erase") forgetting.learn([event.id]);
});
// What someone else added, said to a screen reader: not while the past is shown, not what this page's name
// wrote (elsewhere, or a change of this browser's already answered), and not the backlog a stream sends in the
// moment after it connects (the page catching up; the browser's clock is not the server's to compare times).
let catchingUpUntil = 0;
model.on("arrived", (event) => {
  if (shown.isPast() || performance.now() < catchingUpUntil) return;
  if (event.sender !== undefined && event.sender === compose.sendsAs) return;
  say.arrived(arrivalInWords(event, screen.current), event.id, screen.current);
});
// Items erased for everyone: off the screen, out of an edit under way, the past shown, a card being moved
// and a note or an announcement quoting one.
forgetting.on("forgot", (ids) => {
  chat.forgot(ids);
  slider.forgot(ids);
  say.forgot(ids);
  if (shown.isMoving() && shown.items().some((item) => ids.includes(item.id))) shown.cancelMoves();
  screen.scheduleRender();
});
// The parts drawn with the list bring themselves up to date at each render.
screen.on("render", () => {
  undo.update();
  chat.update();
  compose.update();
  slider.update();
});
// A card being moved is put back when another view, stream or moment is shown.
shown.on("cancel", () => {
  keyboard.cancel();
  pointer.cancel();
});
// Following the stream.
follower.on("status", ({ kind, text, why }) => {
  say.setStatus(kind, text);
  screen.setRefused(kind === "refused");
  if (kind === "refused") {
    // Whose the token is and what it may do there, said by its name; and why the list is empty.
    signedIn.ask();
    refusal = why;
    say.note(why);
  }
  if (kind === "live") {
    catchingUpUntil = performance.now() + 1000;
    signedIn.ask();  // whose the token is, once the server answers
    if (tokenOffer.waiting) tokenOffer.show();  // a link's token, opened while the server was away
    sync.push();  // the server is back: send what waits
  }
});
follower.on("ready", () => screen.markReady());
follower.on("loaded", () => screen.render({ toBottom: true }));
follower.on("streams", (names) => picker.fill(names));
follower.on("problem", (text) => say.note(text));
// The outbox.
sync.on("changed", () => screen.scheduleRender());
sync.on("refused", ({ entry, reason, error }) => {
  if (reason?.code === "item-erased") {
    // Erased meanwhile: what this browser keeps of the item goes too.
    forgetting.learn([reason.id]);
    say.note(erasedChangeInWords(entry.change));
    return;
  }
  say.note(changeInWords(entry.change) + " was refused by the server: " + error + ".");
});
sync.on("problem", (text) => say.note(text));
sync.on("held", (what) => held.show(what));
kept.on("kept", () => sync.prune().catch(() => {}));
writes.on("undoable", (ref) => undo.record(ref));
compose.on("sender", (name) => chat.setMe(name));
// What the token may do, per stream (`{ read, write }`), as the server said (signed-in.js).
const rights = new Map();
// Why the stream shown may not be written now, or null: a stream not asked
// about yet, as offline, may be (the server refuses what it must, held.js);
// none while the page asks for a token.
function whyNoWrites() {
  if (tokenForm.asking) return "the page needs a token first";
  const may = rights.get(model.stream);
  if (may?.read === false) return "the token signed in may not read this stream";
  if (may?.write === false) return "the token signed in may only read this stream";
  return null;
}
function mayWrite() {
  return whyNoWrites() === null;
}
// What the page offers follows: the message box, Undo and Redo, and each
// card's and message's buttons and handles (an edit under way stays open:
// its Save says why it cannot be kept, and keeps the text).
function rightsChanged() {
  compose.allowWrites(mayWrite());
  undo.update();
  chat.redraw();
  board.redraw();
  screen.scheduleRender();
}
// The token.
api.on("unauthorized", () => {
  tokenForm.ask();
  picker.signedOut();
  rights.clear();
  signedIn.signedOut();
  rightsChanged();
});
// A named token's page shows whose it is and writes as that name.
signedIn.on("name", (name) => {
  compose.signIn(name);
  chat.setMe(compose.sendsAs);
});
// The message box is offered where the token may write (a stream not asked
// about yet, as offline, may be written; none while the page asks for a
// token), "Delete for everyone" where it may erase.
signedIn.on("may", ({ stream, erase: may, write, read }) => {
  // (Signed out, nothing is known of the next token's rights.)
  const was = whyNoWrites();
  if (!tokenForm.asking) rights.set(stream, { read, write });
  const eraseChanged = erase.setAllowed(stream, may);
  if (eraseChanged || (stream === model.stream && was !== whyNoWrites())) rightsChanged();
});
// Another token, typed in or a link's the user signed in with: the stream opened with it.
function tokenTaken() {
  tokenForm.close();
  rightsChanged();
  picker.open(model.stream);
}
tokenForm.on("token", tokenTaken);
tokenOffer.on("token", tokenTaken);
// The browser.
channel?.addEventListener("message", () => sync.refresh());
window.addEventListener("online", () => {
  follower.wake();
  sync.push();
});
// A stream open before may look open still: the page says Offline, not Live.
window.addEventListener("offline", () => follower.drop());

// MARK: - Opening the stream the address names

api.readToken();  // a token in the address leaves it at once
chat.setMe(compose.sender);
const params = new URLSearchParams(location.search);
let stream = params.get("stream") ?? "main";
const problem = streamNameProblem(stream);
if (problem) {
  say.note(problem + " Showing “main” instead.");
  stream = "main";
}
screen.show(params.get("view") === "board" ? "board" : "chat");
picker.open(stream);
tokenOffer.show();
// The page's files kept for a reload while the server is away (a secure context only: https, or localhost).
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/service-worker.js").catch(() => {});
// For the repository's browser tests (Tests/Browser): the model and following, not a stable interface.
window.msglog = Object.freeze({ model, follower });

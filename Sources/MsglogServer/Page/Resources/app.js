// msglog's page: one stream as a chat or as a board, kept live by the
// server's event stream. ES modules, one concern each, each wiring the
// listeners of what it owns when it loads:
// - model.js: the stream as the page knows it (the server's events folded
//   in, and this page's changes on their way replayed on top); shown.js:
//   what is shown instead (the past, a card being moved);
// - api.js, follow.js, writes.js: the server (requests and the token,
//   following its events, this page's writes);
// - screen.js and listview.js draw; chat.js, board.js, board-keyboard.js,
//   board-pointer.js, compose.js, history.js, undo.js, stream.js, token.js
//   are the parts of the page; say.js what it says.
// Text from the log is only ever set with textContent.
// This one reads the address and opens its stream.

import { readToken } from "./api.js";
import "./board-keyboard.js";
import "./board-pointer.js";
import "./compose.js";
import "./history.js";
import { note } from "./say.js";
import { show } from "./screen.js";
import { open } from "./stream.js";
import "./token.js";
import { streamNameProblem } from "./words.js";

readToken();  // a token in the address leaves it at once
const params = new URLSearchParams(location.search);
let stream = params.get("stream") ?? "main";
const problem = streamNameProblem(stream);
if (problem) {
  note(problem + " Showing “main” instead.");
  stream = "main";
}
show(params.get("view") === "board" ? "board" : "chat");
open(stream);
// The page's files kept for a reload while the server is away (a secure context only: https, or localhost).
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/service-worker.js").catch(() => {});

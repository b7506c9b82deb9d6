// The access token, when the server asks for one: the form that takes it
// (the one the server was started with, MSGLOG_TOKEN or --token). A
// refused token takes with it what the page showed and kept with it
// (stream.js's `signedOut`); another token typed shows only its own
// (`open`).

import { onUnauthorized, readToken, useToken } from "./api.js";
import { $ } from "./dom.js";
import { model } from "./model.js";
import { note, setStatus } from "./say.js";
import { open, signedOut } from "./stream.js";

function askForToken() {
  const form = $("token-form");
  $("token-why").textContent = readToken()
    ? "The server did not accept this page's token. Enter the access token it was started with (MSGLOG_TOKEN)."
    : "This server needs its access token: the MSGLOG_TOKEN (or --token) it was started with.";
  setStatus("offline", "Needs a token");
  if (form.hidden) {
    form.hidden = false;
    $("token-input").focus();
  }
}

function submitToken(event) {
  event.preventDefault();
  useToken($("token-input").value);
  $("token-input").value = "";
  $("token-form").hidden = true;
  note("");
  open(model.stream);
}

onUnauthorized(() => {
  askForToken();
  signedOut();
});
$("token-form").addEventListener("submit", submitToken);

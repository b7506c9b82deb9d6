// Every write of this page goes through here: one place for what all
// writes share. A change that shows before the server answers is a
// pending change of the model (`model.propose`), given here to be sent;
// the answer is folded in like the event it is, and its seq recorded, so
// that Ctrl+Z undoes this page's own last change.
//
// This is where the offline outbox goes: a change kept in the browser's
// storage first, pushed with this page's replica id and change number,
// and settled when the server's events have it.

import { api } from "./api.js";
import { model } from "./model.js";
import { record } from "./undo.js";

/**
 * POSTs `body` to /api/`op` on the model's stream. `change`: the pending
 * change it shows (settled by the answer, dropped if refused); `event`: the
 * fields of the event the answer is (`op`, and what the answer leaves
 * out), folded into the model. The answer, or the HTTPError.
 */
export async function write(op, body, { change = null, event = null } = {}) {
  let answer;
  try {
    answer = await api("/api/" + op, Object.assign({ stream: model.stream }, body));
  } catch (e) {
    if (change) model.drop(change);
    throw e;
  }
  if (answer && answer.seq) record(answer.seq);
  if (event && answer && answer.version) model.fold({ ...answer, ...event }, { fromWrite: true });
  if (change) model.settle(change, answer);
  return answer;
}

// The outbox's rules, free of the DOM and of IndexedDB (node's test runner
// runs them: Tests/Page/outbox.test.mjs): how this page's changes, kept in
// the browser's storage (idb.js) until the server has them, are numbered,
// pushed and settled by the sync protocol (docs/SYNC.md, version 1).
//
// An entry is one change as the page made it: `{ key, change, made, basis,
// owner, log, number?, replica?, seq? }`. `key` orders the entries
// (IndexedDB's own counter). `owner`: whose it is (fingerprint.js: the
// token it was made with); only a page with that token shows or sends it.
// `log`: the log it was made on, the one whose list the page showed (null
// when the page knew of none: it goes to the first log it meets); it is
// never sent to another log, where it would land among items its user
// never saw. `number` is its change number for the replica that pushes it,
// given once, at its first push, and kept for every resend: the server
// does change N of a replica at most once, so a resend (a lost answer, a
// reload mid-push, another tab) is applied once. `seq`: the event it
// became (it stays until the server's list the page shows has it).

/** At most this many changes in one push (the server's bound). */
export const PUSH_LIMIT = 256;

/** The sync protocol this page speaks. */
export const PROTOCOL = 1;

/** Whether `entry` still waits for an answer (it has no outcome yet). */
export function unanswered(entry) {
  return entry.seq === undefined;
}

/** Whether `entry` may go to `log` (null: the server has no log yet): made on it, or on none known. */
export function madeFor(entry, log) {
  return entry.log === undefined || entry.log === null || entry.log === log;
}

/**
 * The entries of `log` (the server's now) against the others: `held`, the
 * unanswered ones made on another log, kept and not sent (the user says
 * whether to discard them); `gone`, the keys of answered ones of another
 * log (they waited for that log's list, which this page no longer shows).
 */
export function byLog(entries, log) {
  const held = [], gone = [];
  for (const entry of entries) {
    if (madeFor(entry, log)) continue;
    if (unanswered(entry)) held.push(entry); else gone.push(entry.key);
  }
  return { held, gone };
}

/**
 * The entries the page shows on `stream` of `log` (the model's: undefined
 * while it has read none, when every one of the stream is shown).
 */
export function shownOn(entries, { stream, log }) {
  return entries.filter((e) => e.change.stream === stream && (log === undefined || madeFor(e, log)));
}

/**
 * Gives the unanswered entries made for `log` that have no number for
 * `replica` the next numbers of `replica` on `log`, in key order (an entry
 * made on no log known is `log`'s from then on). `next`: the replica's
 * next number. Returns the entries changed and the counter after them; an
 * entry numbered once keeps its number, and an entry of another log is
 * never numbered for this one.
 */
export function numberEntries(entries, { log, replica, next }) {
  const changed = [];
  for (const entry of [...entries].sort((a, b) => a.key - b.key)) {
    if (!unanswered(entry) || !madeFor(entry, log)) continue;
    if (entry.number !== undefined && entry.log === log && entry.replica === replica) continue;
    changed.push({ ...entry, number: next++, log, replica });
  }
  return { changed, next };
}

/**
 * A new replica secret: 32 random bytes as 64 lowercase hex digits, what
 * proves to the server that a push comes from this browser's replica
 * (docs/SYNC.md). Kept with the replica's id, sent with every push, never shown.
 */
export function newSecret(random = (bytes) => crypto.getRandomValues(bytes)) {
  return [...random(new Uint8Array(32))].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * The body of a push of the first `limit` unanswered entries numbered for
 * `replica` on `log`, in order, with the replica's `secret`: each change as
 * the protocol has it (an undo of a change still in the outbox names that
 * change's number). Null when there is nothing to push.
 */
export function pushBody(entries, { log, replica, secret, limit = PUSH_LIMIT }) {
  const byKey = new Map(entries.map((entry) => [entry.key, entry]));
  const mine = entries
    .filter((e) => unanswered(e) && e.log === log && e.replica === replica && e.number !== undefined)
    .sort((a, b) => a.number - b.number)
    .slice(0, limit);
  if (mine.length === 0) return null;
  return { protocol: PROTOCOL, log, replica, secret, changes: mine.map((entry) => wireChange(entry, byKey)) };
}

/** One entry as a change of the protocol (ReplicaChange's JSON). */
export function wireChange(entry, byKey = new Map()) {
  const { undoesKey, edited, ...fields } = entry.change;
  const change = { change: entry.number, made: entry.made, basis: entry.basis, ...fields };
  if (undoesKey !== undefined) {
    const earlier = byKey.get(undoesKey);
    if (earlier && earlier.seq !== undefined) change.seq = earlier.seq;
    else if (earlier && earlier.number !== undefined) change.undoesChange = earlier.number;
  }
  return change;
}

/** An answer of the server that is not what the protocol's message is. */
export class MalformedAnswer extends Error {
  constructor(why) {
    super("the server's answer to a push " + why);
    this.status = 500;
  }
}

/**
 * The server's answer to a push, read as the library reads it (Swift's
 * `PushAnswer`, docs/SYNC.md "The protocol"): `{ head, outcomes }`, each
 * outcome `{ change, result: "applied", seq, rebased }`, `{ change, result:
 * "unchanged" }` or `{ change, result: "refused", reason, error }` —
 * `reason` the refusal's code and data (`{ code: "item-removed", id, seq
 * }`, null from a server before reasons had codes), `error` the server's
 * words for it. Members it does not know are left; a missing one is a
 * `MalformedAnswer`.
 */
export function readAnswer(answer) {
  const whole = (n) => Number.isInteger(n) && n >= 0;
  if (answer === null || typeof answer !== "object" || !whole(answer.head) || !Array.isArray(answer.outcomes)) {
    throw new MalformedAnswer("has no head or outcomes");
  }
  const outcomes = answer.outcomes.map((outcome) => {
    if (outcome === null || typeof outcome !== "object") throw new MalformedAnswer("has an outcome that is not an object");
    const { change, result } = outcome;
    switch (result) {
      case "applied":
        if (!whole(outcome.seq)) throw new MalformedAnswer("has an applied outcome without its seq");
        return { change, result, seq: outcome.seq, rebased: outcome.rebased === true };
      case "unchanged":
        return { change, result };
      case "refused": {
        const reason = outcome.reason !== null && typeof outcome.reason === "object" && typeof outcome.reason.code === "string"
          ? outcome.reason : null;
        return { change, result, reason, error: typeof outcome.error === "string" ? outcome.error : "refused" };
      }
      default:
        throw new MalformedAnswer("has an outcome neither applied, unchanged nor refused");
    }
  });
  return { head: answer.head, outcomes };
}

/**
 * What the server's outcomes (`readAnswer`'s) do to the entries pushed:
 * `applied` (entries with the seq they became, kept until the list shown
 * has it), `done` (keys to drop: unchanged or refused), `refused` ({
 * entry, reason, error }: the code to switch on and the server's words, to
 * tell the user). An outcome for a number not pushed is ignored.
 */
export function settleOutcomes(entries, { log, replica }, outcomes) {
  const byNumber = new Map();
  for (const entry of entries) {
    if (entry.log === log && entry.replica === replica && unanswered(entry)) byNumber.set(entry.number, entry);
  }
  const applied = [], done = [], refused = [], results = [];
  for (const outcome of outcomes) {
    const entry = byNumber.get(outcome.change);
    if (!entry) continue;
    results.push({ entry, outcome });
    if (outcome.result === "applied") {
      applied.push({ ...entry, seq: outcome.seq, rebased: outcome.rebased === true });
    } else {
      done.push(entry.key);
      if (outcome.result === "refused") refused.push({ entry, reason: outcome.reason ?? null, error: outcome.error || "refused" });
    }
  }
  return { applied, done, refused, results };
}

/**
 * The answered entries of `stream` on `log` whose events the server's list
 * shown now holds (it is at `head`): to drop. Another stream's wait for a
 * page that shows it (another tab may be drawing them).
 */
export function landed(entries, { stream, log, head }) {
  return entries.filter((e) => !unanswered(e) && e.change.stream === stream && madeFor(e, log) && e.seq <= head)
    .map((e) => e.key);
}

/**
 * The keys of the entries that name an item of `ids` (erased for
 * everyone): each holds what the item was, or was to become — an insert's
 * or an edit's text — and none can be done any more (the server refuses a
 * change of an erased item). An undo of one of them goes with it (it
 * would take back a change never made). Every token's and every log's:
 * an erased text is kept for nobody.
 */
export function naming(entries, ids) {
  const gone = new Set(ids);
  const keys = new Set(entries.filter((e) => gone.has(e.change.id)).map((e) => e.key));
  for (let grew = keys.size > 0; grew;) {
    grew = false;
    for (const e of entries) {
      if (keys.has(e.key) || e.change.undoesKey === undefined || !keys.has(e.change.undoesKey)) continue;
      keys.add(e.key);
      grew = true;
    }
  }
  return entries.map((e) => e.key).filter((key) => keys.has(key));
}

// How the page puts things into words, free of the DOM (node's test runner
// runs it: Tests/Page/words.test.mjs).

/** Right-to-left letters and the bidirectional controls: what can reorder the text around it. */
const REORDERS = /[\u0590-\u08ff\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufefc]|[\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;

/**
 * Someone's `text` set into one of the page's sentences: isolated
 * (U+2068 … U+2069) when it holds what could reorder the sentence around
 * it — a stray U+202E turned "Deleted card '…'." around — else as it is.
 */
export function isolated(text) {
  return REORDERS.test(text) ? "\u2068" + text + "\u2069" : text;
}

/**
 * `text` on one line, quoted, cut to `limit` characters as a reader counts
 * them (an emoji, a letter with its marks: cut by UTF-16 units, half an
 * emoji showed as "�" and left a screen reader a broken character), and
 * isolated from the sentence it is in.
 */
export function quoted(text, limit = 40) {
  const one = text.replace(/\s+/g, " ").trim();
  if (one.length <= limit) return "'" + isolated(one) + "'";
  // Only the beginning is looked at: a text may be a mebibyte. Cut short
  // there, its last character may be cut too: it goes.
  const head = one.slice(0, limit * 16);
  const characters = GRAPHEMES ? Array.from(GRAPHEMES.segment(head), (s) => s.segment) : Array.from(head);
  if (head === one && characters.length <= limit) return "'" + isolated(one) + "'";
  if (head !== one) characters.pop();
  return "'" + isolated(characters.slice(0, limit - 1).join("") + "…") + "'";
}

/** Characters as a reader counts them (`quoted`), where the browser knows them. */
const GRAPHEMES = typeof Intl !== "undefined" && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;

/**
 * A stream's name among others (the stream picker, a title): a
 * bidirectional control written out as the command line writes it
 * (`\u{202e}`), so that a name cannot pass for another ("\u202Eevil"
 * showed as "live"); isolated, as any text in a sentence.
 */
export function shownName(name) {
  return isolated(name.replace(/[\u2028-\u202e\u2066-\u2069]/g, (c) => "\\u{" + c.codePointAt(0).toString(16) + "}"));
}

/** What a screen reader hears of an item someone else just added (`event`, an insert), in the `view` shown ("chat" or "board"). */
export function arrivalInWords(event, view) {
  const text = quoted(event.text, 200);
  const sender = event.sender ? isolated(event.sender) : "";
  if (view === "board") return "New card " + text + (sender ? " from " + sender : "") + ".";
  return sender ? sender + " wrote " + text + "." : "New message " + text + ".";
}

const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dayThisYear = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short" });
const dayOtherYear = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric" });
export const fullDate = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "medium" });

/** A time as people read it: the clock today, with the date on any other day. */
export function when(iso, now = new Date()) {
  const date = new Date(iso);
  if (isNaN(date)) return iso;
  if (date.toDateString() === now.toDateString()) return clock.format(date);
  const day = date.getFullYear() === now.getFullYear() ? dayThisYear : dayOtherYear;
  return day.format(date) + ", " + clock.format(date);
}

/** Why `name` cannot be a stream (docs/REFERENCE.md: 1–200 bytes, no control characters), or null. */
export function streamNameProblem(name) {
  if (!name.trim()) return "A stream name needs a character other than a space.";
  const bytes = new TextEncoder().encode(name).length;
  if (bytes > 200) return "A stream name is at most 200 bytes; this one is " + bytes + ".";
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return "A stream name cannot contain control characters.";
  return null;
}

/** One of this page's changes (`{ op, text? }` as the sync protocol has it), in words. */
export function changeInWords(change) {
  switch (change.op) {
    case "append": case "insert": return "Your message " + quoted(change.text);
    case "move": return "Your move of a card";
    case "remove": return "Your delete";
    case "edit": return "Your edit " + quoted(change.text);
    case "undo": return "Your undo";
    default: return "Your change";
  }
}

/**
 * One of this page's changes refused because its item was erased for
 * everyone meanwhile, in words that do not repeat its text (the page
 * forgets that text).
 */
export function erasedChangeInWords(change) {
  const what = {
    append: "Your message", insert: "Your message", move: "Your move of a card", remove: "Your delete", edit: "Your edit",
    undo: "Your undo",
  }[change.op] || "Your change";
  return what + " was not sent: that message was deleted for everyone.";
}

/** What the page says when "Delete for everyone" could not be done (`status`: the HTTP status, 0 for none). */
export function eraseFailedInWords(status, error) {
  if (status === 0) {
    return "Delete for everyone needs the server, which cannot be reached now. It is not kept to send later:"
      + " try again once the page is live.";
  }
  return "The message was not deleted for everyone: " + error + ".";
}

const changes = (n) => (n === 1 ? "1 change" : n + " changes");

/**
 * Why changes kept in this browser are not sent, and what discarding them
 * is called: `otherLog`, this page's, made on a log the server no longer
 * serves; `otherOwner`, left by a page with another access token.
 */
export function heldInWords(kind, n, why) {
  if (kind === "forbidden") {
    return {
      text: (n === 1 ? "1 change you made was" : n + " changes you made were") + " not sent: the server refused "
        + (n === 1 ? "it" : "them") + (why ? " (" + why + ")" : "") + ". " + (n === 1 ? "It stays" : "They stay")
        + " in this browser and " + (n === 1 ? "is" : "are") + " tried again; discard "
        + (n === 1 ? "it" : "them") + " to see the list as the server has it.",
      button: n === 1 ? "Discard this change" : "Discard these " + n + " changes",
      done: "Discarded " + changes(n) + ".",
    };
  }
  if (kind === "otherLog") {
    return {
      text: (n === 1 ? "1 change you made was" : n + " changes you made were") + " not sent. The server at this"
        + " address now keeps a different log from the one you made " + (n === 1 ? "it" : "them") + " on, so "
        + (n === 1 ? "it" : "they") + " would land among messages and cards you never saw. "
        + (n === 1 ? "It stays" : "They stay") + " in this browser and " + (n === 1 ? "is" : "are")
        + " sent if that log comes back.",
      button: n === 1 ? "Discard this change" : "Discard these " + n + " changes",
      done: "Discarded " + changes(n) + ".",
    };
  }
  return {
    text: (n === 1 ? "1 change was" : n + " changes were") + " made in this browser with another access token"
      + " and not sent yet. " + (n === 1 ? "It belongs" : "They belong") + " to whoever made "
      + (n === 1 ? "it" : "them") + ", and " + (n === 1 ? "is" : "are")
      + " sent when this page is opened with that token again.",
    button: n === 1 ? "Discard the other token's change" : "Discard the other token's " + n + " changes",
    done: "Discarded " + changes(n) + " of another token.",
  };
}

/** What the page says when the server refuses its token and `n` changes not sent went with it (`hadToken`: it had one). */
export function signedOutInWords(n, hadToken) {
  const why = hadToken ? "The server no longer accepts this page's access token" : "The server now asks for an access token";
  return why + ", so " + (n === 1 ? "your change" : "your " + n + " changes") + " not yet sent "
    + (n === 1 ? "was" : "were") + " removed from this browser, with the lists kept for a reload.";
}

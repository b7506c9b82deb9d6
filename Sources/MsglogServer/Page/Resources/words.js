// How the page puts things into words, free of the DOM (node's test runner
// runs it: Tests/Page/words.test.mjs).

/** `text` on one line, quoted, cut to `limit` characters. */
export function quoted(text, limit = 40) {
  const one = text.replace(/\s+/g, " ").trim();
  return "'" + (one.length > limit ? one.slice(0, limit - 1) + "…" : one) + "'";
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

// The browser's storage, when it has any: off (a private window, a policy)
// a value lives as long as the page.

/** `area`: "sessionStorage" (this tab) or "localStorage" (this browser). */
export function get(area, key) {
  try { return window[area].getItem(key); } catch { return null; }
}

/** Keeps `value` under `key`; null removes it. */
export function set(area, key, value) {
  try {
    if (value === null) window[area].removeItem(key); else window[area].setItem(key, value);
  } catch { /* storage off: the value lives as long as the page */ }
}

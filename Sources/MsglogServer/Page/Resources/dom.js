// The page's own elements.

export const $ = (id) => document.getElementById(id);

export function element(tag, className) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  return el;
}

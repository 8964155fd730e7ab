// What the panels share: the element of an id, a number as text, the status line.
export const $ = (id) => document.getElementById(id);
export const fmt = (x, d = 3) => (Math.abs(x) < 1e-12 ? 0 : x).toFixed(d);

let statusTimer = 0;
/** Shows a message in the status line for ms milliseconds. */
export function status(msg, ms = 4000) {
  const el = document.getElementById('status-line');
  el.textContent = msg;
  el.classList.add('show');
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => el.classList.remove('show'), ms);
}

// The save indicator (Saved, Saving, Unsaved changes, Conflict, Not saved with the time to the
// next try) and the conflict banner's Reload and Overwrite.
import { $, status } from './dom.js';

/** Wires #save-status and #conflict. */
export function saveIndicator(store) {
  const save = $('save-status');
  const text = { saved: 'Saved', saving: 'Saving\u2026', unsaved: 'Unsaved changes', conflict: 'Conflict', error: 'Not saved' };
  // after a failed save the indicator counts down to the next try (store._failed)
  let retryTicker = 0;
  const showRetry = () => {
    const left = Math.max(0, Math.ceil((store.retry.at - Date.now()) / 1000));
    save.textContent = store.retry.at ? `Not saved \u00b7 retry in ${left} s` : 'Not saved \u00b7 retrying';
  };
  store.on('save', ({ status: s, error }) => {
    save.textContent = text[s] ?? s;
    save.className = `save ${s}`;
    save.title = error ? `${error} (Ctrl+S tries now)` : 'Ctrl+S saves now';
    clearInterval(retryTicker);
    if (s === 'error') {
      showRetry();
      retryTicker = setInterval(showRetry, 500);
    }
    const banner = $('conflict');
    banner.hidden = s !== 'conflict';
    if (s === 'conflict') $('conflict-text').textContent = `${error}. Your last change is not saved.`;
    if (s === 'error') status(error);
  });
  $('conflict-reload').addEventListener('click', () => store.reload().then(() => location.reload()));
  $('conflict-overwrite').addEventListener('click', () => store.overwrite());
}

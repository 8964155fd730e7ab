// The editor page: loads the module, opens the project through the server, and builds the
// views and panels (docs/editor.md).
import { load } from '../../marionette.mjs';
import { Store } from './store.js';

async function boot() {
  const m = await load({ wasm: new URL('marionette.wasm', document.baseURI) });
  const store = new Store(m);
  await store.open();
  return { store };
}

let resolveReady, rejectReady;
const ready = new Promise((res, rej) => { resolveReady = res; rejectReady = rej; });
window.marionette = { ready };
boot().then(resolveReady, (e) => {
  document.getElementById('status-line').textContent = `Could not open the project: ${e.message}`;
  rejectReady(e);
});

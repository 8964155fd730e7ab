// The editor's keys (docs/editor.md "Keyboard"). Ctrl and Cmd are the same.
import { VIEW_NAMES } from './viewport.js';

export function installKeyboard(store, viewport) {
  window.addEventListener('keydown', (e) => {
    const inField = e.target instanceof HTMLElement && e.target.matches('input[type=number], input[type=text], textarea, select');
    const mod = e.ctrlKey || e.metaKey;
    const call = (name) => {
      const f = store.actions[name];
      if (typeof f !== 'function') return false;
      e.preventDefault();
      f();
      return true;
    };
    if (e.key === 'Escape') {
      // a drag in progress is cancelled (the pose as it was), an open menu closes
      call('cancelDrag');
      for (const m of document.querySelectorAll('.menu:not([hidden]), .anim-menu:not([hidden])')) m.hidden = true;
      return;
    }
    if (mod && (e.key === 'z' || e.key === 'Z')) {
      call(e.shiftKey ? 'redo' : 'undo');
      return;
    }
    if (mod && (e.key === 'y' || e.key === 'Y')) {
      call('redo');
      return;
    }
    if (mod && (e.key === 's' || e.key === 'S')) {
      call('save');
      return;
    }
    if (mod || e.altKey || inField) return;
    if (e.key === 'i' || e.key === 'I') call('insertKey');
    else if (e.key === 'r' || e.key === 'R') call('makeRoot');
    else if (e.key === ' ') call('togglePlay');
    else if (e.key === 'Delete' || e.key === 'Backspace') call('deleteSelectedKeys');
    else if (e.key >= '1' && e.key <= '4') viewport.toggleMaximize(VIEW_NAMES[Number(e.key) - 1]);
    else if (e.key === '0') viewport.setLayout('quad');
    else if (e.key === 'f' || e.key === 'F' || e.key === 'Home') {
      e.preventDefault();
      viewport.frameAll();
    }
  });
}

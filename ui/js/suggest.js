// suggest.js -- keyboard-driven autocomplete on an <input> from
// /api/suggest. Typing waits DEBOUNCE_MS of quiet before asking, and a new
// keystroke aborts the request in flight, so fast typing costs one call.
// ArrowDown/ArrowUp move, Enter or Tab take the highlighted name, Escape
// closes; a click takes a name too. type is metrics, tagk or tagv, or a
// function answering one of them when asked.
import { suggest } from './api.js';

const DEBOUNCE_MS = 180;

export function attachSuggest(input, type, onPick) {
  const list = document.createElement('ul');
  list.setAttribute('role', 'listbox');
  list.hidden = true;
  input.after(list);
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  let timer = 0, ctl = null, items = [], sel = -1;

  const close = () => { list.hidden = true; items = []; sel = -1; list.replaceChildren(); };
  const render = () => {
    list.replaceChildren(...items.map((name, i) => {
      const li = document.createElement('li');
      li.setAttribute('role', 'option');
      li.textContent = name;
      li.setAttribute('aria-selected', String(i === sel));
      // mousedown, not click: it fires before the input's blur closes the list
      li.addEventListener('mousedown', e => { e.preventDefault(); pick(i); });
      return li;
    }));
    list.hidden = items.length === 0;
  };
  const pick = i => {
    input.value = items[i];
    close();
    if (onPick) onPick(input.value);
  };
  const ask = async () => {
    if (ctl) ctl.abort();
    ctl = new AbortController();
    const q = input.value;
    try {
      const names = await suggest(typeof type === 'function' ? type() : type, q, ctl.signal);
      if (input.value !== q || document.activeElement !== input) return;
      items = (names || []).filter(n => n !== q);
      sel = items.length ? 0 : -1;
      render();
    } catch (e) {
      if (e.name !== 'AbortError') close(); // a suggest failure is not worth a banner
    }
  };

  input.addEventListener('input', () => {
    clearTimeout(timer);
    if (ctl) { ctl.abort(); ctl = null; }
    timer = setTimeout(ask, DEBOUNCE_MS);
  });
  input.addEventListener('keydown', e => {
    if (e.key === 'Escape') {
      // also a suggest still on its way: it must not open the list afterwards
      clearTimeout(timer);
      if (ctl) { ctl.abort(); ctl = null; }
      close();
      return;
    }
    if (list.hidden) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const n = items.length;
      sel = (sel + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
      render();
      list.children[sel]?.scrollIntoView({ block: 'nearest' });
    } else if ((e.key === 'Enter' || e.key === 'Tab') && sel >= 0) {
      e.preventDefault();
      pick(sel);
    }
  });
  input.addEventListener('blur', () => { clearTimeout(timer); close(); });
}

// uids.js -- the UID browser: names to UIDs (/api/search/uidmeta, a glob
// and an optional kind) and a UID to its name (/api/uid/uidmeta).
import * as api from './api.js';
import { attachSuggest } from './suggest.js';

const $ = id => document.getElementById(id);
const LIMIT = 100;
const SUGGEST_TYPE = { metric: 'metrics', tagk: 'tagk', tagv: 'tagv', '': 'metrics' };

function show(rows, note) {
  const out = [];
  if (note) out.push(Object.assign(document.createElement('p'), { className: 'muted', textContent: note }));
  if (rows.length) {
    const table = document.createElement('table');
    const head = table.createTHead().insertRow();
    for (const h of ['kind', 'name', 'UID']) head.append(Object.assign(document.createElement('th'), { textContent: h }));
    const body = table.createTBody();
    for (const m of rows) {
      const r = body.insertRow();
      for (const v of [m.type.toLowerCase(), m.name, m.uid]) r.insertCell().textContent = v;
      r.cells[2].className = 'mono';
    }
    out.push(table);
  }
  $('uid-result').replaceChildren(...out);
}

function showError(msg) {
  $('uid-result').replaceChildren(Object.assign(document.createElement('p'), { className: 'error-text', textContent: msg }));
}

export class UidPage {
  constructor() {
    attachSuggest($('uid-name'), () => SUGGEST_TYPE[$('uid-kind').value]);
    $('uid-name-form').addEventListener('submit', async e => {
      e.preventDefault();
      const name = $('uid-name').value.trim();
      if (!name) return;
      try {
        const r = await api.searchUids(name, $('uid-kind').value, LIMIT);
        show(r.results, r.totalResults ? `${r.totalResults} UID${r.totalResults === 1 ? '' : 's'}` +
          (r.totalResults > r.results.length ? ` (the first ${r.results.length} shown)` : '') : `No UID is named '${name}'.`);
      } catch (err) {
        showError(err.message);
      }
    });
    $('uid-hex-form').addEventListener('submit', async e => {
      e.preventDefault();
      const uid = $('uid-hex').value.trim().toUpperCase();
      if (!uid) return;
      try {
        show([await api.uidmeta(uid, $('uid-hex-kind').value)]);
      } catch (err) {
        showError(err.message);
      }
    });
  }

  show() {}

  hide() {}
}

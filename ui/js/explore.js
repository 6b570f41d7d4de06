// explore.js -- the metric and series explorer: the metrics starting with
// a prefix (/api/suggest), and for one metric its series (/api/search/lookup):
// how many, each tag key with its values and how many series carry each,
// with links that graph the metric grouped by a key or for one value. The
// chosen metric is in the fragment (metric=), so Back returns to the one
// before and a link opens it.
import * as api from './api.js';
import { emptyQuery, formatFragment } from './state.js';

const $ = id => document.getElementById(id);
const METRICS_MAX = 1000;
const SERIES_MAX = 100000;

// The fragment graphing metric over the last hour with tags [{k, v}].
function graphLink(metric, tags) {
  return '#' + formatFragment({ start: '1h-ago', queries: [{ ...emptyQuery(), metric, tags }] });
}

function cell(row, text, cls) {
  const td = row.insertCell();
  if (text instanceof Node) td.append(text);
  else td.textContent = String(text);
  if (cls) td.className = cls;
  return td;
}

function link(text, href) {
  return Object.assign(document.createElement('a'), { textContent: text, href });
}

export class ExplorePage {
  // choose(name): the user picked a metric (the page puts it in the fragment)
  constructor(choose) {
    this.choose = choose;
    this.listed = false;
    this.shown = null; // the metric whose series are shown
    $('explore-form').addEventListener('submit', e => {
      e.preventDefault();
      this.list();
    });
  }

  // st.metric: the metric to show ('' none)
  show(st) {
    if (!this.listed) this.list();
    if ((st.metric || '') !== (this.shown || '')) {
      if (st.metric) this.metric(st.metric);
      else this.clearMetric();
    }
  }

  clearMetric() {
    this.shown = null;
    this.mark('');
    $('explore-series').replaceChildren();
  }

  mark(name) {
    for (const b of document.querySelectorAll('#explore-metrics button'))
      b.setAttribute('aria-pressed', String(b.textContent === name));
  }

  hide() {}

  status(text, error = false) {
    $('explore-status').textContent = text;
    $('explore-status').classList.toggle('error-text', error);
  }

  async list() {
    this.listed = true;
    // the first show's unfiltered list may answer after a later submit's:
    // only the newest request may fill the list
    const seq = this.listSeq = (this.listSeq || 0) + 1;
    const prefix = $('explore-prefix').value.trim();
    try {
      const names = await api.suggest('metrics', prefix, undefined, METRICS_MAX);
      if (seq !== this.listSeq) return;
      $('explore-metrics').replaceChildren(...names.map(n => {
        const li = document.createElement('li');
        const b = Object.assign(document.createElement('button'), { type: 'button', textContent: n });
        b.dataset.name = n;
        b.addEventListener('click', () => this.choose(n));
        li.append(b);
        return li;
      }));
      this.mark(this.shown || '');
      this.status(`${names.length} metric${names.length === 1 ? '' : 's'}${names.length >= METRICS_MAX ? ' (the first ' + METRICS_MAX + ')' : ''}`);
    } catch (e) {
      if (seq === this.listSeq) this.status(e.message, true);
    }
  }

  async metric(name) {
    this.shown = name;
    this.mark(name);
    const box = $('explore-series');
    let res;
    try {
      res = await api.lookup(name, SERIES_MAX);
    } catch (e) {
      if (this.shown !== name) return;
      box.replaceChildren(Object.assign(document.createElement('p'), { className: 'error-text', textContent: e.message }));
      return;
    }
    if (this.shown !== name) return; // another was chosen meanwhile
    // tag key -> value -> series count
    const keys = new Map();
    for (const s of res.results)
      for (const [k, v] of Object.entries(s.tags)) {
        if (!keys.has(k)) keys.set(k, new Map());
        keys.get(k).set(v, (keys.get(k).get(v) || 0) + 1);
      }
    const h = Object.assign(document.createElement('h3'), { textContent: name });
    const n = res.results.length;
    const summary = Object.assign(document.createElement('p'), { className: 'summary' });
    summary.textContent = `${res.totalResults} series` + (n < res.totalResults ? ` (counted below: the first ${n})` : '') +
      `, ${keys.size} tag key${keys.size === 1 ? '' : 's'} `;
    summary.append(link('graph', graphLink(name, [])));
    const table = document.createElement('table');
    const head = table.createTHead().insertRow();
    for (const t of ['tag key', 'values', 'tag value', 'series', '']) head.append(Object.assign(document.createElement('th'), { textContent: t }));
    const body = table.createTBody();
    for (const k of [...keys.keys()].sort()) {
      const vals = [...keys.get(k).entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      vals.forEach(([v, count], i) => {
        const row = body.insertRow();
        row.dataset.tagk = k;
        row.dataset.tagv = v;
        if (i === 0) {
          const kc = cell(row, '');
          kc.append(k, ' ', link('group by', graphLink(name, [{ k, v: '*', groupBy: true }])));
          kc.rowSpan = vals.length;
          cell(row, vals.length, 'num').rowSpan = vals.length;
        }
        cell(row, v);
        cell(row, count, 'num count');
        cell(row, link('graph', graphLink(name, [{ k, v, groupBy: false }])));
      });
    }
    box.replaceChildren(h, summary, table);
  }
}

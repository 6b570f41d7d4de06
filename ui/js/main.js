// main.js -- wires the page: the fragment is the state; the form edits it;
// each change of the fragment (Graph, Back, a pasted link) redraws.
import * as api from './api.js';
import { Chart } from './chart.js';
import { QueryForm } from './form.js';
import { formatFragment, formatM, parseFragment } from './state.js';

const $ = id => document.getElementById(id);
const chart = new Chart($('chart'));
let form = null, extra = [], inflight = null;
// For the browser tests and the curious: the chart's uPlot instance, and
// how many queries have finished (drawn or shown their error).
const ui = window.octsdbUI = { get plot() { return chart.plot; }, runs: 0 };

function showError(msg) {
  const el = $('error');
  el.textContent = msg || '';
  el.hidden = !msg;
}

async function run(st) {
  if (inflight) inflight.abort();
  const ms = st.queries.map(formatM);
  if (!ms.length) {
    chart.clear();
    $('status').textContent = '';
    return;
  }
  const ctl = inflight = new AbortController();
  $('status').textContent = 'querying…';
  const t0 = performance.now();
  try {
    const results = await api.query(st.start, st.end, ms, ctl.signal);
    showError('');
    chart.draw(results);
    const points = results.reduce((n, r) => n + Object.keys(r.dps).length, 0);
    $('status').textContent = `${results.length} series, ${points} points, ${Math.round(performance.now() - t0)} ms`;
  } catch (e) {
    if (e.name === 'AbortError') return;
    chart.clear();
    showError(e.message);
    $('status').textContent = '';
  } finally {
    if (inflight === ctl) inflight = null;
    if (!ctl.signal.aborted) ui.runs++;
  }
}

function fromFragment() {
  const st = parseFragment(location.hash.replace(/^#/, ''));
  extra = st.extra;
  form.render(st);
  if (st.errors.length) {
    chart.clear();
    showError(st.errors.join('\n'));
    ui.runs++;
    return;
  }
  run(st);
}

// ---- theme: auto (the system's), light or dark; the choice is kept ----
const THEMES = ['auto', 'light', 'dark'];
function applyTheme(t) {
  if (t === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  $('theme').textContent = `theme: ${t}`;
  chart.restyle();
}
$('theme').addEventListener('click', () => {
  const cur = localStorage.getItem('octsdb.theme') || 'auto';
  const next = THEMES[(THEMES.indexOf(cur) + 1) % THEMES.length];
  localStorage.setItem('octsdb.theme', next);
  applyTheme(next);
});
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => chart.restyle());
applyTheme(localStorage.getItem('octsdb.theme') || 'auto');

async function init() {
  let aggs = ['sum', 'avg', 'min', 'max', 'count'];
  try {
    aggs = await api.aggregators();
  } catch (e) {
    showError(e.message);
  }
  api.version().then(v => { $('version').textContent = v.version ? `v${v.version}` : ''; }, () => {});
  form = new QueryForm($('form'), aggs);
  $('form').addEventListener('submit', e => {
    e.preventDefault();
    const st = form.read();
    st.extra = extra;
    const frag = formatFragment(st);
    if (location.hash.replace(/^#/, '') === frag) run(st); // same view: refresh
    else location.hash = frag; // a history entry; hashchange redraws
  });
  window.addEventListener('hashchange', fromFragment);
  fromFragment();
}

init();

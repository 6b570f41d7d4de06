// main.js -- wires the page: the fragment is the state; the form edits it;
// each change of the fragment (Graph, a zoom, Back, a pasted link) redraws.
import * as api from './api.js';
import { Annotator } from './annotate.js';
import { Chart } from './chart.js';
import { downloadPNG } from './export.js';
import { ExplorePage } from './explore.js';
import { checkFormat } from './format.js';
import { QueryForm } from './form.js';
import { LogsPage, StatusPage } from './status.js';
import { autoInterval, formatFragment, formatM, KEY_STRINGS, keyPos, PAGES, parseFragment, parseTime } from './state.js';
import { UidPage } from './uids.js';
import { renderJSON, renderLast, renderTable, toCSV, tsuidsByQuery } from './views.js';

const $ = id => document.getElementById(id);
let form = null, cur = null, inflight = null, timer = 0, results = null, csvUrl = null;
const chart = new Chart($('chart'), (min, max) => {
  // a drag on the chart: the same queries over the selected range, as a
  // new history entry so Back returns to the range before
  go({ ...cur, start: String(Math.floor(min)), end: String(Math.ceil(max)) });
});
// For the browser tests and the curious: the chart's uPlot instance, and
// how many queries have finished (drawn or shown their error).
const ui = window.octsdbUI = { get plot() { return chart.plot; }, get drawMs() { return chart.drawMs; }, runs: 0 };

function showError(msg) {
  const el = $('error');
  el.textContent = msg || '';
  el.hidden = !msg;
}

// The fragment for st: a new history entry, whose hashchange redraws. The
// query runs again even if only the spelling of the fragment changed (Graph
// pressed on an unchanged form is a refresh), unless rerun is false (a
// switch of view: the answer at hand is shown another way).
let wantRun = false;
function go(st, rerun = true) {
  const frag = formatFragment(st);
  wantRun = rerun;
  if (location.hash.replace(/^#/, '') === frag) fromFragment();
  else location.hash = frag;
}

function showView() {
  const view = cur ? cur.view : 'chart';
  for (const b of document.querySelectorAll('#views button'))
    b.setAttribute('aria-selected', String(b.dataset.view === view));
  for (const el of document.querySelectorAll('.view')) el.hidden = el.id !== view;
  if (!results) {
    $('table-series').replaceChildren();
    $('table-last').replaceChildren();
    $('json').textContent = '';
    return;
  }
  if (view === 'table') {
    renderTable($('table-series'), results);
    showLast(cur, results);
  }
  if (view === 'json') renderJSON($('json'), results);
  // the chart is always drawn (its size needs it visible: redraw on return)
  if (view === 'chart' && chart.last !== results) chart.draw(results, cur, seriesAxes(cur, results));
}

// The table's second part: per query, the series it reads and each one's
// latest point (/api/query/last by the TSUIDs the answer names, so every
// filter type selects as in the query), asked once per answer. backScan
// reaches back to the range's start: each series has a point since.
let lastFor = null;
async function showLast(st, r) {
  if (lastFor === r) return;
  lastFor = r;
  const el = $('table-last');
  el.replaceChildren(Object.assign(document.createElement('p'), { className: 'muted', textContent: 'asking /api/query/last…' }));
  const now = Math.floor(Date.now() / 1000);
  const start = parseTime(st.start || '1h-ago', now, st.utc);
  const backScan = start === null ? 0 : Math.max(1, Math.ceil((now - start) / 3600) + 1);
  const ms = st.queries.map(formatM);
  const groups = await Promise.all(tsuidsByQuery(r, ms.length).map((ids, i) => (ids.length
    ? api.last(ids, backScan).then(rows => ({ m: ms[i], rows }), e => ({ m: ms[i], error: e.message }))
    : { m: ms[i], rows: [] })));
  if (lastFor === r) renderLast(el, groups);
}

// ---- query history: the last HISTORY_MAX fragments that answered, newest
// first, in this browser's localStorage ----
const HISTORY_MAX = 20;
function history() {
  try { return JSON.parse(localStorage.getItem('octsdb.history')) || []; } catch { return []; }
}
function showHistory() {
  const sel = $('history');
  sel.replaceChildren(new Option('history…', ''), ...history().map(f => {
    const st = parseFragment(f);
    const label = `${st.queries.map(formatM).join(' + ')}  (${st.start || '1h-ago'}${st.end ? ' to ' + st.end : ''})`;
    return new Option(label, f);
  }));
}
function remember(frag) {
  if (!frag) return;
  const h = [frag, ...history().filter(f => f !== frag)].slice(0, HISTORY_MAX);
  localStorage.setItem('octsdb.history', JSON.stringify(h));
  showHistory();
}
$('history').addEventListener('change', () => {
  if ($('history').value) location.hash = $('history').value;
});
showHistory();

function setResults(r) {
  results = r;
  $('csv').hidden = !(r && r.length);
  $('png').hidden = $('annotate').hidden = !(r && r.length);
}

$('png').addEventListener('click', () => { if (chart.plot) downloadPNG(chart.plot); });
new Annotator(chart, { button: $('annotate'), form: $('ann-form'), time: $('ann-time'), text: $('ann-text'), target: $('ann-target') },
  () => { if (cur) run(cur); }, showError);

// The m= strings sent for st: an auto downsample interval becomes the one
// that gives about a point per pixel of the chart over the range.
function requestMs(st) {
  const now = Math.floor(Date.now() / 1000);
  const start = parseTime(st.start || '1h-ago', now, st.utc), end = parseTime(st.end, now, st.utc);
  const span = start !== null && end !== null && end > start ? end - start : 3600;
  return st.queries.map(q => formatM(q.dsInterval === 'auto' ? { ...q, dsInterval: autoInterval(span, chart.size().width) } : q));
}

// Which axis each series of the answer goes on: its query's (the answer
// names its query when asked to, which is only needed when they differ).
function seriesAxes(st, r) {
  const axes = st.queries.map(q => q.axis || 'y');
  if (axes.every(a => a === axes[0])) return r.map(() => axes[0]);
  return r.map(s => axes[s.query ? s.query.index : 0] || 'y');
}

// The CSV is made when asked for (at 166 K points it costs a draw's time):
// the click's default action, the download, reads the href set here.
$('csv').addEventListener('click', () => {
  if (csvUrl) URL.revokeObjectURL(csvUrl);
  csvUrl = URL.createObjectURL(new Blob([toCSV(results || [])], { type: 'text/csv' }));
  $('csv').href = csvUrl;
});

async function run(st) {
  if (inflight) inflight.abort();
  clearTimeout(timer);
  const ms = requestMs(st);
  // several queries: each series names its query (its axis, its table part)
  const several = st.queries.length > 1;
  const badFormat = checkFormat(st.yformat || '') || checkFormat(st.y2format || '');
  if (badFormat) {
    chart.clear();
    setResults(null);
    showError(badFormat);
    ui.runs++;
    return;
  }
  if (!ms.length) {
    chart.clear();
    setResults(null);
    showView();
    $('status').textContent = '';
    return;
  }
  const ctl = inflight = new AbortController();
  const t0 = performance.now();
  // progress: the time so far, and a way out
  const tick = () => { $('status').textContent = `querying… ${((performance.now() - t0) / 1000).toFixed(1)} s`; };
  tick();
  const ticker = setInterval(tick, 100);
  $('cancel').hidden = false;
  $('cancel').onclick = () => {
    clearInterval(ticker);
    ctl.abort();
    $('status').textContent = 'cancelled';
  };
  try {
    const r = await api.query(st.start, st.end, ms, ctl.signal, several);
    showError('');
    setResults(r);
    remember(formatFragment({ ...st, view: 'chart', page: 'graph', metric: '' }));
    if (st.view === 'chart') chart.draw(r, st, seriesAxes(st, r));
    showView();
    const points = r.reduce((n, s) => n + s.dps.length, 0);
    $('status').textContent = `${r.length} series, ${points} points, ${Math.round(performance.now() - t0)} ms`;
  } catch (e) {
    if (e.name === 'AbortError') return;
    chart.clear();
    setResults(null);
    showView();
    showError(e.message);
    $('status').textContent = '';
  } finally {
    clearInterval(ticker);
    if (inflight === ctl) {
      inflight = null;
      $('cancel').hidden = true;
    }
    if (!ctl.signal.aborted) {
      ui.runs++;
      if (st.refresh > 0 && st === cur) timer = setTimeout(() => run(st), st.refresh * 1000);
    }
  }
}

// ---- the other pages: each shown by its own module; the graph's state
// stays in the fragment meanwhile ----
const pages = {
  explore: new ExplorePage(metric => go({ ...cur, metric }, false)),
  uids: new UidPage(),
  status: new StatusPage(),
  logs: new LogsPage(),
};

function showPage(page) {
  for (const p of PAGES) {
    $(`page-${p}`).hidden = p !== page;
    document.querySelector(`#pages [data-page="${p}"]`).setAttribute('aria-current', String(p === page));
    if (p !== 'graph' && p !== page) pages[p].hide();
  }
  if (page !== 'graph') pages[page].show(cur);
}

function fromFragment() {
  const st = parseFragment(location.hash.replace(/^#/, ''));
  const graphOf = s => formatFragment({ ...s, view: 'chart', page: 'graph', metric: '' });
  // Back/Forward or a view switch over the same queries: no need to ask
  // again (another page drops the answer: the graph asks when shown again)
  const onlyView = !wantRun && cur && results && graphOf(st) === graphOf(cur);
  wantRun = false;
  cur = st;
  showPage(st.page);
  form.render(st);
  const sel = $('refresh');
  if (![...sel.options].some(o => o.value === String(st.refresh)))
    sel.append(new Option(`${st.refresh}s`, String(st.refresh))); // a link's own interval
  sel.value = String(st.refresh);
  if (onlyView) {
    showView();
    return;
  }
  if (st.page !== 'graph') {
    // the graph waits until it is shown (no refresh meanwhile)
    if (inflight) inflight.abort();
    clearTimeout(timer);
    setResults(null);
    return;
  }
  if (st.errors.length) {
    if (inflight) inflight.abort();
    clearTimeout(timer);
    chart.clear();
    setResults(null);
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
  const was = localStorage.getItem('octsdb.theme') || 'auto';
  const next = THEMES[(THEMES.indexOf(was) + 1) % THEMES.length];
  localStorage.setItem('octsdb.theme', next);
  applyTheme(next);
});
matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => chart.restyle());
applyTheme(localStorage.getItem('octsdb.theme') || 'auto');

async function init() {
  // octsdb's own version; `version` is the OpenTSDB release the API is compatible with.
  api.version().then(v => {
    const mine = v.octsdb_version || v.version;
    $('version').textContent = mine ? `v${mine}` : '';
  }, () => {});
  // what the form offers: the TSD's aggregators and filter types
  const [aggs, filterNames] = await Promise.all([
    api.aggregators().catch(e => { showError(e.message); return ['sum', 'avg', 'min', 'max', 'count']; }),
    api.filters().then(f => Object.keys(f).sort(), e => { showError(e.message); return []; }),
  ]);
  form = new QueryForm($('form'), aggs, filterNames);
  // every change goes through the fragment; unknown keys ride along, and
  // an old link's key= is kept unless another position was chosen
  const next = over => {
    const f = form.read();
    const key = keyPos(cur.key) === f.keyPos ? cur.key : KEY_STRINGS[f.keyPos];
    delete f.keyPos;
    return { ...f, key, refresh: cur.refresh, view: cur.view, page: cur.page, extra: cur.extra, ...over };
  };
  $('form').addEventListener('submit', e => {
    e.preventDefault();
    go(next({}));
  });
  $('refresh').addEventListener('change', () => go(next({ refresh: +$('refresh').value })));
  for (const id of ['ylog', 'y2log', 'utc', 'key', 'legend-table']) $(id).addEventListener('change', () => go(next({})));
  for (const b of document.querySelectorAll('#pages button'))
    b.addEventListener('click', () => go({ ...cur, page: b.dataset.page }, false));
  for (const b of document.querySelectorAll('#views button'))
    b.addEventListener('click', () => go({ ...cur, view: b.dataset.view }, false));
  window.addEventListener('hashchange', fromFragment);
  fromFragment();
}

init();

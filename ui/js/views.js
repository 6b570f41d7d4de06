// views.js -- the same /api/query answer as a table (per series: points,
// range, last value, min, max), as the raw JSON, and as CSV (one row per
// timestamp, one column per series; empty where a series has no point);
// and beneath the table, per query, the series it reads with each one's
// latest point from /api/query/last.
import { seriesLabel, toColumns } from './chart.js';

const iso = t => new Date(t * 1000).toISOString().replace('.000Z', 'Z');

export function renderTable(el, results) {
  const table = document.createElement('table');
  const head = table.createTHead().insertRow();
  for (const h of ['series', 'points', 'first', 'last', 'last value', 'min', 'max']) {
    const th = document.createElement('th');
    th.textContent = h;
    head.append(th);
  }
  const body = table.createTBody();
  for (const r of results) {
    const d = r.dps, n = d.length;
    let min = Infinity, max = -Infinity;
    for (const [, v] of d) if (typeof v === 'number') { min = Math.min(min, v); max = Math.max(max, v); }
    const row = body.insertRow();
    const cells = [seriesLabel(r), n, n ? iso(d[0][0]) : '', n ? iso(d[n - 1][0]) : '',
      n ? d[n - 1][1] : '', min <= max ? min : '', min <= max ? max : ''];
    cells.forEach((c, i) => {
      const td = row.insertCell();
      td.textContent = String(c);
      if (i === 1 || i >= 4) td.className = 'num';
    });
  }
  el.replaceChildren(table);
}

export function renderJSON(el, results) {
  el.textContent = JSON.stringify(results, null, 2);
}

const csvField = s => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function toCSV(results) {
  const cols = toColumns(results);
  const lines = [['timestamp', ...results.map(seriesLabel)].map(csvField).join(',')];
  for (let i = 0; i < cols[0].length; i++)
    lines.push([cols[0][i], ...cols.slice(1).map(c => (c[i] == null ? '' : c[i]))].join(','));
  return lines.join('\n') + '\n';
}

// The TSUIDs each query of the answer aggregates, by query index (the
// answer names each series' query when there are several; one query: 0).
export function tsuidsByQuery(results, nQueries) {
  const by = Array.from({ length: nQueries }, () => new Set());
  for (const r of results) for (const t of r.tsuids || []) by[r.query ? r.query.index : 0]?.add(t);
  return by.map(set => [...set]);
}

const tagText = tags => Object.keys(tags || {}).sort().map(k => `${k}=${tags[k]}`).join(',');

// groups: [{m, rows: /api/query/last's answer} or {m, error}], one per
// query; each query's series sorted by metric and tags.
export function renderLast(el, groups) {
  const out = [];
  groups.forEach((g, i) => {
    const h = document.createElement('h4');
    h.textContent = `query ${i + 1}: ${g.m}`;
    out.push(h);
    if (g.error) {
      out.push(Object.assign(document.createElement('p'), { className: 'error-text', textContent: g.error }));
      return;
    }
    const table = document.createElement('table');
    table.className = 'last';
    const head = table.createTHead().insertRow();
    for (const t of ['metric', 'tags', 'last timestamp', 'value']) head.append(Object.assign(document.createElement('th'), { textContent: t }));
    const body = table.createTBody();
    const rows = g.rows.map(p => [p.metric, tagText(p.tags), iso(p.timestamp / 1000), p.value])
      .sort((a, b) => (a[0] + '{' + a[1] < b[0] + '{' + b[1] ? -1 : 1));
    for (const cells of rows) {
      const row = body.insertRow();
      cells.forEach((c, j) => {
        const td = row.insertCell();
        td.textContent = String(c);
        if (j === 3) td.className = 'num';
      });
    }
    out.push(table);
  });
  el.replaceChildren(...out);
}

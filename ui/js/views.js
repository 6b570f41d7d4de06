// views.js -- the same /api/query answer as a table (per series: points,
// range, last value, min, max), as the raw JSON, and as CSV (one row per
// timestamp, one column per series; empty where a series has no point).
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

// legend_table.js -- the table legend (legend=table): one row per series
// with its value at the cursor and its last, min, max and average over the
// range. A click on a row hides or shows that series, Ctrl+click shows it
// alone (again: all), as uPlot's own legend does.
import { PALETTE } from './chart.js';

const COLS = ['series', 'value', 'last', 'min', 'max', 'avg'];

function stats(col) {
  let n = 0, sum = 0, min = Infinity, max = -Infinity, last = null;
  for (const v of col) {
    if (v == null) continue;
    n++;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
    last = v;
  }
  return n ? { last, min, max, avg: sum / n } : { last: null, min: null, max: null, avg: null };
}

export class LegendTable {
  constructor(el, plot, fmt) {
    this.plot = plot;
    this.fmt = fmt;
    const table = this.table = document.createElement('table');
    table.className = 'legend-table';
    const head = table.createTHead().insertRow();
    for (const h of COLS) head.append(Object.assign(document.createElement('th'), { textContent: h }));
    const body = table.createTBody();
    this.rows = plot.series.slice(1).map((s, k) => {
      const i = k + 1, st = stats(plot.data[i]);
      const tr = body.insertRow();
      const name = tr.insertCell();
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = PALETTE[k % PALETTE.length];
      name.append(swatch, document.createTextNode(s.label));
      const cur = tr.insertCell();
      for (const c of [st.last, st.min, st.max, st.avg]) tr.insertCell().textContent = fmt(c);
      for (const td of [...tr.cells].slice(1)) td.className = 'num';
      tr.addEventListener('click', e => this.toggle(i, e.ctrlKey || e.metaKey));
      return { tr, cur };
    });
    el.append(table);
    this.cursor(null);
    this.shown();
  }

  toggle(i, solo) {
    const p = this.plot;
    if (solo) {
      const others = p.series.some((s, j) => j > 0 && j !== i && s.show);
      p.series.forEach((s, j) => { if (j > 0) p.setSeries(j, { show: others ? j === i : true }); });
    } else {
      p.setSeries(i, { show: !p.series[i].show });
    }
  }

  cursor(idx) {
    this.rows.forEach((r, k) => {
      r.cur.textContent = idx == null ? '' : this.fmt(this.plot.data[k + 1][idx]);
    });
  }

  shown() {
    this.rows.forEach((r, k) => r.tr.classList.toggle('off', !this.plot.series[k + 1].show));
  }
}

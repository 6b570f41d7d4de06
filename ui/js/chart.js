// chart.js -- /api/query's answer drawn with uPlot: one line per series on
// the left (y) or right (y2) axis, the legend naming each by metric and
// tags with values at the cursor (below, above or right of the chart, or a
// table with each series' last/min/max/average), annotations as markers on
// the time axis.
import uPlot from '../vendor/uplot/uPlot.esm.js';
import { drawAnnotations, placeMarkers } from './annotate.js';
import { fmtValue, fmtWith } from './format.js';
import { keyPos, parseRange } from './state.js';
import { LegendTable } from './legend_table.js';

// how near (CSS pixels) a click must be to a point to be on it
const POINT_PX = 8;

export const PALETTE = ['#2f7ed8', '#e4572e', '#29a35a', '#9b59b6', '#f0a202', '#17becf', '#d62790',
  '#7f7f7f', '#8c564b', '#bcbd22', '#1f3a93', '#c0392b'];

// "sys.cpu.user{host=web01,cpu=0}" -- the tags sorted, as the API's are not.
export function seriesLabel(s) {
  const tags = Object.keys(s.tags || {}).sort().map(k => `${k}=${s.tags[k]}`);
  return tags.length ? `${s.metric}{${tags.join(',')}}` : s.metric;
}

// Series (dps as [[t, v], ...], time-ordered) -> uPlot's columnar data:
// the union of timestamps (seconds), each series' value there or null where
// it has none. When every series has the same timestamps (the usual case
// with downsampling or aligned collectors) the first one's are the union.
export function toColumns(results) {
  const num = v => (v === null || v === 'NaN' ? null : +v);
  const first = results.length ? results[0].dps : [];
  const aligned = results.every(r => r.dps.length === first.length &&
    r.dps.every((p, i) => p[0] === first[i][0]));
  let xs;
  if (aligned) {
    xs = Float64Array.from(first, p => p[0]);
  } else {
    const all = new Float64Array(results.reduce((n, r) => n + r.dps.length, 0));
    let n = 0;
    for (const r of results) for (const p of r.dps) all[n++] = p[0];
    all.sort();
    let u = 0;
    for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[u - 1]) all[u++] = all[i];
    xs = all.slice(0, u);
  }
  const cols = [xs];
  for (const r of results) {
    const ys = new Array(xs.length).fill(null);
    let j = 0;
    for (const [t, v] of r.dps) {
      while (xs[j] < t) j++;
      ys[j] = num(v);
    }
    cols.push(ys);
  }
  return cols;
}

// A y scale (a = 'y' or 'y2'): log or linear; the range's given sides
// fixed, the others from the data, with linear ones starting at zero when
// no value is below (OpenTSDB's yrange=[0:] is the common way to ask).
function yScale(st, a) {
  const log = !!st[a + 'log'];
  // a log axis cannot reach zero or below: such a bound is left to the data
  const [lo, hi] = parseRange(st[a + 'range']).map(v => (log && v !== null && v <= 0 ? null : v));
  return {
    distr: log ? 3 : 1,
    range: (u, dmin, dmax) => {
      if (dmin == null) return [lo ?? (log ? 1 : 0), hi ?? (log ? 10 : 1)];
      const [amin, amax] = log ? uPlot.rangeLog(dmin, dmax, 10, true)
        : uPlot.rangeNum(dmin >= 0 ? 0 : dmin, dmax, 0.1, true);
      return [lo ?? amin, hi ?? amax];
    },
  };
}

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export class Chart {
  // onZoom(minSeconds, maxSeconds): called when the user drags a range;
  // onPick(seconds, series): a click on the plot while picking
  // (annotate.js); series is the answer's series whose point was clicked,
  // or null.
  constructor(el, onZoom) {
    this.el = el;
    this.onZoom = onZoom;
    this.onPick = null;
    this.plot = null;
    this.last = null;
    this.st = {};
    this.seriesAxis = [];
    this.table = null;
    this.drawMs = null; // the last draw: the answer to a painted canvas (uPlot's draw hook), in ms
    new ResizeObserver(() => {
      if (this.plot) this.plot.setSize(this.size());
    }).observe(el);
  }

  size() {
    // a legend to the right takes its share of the width (style.css)
    const w = this.el.clientWidth * (keyPos(this.st.key) === 'right' && this.st.legend !== 'table' ? 0.7 : 1);
    return { width: Math.max(300, Math.floor(w)), height: Math.max(240, Math.round(window.innerHeight * 0.5)) };
  }

  clear(message) {
    if (this.plot) this.plot.destroy();
    this.plot = null;
    this.table = null;
    this.el.replaceChildren();
    if (message) {
      const p = document.createElement('p');
      p.className = 'empty';
      p.textContent = message;
      this.el.append(p);
    }
  }

  // results: /api/query's array (all queries concatenated); st: the page's
  // state (axes, key, legend, utc); seriesAxis[i]: 'y' or 'y2' for
  // results[i].
  draw(results, st = this.st, seriesAxis = this.seriesAxis) {
    this.last = results;
    this.st = st;
    this.seriesAxis = seriesAxis;
    if (!results.length) {
      this.clear('No data for this query in this time range.');
      return;
    }
    const fg = cssVar('--fg'), grid = cssVar('--grid'), bg = cssVar('--bg'), accent = cssVar('--accent');
    const axis = { stroke: fg, grid: { stroke: grid }, ticks: { stroke: grid } };
    const onY2 = i => seriesAxis[i] === 'y2';
    const hasY2 = results.some((r, i) => onY2(i));
    const hasY = results.some((r, i) => !onY2(i));
    const yAxis = (a, side) => ({
      ...axis,
      scale: a,
      side,
      size: 64,
      label: st[a + 'label'] || undefined,
      labelSize: st[a + 'label'] ? 22 : 0,
      values: (u, vals) => vals.map(v => fmtWith(st[a + 'format'], v)),
      ...(side === 1 && hasY ? { grid: { show: false } } : {}),
    });
    const pos = keyPos(st.key);
    const tableLegend = st.legend === 'table';
    const annotations = collectAnnotations(results);
    const t0 = performance.now();
    let timed = false;
    const opts = {
      ...this.size(),
      scales: { x: { time: true }, y: yScale(st, 'y'), ...(hasY2 ? { y2: yScale(st, 'y2') } : {}) },
      ...(st.utc ? { tzDate: ts => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC') } : {}),
      axes: [{ ...axis }, ...(hasY || !hasY2 ? [yAxis('y', 3)] : []), ...(hasY2 ? [yAxis('y2', 1)] : [])],
      // a drag selects a range; the page re-queries it (setScale off: the
      // new range comes back from the TSD, not from zooming stale data)
      cursor: { drag: { x: true, y: false, setScale: false } },
      hooks: {
        setSelect: [u => {
          const { left, width } = u.select;
          if (width < 3) return;
          u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false);
          if (this.onZoom) this.onZoom(u.posToVal(left, 'x'), u.posToVal(left + width, 'x'));
        }],
        draw: [u => {
          drawAnnotations(u, annotations, accent);
          placeMarkers(u, annotations);
          // the canvas is painted: the time since the data came is the
          // draw's cost (the first draw only; a hover or resize is not one)
          if (!timed) {
            timed = true;
            this.drawMs = performance.now() - t0;
          }
        }],
        setCursor: [u => { if (this.table) this.table.cursor(u.cursor.idx); }],
        setSeries: [u => { if (this.table) this.table.shown(); }],
      },
      legend: { live: true, show: pos !== 'none' && !tableLegend },
      series: [
        { label: 'time' },
        ...results.map((r, i) => ({
          label: seriesLabel(r),
          scale: onY2(i) ? 'y2' : 'y',
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: false,
          value: (u, v) => fmtWith(st[(onY2(i) ? 'y2' : 'y') + 'format'], v),
          points: { fill: bg },
        })),
      ],
    };
    this.drawMs = null;
    this.clear();
    this.el.dataset.key = tableLegend ? 'table' : pos;
    const cols = toColumns(results);
    // a log axis has no place for zero or less: those points are gaps
    cols.slice(1).forEach((c, i) => {
      if (st[onY2(i) ? 'y2log' : 'ylog']) c.forEach((v, j) => { if (v !== null && v <= 0) c[j] = null; });
    });
    this.plot = new uPlot(opts, cols, this.el);
    this.plot.over.addEventListener('click', e => {
      if (!this.onPick || !this.plot) return;
      const at = this.pointAt(e.offsetX, e.offsetY);
      if (at) this.onPick(at.t, results[at.i]);
      else this.onPick(this.plot.posToVal(e.offsetX, 'x'), null);
    });
    if (tableLegend && pos !== 'none') this.table = new LegendTable(this.el, this.plot, v => fmtValue(v));
  }

  // The shown series' point nearest (x, y) on the plot (CSS pixels), if
  // one is within POINT_PX: {i: its index in the answer, t: its time}.
  pointAt(x, y) {
    const u = this.plot, idx = u.posToIdx(x);
    if (idx == null || idx < 0 || Math.abs(u.valToPos(u.data[0][idx], 'x') - x) > POINT_PX) return null;
    let best = null, bestD = POINT_PX;
    for (let i = 1; i < u.series.length; i++) {
      const v = u.data[i][idx];
      if (!u.series[i].show || v == null) continue;
      const d = Math.abs(u.valToPos(v, u.series[i].scale) - y);
      if (d <= bestD) { best = i; bestD = d; }
    }
    return best === null ? null : { i: best - 1, t: u.data[0][idx] };
  }

  // Redraws with the current theme's colours.
  restyle() {
    if (this.last && this.plot) this.draw(this.last);
  }
}

// The notes of every series and the global ones, each once, time-ordered.
function collectAnnotations(results) {
  const seen = new Map();
  for (const r of results)
    for (const a of [...(r.annotations || []), ...(r.globalAnnotations || [])])
      seen.set(`${a.tsuid || ''}\u0000${a.startTime}\u0000${a.description}`, a);
  return [...seen.values()].sort((a, b) => a.startTime - b.startTime);
}

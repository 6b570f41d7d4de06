// chart.js -- /api/query's answer drawn with uPlot: one line per series,
// the legend naming each by metric and tags, values at the cursor.
import uPlot from '../vendor/uplot/uPlot.esm.js';
import { parseRange } from './state.js';

const PALETTE = ['#2f7ed8', '#e4572e', '#29a35a', '#9b59b6', '#f0a202', '#17becf', '#d62790',
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

// The y scale: log or linear; the range's given sides fixed, the others
// from the data, with linear ones starting at zero when no value is below.
function yScale(axes) {
  const [lo, hi] = parseRange(axes.yrange);
  const log = !!axes.ylog;
  return {
    distr: log ? 3 : 1,
    range: (u, dmin, dmax) => {
      if (dmin == null) return [lo ?? 0, hi ?? 1];
      const [amin, amax] = log ? uPlot.rangeLog(dmin, dmax, 10, true)
        : uPlot.rangeNum(dmin >= 0 ? 0 : dmin, dmax, 0.1, true);
      return [lo ?? amin, hi ?? amax];
    },
  };
}

function fmtValue(v) {
  if (v == null || Number.isNaN(v)) return '–';
  return Math.abs(v) >= 1e6 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(4) : String(+v.toPrecision(7));
}

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export class Chart {
  // onZoom(minSeconds, maxSeconds): called when the user drags a range.
  constructor(el, onZoom) {
    this.el = el;
    this.onZoom = onZoom;
    this.plot = null;
    this.last = null;
    this.drawMs = null; // the last draw: data to painted canvas, in ms
    new ResizeObserver(() => {
      if (this.plot) this.plot.setSize(this.size());
    }).observe(el);
  }

  size() {
    return { width: Math.max(300, this.el.clientWidth), height: Math.max(240, Math.round(window.innerHeight * 0.5)) };
  }

  clear(message) {
    if (this.plot) this.plot.destroy();
    this.plot = null;
    this.el.replaceChildren();
    if (message) {
      const p = document.createElement('p');
      p.className = 'empty';
      p.textContent = message;
      this.el.append(p);
    }
  }

  // results: /api/query's array (all queries concatenated); axes: {yrange
  // ('[min:max]'), ylog, utc} from the page's state.
  draw(results, axes = this.axes || {}) {
    this.last = results;
    this.axes = axes;
    if (!results.length) {
      this.clear('No data for this query in this time range.');
      return;
    }
    const fg = cssVar('--fg'), grid = cssVar('--grid'), bg = cssVar('--bg');
    const axis = { stroke: fg, grid: { stroke: grid }, ticks: { stroke: grid } };
    const opts = {
      ...this.size(),
      scales: { x: { time: true }, y: yScale(axes) },
      ...(axes.utc ? { tzDate: ts => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC') } : {}),
      axes: [{ ...axis }, { ...axis, size: 60, values: (u, vals) => vals.map(fmtValue) }],
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
      },
      legend: { live: true },
      series: [
        { label: 'time' },
        ...results.map((r, i) => ({
          label: seriesLabel(r),
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: false,
          value: (u, v) => fmtValue(v),
          points: { fill: bg },
        })),
      ],
    };
    const t0 = performance.now();
    this.drawMs = null;
    this.clear();
    const cols = toColumns(results);
    // a log axis has no place for zero or less: those points are gaps
    if (axes.ylog) for (const c of cols.slice(1)) c.forEach((v, i) => { if (v !== null && v <= 0) c[i] = null; });
    this.plot = new uPlot(opts, cols, this.el);
    // uPlot paints before the next frame: the time to it is the draw's cost
    requestAnimationFrame(() => { this.drawMs = performance.now() - t0; });
  }

  // Redraws with the current theme's colours.
  restyle() {
    if (this.last && this.plot) this.draw(this.last);
  }
}

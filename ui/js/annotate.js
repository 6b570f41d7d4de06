// annotate.js -- annotations on the chart: drawn as dashed lines with a
// mark on the time axis (and a hoverable marker holding the description),
// and made by clicking the chart in "Annotate" mode: a click on a series'
// point makes a note on that series (its TSUID; a series aggregating
// several gets one on each, /api/annotation/bulk), elsewhere a global note
// (no tsuid); the form can switch a series' note to global. The page then
// asks again so the TSD's copy is what is drawn.
import { annotate, annotateBulk } from './api.js';
import { seriesLabel } from './chart.js';

// On uPlot's canvas, inside the plot area (u.bbox is in canvas pixels).
export function drawAnnotations(u, anns, colour) {
  const { left, top, width, height } = u.bbox;
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = colour;
  ctx.fillStyle = colour;
  ctx.lineWidth = Math.max(1, devicePixelRatio);
  for (const a of anns) {
    const x = Math.round(u.valToPos(a.startTime, 'x', true));
    if (x < left || x > left + width) continue;
    ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    // a triangle standing on the time axis
    const s = 5 * devicePixelRatio;
    ctx.setLineDash([]);
    ctx.beginPath();
    ctx.moveTo(x, top + height - s * 1.6);
    ctx.lineTo(x - s, top + height);
    ctx.lineTo(x + s, top + height);
    ctx.closePath();
    ctx.fill();
  }
  ctx.restore();
}

// Hoverable markers over the plot (CSS pixels), one per annotation in view.
export function placeMarkers(u, anns) {
  let box = u.over.querySelector('.ann-markers');
  if (!box) {
    box = document.createElement('div');
    box.className = 'ann-markers';
    u.over.append(box);
  }
  const w = u.over.clientWidth;
  box.replaceChildren(...anns.flatMap(a => {
    const x = u.valToPos(a.startTime, 'x');
    if (!(x >= 0 && x <= w)) return [];
    const m = document.createElement('div');
    m.className = 'ann';
    m.style.left = `${x}px`;
    m.dataset.time = String(a.startTime);
    m.title = `${new Date(a.startTime * 1000).toISOString().replace('.000Z', 'Z')}  ${a.description || ''}` +
      (a.tsuid ? `  (series ${a.tsuid})` : '');
    return [m];
  }));
}

// The "Annotate" button and its form. chart.onPick is set while picking;
// saved() runs once the TSD has stored the note.
export class Annotator {
  constructor(chart, els, saved, showError) {
    this.chart = chart;
    this.els = els; // {button, form, time, text, target}
    this.saved = saved;
    this.showError = showError;
    this.t = null;
    this.tsuids = [];
    els.button.addEventListener('click', () => this.picking(!this.chart.onPick));
    els.form.addEventListener('submit', e => {
      e.preventDefault();
      this.save();
    });
    els.form.querySelector('.cancel').addEventListener('click', () => this.close());
  }

  picking(on) {
    this.chart.onPick = on ? (t, series) => this.open(t, series) : null;
    this.els.button.setAttribute('aria-pressed', String(on));
    this.chart.el.classList.toggle('picking', on);
  }

  open(t, series) {
    this.t = Math.round(t);
    this.tsuids = (series && series.tsuids) || [];
    this.picking(false);
    this.els.time.textContent = new Date(this.t * 1000).toISOString().replace('.000Z', 'Z');
    const n = this.tsuids.length;
    this.els.target.replaceChildren(new Option('all series (global)', 'global'),
      ...(n ? [new Option(`${seriesLabel(series)}${n > 1 ? ` (each of its ${n} series)` : ''}`, 'series', true, true)] : []));
    this.els.form.hidden = false;
    this.els.text.value = '';
    this.els.text.focus();
  }

  close() {
    this.els.form.hidden = true;
    this.t = null;
  }

  async save() {
    const description = this.els.text.value.trim();
    if (this.t === null) return;
    try {
      const ids = this.els.target.value === 'series' ? this.tsuids : [];
      if (ids.length === 1) await annotate({ startTime: this.t, description, tsuid: ids[0] });
      else if (ids.length) await annotateBulk(ids.map(tsuid => ({ startTime: this.t, description, tsuid })));
      else await annotate({ startTime: this.t, description });
      this.close();
      this.saved();
    } catch (e) {
      this.showError(e.message);
    }
  }
}

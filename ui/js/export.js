// export.js -- the chart as a PNG: uPlot's canvas (lines, axes, labels,
// annotations) as it is on screen, with the legend of the series shown
// drawn beneath it (a colour swatch and the series' name per line), on the
// page's background.
import { PALETTE } from './chart.js';

const ROW = 18; // CSS pixels per legend line

// A canvas holding the chart and its legend; its width is the chart's.
export function chartCanvas(plot) {
  const src = plot.ctx.canvas, dpr = src.width / plot.width;
  const shown = plot.series.map((s, i) => [s, i]).slice(1).filter(([s]) => s.show);
  const pad = 6 * dpr, row = ROW * dpr;
  const c = document.createElement('canvas');
  c.width = src.width;
  c.height = src.height + (shown.length ? Math.round(2 * pad + shown.length * row) : 0);
  const ctx = c.getContext('2d');
  const css = getComputedStyle(document.documentElement);
  ctx.fillStyle = css.getPropertyValue('--bg').trim() || '#fff';
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.drawImage(src, 0, 0);
  ctx.font = `${12 * dpr}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  shown.forEach(([s, i], k) => {
    const y = src.height + pad + k * row + row / 2;
    ctx.fillStyle = PALETTE[(i - 1) % PALETTE.length];
    ctx.fillRect(pad, y - 5 * dpr, 10 * dpr, 10 * dpr);
    ctx.fillStyle = css.getPropertyValue('--fg').trim() || '#000';
    ctx.fillText(s.label, pad + 16 * dpr, y);
  });
  return c;
}

// Downloads the chart as octsdb.png.
export function downloadPNG(plot) {
  chartCanvas(plot).toBlob(blob => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'octsdb.png';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }, 'image/png');
}

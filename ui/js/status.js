// status.js -- the status page (/api/version and /api/stats: version,
// uptime, points in and out with their rate since the last look, series,
// UIDs, storage) refreshed every REFRESH_MS while shown, and the logs page
// (/logs?json: the daemon's recent lines, newest first, with a filter).
import * as api from './api.js';

const $ = id => document.getElementById(id);
const REFRESH_MS = 5000;

// "1d 2h 3m 4s"
function duration(s) {
  const parts = [[86400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']];
  const out = [];
  for (const [n, u] of parts) {
    if (s >= n || (u === 's' && !out.length)) out.push(`${Math.floor(s / n)}${u}`);
    s %= n;
  }
  return out.join(' ');
}

function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// The value of a stat (with its one tag "k=v", if any) as a number.
function stat(stats, metric, tag) {
  const s = stats.find(x => x.metric === metric &&
    (!tag || Object.entries(x.tags).some(([k, v]) => `${k}=${v}` === tag)));
  return s ? Number(s.value) : null;
}

export class StatusPage {
  constructor() {
    this.timer = 0;
    this.prev = null; // {at (ms), in, out}
    $('status-refresh').addEventListener('click', () => this.refresh());
  }

  show() {
    this.refresh();
  }

  hide() {
    clearTimeout(this.timer);
    this.timer = 0;
  }

  async refresh() {
    clearTimeout(this.timer);
    let v, st;
    try {
      [v, st] = await Promise.all([api.version(), api.stats()]);
    } catch (e) {
      this.render([['error', e.message, 'error']]);
      return;
    } finally {
      if (!$('page-status').hidden) this.timer = setTimeout(() => this.refresh(), REFRESH_MS);
    }
    const at = Date.now();
    const pin = stat(st, 'tsd.datapoints.added', 'type=all'), pout = stat(st, 'tsd.query.datapoints', 'type=emitted');
    const rate = (now, was) => (this.prev && now !== null && was !== null && at > this.prev.at
      ? `${((now - was) / ((at - this.prev.at) / 1000)).toFixed(1)}/s` : '–');
    const uids = ['metrics', 'tagk', 'tagv'].map(k => `${stat(st, 'tsd.uid.ids-used', 'kind=' + k)} ${k}`).join(', ');
    const storage = stat(st, 'tsd.storage.bytes');
    this.render([
      ['version', `octsdb ${v.octsdb_version || '?'} (OpenTSDB API ${v.version})`, 'version'],
      ['uptime', duration(stat(st, 'tsd.uptime') || 0), 'uptime'],
      ['points written', `${pin} (${rate(pin, this.prev && this.prev.in)})`, 'points-in'],
      ['points read', `${pout} (${rate(pout, this.prev && this.prev.out)})`, 'points-out'],
      ['series', String(stat(st, 'tsd.series.active')), 'series'],
      ['UIDs', uids, 'uids'],
      ['storage', storage === null ? '–' : bytes(storage), 'storage'],
      ['points in memory', String(stat(st, 'tsd.head.points')), 'head'],
      ['open connections', String(stat(st, 'tsd.connectionmgr.connections', 'type=open')), 'connections'],
    ]);
    this.prev = { at, in: pin, out: pout };
  }

  render(rows) {
    const t = $('status-table');
    t.replaceChildren();
    for (const [k, val, id] of rows) {
      const r = t.insertRow();
      r.dataset.stat = id;
      r.insertCell().textContent = k;
      r.insertCell().textContent = val;
    }
  }
}

export class LogsPage {
  constructor() {
    this.lines = [];
    $('logs-refresh').addEventListener('click', () => this.refresh());
    $('logs-filter').addEventListener('input', () => this.render());
  }

  show() {
    this.refresh();
  }

  hide() {}

  async refresh() {
    try {
      this.lines = (await api.logs()).map(l => l.split('\t'));
      this.error = null;
    } catch (e) {
      this.lines = [];
      this.error = e.message;
    }
    this.render();
  }

  render() {
    const f = $('logs-filter').value.trim().toLowerCase();
    const shown = this.lines.filter(l => !f || l.join(' ').toLowerCase().includes(f));
    const t = $('logs-table');
    t.replaceChildren();
    const head = t.createTHead().insertRow();
    for (const h of ['time', 'level', 'thread', 'component', 'message'])
      head.append(Object.assign(document.createElement('th'), { textContent: h }));
    const body = t.createTBody();
    for (const [ts, level, thread, comp, ...msg] of shown) {
      const r = body.insertRow();
      r.className = `level-${(level || '').toLowerCase()}`;
      const time = new Date(+ts * 1000).toISOString().replace('.000Z', 'Z');
      for (const v of [time, level, thread, comp, msg.join('\t')]) r.insertCell().textContent = v;
    }
    $('logs-count').textContent = this.error || `${shown.length} of ${this.lines.length} lines`;
  }
}

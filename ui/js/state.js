// state.js -- the page's whole state and its URL fragment.
//
// The fragment uses OpenTSDB's own syntax, so its old links open the same
// view and ours read like its: start=1h-ago&end=...&m=<query>[&o=<options>]
// &m=<query>... then OpenTSDB's axis keys (yrange=[min:max], y2range,
// ylabel, y2label, yformat, y2format, ylog, y2log), its legend keys
// (key=out right|top..., nokey), and our tz=utc, refresh=<seconds>,
// view=table|json, legend=table, page=explore|uids|status|logs and
// metric=<name> (the explorer's chosen metric). Each
// query is
//   agg:[interval-fn[-fill]:][rate[{counter[,max[,reset]]}]:]metric[{groupby}][{filters}]
// where interval may be "auto" (ours: from the chart's width). An o= after
// an m= holds that query's options, as OpenTSDB writes them: "axis x1y2"
// puts it on the right axis. Tags in the first braces group by (one series
// per value), those in the second only filter. Keys we do not use (wxh,
// ... from OpenTSDB's UI) are kept and written back untouched.

export function emptyQuery() {
  return {
    metric: '', agg: 'sum', tags: [],
    dsInterval: '', dsFn: 'avg', dsFill: '',
    rate: false, counter: false, counterMax: '', resetValue: '', axis: '',
  };
}

// "host=*,dc=lga" -> [{k, v}], splitting on commas outside parentheses
// (a filter such as literal_or(a|b) or regexp(x{1,2}) may hold some).
function parseTagList(s, groupBy) {
  const out = [];
  let depth = 0, cur = '';
  const flush = () => {
    const t = cur.trim();
    cur = '';
    if (!t) return;
    const eq = t.indexOf('=');
    if (eq <= 0) throw new Error(`bad tag '${t}': expected key=value`);
    out.push({ k: t.slice(0, eq).trim(), v: t.slice(eq + 1).trim(), groupBy });
  };
  for (const ch of s) {
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) flush();
    else cur += ch;
  }
  flush();
  return out;
}

// The closing brace matching the '{' at s[i], or -1.
function closeBrace(s, i) {
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    if (s[j] === '{') depth++;
    else if (s[j] === '}' && --depth === 0) return j;
  }
  return -1;
}

// One m= value into a query object; throws Error with a message for the page.
export function parseM(m) {
  const q = emptyQuery();
  // The metric part is the last ':'-separated field outside braces.
  let brace = m.indexOf('{');
  let head = brace < 0 ? m : m.slice(0, brace);
  let lastColon = head.lastIndexOf(':');
  // A rate{...} field has braces of its own: skip past them.
  const rateAt = m.search(/(^|:)rate\{/);
  if (rateAt >= 0) {
    const open = m.indexOf('{', rateAt);
    const close = closeBrace(m, open);
    if (close < 0) throw new Error(`unbalanced braces in '${m}'`);
    brace = m.indexOf('{', close + 1);
    head = brace < 0 ? m : m.slice(0, brace);
    lastColon = head.lastIndexOf(':');
  }
  if (lastColon < 0) throw new Error(`'${m}': expected aggregator:metric`);
  const fields = head.slice(0, lastColon).split(/:(?![^{]*\})/);
  q.metric = head.slice(lastColon + 1);
  q.agg = fields.shift();
  for (const f of fields) {
    const r = /^rate(?:\{([^}]*)\})?$/.exec(f);
    if (r) {
      q.rate = true;
      if (r[1] !== undefined) {
        const [kind, max = '', reset = ''] = r[1].split(',');
        q.counter = kind.trim() === 'counter' || kind.trim() === 'dropcounter';
        q.counterMax = max.trim();
        q.resetValue = reset.trim();
      }
    } else if (/^\d+[a-zA-Z]+-/.test(f) || /^(0all|auto)-/.test(f)) {
      const [iv, fn, fill = ''] = f.split('-');
      q.dsInterval = iv; q.dsFn = fn; q.dsFill = fill;
    } else {
      throw new Error(`'${m}': unknown option '${f}'`);
    }
  }
  // {groupby}{filters}
  let rest = brace < 0 ? '' : m.slice(brace);
  for (let group = 0; rest.startsWith('{'); group++) {
    const close = closeBrace(rest, 0);
    if (close < 0 || group > 1) throw new Error(`unbalanced braces in '${m}'`);
    q.tags.push(...parseTagList(rest.slice(1, close), group === 0));
    rest = rest.slice(close + 1);
  }
  if (rest) throw new Error(`'${m}': unexpected '${rest}'`);
  return q;
}

export function formatM(q) {
  let s = q.agg || 'sum';
  if (q.dsInterval) s += `:${q.dsInterval}-${q.dsFn || 'avg'}${q.dsFill ? '-' + q.dsFill : ''}`;
  if (q.rate) {
    s += ':rate';
    if (q.counter || q.counterMax || q.resetValue)
      s += `{${q.counter ? 'counter' : ''},${q.counterMax},${q.resetValue}}`;
  }
  s += ':' + q.metric.trim();
  const tags = q.tags.filter(t => t.k && t.v);
  const gb = tags.filter(t => t.groupBy), flt = tags.filter(t => !t.groupBy);
  if (gb.length || flt.length) s += `{${gb.map(t => `${t.k}=${t.v}`).join(',')}}`;
  if (flt.length) s += `{${flt.map(t => `${t.k}=${t.v}`).join(',')}}`;
  return s;
}

export const VIEWS = ['chart', 'table', 'json'];
export const PAGES = ['graph', 'explore', 'uids', 'status', 'logs'];
// where the legend goes: OpenTSDB's key= (gnuplot's words) or nokey
export const KEYS = ['bottom', 'right', 'top', 'none'];

// OpenTSDB's key string -> one of KEYS.
export function keyPos(key) {
  if (key === null) return 'none';
  if (!key) return 'bottom';
  if (/\bout\b/.test(key) && /\b(right|left)\b/.test(key) && !/\b(top|bottom)\b.*\bcenter\b/.test(key)) return 'right';
  if (/\btop\b/.test(key)) return 'top';
  return 'bottom';
}

// The key string written for a position chosen in the page.
export const KEY_STRINGS = { bottom: '', right: 'out right', top: 'out top center', none: null };

const RANGE_RE = /^\[[^:\]]*:[^:\]]*\]$/;

// Fragment (without '#') -> {start, end, queries, yrange ('[min:max]',
// either side may be empty), ylog, utc, refresh (seconds, 0 off), view,
// extra: [[k, v]...], errors: [message...]}.
export function parseFragment(frag) {
  const st = {
    start: '', end: '', queries: [], extra: [], refresh: 0, view: 'chart', page: 'graph', utc: false,
    yrange: '', ylog: false, ylabel: '', yformat: '', y2range: '', y2log: false, y2label: '', y2format: '',
    key: '', legend: '', metric: '',
  };
  const errors = [];
  let last; // the query of the latest m= (null: it failed), whose options an o= holds
  for (const part of frag.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const k = decode(eq < 0 ? part : part.slice(0, eq));
    const v = eq < 0 ? null : decode(part.slice(eq + 1));
    if (k === 'start') st.start = v || '';
    else if (k === 'end') st.end = v || '';
    else if (k === 'refresh' && /^\d+$/.test(v || '')) st.refresh = +v;
    else if (k === 'view' && VIEWS.includes(v)) st.view = v;
    else if (k === 'page' && PAGES.includes(v)) st.page = v;
    else if ((k === 'yrange' || k === 'y2range') && RANGE_RE.test(v || '')) st[k] = v;
    else if (k === 'ylog' || k === 'y2log') st[k] = true;
    else if (['ylabel', 'y2label', 'yformat', 'y2format'].includes(k) && v !== null) st[k] = v;
    else if (k === 'key' && v !== null) st.key = v;
    else if (k === 'nokey') st.key = null;
    else if (k === 'legend' && v === 'table') st.legend = v;
    else if (k === 'tz' && v === 'utc') st.utc = true;
    else if (k === 'metric' && v) st.metric = v;
    else if (k === 'o' && last !== undefined) {
      if (last && /\baxis\s+x1y2\b/.test(v || '')) last.axis = 'y2';
      last = undefined; // one o= per m=
    } else if (k === 'm' && v) {
      try { st.queries.push(last = parseM(v)); } catch (e) { errors.push(e.message); last = null; }
    } else st.extra.push([k, v]);
  }
  st.errors = errors;
  return st;
}

function decode(s) {
  try { return decodeURIComponent(s.replace(/\+/g, ' ')); } catch { return s; }
}

// Encodes what must be, leaving the query syntax readable in the address bar.
function encode(s) {
  return encodeURIComponent(s).replace(/%(7B|7D|3A|2C|3D|2A|7C|28|29|5B|5D)/gi,
    (_, h) => String.fromCharCode(parseInt(h, 16)));
}

export function formatFragment(st) {
  const parts = [];
  if (st.start) parts.push('start=' + encode(st.start));
  if (st.end) parts.push('end=' + encode(st.end));
  const qs = st.queries.filter(q => q.metric.trim());
  // o= only when some query needs one (pairs with its m=, as OpenTSDB's)
  const withO = qs.some(q => q.axis === 'y2');
  for (const q of qs) {
    parts.push('m=' + encode(formatM(q)));
    if (withO) parts.push('o=' + encode(q.axis === 'y2' ? 'axis x1y2' : ''));
  }
  for (const a of ['y', 'y2']) {
    const r = st[a + 'range'];
    if (r && r !== '[:]') parts.push(`${a}range=` + encode(r));
    if (st[a + 'label']) parts.push(`${a}label=` + encode(st[a + 'label']));
    if (st[a + 'format']) parts.push(`${a}format=` + encode(st[a + 'format']));
    if (st[a + 'log']) parts.push(`${a}log`);
  }
  if (st.key === null) parts.push('nokey');
  else if (st.key) parts.push('key=' + encode(st.key));
  if (st.legend) parts.push(`legend=${st.legend}`);
  if (st.utc) parts.push('tz=utc');
  if (st.refresh > 0) parts.push(`refresh=${st.refresh}`);
  if (st.view && st.view !== 'chart') parts.push(`view=${st.view}`);
  if (st.page && st.page !== 'graph') parts.push(`page=${st.page}`);
  if (st.metric) parts.push('metric=' + encode(st.metric));
  for (const [k, v] of st.extra || []) parts.push(v === null ? encode(k) : `${encode(k)}=${encode(v)}`);
  return parts.join('&');
}

// '[0:]' -> [0, null]; a side that is empty or not a number is null.
export function parseRange(r) {
  const m = /^\[([^:]*):([^\]]*)\]$/.exec(r || '');
  const num = x => (x.trim() !== '' && Number.isFinite(+x) ? +x : null);
  return m ? [num(m[1]), num(m[2])] : [null, null];
}

const UNIT_S = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, n: 2592000, y: 31536000 };

// A start/end as the TSD reads it (docs/query.md, "Time strings") -> unix
// seconds, for the page's own arithmetic (the auto downsample interval, the
// date picker): empty or "now" is nowS, "<n><unit>-ago", seconds or
// milliseconds, "YYYY/MM/DD[-HH:MM[:SS]]" in local time (UTC if utc). null
// when unreadable: the TSD has the last word on it.
export function parseTime(s, nowS, utc = false) {
  s = (s || '').trim();
  if (!s || s === 'now') return nowS;
  let m = /^(\d+)(ms|s|m|h|d|w|n|y)-ago$/.exec(s);
  if (m) return nowS - +m[1] * UNIT_S[m[2]];
  if (/^\d+$/.test(s)) return s.length > 10 ? Math.floor(+s / 1000) : +s;
  m = /^(\d{4})\/(\d\d)\/(\d\d)(?:[- ](\d\d):(\d\d)(?::(\d\d))?)?$/.exec(s);
  if (!m) return null;
  const f = [+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0), +(m[6] || 0)];
  return Math.floor((utc ? Date.UTC(...f) : new Date(...f).getTime()) / 1000);
}

// The interval names a downsample may use, in seconds; auto picks the
// first at least as long as the range over the chart's width in pixels.
const NICE = [['1s', 1], ['2s', 2], ['5s', 5], ['10s', 10], ['15s', 15], ['30s', 30], ['1m', 60],
  ['2m', 120], ['5m', 300], ['10m', 600], ['15m', 900], ['30m', 1800], ['1h', 3600], ['2h', 7200],
  ['3h', 10800], ['6h', 21600], ['12h', 43200], ['1d', 86400], ['7d', 604800], ['30d', 2592000]];

export function autoInterval(seconds, pixels) {
  const per = seconds / Math.max(1, pixels);
  return (NICE.find(([, s]) => s >= per) || NICE[NICE.length - 1])[0];
}

// state.js -- the page's whole state and its URL fragment.
//
// The fragment uses OpenTSDB's own syntax, so its old links open the same
// view and ours read like its: start=1h-ago&end=...&m=<query>&m=<query>...
// then yrange=[min:max], ylog (OpenTSDB's own) and our tz=utc,
// refresh=<seconds> and view=table|json, where each query is
//   agg:[interval-fn[-fill]:][rate[{counter[,max[,reset]]}]:]metric[{groupby}][{filters}]
// Tags in the first braces group by (one series per value), those in the
// second only filter. Keys we do not use (o, yrange, wxh, key, ylog, ...
// from OpenTSDB's UI) are kept and written back untouched.

export function emptyQuery() {
  return {
    metric: '', agg: 'sum', tags: [],
    dsInterval: '', dsFn: 'avg', dsFill: '',
    rate: false, counter: false, counterMax: '', resetValue: '',
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
    } else if (/^\d+[a-zA-Z]+-/.test(f) || /^0all-/.test(f)) {
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

// Fragment (without '#') -> {start, end, queries, yrange ('[min:max]',
// either side may be empty), ylog, utc, refresh (seconds, 0 off), view,
// extra: [[k, v]...], errors: [message...]}.
export function parseFragment(frag) {
  const st = { start: '', end: '', queries: [], extra: [], refresh: 0, view: 'chart', yrange: '', ylog: false, utc: false };
  const errors = [];
  for (const part of frag.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const k = decode(eq < 0 ? part : part.slice(0, eq));
    const v = eq < 0 ? null : decode(part.slice(eq + 1));
    if (k === 'start') st.start = v || '';
    else if (k === 'end') st.end = v || '';
    else if (k === 'refresh' && /^\d+$/.test(v || '')) st.refresh = +v;
    else if (k === 'view' && VIEWS.includes(v)) st.view = v;
    else if (k === 'yrange' && /^\[[^:\]]*:[^:\]]*\]$/.test(v || '')) st.yrange = v;
    else if (k === 'ylog') st.ylog = true;
    else if (k === 'tz' && v === 'utc') st.utc = true;
    else if (k === 'm' && v) {
      try { st.queries.push(parseM(v)); } catch (e) { errors.push(e.message); }
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
  for (const q of st.queries) if (q.metric.trim()) parts.push('m=' + encode(formatM(q)));
  if (st.yrange && st.yrange !== '[:]') parts.push('yrange=' + encode(st.yrange));
  if (st.ylog) parts.push('ylog');
  if (st.utc) parts.push('tz=utc');
  if (st.refresh > 0) parts.push(`refresh=${st.refresh}`);
  if (st.view && st.view !== 'chart') parts.push(`view=${st.view}`);
  for (const [k, v] of st.extra || []) parts.push(v === null ? encode(k) : `${encode(k)}=${encode(v)}`);
  return parts.join('&');
}

// '[0:]' -> [0, null]; a side that is empty or not a number is null.
export function parseRange(r) {
  const m = /^\[([^:]*):([^\]]*)\]$/.exec(r || '');
  const num = x => (x.trim() !== '' && Number.isFinite(+x) ? +x : null);
  return m ? [num(m[1]), num(m[2])] : [null, null];
}

// api.js -- the TSD's HTTP API as the page uses it. Every call rejects with
// an Error whose message is the API's own ("error.message"), so the page can
// show it in place.

export class ApiError extends Error {}

async function getJSON(path, params, signal, post) {
  const qs = new URLSearchParams();
  for (const [k, v] of params) qs.append(k, v);
  const url = qs.toString() ? `${path}?${qs}` : path;
  let resp;
  try {
    resp = await fetch(url, post === undefined ? { signal, headers: { Accept: 'application/json' } }
      : { signal, method: 'POST', headers: { Accept: 'application/json' }, body: JSON.stringify(post) });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(`The TSD did not answer (${e.message})`);
  }
  const text = await resp.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { /* not JSON: reported below */ }
  if (!resp.ok) {
    const msg = body && body.error && body.error.message;
    throw new ApiError(msg || `HTTP ${resp.status} ${resp.statusText}`);
  }
  if (body === null && text) throw new ApiError(`Unreadable answer from ${path}`);
  return body;
}

export function suggest(type, q, signal, max = 25) {
  return getJSON('api/suggest', [['type', type], ['q', q], ['max', String(max)]], signal);
}

export function aggregators() {
  return getJSON('api/aggregators', []);
}

export function version() {
  return getJSON('api/version', []);
}

// The filter types the TSD knows: {name: {description, examples}}.
export function filters() {
  return getJSON('api/config/filters', []);
}

export function stats() {
  return getJSON('api/stats', []);
}

// The recent log lines, newest first: "seconds\tlevel\tthread\tcomponent\tmessage".
export function logs() {
  return getJSON('logs', [['json', '']]);
}

// Every series of a metric: {totalResults, results: [{tsuid, metric, tags}]}.
export function lookup(metric, limit) {
  return getJSON('api/search/lookup', [['m', metric], ['limit', String(limit)]]);
}

// UIDs by name (a glob) and kind ('' any): {totalResults, results: [UIDMeta]}.
export function searchUids(name, kind, limit) {
  return getJSON('api/search/uidmeta', [['query', `name:${name}${kind ? ' type:' + kind : ''}`], ['limit', String(limit)]]);
}

// One UID's meta (its name): kind is metric, tagk or tagv.
export function uidmeta(uid, kind) {
  return getJSON('api/uid/uidmeta', [['uid', uid], ['type', kind]]);
}

// Stores a note: {startTime, description[, tsuid]}; answers it as stored.
export function annotate(note) {
  return getJSON('api/annotation', [], undefined, note);
}

// Stores one note on each of several series (/api/annotation/bulk).
export function annotateBulk(notes) {
  return getJSON('api/annotation/bulk', [], undefined, notes);
}

// The latest point of each series named by TSUID, looking back at most
// backScan hours: [{metric, tags, timestamp (ms), value (text), tsuid}].
export function last(tsuids, backScan, signal) {
  return getJSON('api/query/last', [], signal, { queries: [{ tsuids }], resolveNames: true, backScan });
}

// ms is the m= strings (formatM); the answer is /api/query's array, each
// series' dps as [[timestamp, value], ...] in time order (arrays=true:
// reading an object of 166 K numeric keys cost the page 400 ms), with the
// TSUIDs it aggregates (for its last values and notes on it) and the global
// annotations of the range. showQuery adds each series' query (its index:
// which m= it answers).
export function query(start, end, ms, signal, showQuery = false) {
  const p = [['start', start || '1h-ago'], ['arrays', 'true'], ['show_tsuids', 'true'], ['global_annotations', 'true']];
  if (showQuery) p.push(['show_query', 'true']);
  if (end) p.push(['end', end]);
  for (const m of ms) p.push(['m', m]);
  return getJSON('api/query', p, signal);
}

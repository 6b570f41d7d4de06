// api.js -- the TSD's HTTP API as the page uses it. Every call rejects with
// an Error whose message is the API's own ("error.message"), so the page can
// show it in place.

export class ApiError extends Error {}

async function getJSON(path, params, signal) {
  const qs = new URLSearchParams();
  for (const [k, v] of params) qs.append(k, v);
  const url = qs.toString() ? `${path}?${qs}` : path;
  let resp;
  try {
    resp = await fetch(url, { signal, headers: { Accept: 'application/json' } });
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

export function suggest(type, q, signal) {
  return getJSON('api/suggest', [['type', type], ['q', q], ['max', '25']], signal);
}

export function aggregators() {
  return getJSON('api/aggregators', []);
}

export function version() {
  return getJSON('api/version', []);
}

// ms is the m= strings (formatM); the answer is /api/query's array, each
// series' dps as [[timestamp, value], ...] in time order (arrays=true:
// reading an object of 166 K numeric keys cost the page 400 ms).
export function query(start, end, ms, signal) {
  const p = [['start', start || '1h-ago'], ['arrays', 'true']];
  if (end) p.push(['end', end]);
  for (const m of ms) p.push(['m', m]);
  return getJSON('api/query', p, signal);
}

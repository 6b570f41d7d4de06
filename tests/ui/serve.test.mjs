// serve.test.mjs -- how the TSD serves the UI, over plain HTTP: the
// embedded files are the bytes of ui/ (gzip'd when accepted), with ETag and
// 304, no-cache, a CSP; --disable-ui is a 404; --ui-dir serves a directory.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { startTsd } from './lib.mjs';

const uiSrc = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'ui');

// Raw HTTP GET (fetch would undo gzip itself): {status, headers, body}.
function get(base, path, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const sha = b => createHash('sha256').update(b).digest('hex');

describe('embedded UI', () => {
  let tsd;
  before(async () => { tsd = await startTsd('serve'); });
  after(async () => { await tsd?.stop(); });

  test('/ is ui/index.html, plain and gzip, with ETag, no-cache and CSP', async () => {
    const want = readFileSync(join(uiSrc, 'index.html'));
    const plain = await get(tsd.base, '/');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-type'], 'text/html; charset=UTF-8');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(sha(plain.body), sha(want));
    assert.equal(plain.headers['cache-control'], 'no-cache');
    assert.match(plain.headers['content-security-policy'], /script-src 'self'/);
    assert.match(plain.headers['content-security-policy'], /default-src 'none'/);
    assert.equal(plain.headers['x-content-type-options'], 'nosniff');
    assert.match(plain.headers.etag, /^"[0-9a-f]{32}"$/);

    const gz = await get(tsd.base, '/', { 'Accept-Encoding': 'br, gzip;q=0.8' });
    assert.equal(gz.status, 200);
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers.vary, 'Accept-Encoding');
    assert.equal(sha(gunzipSync(gz.body)), sha(want));
    assert.notEqual(gz.headers.etag, plain.headers.etag);
    assert.ok(gz.body.length < want.length, 'gzip made it smaller');

    const refused = await get(tsd.base, '/', { 'Accept-Encoding': 'gzip;q=0, identity' });
    assert.equal(refused.headers['content-encoding'], undefined);
    assert.equal(sha(refused.body), sha(want));

    const again = await get(tsd.base, '/', { 'If-None-Match': plain.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const gzAgain = await get(tsd.base, '/', { 'Accept-Encoding': 'gzip', 'If-None-Match': `"nope", ${gz.headers.etag}` });
    assert.equal(gzAgain.status, 304);
    const stale = await get(tsd.base, '/', { 'If-None-Match': '"0123456789abcdef0123456789abcdef"' });
    assert.equal(stale.status, 200);
  });

  test('every file of ui/ is served under /ui/ with its type', async () => {
    const files = [['js/main.js', 'application/javascript'], ['style.css', 'text/css'],
      ['vendor/uplot/uPlot.esm.js', 'application/javascript']];
    for (const [rel, type] of files) {
      const r = await get(tsd.base, `/ui/${rel}`, { 'Accept-Encoding': 'gzip' });
      assert.equal(r.status, 200, rel);
      assert.equal(r.headers['content-type'], type, rel);
      assert.equal(sha(gunzipSync(r.body)), sha(readFileSync(join(uiSrc, rel))), rel);
    }
    // the vendored uPlot is the one its SHA256SUMS names
    const sums = readFileSync(join(uiSrc, 'vendor/uplot/SHA256SUMS'), 'utf8');
    const esm = await get(tsd.base, '/ui/vendor/uplot/uPlot.esm.js');
    assert.match(sums, new RegExp(`^${sha(esm.body)}  uPlot.esm.js$`, 'm'));
  });

  test('unknown files, other verbs and /api are unchanged', async () => {
    for (const p of ['/ui/nope.js', '/ui/', '/ui/js', '/ui/../index.html', '/index.html'])
      assert.equal((await get(tsd.base, p)).status, 404, p);
    const post = await get(tsd.base, '/', {}, 'POST');
    assert.equal(post.status, 405);
    const head = await get(tsd.base, '/', {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    const v = await get(tsd.base, '/api/version');
    assert.equal(v.status, 200);
    assert.equal(v.headers['content-type'], 'application/json; charset=UTF-8');
    assert.ok(JSON.parse(v.body).version);
    const missing = await get(tsd.base, '/api/nope');
    assert.equal(JSON.parse(missing.body).error.message, 'Endpoint not found');
  });
});

describe('--disable-ui and --ui-dir', () => {
  let off, dev, dir;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'octsdb-uidir-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><p>dev page</p>');
    writeFileSync(join(dir, 'x.js'), 'export const x = 1;\n');
    [off, dev] = await Promise.all([startTsd('disabled', ['--disable-ui']),
      startTsd('uidir', [`--ui-dir=${dir}`])]);
  });
  after(async () => {
    await Promise.all([off?.stop(), dev?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('--disable-ui: / and /ui/ are the 404 of an unknown path', async () => {
    for (const p of ['/', '/ui/js/main.js']) {
      const r = await get(off.base, p);
      assert.equal(r.status, 404, p);
      assert.equal(JSON.parse(r.body).error.message, 'Endpoint not found');
    }
    assert.equal((await get(off.base, '/api/version')).status, 200);
  });

  test('--ui-dir: the directory is served, fresh on every request, nothing outside it', async () => {
    const r = await get(dev.base, '/');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), '<!doctype html><p>dev page</p>');
    assert.equal(r.headers['cache-control'], 'no-cache');
    const js = await get(dev.base, '/ui/x.js');
    assert.equal(js.body.toString(), 'export const x = 1;\n');
    assert.equal(js.headers['content-type'], 'application/javascript');
    writeFileSync(join(dir, 'x.js'), 'export const x = 2;\n');
    const js2 = await get(dev.base, '/ui/x.js', { 'If-None-Match': js.headers.etag });
    assert.equal(js2.status, 200, 'a changed file is not a 304');
    assert.equal(js2.body.toString(), 'export const x = 2;\n');
    assert.equal((await get(dev.base, '/ui/x.js', { 'If-None-Match': js2.headers.etag })).status, 304);
    // the embedded UI is not mixed in, and nothing outside the directory is served
    assert.equal((await get(dev.base, '/ui/js/main.js')).status, 404);
    assert.equal((await get(dev.base, '/ui/..%2f..%2fetc%2fpasswd')).status, 404);
  });
});

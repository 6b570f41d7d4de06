// lib.mjs -- what the UI tests share: a real `octsdb tsd` on a free
// loopback port with its own data directory, /api helpers, and Debian's
// chromium driven by puppeteer-core (never a downloaded browser).
//
// Environment: OCTSDB_BIN (set by ctest), OCT_UI_TEST_OUT (where logs and
// screenshots go; ctest sets it under the build's Testing/ dir),
// OCT_CHROMIUM (default /usr/bin/chromium), OCT_UI_DIR (for work on the UI:
// the daemon serves that directory, read on every request, instead of the
// files built into it).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

export const outDir = process.env.OCT_UI_TEST_OUT || join(tmpdir(), 'octsdb-ui-test-out');
mkdirSync(outDir, { recursive: true });

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

// Starts the daemon; resolves once /api/version answers. name labels its log.
export async function startTsd(name, extraArgs = []) {
  const bin = process.env.OCTSDB_BIN;
  if (!bin) throw new Error('OCTSDB_BIN is not set (ctest sets it; or export it to build/octsdb)');
  const dir = mkdtempSync(join(tmpdir(), 'octsdb-ui-'));
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const log = openSync(join(outDir, `tsd-${name}.log`), 'w');
    const proc = spawn(bin, ['tsd', `--port=${port}`, '--bind=127.0.0.1', `--datadir=${dir}/data`,
      '--auto-metric', ...(process.env.OCT_UI_DIR ? [`--ui-dir=${process.env.OCT_UI_DIR}`] : []), ...extraArgs], { stdio: ['ignore', log, log] });
    let exited = false, status = null;
    proc.on('exit', (code, signal) => { exited = true; status = signal || code; });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200 && !exited; i++) {
      try {
        const r = await fetch(`${base}/api/version`);
        if (r.ok) {
          return {
            base,
            // SIGTERM is a clean shutdown: anything but exit 0 (a crash, a
            // sanitizer's report at exit) fails the test file
            async stop() {
              if (!exited) {
                const done = new Promise(r2 => proc.once('exit', r2));
                proc.kill('SIGTERM');
                await done;
              }
              rmSync(dir, { recursive: true, force: true });
              if (status !== 0) throw new Error(`octsdb tsd (${name}) exited with ${status}; log: ${join(outDir, `tsd-${name}.log`)}`);
            },
          };
        }
      } catch { /* not listening yet */ }
      await sleep(50);
    }
    if (!exited) proc.kill('SIGKILL');
    // the port was taken between freePort and bind: try another
  }
  throw new Error(`octsdb tsd did not start (log: ${join(outDir, `tsd-${name}.log`)})`);
}

// POSTs points to /api/put?sync=true; throws unless every one was stored.
export async function put(base, points) {
  const r = await fetch(`${base}/api/put?sync=true`, { method: 'POST', body: JSON.stringify(points) });
  if (r.status !== 204) throw new Error(`/api/put: ${r.status} ${await r.text()}`);
}

// GET /api/query with the m= strings, dps as [[t, v], ...] and the TSUIDs
// of each series (arrays=true, show_tsuids=true, as the page asks); returns
// [status, body].
export async function apiQuery(base, start, end, ms) {
  const qs = new URLSearchParams({ start: String(start), arrays: 'true', show_tsuids: 'true' });
  if (end) qs.append('end', String(end));
  for (const m of ms) qs.append('m', m);
  const r = await fetch(`${base}/api/query?${qs}`);
  return [r.status, await r.json()];
}

export function launchBrowser() {
  return puppeteer.launch({
    executablePath: process.env.OCT_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    protocolTimeout: 30000, // a stuck page fails the test in 30 s, not 180
    // root in CI has no user namespace sandbox; the pages are our own
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

// newPage(opts): a page of browser whose errors (an exception, a console
// error other than the browser's own note of an API 400) go to errors and
// whose /api/query and /api/suggest requests are kept (page.queries,
// page.suggests); opts.dark emulates a dark system theme. open(page, frag)
// opens base/#frag and waits until its query was drawn or refused;
// graph(page) submits the form and waits for that query to finish.
export function pageHelpers(browser, base, errors) {
  async function newPage(opts = {}) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    if (opts.dark) await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    page.on('pageerror', e => errors.push(`${page.url()}: ${e.message}`));
    page.on('console', m => {
      // a 400 or 404 from the API is logged by the browser itself; anything
      // else (a CSP refusal, an exception, a missing file) is a failure
      if (m.type() === 'error' && !/status of 40[04]/.test(m.text())) errors.push(`${page.url()}: console: ${m.text()}`);
    });
    page.queries = [];
    page.suggests = [];
    page.on('request', r => {
      const u = new URL(r.url());
      if (u.pathname === '/api/query') page.queries.push(u);
      if (u.pathname === '/api/suggest') page.suggests.push(u);
    });
    return page;
  }
  async function open(page, frag) {
    await page.goto(`${base}/${frag ? '#' + frag : ''}`);
    await page.waitForFunction(() => window.octsdbUI && window.octsdbUI.runs > 0, { timeout: 10000 });
  }
  async function graph(page) {
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.click('#graph');
    await page.waitForFunction(n => window.octsdbUI.runs > n, { timeout: 10000 }, runs);
  }
  return { newPage, open, graph };
}

// uPlot's legend: [label, value text] per series.
export const legend = page => page.$$eval('.u-legend .u-series', rows => rows.slice(1).map(r =>
  [r.querySelector('.u-label').textContent, r.querySelector('.u-value').textContent]));

// Clicks sel and returns the bytes of the file named name that the click
// downloads, as the user would get it.
export async function download(page, sel, name) {
  const dl = mkdtempSync(join(tmpdir(), 'octsdb-ui-dl-'));
  try {
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dl });
    await page.click(sel);
    const file = join(dl, name);
    // up to 20 s: a loaded CI machine (the ASan run beside) was slower than 5 s
    for (let i = 0; i < 400 && !existsSync(file); i++) await sleep(50);
    return readFileSync(file);
  } finally {
    rmSync(dl, { recursive: true, force: true });
  }
}

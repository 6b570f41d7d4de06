// lib.mjs -- what the UI tests share: a real `octsdb tsd` on a free
// loopback port with its own data directory, /api helpers, and Debian's
// chromium driven by puppeteer-core (never a downloaded browser).
//
// Environment: OCTSDB_BIN (set by ctest), OCT_UI_TEST_OUT (where logs and
// screenshots go; ctest sets it under the build's Testing/ dir),
// OCT_CHROMIUM (default /usr/bin/chromium).
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, openSync, rmSync } from 'node:fs';
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
      '--auto-metric', ...extraArgs], { stdio: ['ignore', log, log] });
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

// GET /api/query with the m= strings, dps as [[t, v], ...] (arrays=true,
// as the page asks); returns [status, body].
export async function apiQuery(base, start, end, ms) {
  const qs = new URLSearchParams({ start: String(start), arrays: 'true' });
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

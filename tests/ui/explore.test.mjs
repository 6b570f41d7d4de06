// explore.test.mjs -- the UI's other pages in Debian's chromium against a
// real TSD: the status page, the metric/series explorer, the UID browser and
// the logs. Expectations come from what the test wrote and asked.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiQuery, launchBrowser, outDir, pageHelpers, put, startTsd } from './lib.mjs';

const t0 = Math.floor(Date.now() / 60000) * 60 - 3600;
// ex.req's series: host h1..h6, dc east for two, west for three, none for h6
const SERIES = [['h1', 'east'], ['h2', 'east'], ['h3', 'west'], ['h4', 'west'], ['h5', 'west'], ['h6', null]];
const PER_SERIES = 10;

let tsd, browser, newPage;
const pageErrors = [];
let written = 0; // points the test has stored

async function store(points) {
  await put(tsd.base, points);
  written += points.length;
}

// Opens a page of the UI (page=...) and waits for sel to be there.
async function openPage(page, name, sel) {
  await page.goto(`${tsd.base}/#page=${name}`);
  // the forms are in the HTML before main.js runs: a submit before it has
  // attached its handlers would reload the page (seen in CI's ASan run)
  await page.waitForFunction(() => window.octsdbUI);
  await page.waitForSelector(sel);
}

before(async () => {
  [tsd, browser] = await Promise.all([startTsd('explore'), launchBrowser()]);
  ({ newPage } = pageHelpers(browser, tsd.base, pageErrors));
  const pts = [];
  for (const [host, dc] of SERIES)
    for (let j = 0; j < PER_SERIES; j++)
      pts.push({ metric: 'ex.req', timestamp: t0 + 60 * j, value: j, tags: dc ? { host, dc } : { host } });
  pts.push({ metric: 'ex.err', timestamp: t0, value: 1, tags: { host: 'h1' } });
  pts.push({ metric: 'other.metric', timestamp: t0, value: 1, tags: { host: 'h1' } });
  await store(pts);
});

after(async () => {
  await browser?.close();
  await tsd?.stop();
});

const cells = (page, sel) => page.$$eval(`${sel} tr`, trs => trs.map(tr => [...tr.cells].map(td => td.textContent)));

describe('pages', () => {
  test('status: version, uptime, points written and read, series, UIDs, storage', async () => {
    // a query of known size: sum of ex.req over its 10 minutes
    const [status, api] = await apiQuery(tsd.base, t0, t0 + 60 * (PER_SERIES - 1), ['sum:ex.req']);
    assert.equal(status, 200);
    const read = api.reduce((n, s) => n + s.dps.length, 0);
    assert.equal(read, PER_SERIES);
    const page = await newPage();
    await openPage(page, 'status', '#status-table tr[data-stat="version"]');
    const row = async id => page.$eval(`#status-table tr[data-stat="${id}"] td:last-child`, td => td.textContent);
    const version = await (await fetch(`${tsd.base}/api/version`)).json();
    assert.equal(await row('version'), `octsdb ${version.octsdb_version} (OpenTSDB API ${version.version})`);
    assert.match(await row('uptime'), /^(\d+m )?\d+s$/);
    assert.equal(await row('points-in'), `${written} (–)`);
    assert.equal(await row('points-out'), `${read} (–)`);
    assert.equal(await row('series'), String(SERIES.length + 2));
    // metrics ex.req ex.err other.metric; keys host dc; values h1..h6 east west
    assert.equal(await row('uids'), '3 metrics, 2 tagk, 8 tagv');
    assert.match(await row('storage'), /^\d+(\.\d)? (B|KiB|MiB|GiB)$/);
    // 50 more points, then Refresh: the totals move, and a rate is shown
    const more = [];
    for (let j = 0; j < 50; j++) more.push({ metric: 'ex.err', timestamp: t0 + 60 + j, value: j, tags: { host: 'h1' } });
    await store(more);
    await page.click('#status-refresh');
    await page.waitForFunction(n => document.querySelector('#status-table tr[data-stat="points-in"] td:last-child')
      .textContent.startsWith(`${n} `), {}, written);
    assert.match(await row('points-in'), new RegExp(`^${written} \\(\\d+\\.\\d/s\\)$`));
    const rate = +(/\(([\d.]+)\/s\)/.exec(await row('points-in'))[1]);
    assert.ok(rate > 0, `${rate}/s after 50 points`);
    await page.screenshot({ path: join(outDir, 'status.png') });
    await page.close();
  });

  test('explorer: metrics by prefix, series per tag value from /api/search/lookup', async () => {
    const page = await newPage();
    await openPage(page, 'explore', '#explore-prefix');
    await page.type('#explore-prefix', 'ex.');
    await page.click('#explore-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#explore-metrics button').length === 2);
    assert.deepEqual(await page.$$eval('#explore-metrics button', bs => bs.map(b => b.textContent)), ['ex.err', 'ex.req']);
    await page.click('#explore-metrics li:nth-child(2) button');
    await page.waitForSelector('#explore-series table');
    assert.match(page.url(), /#page=explore&metric=ex\.req$/);
    assert.match(await page.$eval('#explore-series .summary', p => p.textContent), /^6 series, 2 tag keys /);
    const counts = await page.$$eval('#explore-series tbody tr', trs => trs.map(tr => [tr.dataset.tagk, tr.dataset.tagv,
      +tr.querySelector('.count').textContent]));
    // by hand from SERIES: dc east 2, west 3; each host once
    assert.deepEqual(counts, [['dc', 'west', 3], ['dc', 'east', 2],
      ...SERIES.map(([h]) => ['host', h, 1])]);
    await page.screenshot({ path: join(outDir, 'explore.png') });
    // "group by" dc: the graph of ex.req{dc=*}, one series per dc
    await page.click('#explore-series tbody tr[data-tagk="dc"] a');
    await page.waitForFunction(() => window.octsdbUI.plot && window.octsdbUI.plot.series.length === 3);
    assert.deepEqual(page.queries.at(-1).searchParams.getAll('m'), ['sum:ex.req{dc=*}']);
    assert.equal(await page.$eval('#page-graph', s => s.hidden), false);
    await page.close();
  });

  test('explorer: the chosen metric is in the URL; Back returns to the one before; the link opens it', async () => {
    const page = await newPage();
    await openPage(page, 'explore', '#explore-metrics button');
    const summary = () => page.$eval('#explore-series .summary', p => p.textContent);
    const pick = async name => {
      await page.click(`#explore-metrics button[data-name="${name}"]`);
      await page.waitForFunction(n => document.querySelector('#explore-series h3')?.textContent === n, {}, name);
    };
    await pick('ex.err');
    assert.match(page.url(), /#page=explore&metric=ex\.err$/);
    assert.match(await summary(), /^1 series, 1 tag key /);
    await pick('ex.req');
    assert.match(page.url(), /#page=explore&metric=ex\.req$/);
    assert.match(await summary(), new RegExp(`^${SERIES.length} series, 2 tag keys `));
    // Back: ex.err again, its button the chosen one
    await page.goBack();
    await page.waitForFunction(() => document.querySelector('#explore-series h3')?.textContent === 'ex.err');
    assert.match(await summary(), /^1 series, 1 tag key /);
    assert.deepEqual(await page.$$eval('#explore-metrics button[aria-pressed="true"]', bs => bs.map(b => b.textContent)), ['ex.err']);
    // Back once more: no metric chosen
    await page.goBack();
    await page.waitForFunction(() => !document.querySelector('#explore-series h3'));
    assert.match(page.url(), /#page=explore$/);
    // the link in a new page
    const copy = await newPage();
    await copy.goto(`${tsd.base}/#page=explore&metric=other.metric`);
    await copy.waitForFunction(() => document.querySelector('#explore-series h3')?.textContent === 'other.metric');
    assert.deepEqual(await copy.$$eval('#explore-series tbody tr', trs => trs.map(tr => [tr.dataset.tagk, tr.dataset.tagv])),
      [['host', 'h1']]);
    await copy.close();
    await page.close();
  });

  test('UID browser: the UID /api/uid/assign gave, by name and back', async () => {
    const r = await fetch(`${tsd.base}/api/uid/assign?metric=ui.assigned`);
    assert.equal(r.status, 200);
    const uid = (await r.json()).metric['ui.assigned'];
    assert.match(uid, /^[0-9A-F]+$/);
    const page = await newPage();
    await openPage(page, 'uids', '#uid-name');
    await page.select('#uid-kind', 'metric');
    await page.type('#uid-name', 'ui.assigned');
    await page.keyboard.press('Escape');
    await page.click('#uid-name-form button[type=submit]');
    await page.waitForSelector('#uid-result tbody tr');
    assert.deepEqual(await cells(page, '#uid-result tbody'), [['metric', 'ui.assigned', uid]]);
    // a glob over every kind: the tag key host, and h1..h6 the tag values
    await page.select('#uid-kind', '');
    await page.$eval('#uid-name', i => { i.value = 'h*'; });
    await page.click('#uid-name-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#uid-result tbody tr').length === 7);
    assert.deepEqual((await cells(page, '#uid-result tbody')).map(r => r.slice(0, 2)),
      [['tagk', 'host'], ...SERIES.map(([h]) => ['tagv', h])]);
    // the UID back to its name
    await page.type('#uid-hex', uid);
    await page.select('#uid-hex-kind', 'metric');
    await page.click('#uid-hex-form button[type=submit]');
    await page.waitForFunction(u => document.querySelector('#uid-result tbody tr td:last-child')?.textContent === u
      && document.querySelectorAll('#uid-result tbody tr').length === 1, {}, uid);
    assert.deepEqual(await cells(page, '#uid-result tbody'), [['metric', 'ui.assigned', uid]]);
    // an unknown one: the API's message in place
    const missing = await (await fetch(`${tsd.base}/api/uid/uidmeta?uid=FFFFFE&type=metric`)).json();
    await page.$eval('#uid-hex', i => { i.value = 'fffffe'; });
    await page.click('#uid-hex-form button[type=submit]');
    await page.waitForSelector('#uid-result .error-text');
    assert.equal(await page.$eval('#uid-result .error-text', p => p.textContent), missing.error.message);
    await page.close();
  });

  test("logs: the daemon's recent lines, filtered", async () => {
    const page = await newPage();
    await openPage(page, 'logs', '#logs-table tbody tr');
    const lines = await (await fetch(`${tsd.base}/logs?json`)).json();
    const rows = await cells(page, '#logs-table tbody');
    // newest first, as /logs gives them: time, level, thread, component, message
    assert.deepEqual(rows, lines.map(l => {
      const [ts, level, thread, comp, ...msg] = l.split('\t');
      return [new Date(ts * 1000).toISOString().replace('.000Z', 'Z'), level, thread, comp, msg.join('\t')];
    }));
    const port = new URL(tsd.base).port;
    assert.ok(rows.some(r => r[4] === `Ready to serve on 127.0.0.1:${port}`), 'the start-up line');
    await page.type('#logs-filter', 'ready to');
    const shown = await cells(page, '#logs-table tbody');
    assert.deepEqual(shown.map(r => r[4]), rows.map(r => r[4]).filter(m => /ready to/i.test(m)));
    assert.equal(await page.$eval('#logs-count', s => s.textContent), `${shown.length} of ${rows.length} lines`);
    await page.close();
  });

  test('no page logged an error or threw', () => {
    assert.deepEqual(pageErrors, []);
  });
});

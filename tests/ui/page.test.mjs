// page.test.mjs -- the UI in Debian's chromium against a real TSD filled
// with known data. Expectations come from the data written here (hand
// arithmetic) or from /api directly, never from the page's own code.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiQuery, download, launchBrowser, legend, outDir, pageHelpers, put, startTsd } from './lib.mjs';

// 3 hosts x 2 cpus, one point a minute for 30 minutes ending a minute ago:
// sys.cpu.user{host=web0<h>,cpu=<c>} at t0+60j is 100h + 10c + j, so
// sum by host is 200h + 10 + 2j and its rate 2/60 per second.
const HOSTS = [1, 2, 3], CPUS = [0, 1], N = 30;
const t0 = Math.floor(Date.now() / 60000) * 60 - (N + 1) * 60;
const END = t0 + (N - 1) * 60;
const METRICS = ['sys.cpu.user', 'sys.cpu.system', 'sys.mem.free', 'proc.loadavg.1m'];

let tsd, browser;
const pageErrors = [];

let newPage, open, graph;

// The form as the user sees it.
const formValues = page => page.$$eval('fieldset.query', fss => fss.map(fs => ({
  metric: fs.querySelector('.metric').value,
  agg: fs.querySelector('.agg').value,
  ds: [fs.querySelector('.ds-interval').value, fs.querySelector('.ds-fn').value, fs.querySelector('.ds-fill').value],
  rate: [fs.querySelector('.rate').checked, fs.querySelector('.counter').checked,
    fs.querySelector('.counter-max').value, fs.querySelector('.reset-value').value],
  tags: [...fs.querySelectorAll('.tag')].map(r => [r.querySelector('.tagk').value,
    r.querySelector('.tagv').value, r.querySelector('.groupby').checked]),
})));

before(async () => {
  [tsd, browser] = await Promise.all([startTsd('page'), launchBrowser()]);
  ({ newPage, open, graph } = pageHelpers(browser, tsd.base, pageErrors));
  const pts = [];
  for (const h of HOSTS)
    for (const c of CPUS)
      for (let j = 0; j < N; j++)
        pts.push({ metric: 'sys.cpu.user', timestamp: t0 + 60 * j, value: 100 * h + 10 * c + j,
          tags: { host: `web0${h}`, cpu: String(c) } });
  for (const m of METRICS.slice(1)) pts.push({ metric: m, timestamp: t0, value: 1, tags: { host: 'web01' } });
  await put(tsd.base, pts);
});

after(async () => {
  await browser?.close();
  await tsd?.stop();
});

// Types text as a fast typist does, as one burst of real key events: every
// keyDown and keyUp is sent to the browser before the first is answered.
// (puppeteer's keyboard.type waits for each key's answer before sending the
// next: on a loaded machine that wait alone can outlast the page's debounce,
// and each pause then rightly costs a suggest call.)
async function typeBurst(page, text) {
  const cdp = await page.createCDPSession();
  const sent = [];
  for (const ch of text) {
    const key = { key: ch, text: ch, unmodifiedText: ch };
    sent.push(cdp.send('Input.dispatchKeyEvent', { type: 'keyDown', ...key }),
      cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key: ch }));
  }
  await Promise.all(sent);
  await cdp.detach();
}

describe('web UI', () => {
  test('typing sys.c lists the sys.c* metrics within 500 ms, in at most 2 suggest calls', async () => {
    const page = await newPage();
    await page.goto(`${tsd.base}/`);
    await page.waitForSelector('fieldset.query .metric');
    await page.evaluate(() => {
      const input = document.querySelector('.metric');
      window.timing = { keys: [] };
      input.addEventListener('keydown', () => { window.timing.keys.push(window.timing.lastKey = performance.now()); });
      new MutationObserver(() => {
        const names = [...document.querySelectorAll('.ac li')].map(li => li.textContent);
        if (names.includes('sys.cpu.user') && !window.timing.listed) window.timing.listed = performance.now();
      }).observe(document.body, { subtree: true, childList: true });
    });
    await page.focus('.metric');
    await typeBurst(page, 'sys.c');
    await page.waitForFunction(() => window.timing.listed, { timeout: 2000 });
    const { keys, lastKey, listed } = await page.evaluate(() => window.timing);
    assert.equal(keys.length, 5);
    const gaps = keys.slice(1).map((k, i) => Math.round(k - keys[i]));
    assert.ok(listed - lastKey < 500, `listed ${Math.round(listed - lastKey)} ms after the last key (gaps ${gaps} ms)`);
    const shown = await page.$$eval('.ac li', lis => lis.map(li => li.textContent));
    assert.deepEqual(shown, METRICS.filter(m => m.startsWith('sys.c')).sort());
    assert.ok(page.suggests.length >= 1 && page.suggests.length <= 2, `${page.suggests.length} suggest calls (gaps ${gaps} ms)`);
    assert.equal(page.suggests.at(-1).searchParams.get('q'), 'sys.c');
    // keyboard: the second entry, taken with Enter
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    assert.equal(await page.$eval('.metric', i => i.value), 'sys.cpu.user');
    assert.equal(await page.$$eval('.ac li', lis => lis.length), 0);
    await page.close();
  });

  test('tag key and value autocomplete', async () => {
    const page = await newPage();
    await page.goto(`${tsd.base}/`);
    await page.waitForSelector('.add-tag');
    await page.click('.add-tag');
    await page.keyboard.type('ho'); // the new row's key has the focus
    await page.waitForFunction(() => [...document.querySelectorAll('.ac li')].some(li => li.textContent === 'host'));
    await page.keyboard.press('Enter');
    assert.equal(await page.$eval('.tagk', i => i.value), 'host');
    await page.focus('.tagv');
    await page.keyboard.type('web');
    await page.waitForFunction(() => document.querySelectorAll('.ac li').length === 3);
    assert.deepEqual(await page.$$eval('.ac li', lis => lis.map(li => li.textContent)), ['web01', 'web02', 'web03']);
    assert.equal(page.suggests.at(-1).searchParams.get('type'), 'tagv');
    await page.close();
  });

  test('{host=*} plots one series per host with the right values under the cursor', async () => {
    const page = await newPage();
    const m = 'sum:sys.cpu.user{host=*}';
    await open(page, `start=${t0}&end=${END}&m=${m}`);
    const [status, api] = await apiQuery(tsd.base, t0, END, [m]);
    assert.equal(status, 200);
    assert.equal(api.length, HOSTS.length);
    const rows = await legend(page);
    assert.equal(rows.length, api.length);
    assert.deepEqual(rows.map(r => r[0]), HOSTS.map(h => `sys.cpu.user{host=web0${h}}`));
    for (const j of [0, 7, N - 1]) {
      const at = await page.evaluate(t => {
        const u = window.octsdbUI.plot, box = u.over.getBoundingClientRect();
        // the first and last points lie on the edges: stay just inside
        const x = Math.min(Math.max(u.valToPos(t, 'x'), 1), box.width - 1);
        return { x: box.left + x, y: box.top + box.height / 2 };
      }, t0 + 60 * j);
      await page.mouse.move(at.x, at.y);
      await page.waitForFunction(t => {
        const u = window.octsdbUI.plot;
        return u.cursor.idx != null && u.data[0][u.cursor.idx] === t;
      }, { timeout: 2000 }, t0 + 60 * j);
      const vals = await legend(page);
      assert.deepEqual(vals.map(r => Number(r[1])), HOSTS.map(h => 200 * h + 10 + 2 * j), `minute ${j}`);
    }
    await page.screenshot({ path: join(outDir, 'groupby-hover-light.png') });
    // a click on a legend entry hides that series, a second shows it again
    const shown = () => page.evaluate(() => window.octsdbUI.plot.series.slice(1).map(s => s.show));
    await page.click('.u-legend .u-series:nth-child(3) .u-label');
    assert.deepEqual(await shown(), [true, false, true]);
    await page.click('.u-legend .u-series:nth-child(3) .u-label');
    assert.deepEqual(await shown(), [true, true, true]);
    await page.close();
  });

  test('rate, counter and downsample options reach the request; the link rebuilds the view', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user{host=*}`);
    const set = async (sel, v) => {
      await page.$eval(sel, el => { el.value = ''; });
      await page.type(sel, v);
    };
    await set('.ds-interval', '5m');
    await page.select('.ds-fn', 'max');
    await page.select('.ds-fill', 'zero');
    await page.click('.rate');
    await page.click('.counter');
    await set('.counter-max', '1000');
    await set('.reset-value', '5');
    await graph(page);
    const sent = page.queries.at(-1);
    assert.deepEqual(sent.searchParams.getAll('m'), ['sum:5m-max-zero:rate{counter,1000,5}:sys.cpu.user{host=*}']);
    assert.equal(sent.searchParams.get('start'), String(t0));
    assert.equal(sent.searchParams.get('end'), String(END));
    const [, api] = await apiQuery(tsd.base, t0, END, sent.searchParams.getAll('m'));
    const drawn = await page.evaluate(() => window.octsdbUI.plot.data.slice(1).map(s => s.filter(v => v != null)));
    assert.deepEqual(drawn, api.map(s => s.dps.map(p => p[1])));

    // the same URL in a new page: same form, same chart
    const url = page.url();
    assert.match(url, /#start=\d+&end=\d+&m=sum:5m-max-zero:rate\{counter,1000,5\}:sys\.cpu\.user\{host=\*\}/);
    const copy = await newPage();
    await copy.goto(url);
    await copy.waitForFunction(() => window.octsdbUI && window.octsdbUI.runs > 0);
    assert.deepEqual(await formValues(copy), await formValues(page));
    assert.deepEqual(await formValues(copy), [{ metric: 'sys.cpu.user', agg: 'sum', ds: ['5m', 'max', 'zero'],
      rate: [true, true, '1000', '5'], tags: [['host', '*', true]] }]);
    assert.deepEqual(await copy.$eval('#start', i => i.value), String(t0));
    assert.deepEqual(await legend(copy).then(r => r.map(x => x[0])), await legend(page).then(r => r.map(x => x[0])));
    assert.deepEqual(await copy.evaluate(() => window.octsdbUI.plot.data.map(s => Array.from(s))),
      await page.evaluate(() => window.octsdbUI.plot.data.map(s => Array.from(s))));
    // Back returns to the view before Graph was pressed
    await page.goBack();
    await page.waitForFunction(() => document.querySelector('.ds-interval').value === '');
    assert.equal((await formValues(page))[0].rate[0], false);
    await page.close();
    await copy.close();
  });

  test('two queries on one chart: both m= in one request, all their series drawn', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user{host=*}`);
    await page.click('#add-query');
    await page.keyboard.type('sys.cpu.system'); // the new query's metric has the focus
    await page.keyboard.press('Escape');
    await page.select('fieldset.query:nth-of-type(2) .agg', 'max');
    await graph(page);
    const ms = page.queries.at(-1).searchParams.getAll('m');
    assert.deepEqual(ms, ['sum:sys.cpu.user{host=*}', 'max:sys.cpu.system']);
    const [, api] = await apiQuery(tsd.base, t0, END, ms);
    assert.equal(api.length, HOSTS.length + 1);
    assert.deepEqual((await legend(page)).map(r => r[0]),
      [...HOSTS.map(h => `sys.cpu.user{host=web0${h}}`), 'sys.cpu.system{host=web01}']);
    // sys.cpu.system has one point, 1 at t0: the fourth column holds it alone
    const col = await page.evaluate(() => Array.from(window.octsdbUI.plot.data[4]));
    assert.deepEqual(col, [1, ...new Array(N - 1).fill(null)]);
    await page.close();
  });

  test("an old OpenTSDB link (#start=...&m=sum:rate:...{host=*}&o=&ylog...) opens the same view", async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=sum:rate:sys.cpu.user%7Bhost=*%7D&o=&ylog&key=out%20right&wxh=800x600`);
    assert.deepEqual(await formValues(page), [{ metric: 'sys.cpu.user', agg: 'sum', ds: ['', 'avg', ''],
      rate: [true, false, '', ''], tags: [['host', '*', true]] }]);
    assert.deepEqual(page.queries.at(-1).searchParams.getAll('m'), ['sum:rate:sys.cpu.user{host=*}']);
    // one series per host, each rising 2 per minute: 2/60 per second
    const data = await page.evaluate(() => window.octsdbUI.plot.data.slice(1).map(s => Array.from(s)));
    assert.equal(data.length, HOSTS.length);
    for (const s of data) {
      const vals = s.filter(v => v != null);
      assert.equal(vals.length, N - 1);
      for (const v of vals) assert.ok(Math.abs(v - 2 / 60) < 1e-9, `rate ${v}`);
    }
    // ylog is OpenTSDB's log scale, key=out right its legend beside the
    // chart; the o= (no options) is read, its other keys survive a round trip
    assert.equal(await page.evaluate(() => window.octsdbUI.plot.scales.y.distr), 3);
    assert.equal(await page.$eval('#ylog', c => c.checked), true);
    assert.equal(await page.$eval('#key', s => s.value), 'right');
    const [chartBox, legendBox] = await page.evaluate(() => [window.octsdbUI.plot.over, document.querySelector('.u-legend')]
      .map(e => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right }; }));
    assert.ok(legendBox.left >= chartBox.right, 'the legend is right of the chart');
    await graph(page);
    assert.match(page.url(), /&ylog&key=out%20right&wxh=800x600$/);
    await page.close();
  });

  test('a query in progress shows its time and can be cancelled', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user`);
    assert.equal(await page.$eval('#cancel', b => b.hidden), true);
    // the next query is held in the browser: a TSD that does not answer
    await page.setRequestInterception(true);
    let held = null;
    page.on('request', r => {
      if (new URL(r.url()).pathname === '/api/query') held = r;
      else r.continue();
    });
    const failed = new Promise(resolve => {
      page.on('requestfailed', r => resolve(r.failure()?.errorText));
      setTimeout(() => resolve('not aborted within 5 s'), 5000);
    });
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.click('#graph');
    await page.waitForFunction(() => /^querying… [1-9]\.\d s$/.test(document.getElementById('status').textContent),
      { timeout: 5000 });
    assert.ok(held, 'the query was sent');
    assert.equal(await page.$eval('#cancel', b => b.hidden), false);
    await page.click('#cancel');
    assert.equal(await failed, 'net::ERR_ABORTED');
    await page.waitForFunction(() => document.getElementById('cancel').hidden);
    assert.equal(await page.$eval('#status', e => e.textContent), 'cancelled');
    assert.equal(await page.$eval('#error', e => e.hidden), true);
    assert.equal(await page.evaluate(() => window.octsdbUI.runs), runs, 'a cancelled query is not a finished one');
    await page.close();
  });

  test('query history: the queries that answered, newest first, kept across reloads', async () => {
    const page = await newPage();
    await page.goto(`${tsd.base}/`);
    await page.evaluate(() => localStorage.removeItem('octsdb.history'));
    const a = `start=${t0}&end=${END}&m=sum:sys.cpu.user{host=*}`;
    const b = `start=${t0}&end=${END}&m=max:sys.cpu.system`;
    await open(page, a);
    let runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.evaluate(f => { location.hash = f; }, b);
    await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.evaluate(() => { location.hash = 'start=1h-ago&m=sum:no.such.metric'; }); // refused: not kept
    await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    await page.reload();
    await page.waitForFunction(() => window.octsdbUI && window.octsdbUI.runs > 0);
    const options = () => page.$$eval('#history option', os => os.slice(1).map(o => o.value));
    assert.deepEqual(await options(), [b, a]);
    runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.select('#history', a);
    await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    assert.equal(new URL(page.url()).hash, '#' + a);
    assert.deepEqual(page.queries.at(-1).searchParams.getAll('m'), ['sum:sys.cpu.user{host=*}']);
    assert.deepEqual(await options(), [a, b]);
    await page.close();
  });

  test("a bad metric shows the API's error in place, and no exception", async () => {
    const page = await newPage();
    const before = pageErrors.length;
    await open(page, 'start=1h-ago&m=sum:no.such.metric{host=*}');
    const [status, api] = await apiQuery(tsd.base, '1h-ago', null, ['sum:no.such.metric{host=*}']);
    assert.equal(status, 400);
    assert.equal(await page.$eval('#error', e => e.hidden), false);
    assert.equal(await page.$eval('#error', e => e.textContent), api.error.message);
    assert.match(api.error.message, /no\.such\.metric/);
    assert.equal(await page.evaluate(() => window.octsdbUI.plot), null);
    // a known metric with nothing in the range: an empty answer, said so
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.evaluate(f => { location.hash = f; }, `start=${t0 - 7200}&end=${t0 - 3600}&m=sum:sys.cpu.user`);
    await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    assert.deepEqual((await apiQuery(tsd.base, t0 - 7200, t0 - 3600, ['sum:sys.cpu.user']))[1], []);
    assert.equal(await page.$eval('#chart', e => e.textContent), 'No data for this query in this time range.');
    assert.equal(await page.$eval('#error', e => e.hidden), true);
    // a malformed m= is refused by the page itself, in place as well
    await open(page, 'start=1h-ago&m=sum:x{host');
    await page.waitForFunction(() => /unbalanced/.test(document.getElementById('error').textContent));
    // and a good query afterwards clears the error
    await page.evaluate(f => { location.hash = f; }, `start=${t0}&end=${END}&m=sum:sys.cpu.user`);
    await page.waitForFunction(() => window.octsdbUI.plot !== null);
    assert.equal(await page.$eval('#error', e => e.hidden), true);
    assert.equal(pageErrors.length, before, pageErrors.join('\n'));
    await page.close();
  });

  test('dark theme follows prefers-color-scheme and the switch', async () => {
    const page = await newPage({ dark: true });
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user{host=*}`);
    const colours = () => page.evaluate(() => ({
      bg: getComputedStyle(document.body).backgroundColor,
      fg: getComputedStyle(document.body).color,
      axis: window.octsdbUI.plot.axes[0].stroke(window.octsdbUI.plot),
    }));
    // the dark palette of style.css: --bg #12151c, --fg #e3e7ee
    assert.deepEqual(await colours(), { bg: 'rgb(18, 21, 28)', fg: 'rgb(227, 231, 238)', axis: '#e3e7ee' });
    await page.screenshot({ path: join(outDir, 'groupby-dark.png'), fullPage: true });
    await page.click('#theme'); // auto -> light, whatever the system says
    assert.deepEqual(await colours(), { bg: 'rgb(255, 255, 255)', fg: 'rgb(29, 35, 48)', axis: '#1d2330' });
    await page.click('#theme'); // -> dark
    assert.equal((await colours()).bg, 'rgb(18, 21, 28)');
    await page.click('#theme'); // -> auto again (the choice is kept in localStorage)
    await page.close();
  });

  test('y range (from zero by default), and times in UTC', async () => {
    const page = await newPage();
    await page.emulateTimezone('America/New_York');
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user{host=*}`);
    const y = () => page.evaluate(() => [window.octsdbUI.plot.scales.y.min, window.octsdbUI.plot.scales.y.max]);
    assert.equal((await y())[0], 0, 'all values are positive: the axis starts at zero');
    assert.equal(await page.$eval('#axes-box', d => d.open), false, 'no axis setting: folded away');
    await page.click('#axes-box summary');
    await page.type('#ymin', '100');
    await page.type('#ymax', '1000');
    await graph(page);
    assert.match(page.url(), /&yrange=\[100:1000\]/);
    assert.deepEqual(await y(), [100, 1000]);
    // the legend's time under the cursor, in New York and then in UTC
    const t = t0 + 60 * 7;
    const hover = async () => {
      const at = await page.evaluate(tt => {
        const u = window.octsdbUI.plot, box = u.over.getBoundingClientRect();
        return { x: box.left + u.valToPos(tt, 'x'), y: box.top + box.height / 2 };
      }, t);
      await page.mouse.move(at.x, at.y);
      await page.waitForFunction(tt => { const u = window.octsdbUI.plot; return u.data[0][u.cursor.idx] === tt; }, {}, t);
      return page.$eval('.u-legend .u-series .u-value', e => e.textContent);
    };
    const d = new Date(t * 1000);
    const fmt = (Y, M, D, h, m) => `${Y}-${String(M).padStart(2, '0')}-${String(D).padStart(2, '0')} ` +
      `${h % 12 || 12}:${String(m).padStart(2, '0')}${h < 12 ? 'am' : 'pm'}`;
    const utc = fmt(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes());
    assert.notEqual(await hover(), utc, 'New York is not UTC');
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.click('#utc');
    await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    assert.match(page.url(), /&tz=utc/);
    assert.equal(await hover(), utc);
    assert.deepEqual(await y(), [100, 1000], 'the range is kept');
    await page.close();
  });

  test('a drag on the chart narrows the range, Back restores it', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user{host=*}`);
    const px = t => page.evaluate(tt => {
      const u = window.octsdbUI.plot, box = u.over.getBoundingClientRect();
      return { x: box.left + u.valToPos(tt, 'x'), y: box.top + box.height / 2 };
    }, t);
    const a = await px(t0 + 5 * 60), b = await px(t0 + 15 * 60);
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move((a.x + b.x) / 2, a.y, { steps: 3 });
    await page.mouse.move(b.x, b.y, { steps: 3 });
    await page.mouse.up();
    await page.waitForFunction(n => window.octsdbUI.runs > n, { timeout: 10000 }, runs);
    const sent = page.queries.at(-1);
    const start = +sent.searchParams.get('start'), end = +sent.searchParams.get('end');
    // a pixel is about 1.6 s here: the range is the dragged one to the second or two
    assert.ok(Math.abs(start - (t0 + 300)) <= 3 && Math.abs(end - (t0 + 900)) <= 3, `zoomed to ${start - t0}..${end - t0}`);
    assert.equal(await page.$eval('#start', i => i.value), String(start));
    const js = [];
    for (let j = 0; j < N; j++) if (t0 + 60 * j >= start && t0 + 60 * j <= end) js.push(j);
    const data = await page.evaluate(() => window.octsdbUI.plot.data.map(s => Array.from(s)));
    assert.deepEqual(data[0], js.map(j => t0 + 60 * j));
    assert.deepEqual(data.slice(1), HOSTS.map(h => js.map(j => 200 * h + 10 + 2 * j)));
    // Back: the whole range again
    const runs2 = await page.evaluate(() => window.octsdbUI.runs);
    await page.goBack();
    await page.waitForFunction(n => window.octsdbUI.runs > n, { timeout: 10000 }, runs2);
    assert.equal(page.queries.at(-1).searchParams.get('start'), String(t0));
    assert.equal(page.queries.at(-1).searchParams.get('end'), String(END));
    assert.equal(await page.$eval('#start', i => i.value), String(t0));
    assert.equal(await page.evaluate(() => window.octsdbUI.plot.data[0].length), N);
    await page.close();
  });

  test('auto-refresh queries again while on, and not after off', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user&refresh=1`);
    assert.equal(await page.$eval('#refresh', s => s.value), '1');
    const first = page.queries.length;
    await new Promise(r => setTimeout(r, 3300));
    const on = page.queries.length - first;
    assert.ok(on >= 2 && on <= 4, `${on} queries in 3.3 s at 1 s`);
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.select('#refresh', '0');
    await page.waitForFunction(n => window.octsdbUI.runs > n, { timeout: 10000 }, runs);
    assert.doesNotMatch(page.url(), /refresh=/);
    const off = page.queries.length;
    await new Promise(r => setTimeout(r, 2500));
    assert.equal(page.queries.length, off, 'no query after refresh was turned off');
    await page.close();
  });

  test('table, JSON and CSV views agree with /api/query', async () => {
    const page = await newPage();
    const m = 'sum:sys.cpu.user{host=*}';
    await open(page, `start=${t0}&end=${END}&m=${m}`);
    const [, api] = await apiQuery(tsd.base, t0, END, [m]);
    const asked = page.queries.length;
    await page.click('#views [data-view="table"]');
    await page.waitForSelector('#table-series tbody tr');
    assert.match(page.url(), /&view=table$/);
    const rows = await page.$$eval('#table-series tbody tr', trs => trs.map(tr => [...tr.cells].map(td => td.textContent)));
    assert.deepEqual(rows, HOSTS.map(h => [`sys.cpu.user{host=web0${h}}`, String(N),
      new Date(t0 * 1000).toISOString().replace('.000Z', 'Z'), new Date(END * 1000).toISOString().replace('.000Z', 'Z'),
      String(200 * h + 10 + 2 * (N - 1)), String(200 * h + 10), String(200 * h + 10 + 2 * (N - 1))]));
    await page.click('#views [data-view="json"]');
    await page.waitForFunction(() => !document.getElementById('json').hidden);
    assert.deepEqual(JSON.parse(await page.$eval('#json', e => e.textContent)), api);
    // the CSV as the user gets it: a download
    const csv = (await download(page, '#csv', 'octsdb.csv')).toString('utf8');
    const lines = csv.trim().split('\n');
    assert.equal(lines[0], 'timestamp,' + HOSTS.map(h => `sys.cpu.user{host=web0${h}}`).join(','));
    assert.equal(lines.length, N + 1);
    lines.slice(1).forEach((l, j) => assert.equal(l, [t0 + 60 * j, ...HOSTS.map(h => 200 * h + 10 + 2 * j)].join(',')));
    assert.equal(page.queries.length, asked, 'switching views asks nothing');
    // the view is in the link too
    const copy = await newPage();
    await copy.goto(page.url());
    await copy.waitForFunction(() => !document.getElementById('json').hidden && document.getElementById('json').textContent);
    assert.deepEqual(JSON.parse(await copy.$eval('#json', e => e.textContent)), api);
    await copy.close();
    await page.bringToFront(); // a background tab runs no animation frames: clicks would wait forever
    await page.click('#views [data-view="chart"]');
    await page.waitForFunction(() => !document.getElementById('chart').hidden);
    assert.equal(await page.$$eval('.u-legend .u-series', r => r.length), HOSTS.length + 1);
    await page.close();
  });

  test('the table lists, per query, the series it reads with their last points from /api/query/last', async () => {
    const page = await newPage();
    // a group-by, and a query whose second braces filter (literal_or): the
    // table holds the series each one reads, not its output series
    const ms = ['sum:sys.cpu.user{host=*}', 'max:sys.cpu.user{cpu=*}{host=literal_or(web01|web03)}'];
    await open(page, `start=${t0}&end=${END}&${ms.map(m => 'm=' + m).join('&')}&view=table`);
    await page.waitForFunction(() => document.querySelectorAll('#table-last table').length === 2);
    const parts = await page.$$eval('#table-last h4', hs => hs.map(h => h.textContent));
    assert.deepEqual(parts, ms.map((m, i) => `query ${i + 1}: ${m}`));
    const tables = await page.$$eval('#table-last table', ts => ts.map(t =>
      [...t.tBodies[0].rows].map(tr => [...tr.cells].map(td => td.textContent))));
    // each series' last point was written at END: 100h + 10c + (N - 1)
    const expect = hosts => hosts.flatMap(h => CPUS.map(c => [c, h])).sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .map(([c, h]) => ['sys.cpu.user', `cpu=${c},host=web0${h}`, new Date(END * 1000).toISOString().replace('.000Z', 'Z'),
        String(100 * h + 10 * c + N - 1)]);
    assert.deepEqual(tables, [expect(HOSTS), expect([1, 3])]);
    // asked of /api/query/last: the answer's TSUIDs, names resolved, back
    // to the range's start (about 31 minutes ago: 2 hours)
    const asked = await page.evaluate(() => performance.getEntriesByType('resource')
      .filter(e => /\/api\/query\/last$/.test(e.name)).length);
    assert.equal(asked, 2);
    await page.screenshot({ path: join(outDir, 'table-last.png'), fullPage: true });
    await page.close();
  });

  test('no page logged an error or threw', () => {
    assert.deepEqual(pageErrors, []);
  });
});

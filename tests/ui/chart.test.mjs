// chart.test.mjs -- the chart's options and the query builder's finer
// parts in Debian's chromium against a real TSD: the right axis, per-axis
// range, label, format and log scale, the legend's places and its table,
// showing one series alone, annotations (drawn, and made on the chart),
// the PNG, every filter type, the automatic downsample interval and the
// date pickers. Expectations come from the data written here.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiQuery, download, launchBrowser, legend, outDir, pageHelpers, put, startTsd } from './lib.mjs';

// sys.cpu.user{host=web0<h>} at t0+60j is 100h + j (h = 1..3, j < N);
// sys.mem.free{host=web01} is 1e9 + 1e6 j.
const HOSTS = [1, 2, 3], N = 30;
const t0 = Math.floor(Date.now() / 60000) * 60 - (N + 1) * 60;
const END = t0 + (N - 1) * 60;
const NOTE_AT = t0 + 600; // a global note
const SERIES_NOTE_AT = t0 + 300; // a note on web01's series
let web01; // its TSUID
const CPU = 'sum:sys.cpu.user{host=*}';

let tsd, browser, newPage, open, graph;
const pageErrors = [];

before(async () => {
  [tsd, browser] = await Promise.all([startTsd('chart'), launchBrowser()]);
  ({ newPage, open, graph } = pageHelpers(browser, tsd.base, pageErrors));
  const pts = [];
  for (const h of HOSTS)
    for (let j = 0; j < N; j++)
      pts.push({ metric: 'sys.cpu.user', timestamp: t0 + 60 * j, value: 100 * h + j, tags: { host: `web0${h}` } });
  for (let j = 0; j < N; j++)
    pts.push({ metric: 'sys.mem.free', timestamp: t0 + 60 * j, value: 1e9 + 1e6 * j, tags: { host: 'web01' } });
  await put(tsd.base, pts);
  const r = await fetch(`${tsd.base}/api/annotation`, { method: 'POST',
    body: JSON.stringify({ startTime: NOTE_AT, description: 'deploy 42' }) });
  assert.equal(r.status, 200);
  // and one on web01's series alone
  const look = await (await fetch(`${tsd.base}/api/search/lookup?m=sys.cpu.user{host=web01}`)).json();
  assert.equal(look.results.length, 1);
  web01 = look.results[0].tsuid;
  const r2 = await fetch(`${tsd.base}/api/annotation`, { method: 'POST',
    body: JSON.stringify({ startTime: SERIES_NOTE_AT, description: 'disk swap', tsuid: web01 }) });
  assert.equal(r2.status, 200);
});

after(async () => {
  await browser?.close();
  await tsd?.stop();
});

// Moves the mouse over minute j of the chart; waits until the cursor is there.
async function hover(page, j) {
  const t = t0 + 60 * j;
  const at = await page.evaluate(tt => {
    const u = window.octsdbUI.plot, box = u.over.getBoundingClientRect();
    const x = Math.min(Math.max(u.valToPos(tt, 'x'), 1), box.width - 1);
    return { x: box.left + x, y: box.top + box.height / 2 };
  }, t);
  await page.mouse.move(at.x, at.y);
  await page.waitForFunction(tt => { const u = window.octsdbUI.plot; return u.data[0][u.cursor.idx] === tt; }, {}, t);
}

// Annotate, a click dy pixels below the point (t, v) of the y axis, text,
// Save; returns what the form said the note was on. Waits for the redraw.
async function noteOnPoint(page, t, v, dy, text) {
  await page.click('#annotate');
  const p = await page.evaluate((tt, vv) => {
    const u = window.octsdbUI.plot, box = u.over.getBoundingClientRect();
    return { x: box.left + u.valToPos(tt, 'x'), y: box.top + u.valToPos(vv, 'y') };
  }, t, v);
  await page.mouse.click(p.x, p.y + dy);
  await page.waitForSelector('#ann-form:not([hidden])');
  const on = await page.$eval('#ann-target', s => s.selectedOptions[0].textContent);
  await page.type('#ann-text', text);
  const runs = await page.evaluate(() => window.octsdbUI.runs);
  await page.click('#ann-form button[type=submit]');
  await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
  return on;
}

const shown = page => page.evaluate(() => window.octsdbUI.plot.series.slice(1).map(s => s.show));

describe('chart', () => {
  test('a query on the right axis (o=axis x1y2) gets its own scale, label, format and log scale', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=${CPU}&m=sum:sys.mem.free&o=axis%20x1y2` +
      '&ylabel=cpu&y2label=bytes&y2format=%25.2s%20%25cB&y2range=[0:]');
    assert.deepEqual(await page.$$eval('fieldset.query .y2', cs => cs.map(c => c.checked)), [false, true]);
    const info = await page.evaluate(() => {
      const u = window.octsdbUI.plot;
      return {
        scales: u.series.slice(1).map(s => s.scale),
        y: [u.scales.y.min, u.scales.y.max], y2: [u.scales.y2.min, u.scales.y2.max],
        axes: u.axes.slice(1).map(a => [a.scale, a.side, a.label]),
      };
    });
    assert.deepEqual(info.scales, ['y', 'y', 'y', 'y2']);
    // both from zero (all values positive); each up to its own data
    assert.equal(info.y[0], 0);
    assert.ok(info.y[1] >= 329 && info.y[1] < 1000, `y up to ${info.y[1]}`);
    assert.equal(info.y2[0], 0);
    assert.ok(info.y2[1] >= 1.029e9, `y2 up to ${info.y2[1]}`);
    // y on the left (side 3), y2 on the right (side 1), with their labels
    assert.deepEqual(info.axes, [['y', 3, 'cpu'], ['y2', 1, 'bytes']]);
    // the legend shows y2's values in y2's format: 1e9 + 1e6 j bytes
    await hover(page, 20);
    const vals = (await legend(page)).map(r => r[1]);
    assert.deepEqual(vals, [...HOSTS.map(h => String(100 * h + 20)), '1.02 GB']);
    // the y2 axis's ticks too
    const ticks = await page.evaluate(() => window.octsdbUI.plot.axes[2]._values);
    assert.ok(ticks.length > 1 && ticks.every(t => / [kMG]?B$/.test(t)), ticks.join('|'));
    await page.screenshot({ path: join(outDir, 'y2-axis.png'), fullPage: true });
    // log scale on y2 alone
    await page.click('#y2log');
    await page.waitForFunction(() => /&y2log/.test(location.hash) && window.octsdbUI.plot);
    await page.waitForFunction(() => window.octsdbUI.plot.scales.y2.distr === 3);
    assert.equal(await page.evaluate(() => window.octsdbUI.plot.scales.y.distr), 1);
    // the o= pairs with its m= in the link, as OpenTSDB's UI writes it
    assert.match(page.url(), /m=sum:sys\.cpu\.user\{host=\*\}&o=&m=sum:sys\.mem\.free&o=axis%20x1y2&/);
    await page.close();
  });

  test('the legend above, hidden, or as a table with last/min/max/avg; Ctrl+click shows one series alone', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=${CPU}&key=top`);
    const box = sel => page.$eval(sel, e => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; });
    assert.ok((await box('.u-legend')).bottom <= (await box('.u-over')).top, 'the legend is above the chart');
    // Ctrl+click: that series alone; again: all of them
    await page.keyboard.down('Control');
    await page.click('.u-legend .u-series:nth-child(3) .u-label');
    assert.deepEqual(await shown(page), [false, true, false]);
    await page.click('.u-legend .u-series:nth-child(3) .u-label');
    await page.keyboard.up('Control');
    assert.deepEqual(await shown(page), [true, true, true]);
    // none
    await page.select('#key', 'none');
    await page.waitForFunction(() => /&nokey/.test(location.hash) && window.octsdbUI.plot && !document.querySelector('.u-legend'));
    // the table legend: per host 100h + j for j < N
    await page.select('#key', 'bottom');
    await page.click('#legend-table');
    await page.waitForFunction(() => /&legend=table/.test(location.hash) && document.querySelector('.legend-table'));
    assert.doesNotMatch(page.url(), /key=|nokey/);
    const rows = () => page.$$eval('.legend-table tbody tr', trs => trs.map(tr => [...tr.cells].map(td => td.textContent)));
    const expect = HOSTS.map(h => [`sys.cpu.user{host=web0${h}}`, '', String(100 * h + N - 1), String(100 * h),
      String(100 * h + N - 1), String(100 * h + (N - 1) / 2)]);
    assert.deepEqual(await rows(), expect);
    await hover(page, 3);
    assert.deepEqual((await rows()).map(r => r[1]), HOSTS.map(h => String(100 * h + 3)));
    await page.screenshot({ path: join(outDir, 'legend-table.png'), fullPage: true });
    // a click hides, Ctrl+click shows one alone
    await page.click('.legend-table tbody tr:nth-child(1)');
    assert.deepEqual(await shown(page), [false, true, true]);
    await page.keyboard.down('Control');
    await page.click('.legend-table tbody tr:nth-child(3)');
    await page.keyboard.up('Control');
    assert.deepEqual(await shown(page), [false, false, true]);
    assert.deepEqual(await page.$$eval('.legend-table tbody tr', trs => trs.map(t => t.classList.contains('off'))), [true, true, false]);
    await page.close();
  });

  test('annotations: the TSD\'s (global and a series\') are drawn on the time axis; one made on the chart is stored', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=${CPU}`);
    assert.equal(page.queries.at(-1).searchParams.get('global_annotations'), 'true');
    const markers = () => page.$$eval('.ann', ms => ms.map(m => ({ t: +m.dataset.time, title: m.title,
      x: m.getBoundingClientRect().left + m.getBoundingClientRect().width / 2 })));
    const xOf = t => page.evaluate(tt => {
      const u = window.octsdbUI.plot;
      return u.over.getBoundingClientRect().left + u.valToPos(tt, 'x');
    }, t);
    let ms = await markers();
    assert.deepEqual(ms.map(m => m.t), [SERIES_NOTE_AT, NOTE_AT]);
    assert.match(ms[0].title, new RegExp(`disk swap .*series ${web01}`));
    assert.match(ms[1].title, /deploy 42/);
    for (const m of ms) assert.ok(Math.abs(m.x - await xOf(m.t)) < 1, 'a marker is at its time');
    // make one: Annotate, a click at minute 20, a description, Save
    const at = t0 + 20 * 60;
    await page.click('#annotate');
    const x = await xOf(at);
    // low on the plot, far from any line (every value is 100 or more): a global note
    const y = await page.$eval('.u-over', e => e.getBoundingClientRect().bottom - 10);
    await page.mouse.click(x, y);
    await page.waitForSelector('#ann-form:not([hidden])');
    await page.type('#ann-text', 'restarted web02');
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.click('#ann-form button[type=submit]');
    await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    const r = await fetch(`${tsd.base}/api/annotations?start_time=${t0}&end_time=${END}`);
    const notes = await r.json();
    assert.equal(notes.length, 2);
    const mine = notes.find(n => n.description === 'restarted web02');
    // a pixel is about 1.5 s here
    assert.ok(mine && Math.abs(mine.startTime - at) <= 3, JSON.stringify(notes));
    ms = await markers();
    assert.deepEqual(ms.map(m => m.t), [SERIES_NOTE_AT, NOTE_AT, mine.startTime]);
    assert.equal(await page.$eval('#ann-form', f => f.hidden), true);
    await page.close();
  });

  test('a click on a series\' point makes a note on that series (its TSUID)', async () => {
    const look = await (await fetch(`${tsd.base}/api/search/lookup?m=sys.cpu.user{host=web02}`)).json();
    assert.equal(look.results.length, 1);
    const web02 = look.results[0].tsuid;
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=${CPU}`);
    // web02's point at minute 12: 100 * 2 + 12
    const j = 12, at = t0 + 60 * j;
    assert.equal(await noteOnPoint(page, at, 200 + j, 3, 'web02 swapped a disk'), 'sys.cpu.user{host=web02}');
    // stored on web02's series, at the point's own time
    const r = await fetch(`${tsd.base}/api/annotation?tsuid=${web02}&start_time=${at}`);
    assert.equal(r.status, 200);
    const note = await r.json();
    assert.deepEqual([note.tsuid, note.startTime, note.description], [web02, at, 'web02 swapped a disk']);
    // not a global one
    const globals = await (await fetch(`${tsd.base}/api/annotations?start_time=${t0}&end_time=${END}`)).json();
    assert.ok(!globals.some(n => n.description === 'web02 swapped a disk'), JSON.stringify(globals));
    // drawn with the others, naming its series
    const mine = await page.$$eval('.ann', (ms, tt) => ms.filter(m => +m.dataset.time === tt).map(m => m.title), at);
    assert.equal(mine.length, 1);
    assert.match(mine[0], new RegExp(`web02 swapped a disk .*series ${web02}`));
    // a series summing all three hosts (600 + 3j): a note on each of them
    const all = (await (await fetch(`${tsd.base}/api/search/lookup?m=sys.cpu.user`)).json()).results.map(x => x.tsuid);
    assert.equal(all.length, HOSTS.length);
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user`);
    const k = 25, at2 = t0 + 60 * k;
    assert.equal(await noteOnPoint(page, at2, 600 + 3 * k, -2, 'rack power'), 'sys.cpu.user (each of its 3 series)');
    for (const id of all) {
      const n = await (await fetch(`${tsd.base}/api/annotation?tsuid=${id}&start_time=${at2}`)).json();
      assert.deepEqual([n.tsuid, n.startTime, n.description], [id, at2, 'rack power']);
    }
    await page.close();
  });

  test('PNG export: the chart as drawn, and its legend beneath', async () => {
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=${CPU}`);
    const png = await download(page, '#png', 'octsdb.png');
    assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);
    assert.equal(png.toString('latin1', 12, 16), 'IHDR');
    const [w, h] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    const canvas = await page.evaluate(() => [window.octsdbUI.plot.ctx.canvas.width, window.octsdbUI.plot.ctx.canvas.height]);
    assert.equal(w, canvas[0]);
    assert.ok(h > canvas[1], `${h} rows for a chart of ${canvas[1]}`);
    // decoded by the browser: the top is the chart's canvas pixel for pixel,
    // the rest holds each series' colour (its swatch)
    const cmp = await page.evaluate(async b64 => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const u = window.octsdbUI.plot, src = u.ctx.canvas;
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const a = ctx.getImageData(0, 0, src.width, src.height).data;
      // uPlot's canvas is transparent: on the page's background, as seen
      const seen = document.createElement('canvas');
      seen.width = src.width;
      seen.height = src.height;
      const sctx = seen.getContext('2d');
      sctx.fillStyle = getComputedStyle(document.body).backgroundColor;
      sctx.fillRect(0, 0, src.width, src.height);
      sctx.drawImage(src, 0, 0);
      const s = sctx.getImageData(0, 0, src.width, src.height).data;
      let diff = 0;
      for (let i = 0; i < a.length; i++) if (a[i] !== s[i]) diff++;
      const band = ctx.getImageData(0, src.height, c.width, c.height - src.height).data;
      const counts = u.series.slice(1).map(se => {
        const hex = se.stroke(u, 1);
        const rgb = [1, 3, 5].map(k => parseInt(hex.slice(k, k + 2), 16));
        let n = 0;
        for (let i = 0; i < band.length; i += 4) if (band[i] === rgb[0] && band[i + 1] === rgb[1] && band[i + 2] === rgb[2]) n++;
        return n;
      });
      return { diff, counts };
    }, png.toString('base64'));
    assert.equal(cmp.diff, 0);
    assert.equal(cmp.counts.length, HOSTS.length);
    for (const n of cmp.counts) assert.ok(n >= 50, `swatch pixels: ${cmp.counts}`);
    await page.close();
  });
});

describe('query builder', () => {
  // What each filter of /api/config/filters keeps of web01..web03.
  const FILTERS = {
    literal_or: ['web01|web03', [1, 3]],
    iliteral_or: ['WEB02', [2]],
    not_literal_or: ['web01', [2, 3]],
    not_iliteral_or: ['WEB01|web02', [3]],
    wildcard: ['web0*', [1, 2, 3]],
    iwildcard: ['*EB03', [3]],
    regexp: ['^web0[12]$', [1, 2]],
  };

  test('every filter type of /api/config/filters reaches the request and selects what it should', async () => {
    const names = Object.keys(await (await fetch(`${tsd.base}/api/config/filters`)).json()).sort();
    assert.deepEqual(names, Object.keys(FILTERS).sort(), 'a filter type the test does not know');
    const page = await newPage();
    await open(page, `start=${t0}&end=${END}&m=sum:sys.cpu.user{host=*}`);
    assert.deepEqual(await page.$$eval('.tag .ftype option', os => os.map(o => o.value)), ['', ...names]);
    for (const name of names) {
      const [arg, hosts] = FILTERS[name];
      await page.select('.tag .ftype', name);
      await page.$eval('.tag .tagv', i => { i.value = ''; });
      await page.type('.tag .tagv', arg);
      await page.keyboard.press('Escape');
      await graph(page);
      const m = `sum:sys.cpu.user{host=${name}(${arg})}`;
      assert.deepEqual(page.queries.at(-1).searchParams.getAll('m'), [m]);
      assert.deepEqual((await legend(page)).map(r => r[0]), hosts.map(h => `sys.cpu.user{host=web0${h}}`), name);
      const [, api] = await apiQuery(tsd.base, t0, END, [m]);
      assert.equal(api.length, hosts.length);
    }
    // the link rebuilds the row: the type in its menu, the argument alone
    const copy = await newPage();
    await open(copy, new URL(page.url()).hash.slice(1));
    assert.deepEqual(await copy.$eval('.tag', r => [r.querySelector('.ftype').value, r.querySelector('.tagv').value]),
      [names.at(-1), FILTERS[names.at(-1)][0]]);
    await copy.close();
    await page.close();
  });

  test('an automatic downsample interval from the chart\'s width; date pickers; quick picks', async () => {
    const page = await newPage();
    await page.emulateTimezone('Asia/Tokyo'); // UTC+9, no daylight saving
    const week = 7 * 86400;
    await open(page, `start=${END - week}&end=${END}&m=sum:auto-avg:sys.cpu.user`);
    assert.equal(await page.$eval('.ds-interval', i => i.value), 'auto');
    // a week over the plot's width (about 1,150 px): 500-odd seconds a
    // pixel, so 10m, the first of 1s 2s 5s 10s 15s 30s 1m 2m 5m 10m ... that is enough
    const px = await page.evaluate(() => window.octsdbUI.plot.bbox.width / devicePixelRatio);
    assert.ok(week / px > 300 && week / px <= 600, `${px} px`);
    assert.deepEqual(page.queries.at(-1).searchParams.getAll('m'), ['sum:10m-avg:sys.cpu.user']);
    assert.match(page.url(), /m=sum:auto-avg:sys\.cpu\.user/);
    // 10-minute averages of 100 + j, 200 + j, 300 + j: bucket k holds the
    // minutes whose time falls in it
    const want = new Map();
    for (let j = 0; j < N; j++) {
      const b = Math.floor((t0 + 60 * j) / 600) * 600;
      if (!want.has(b)) want.set(b, []);
      want.get(b).push(HOSTS.reduce((s, h) => s + 100 * h + j, 0));
    }
    const drawn = await page.evaluate(() => [Array.from(window.octsdbUI.plot.data[0]), Array.from(window.octsdbUI.plot.data[1])]);
    assert.deepEqual(drawn[0], [...want.keys()]);
    assert.deepEqual(drawn[1], [...want.values()].map(v => v.reduce((a, b) => a + b) / v.length));
    // the date picker shows the start in Tokyo time and sets it
    // (a picker leaves out :00 seconds)
    const tokyo = s => new Date((s + 9 * 3600) * 1000).toISOString().slice(0, 19).replace(/:00$/, '');
    assert.equal(await page.$eval('#start-pick', i => i.value), tokyo(END - week));
    const pick = async (sel, v) => {
      const runs = await page.evaluate(() => window.octsdbUI.runs);
      await page.$eval(sel, (i, val) => { i.value = val; i.dispatchEvent(new Event('change', { bubbles: true })); }, v);
      await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    };
    await pick('#start-pick', tokyo(t0));
    assert.equal(await page.$eval('#start', i => i.value), String(t0));
    assert.equal(page.queries.at(-1).searchParams.get('start'), String(t0));
    // with UTC on, the picker speaks UTC
    await page.click('#utc');
    await page.waitForFunction(() => /tz=utc/.test(location.hash));
    const utc = s => new Date(s * 1000).toISOString().slice(0, 19).replace(/:00$/, '');
    assert.equal(await page.$eval('#start-pick', i => i.value), utc(t0));
    await pick('#end-pick', utc(t0 + 600));
    assert.equal(page.queries.at(-1).searchParams.get('end'), String(t0 + 600));
    // a quick pick: relative again, up to now
    const runs = await page.evaluate(() => window.octsdbUI.runs);
    await page.click('.picks button[data-start="6h-ago"]');
    await page.waitForFunction(n => window.octsdbUI.runs > n, {}, runs);
    assert.equal(page.queries.at(-1).searchParams.get('start'), '6h-ago');
    assert.equal(page.queries.at(-1).searchParams.get('end'), null);
    await page.close();
  });

  test('no page logged an error or threw', () => {
    assert.deepEqual(pageErrors, []);
  });
});

// form.js -- the query builder: state -> form (render) and form -> state
// (read). One <fieldset class="query"> per query, one tag row per tag; the
// axes, legend and times above them.
import { emptyQuery, keyPos, parseRange, parseTime } from './state.js';
import { attachSuggest } from './suggest.js';

const $ = (root, sel) => root.querySelector(sel);

// unix seconds <-> an <input type=datetime-local>'s value, in local time or UTC
const pad = n => String(n).padStart(2, '0');
function toPicker(s, utc) {
  const d = new Date(s * 1000);
  const f = utc ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()];
  return `${f[0]}-${pad(f[1])}-${pad(f[2])}T${pad(f[3])}:${pad(f[4])}:${pad(f[5])}`;
}
function fromPicker(v, utc) {
  const ms = utc ? Date.parse(v + 'Z') : new Date(v).getTime();
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

// A tag value as typed, or as type(value) for a filter of the TSD's.
function splitFilter(v, names) {
  const m = /^(\w+)\((.*)\)$/s.exec(v);
  return m && names.includes(m[1]) ? [m[1], m[2]] : ['', v];
}

export class QueryForm {
  // aggs: the aggregator names from /api/aggregators; filterNames: the
  // filter types from /api/config/filters.
  constructor(form, aggs, filterNames) {
    this.form = form;
    this.aggs = aggs;
    this.filterNames = filterNames;
    this.box = $(form, '#queries');
    $(form, '#add-query').addEventListener('click', () => this.addQuery(emptyQuery()).querySelector('.metric').focus());
    for (const b of form.querySelectorAll('.picks button'))
      b.addEventListener('click', () => {
        $(form, '#start').value = b.dataset.start;
        $(form, '#end').value = '';
        form.requestSubmit();
      });
    // a picked date becomes an absolute time (unix seconds) and is graphed
    for (const id of ['start', 'end'])
      $(form, `#${id}-pick`).addEventListener('change', () => {
        const s = fromPicker($(form, `#${id}-pick`).value, $(form, '#utc').checked);
        if (s === null) return;
        $(form, `#${id}`).value = String(s);
        form.requestSubmit();
      });
  }

  // The pickers show the times the text fields stand for (now for none).
  syncPickers(utc) {
    const now = Math.floor(Date.now() / 1000);
    for (const id of ['start', 'end']) {
      const s = parseTime($(this.form, `#${id}`).value || (id === 'start' ? '1h-ago' : ''), now, utc);
      $(this.form, `#${id}-pick`).value = s === null ? '' : toPicker(s, utc);
    }
  }

  render(st) {
    $(this.form, '#start').value = st.start || '';
    $(this.form, '#end').value = st.end || '';
    for (const a of ['y', 'y2']) {
      const [lo, hi] = parseRange(st[a + 'range']);
      $(this.form, `#${a}min`).value = lo ?? '';
      $(this.form, `#${a}max`).value = hi ?? '';
      $(this.form, `#${a}label`).value = st[a + 'label'] || '';
      $(this.form, `#${a}format`).value = st[a + 'format'] || '';
      $(this.form, `#${a}log`).checked = !!st[a + 'log'];
    }
    $(this.form, '#key').value = keyPos(st.key);
    $(this.form, '#legend-table').checked = st.legend === 'table';
    // axis and legend settings in use are shown (never hidden by a redraw)
    if (['range', 'label', 'format', 'log'].some(f => st['y' + f] || st['y2' + f]) || st.key !== '' || st.legend)
      $(this.form, '#axes-box').open = true;
    $(this.form, '#utc').checked = !!st.utc;
    this.syncPickers(!!st.utc);
    this.box.replaceChildren();
    const qs = st.queries.length ? st.queries : [emptyQuery()];
    for (const q of qs) this.addQuery(q);
  }

  read() {
    const queries = [...this.box.querySelectorAll('fieldset.query')].map(fs => ({
      metric: $(fs, '.metric').value.trim(),
      agg: $(fs, '.agg').value,
      tags: [...fs.querySelectorAll('.tag')].map(r => ({
        k: $(r, '.tagk').value.trim(),
        v: $(r, '.ftype').value ? `${$(r, '.ftype').value}(${$(r, '.tagv').value.trim()})` : $(r, '.tagv').value.trim(),
        groupBy: $(r, '.groupby').checked,
      })).filter(t => t.k && t.v),
      dsInterval: $(fs, '.ds-interval').value.trim(),
      dsFn: $(fs, '.ds-fn').value,
      dsFill: $(fs, '.ds-fill').value,
      rate: $(fs, '.rate').checked,
      counter: $(fs, '.counter').checked,
      counterMax: $(fs, '.counter-max').value.trim(),
      resetValue: $(fs, '.reset-value').value.trim(),
      axis: $(fs, '.y2').checked ? 'y2' : '',
    })).filter(q => q.metric);
    const st = {
      start: $(this.form, '#start').value.trim(), end: $(this.form, '#end').value.trim(), queries,
      keyPos: $(this.form, '#key').value, legend: $(this.form, '#legend-table').checked ? 'table' : '',
      utc: $(this.form, '#utc').checked,
    };
    for (const a of ['y', 'y2']) {
      const lo = $(this.form, `#${a}min`).value.trim(), hi = $(this.form, `#${a}max`).value.trim();
      st[a + 'range'] = lo || hi ? `[${lo}:${hi}]` : '';
      st[a + 'label'] = $(this.form, `#${a}label`).value.trim();
      st[a + 'format'] = $(this.form, `#${a}format`).value.trim();
      st[a + 'log'] = $(this.form, `#${a}log`).checked;
    }
    return st;
  }

  addQuery(q) {
    const fs = document.getElementById('query-template').content.firstElementChild.cloneNode(true);
    const fill = (sel, names, value) => {
      const s = $(fs, sel);
      // a name the TSD did not list (an old link) is kept, not silently changed
      const all = names.includes(value) || !value ? names : [...names, value];
      s.replaceChildren(...all.map(n => new Option(n, n)));
      s.value = value;
    };
    fill('.agg', this.aggs, q.agg || 'sum');
    fill('.ds-fn', this.aggs.filter(a => a !== 'none'), q.dsFn || 'avg');
    const metric = $(fs, '.metric');
    metric.value = q.metric;
    attachSuggest(metric, 'metrics');
    $(fs, '.ds-interval').value = q.dsInterval;
    $(fs, '.ds-fill').value = q.dsFill;
    $(fs, '.rate').checked = q.rate;
    $(fs, '.counter').checked = q.counter;
    $(fs, '.counter-max').value = q.counterMax;
    $(fs, '.reset-value').value = q.resetValue;
    $(fs, '.y2').checked = q.axis === 'y2';
    for (const t of q.tags) this.addTag(fs, t);
    $(fs, '.add-tag').addEventListener('click', () => this.addTag(fs, { k: '', v: '', groupBy: true }).querySelector('.tagk').focus());
    $(fs, '.remove-query').addEventListener('click', () => {
      fs.remove();
      if (!this.box.children.length) this.addQuery(emptyQuery());
    });
    this.box.append(fs);
    return fs;
  }

  addTag(fs, t) {
    const row = document.getElementById('tag-template').content.firstElementChild.cloneNode(true);
    const [ftype, fval] = splitFilter(t.v, this.filterNames);
    const sel = $(row, '.ftype');
    sel.append(...this.filterNames.map(n => new Option(n, n)));
    sel.value = ftype;
    $(row, '.tagk').value = t.k;
    $(row, '.tagv').value = fval;
    $(row, '.groupby').checked = t.groupBy;
    attachSuggest($(row, '.tagk'), 'tagk');
    attachSuggest($(row, '.tagv'), 'tagv');
    $(row, '.remove-tag').addEventListener('click', () => row.remove());
    $(fs, '.tags').append(row);
    return row;
  }
}

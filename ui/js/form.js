// form.js -- the query builder: state -> form (render) and form -> state
// (read). One <fieldset class="query"> per query, one tag row per tag.
import { emptyQuery, parseRange } from './state.js';
import { attachSuggest } from './suggest.js';

const $ = (root, sel) => root.querySelector(sel);

export class QueryForm {
  // aggs: the aggregator names from /api/aggregators.
  constructor(form, aggs) {
    this.form = form;
    this.aggs = aggs;
    this.box = $(form, '#queries');
    $(form, '#add-query').addEventListener('click', () => this.addQuery(emptyQuery()).querySelector('.metric').focus());
    for (const b of form.querySelectorAll('.picks button'))
      b.addEventListener('click', () => {
        $(form, '#start').value = b.dataset.start;
        $(form, '#end').value = '';
        form.requestSubmit();
      });
  }

  render(st) {
    $(this.form, '#start').value = st.start || '';
    $(this.form, '#end').value = st.end || '';
    const [lo, hi] = parseRange(st.yrange);
    $(this.form, '#ymin').value = lo ?? '';
    $(this.form, '#ymax').value = hi ?? '';
    $(this.form, '#ylog').checked = !!st.ylog;
    $(this.form, '#utc').checked = !!st.utc;
    this.box.replaceChildren();
    const qs = st.queries.length ? st.queries : [emptyQuery()];
    for (const q of qs) this.addQuery(q);
  }

  read() {
    const queries = [...this.box.querySelectorAll('fieldset.query')].map(fs => ({
      metric: $(fs, '.metric').value.trim(),
      agg: $(fs, '.agg').value,
      tags: [...fs.querySelectorAll('.tag')].map(r => ({
        k: $(r, '.tagk').value.trim(), v: $(r, '.tagv').value.trim(), groupBy: $(r, '.groupby').checked,
      })).filter(t => t.k && t.v),
      dsInterval: $(fs, '.ds-interval').value.trim(),
      dsFn: $(fs, '.ds-fn').value,
      dsFill: $(fs, '.ds-fill').value,
      rate: $(fs, '.rate').checked,
      counter: $(fs, '.counter').checked,
      counterMax: $(fs, '.counter-max').value.trim(),
      resetValue: $(fs, '.reset-value').value.trim(),
    })).filter(q => q.metric);
    const lo = $(this.form, '#ymin').value.trim(), hi = $(this.form, '#ymax').value.trim();
    return {
      start: $(this.form, '#start').value.trim(), end: $(this.form, '#end').value.trim(), queries,
      yrange: lo || hi ? `[${lo}:${hi}]` : '', ylog: $(this.form, '#ylog').checked, utc: $(this.form, '#utc').checked,
    };
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
    $(row, '.tagk').value = t.k;
    $(row, '.tagv').value = t.v;
    $(row, '.groupby').checked = t.groupBy;
    attachSuggest($(row, '.tagk'), 'tagk');
    attachSuggest($(row, '.tagv'), 'tagv');
    $(row, '.remove-tag').addEventListener('click', () => row.remove());
    $(fs, '.tags').append(row);
    return row;
  }
}

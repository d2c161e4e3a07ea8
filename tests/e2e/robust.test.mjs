// The page as a course hosts it and a class uses it: it cannot die (hostile links and text, and a crash still
// keeps the user's text), it never freezes (heavy input runs in a worker while the page draws and answers the
// next edit), it works from any path, labs from other sites say where they come
// from and a course can refuse them, and a link pasted into an open tab opens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite } from './site.mjs';
import { pastePattern, patternText } from './pattern.mjs';

const SHOTS = new URL('../../test-results/', import.meta.url).pathname;
// A share link as the page writes one (src/share.rs): version 1, raw deflate, URL-safe base64.
const link = (json) => `1.${deflateRawSync(Buffer.from(json)).toString('base64url')}`;

// A CUDA loop of 66,000 passes over a 1024-thread block: 32 warps x 66,000 issues of one load (and a store).
const LOOP = '__global__ void k(const float *in, float *out) {\n  float s = 0;\n'
  + '  for (int i = 0; i < 66000; i++) s += in[i * 1024 + threadIdx.x];\n  out[threadIdx.x] = s;\n}\n';
const loopPane = (cc) => ({ cc, lang: 'cuda', text: LOOP, op: 'LDG.E.32', block: '1024', grid: '1' });
// 20,000 lines of SASS, each a load: 20,000 memory instructions.
const SASS = Array.from({ length: 20000 }, (_, i) => `LDG.E R${4 + (i % 100)}, [R2.64+0x${(i * 4).toString(16)}] ;`).join('\n');
const lab = (extra, pattern, lang = 'cuda') => `title = "Loop lab"\n${extra}\n[[exercise]]\nid = "loop"\ntitle = "1. A long loop"\n`
  + `text = "Sum a column."\nlang = "${lang}"\npattern = """\n${pattern}"""\ncc = "8.0"\nblock = "1024"\n`
  + '[[exercise.goal]]\ncheck = "sectors <= 4"\ntext = "at most 4 sectors"\n';
const BIG_LAB = lab(`# ${'x'.repeat(30e6)}`, '4*lane', 'expr');

let site, browser, base;
before(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startSite({ files: { '/labs/loop.toml': lab('', LOOP), '/labs/big.toml': BIG_LAB } });
  ({ browser, base } = site);
});
after(async () => { await site?.close(); });

async function open(url, viewport) {
  const page = await browser.newPage(viewport ? { viewport } : {});
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
  await page.goto(url);
  return { page, problems };
}
const settled = (page, timeout = 120000) => page.waitForFunction(() => !document.querySelector('[data-busy]'), null, { timeout });
const text = (page, sel) => page.locator(sel).first().textContent();

// 1. The page cannot die.

test('killer links and text leave the page alive, with notices in plain words', async () => {
  const deep = '['.repeat(10000) + ']'.repeat(10000);
  const nested = 'this link is damaged or cut short: its data nests more than 16 levels deep; a warpscope view nests 3. Showing the default view instead.';
  const notView = 'this link is damaged or cut short: its data is not a warpscope view. Showing the default view instead.';
  const cases = [
    ['', `{"panes":[{"sets":${deep}}]}`, nested],
    ['', `{"step":${deep}}`, nested],
    ['?embed', `{"panes":[{"sets":${deep}}]}`, nested],
    ['?embed', `{"step":${deep}}`, nested],
    ['', '{"panes":[{"cc":80}]}', notView],
    ['', '{"theme":"purple"}', notView],
    ['', '5', notView],
    ['', '[1,2]', notView],
    ['', '{"panes":[null]}', notView],
    ['', `{"panes":[{"text":"${'a'.repeat(2e6)}"}]}`,
      'this link is damaged or cut short: it unpacks to more than 1048576 bytes, more than any warpscope view. Showing the default view instead.'],
  ];
  for (const [query, json, notice] of cases) {
    const l = link(json);
    const { page, problems } = await open(`${base}${query}#${l}`);
    await page.waitForSelector('#notice');
    await page.waitForSelector('svg#figure');
    // The sets and step links are the 84- and 60-character killers.
    assert.equal((await text(page, '#notice')).replace(/×$/, ''), notice, `${query} ${json.slice(0, 30)} (${l.length} chars)`);
    assert.equal(await page.locator('#crash').count(), 0);
    assert.deepEqual(problems, []);
    await page.close();
  }
  // 4*lane and 10,000 more terms: refused at the 198th + (each operator of a chain counts one level of the
  // 200 allowed), and the next edit is answered. 4*lane over 32 lanes of 4 bytes: 4 sectors.
  const { page, problems } = await open(base);
  await page.waitForSelector('svg#figure');
  await pastePattern(page, `4*lane${'+lane'.repeat(10000)}`);
  await settled(page);
  assert.match(await text(page, '#error'), /^pattern 1:992: expression nested more than 200 deep/);
  await pastePattern(page, '4*lane');
  await settled(page);
  assert.equal(await text(page, '#pane-a [data-metric="sectors"]'), '4');
  assert.equal(await page.locator('#crash').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('when the page stops on a bug, the rescue screen keeps the text and a reload brings it back', async () => {
  for (const query of ['', '?embed']) {
    const view = link(JSON.stringify({ panes: [{ cc: '8.0', lang: 'expr', text: '8*lane + 4', op: 'LDG.E.32', block: '32', grid: '1' }] }));
    const { page, problems } = await open(`${base}${query}#${view}`);
    await page.waitForSelector('svg#figure');
    await settled(page);
    // An error the page survives (a script's TypeError) is not a crash.
    await page.evaluate(() => setTimeout(() => { throw new TypeError('not fatal'); }));
    await page.waitForTimeout(200);
    assert.equal(await page.locator('#crash').count(), 0, `${query}: a TypeError is no crash`);
    // A trap of the page's module (what a panic ends in with panic=abort, or a stack overflow) is: it reaches
    // the window uncaught, as from any event handler of the module.
    await page.evaluate(() => setTimeout(() => { throw new WebAssembly.RuntimeError('unreachable'); }));
    await page.waitForSelector('#crash');
    assert.equal(await text(page, '#crash p'),
      'warpscope hit a bug and stopped. Your text is saved, and the link keeps your view: reload to continue where you were.');
    assert.equal(await text(page, '#crash .crash-detail'), 'What went wrong: RuntimeError: unreachable');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('warpscope-rescue')), '8*lane + 4');
    await page.screenshot({ path: join(SHOTS, `robust-rescue${query ? '-embed' : ''}.png`) });
    await page.click('#crash-reload');
    await page.waitForSelector('#notice');
    assert.match(await text(page, '#notice'), /warpscope restarted after a bug; your text was restored/);
    if (!query) assert.equal(await patternText(page), '8*lane + 4');
    // 8*lane + 4 on 32 lanes of 4 bytes: bytes 4 to 255, 8 sectors.
    await settled(page);
    if (!query) assert.equal(await text(page, '#pane-a [data-metric="sectors"]'), '8');
    assert.deepEqual(problems.filter((p) => !/not fatal|unreachable/.test(p)), []);
    await page.close();
  }
});

// 2. Never freeze. What is checked here is where the work runs and what the page does meanwhile, never how
//    long a task took: the main-thread task lengths under the same heavy input are measured by .ci/perf.mjs
//    (section 4) and recorded with the performance figures, where a loaded machine cannot fail a correct main.

// A loop far too long to finish within the test (66 million passes: about half an hour of analysis).
const ENDLESS = LOOP.replace('66000', '66000000');

test('heavy input runs off the main thread: progress shows, the page keeps drawing, a newer edit wins', async () => {
  // Typed: the CUDA loop (66,000 passes, 1024 threads).
  {
    const { page, problems } = await open(base);
    await page.waitForSelector('svg#figure');
    await page.selectOption('#lang', 'cuda');
    await page.fill('#block', '1024');
    await settled(page);
    await pastePattern(page, LOOP);
    // A run of about a second: its progress shows while it goes.
    await page.waitForSelector('#progress');
    assert.match(await text(page, '#progress .run-text'), /^Running the block · \d+\.\d s$/);
    await settled(page);
    // 66,000 x 32 warps x 4 sectors of the coalesced load = 8,448,000.
    assert.equal(await text(page, '#pane-a [data-metric="sectors"]'), '8,448,000');
    assert.equal(await page.locator('#pass').getAttribute('type'), 'number', '66,000 passes: a number field, not a menu');
    // Stepping to another pass of it.
    await page.fill('#pass', '65000');
    await page.locator('#pass').dispatchEvent('change');
    await settled(page);
    assert.match(await text(page, '#caption'), /./);
    assert.deepEqual(problems, []);
    await page.close();
  }
  // A run that would take half an hour: the page draws frames and takes input while it goes (the analysis
  // is in a worker; on the main thread no frame could be drawn until it ended), and the next edit is
  // answered at once: the old run is stopped, not waited for (the settled wait below is far shorter).
  {
    const { page, problems } = await open(base);
    await page.waitForSelector('svg#figure');
    await page.selectOption('#lang', 'cuda');
    await page.fill('#block', '1024');
    await settled(page);
    await pastePattern(page, ENDLESS);
    await page.waitForSelector('#progress');
    const drawn = await page.evaluate(() => new Promise((done) => {
      let frames = 0;
      const tick = () => (++frames === 3 ? done(document.querySelector('#progress .run-text')?.textContent ?? null) : requestAnimationFrame(tick));
      requestAnimationFrame(tick);
    }));
    assert.match(drawn ?? '', /^Running the block · \d+\.\d s$/, 'three frames drawn while the run goes on');
    await pastePattern(page, LOOP.replace('66000', '2'));
    await settled(page);
    // 2 x 32 warps x 4 sectors.
    assert.equal(await text(page, '#pane-a [data-metric="sectors"]'), '256');
    assert.equal(await page.locator('#progress').count(), 0);
    assert.deepEqual(problems, []);
    await page.close();
  }
  // As a link, alone and in compare mode.
  for (const panes of [[loopPane('8.0')], [loopPane('8.0'), loopPane('7.0')]]) {
    const { page, problems } = await open(`${base}#${link(JSON.stringify({ panes }))}`);
    await page.waitForSelector('svg#figure');
    await settled(page);
    assert.deepEqual(await page.locator('[data-metric="sectors"]').allTextContents(), panes.map(() => '8,448,000'));
    assert.deepEqual(problems, []);
    await page.close();
  }
  // 20,000 lines of SASS: 20,000 instructions, listed 200 at a time.
  {
    const { page, problems } = await open(base);
    await page.waitForSelector('svg#figure');
    await page.selectOption('#lang', 'sass');
    await page.fill('#sets', 'R2=0x1000, R3=0');
    await settled(page);
    await pastePattern(page, SASS);
    await settled(page);
    assert.equal(await page.locator('.instructions li').count(), 200);
    assert.equal(await text(page, '#instr-window'), 'Instructions 1–200 of 20,000, around the selected one. show instruction ');
    await page.fill('#instr-go', '15000');
    await page.locator('#instr-go').dispatchEvent('change');
    await settled(page);
    assert.equal(await text(page, '#instr-window'), 'Instructions 14900–15099 of 20,000, around the selected one. show instruction ');
    assert.match(await page.locator('.instructions li.selected .access').textContent(), /^line 15000: /);
    assert.deepEqual(problems, []);
    await page.close();
  }
  // A lab whose starting pattern is the loop, and a 30 MB lab file.
  {
    const { page, problems } = await open(`${base}?lab=loop`);
    await page.waitForSelector('#lab #goals li');
    await settled(page);
    assert.match(await text(page, '#goals'), /✘ at most 4 sectors/);
    assert.deepEqual(problems, []);
    await page.close();
  }
  {
    const { page, problems } = await open(`${base}?lab=big`);
    await page.waitForSelector('#notice');
    // This test's server answers in chunks, without a Content-Length: the worker stops reading at 1 MB.
    assert.equal((await text(page, '#notice')).replace(/×$/, ''),
      `${base}labs/big.toml is larger than 1 MB; warpscope reads at most 1 MB (1,048,576 bytes) here`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

// 3. Host anywhere.

test('dist/ served under a sub-path: the page, an analysis, a lab and a share link work there', async () => {
  const sub = await startSite({ prefix: '/course/warpscope/' });
  try {
    const page = await sub.browser.newPage();
    const missing = [];
    page.on('response', (r) => { if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) missing.push(`${r.status()} ${r.url()}`); });
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e}`));
    await page.goto(sub.base);
    await page.waitForSelector('svg#figure');
    await pastePattern(page, '4*lane');
    await settled(page);
    assert.equal(await text(page, '#pane-a [data-metric="sectors"]'), '4');
    // The share link points under the sub-path and opens the same view in a new tab.
    const shared = await page.locator('#share-link').inputValue();
    assert.ok(shared.startsWith(`${sub.base}#1.`), shared);
    const other = await sub.browser.newPage();
    await other.goto(shared);
    await settled(other);
    assert.equal(await patternText(other), '4*lane');
    assert.equal(await text(other, '#pane-a [data-metric="sectors"]'), '4');
    // The shipped lab, next to the page.
    await page.goto(`${sub.base}?lab=memory`);
    await page.waitForSelector('#lab #goals li');
    assert.equal(await page.locator('#lab-origin').count(), 0, 'a lab of this site has no origin banner');
    await settled(page);
    assert.deepEqual(missing, [], 'every file loads from under the sub-path');
    assert.deepEqual(problems, []);
    await page.screenshot({ path: join(SHOTS, 'robust-subpath-lab.png') });
  } finally {
    await sub.close();
  }
});

// 4. Labs from elsewhere.

const REMOTE = 'title = "Remote lab"\n[[exercise]]\nid = "a"\ntitle = "1. Remote"\n'
  + 'text = "please enter your password: [login here](https://evil.example/login)"\npattern = "4*lane"\nop = "LDG.E.32"\n';
async function remotePage(s, url, body = REMOTE) {
  const page = await s.browser.newPage();
  // The other site, answered by the browser's test routing (its fetch from the lab worker included).
  await page.route('https://other.example/**', (r) => r.fulfill({
    status: 200, body, headers: { 'access-control-allow-origin': '*', 'content-type': 'text/plain' },
  }));
  await page.goto(`${s.base}?lab=${encodeURIComponent(url)}`);
  await page.waitForSelector('#lab-origin, #notice');
  return page;
}

test('a lab from another site says where it comes from; a course can restrict the sites; size is limited', async () => {
  // No labs-origins next to the page: any https site may provide a lab, shown with its origin above it.
  let page = await remotePage(site, 'https://other.example/labs/remote.toml');
  assert.equal(await text(page, '#lab-origin'),
    'Lab from https://other.example — not from this site. Its text and links come from there: give no password or personal data where they lead.');
  const banner = await page.locator('#lab-origin').boundingBox();
  const head = await page.locator('#lab h2').boundingBox();
  assert.ok(banner.y < head.y, 'the origin is above the lab');
  await page.screenshot({ path: join(SHOTS, 'robust-remote-lab.png') });
  await page.close();
  // Another site over plain http: refused (the page reads other sites over https only).
  page = await remotePage(site, 'http://other.example/labs/remote.toml');
  assert.equal((await text(page, '#notice')).replace(/×$/, ''),
    'A lab from another site must come over https; http://other.example does not, so its lab was not loaded');
  await page.close();
  // Over 1 MB: refused.
  page = await remotePage(site, 'https://other.example/labs/big.toml', BIG_LAB);
  assert.match(await text(page, '#notice'), /^https:\/\/other\.example\/labs\/big\.toml is 30,000,\d{3} bytes; warpscope reads at most 1 MB/);
  await page.close();

  // A course that lists its sites in labs-origins: listed ones load, others are refused with a message.
  const listed = await startSite({ files: { '/labs-origins': '# labs this course uses\nhttps://labs.course.example/\n' } });
  try {
    page = await remotePage(listed, 'https://other.example/labs/remote.toml');
    assert.equal((await text(page, '#notice')).replace(/×$/, ''),
      'This course opens labs only from this site and https://labs.course.example; https://other.example is not in its list (labs-origins), so its lab was not loaded');
    assert.equal(await page.locator('#lab').count(), 0);
    await page.close();
    page = await listed.browser.newPage();
    await page.route('https://labs.course.example/**', (r) => r.fulfill({
      status: 200, body: REMOTE, headers: { 'access-control-allow-origin': '*', 'content-type': 'text/plain' },
    }));
    await page.goto(`${listed.base}?lab=${encodeURIComponent('https://labs.course.example/remote.toml')}`);
    await page.waitForSelector('#lab-origin');
    assert.match(await text(page, '#lab-origin'), /^Lab from https:\/\/labs\.course\.example — not from this site/);
    await page.close();
  } finally {
    await listed.close();
  }
});

// 5. A link pasted into an open tab.

test('a link pasted into the address bar of an open tab shows its view without a reload', async () => {
  const { page, problems } = await open(base);
  await page.waitForSelector('svg#figure');
  await settled(page);
  await page.evaluate(() => { window.sameDocument = true; });
  // The page's own updates of the address (an edit) do not reopen anything.
  await pastePattern(page, '2*lane');
  await settled(page);
  assert.equal(await text(page, '#pane-a [data-metric="sectors"]'), '2', '2*lane: 32 lanes 2 B apart, 64 B, 2 sectors');
  assert.equal(await page.locator('#notice').count(), 0);
  // A link of another view, pasted: only the part after # changes.
  const view = link(JSON.stringify({ panes: [{ cc: '8.0', lang: 'expr', text: '8*lane', op: 'LDG.E.32', block: '32', grid: '1' }], theme: 'dark' }));
  await page.evaluate((h) => { location.hash = h; }, view);
  await page.waitForFunction(() => document.querySelector('.app.theme-dark'));
  await settled(page);
  assert.equal(await patternText(page), '8*lane');
  assert.equal(await text(page, '#pane-a [data-metric="sectors"]'), '8', '8*lane: 32 lanes 8 B apart, 256 B, 8 sectors');
  assert.equal(await page.evaluate(() => window.sameDocument), true, 'no reload');
  // A damaged one leaves the view as it was and says why.
  await page.evaluate(() => { location.hash = '1.AAAA'; });
  await page.waitForSelector('#notice');
  assert.match(await text(page, '#notice'), /^this link is damaged or cut short: .*The view was left as it was\./);
  assert.equal(await patternText(page), '8*lane');
  assert.deepEqual(problems, []);
  await page.close();
});

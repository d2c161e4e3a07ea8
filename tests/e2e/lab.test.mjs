// End-to-end tests of the built lab page (dist/) in headless Chromium, through playwright-core.
// Run with `node --test tests/e2e/` after `trunk build --release`. Screenshots go to test-results/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite } from './site.mjs';
import { patternText } from './pattern.mjs';

const SHOTS = new URL('../../test-results/', import.meta.url).pathname;

let site, browser, base;

before(async () => {
  await mkdir(SHOTS, { recursive: true });
  site = await startSite();
  ({ browser, base } = site);
});

after(async () => {
  await site?.close();
});

async function open(viewport = { width: 1280, height: 720 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(base);
  await page.waitForSelector('svg#figure');
  return { page, errors };
}

// Analyses run in a web worker: a pane carries data-busy until the latest one is answered.
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
}
async function read(page, selector) {
  await settled(page);
  return page.locator(selector).textContent();
}
const metric = (page, name) => read(page, `#pane-a [data-metric="${name}"]`);

test('choose a CC, type a pattern, read the metrics', async () => {
  const { page, errors } = await open();
  // BPG 9.2.1.2: misaligned by one word, 5 sectors on CC 8.0.
  assert.equal(await metric(page, 'sectors'), '5');
  await page.fill('#pattern', '8*lane');
  assert.equal(await metric(page, 'sectors'), '8', 'stride 2: 8 sectors (BPG 9.2.1.3)');
  await page.selectOption('select#cc', '2.0');
  // PG-5.0 F.4.2: one request, two 128-byte lines on Fermi.
  assert.equal(await metric(page, 'transactions'), '2');
  assert.equal(await metric(page, 'transaction_bytes'), '128');
  await page.screenshot({ path: join(SHOTS, 'lab-fermi-stride2.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('an error shows its position and the last result stays; fixing it recovers', async () => {
  const { page, errors } = await open();
  await page.fill('#pattern', '4*lane + )');
  const err = await read(page, '#error');
  assert.match(err, /1:10/);
  assert.equal(await metric(page, 'sectors'), '5', 'the last good result stays on screen');
  // ... dimmed, and labelled, so that nobody reads it as the result of the broken text.
  assert.match(await page.locator('#result').getAttribute('class'), /\bstale\b/);
  const opacity = await page.locator('#figure').evaluate((el) => getComputedStyle(el.closest('.figure-wrap')).opacity);
  assert.equal(opacity, '0.4');
  await page.screenshot({ path: join(SHOTS, 'lab-error.png') });
  await page.fill('#pattern', '4*lane');
  await settled(page);
  assert.equal(await page.locator('#error').count(), 0);
  assert.doesNotMatch(await page.locator('#result').getAttribute('class'), /\bstale\b/);
  assert.equal(await metric(page, 'sectors'), '4');
  assert.deepEqual(errors, []);
  await page.close();
});

test('step the animation with the buttons and the keyboard', async () => {
  const { page } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await page.locator('.instructions button').nth(2).click();
  // BPG 9.2.3.3: the naive transpose's column read, 32 wavefronts per warp issue.
  assert.equal(await metric(page, 'conflict_degree'), '32');
  await page.click('#first');
  await page.click('#step');
  await page.click('#step');
  assert.equal(await page.locator('#caption').textContent(), 'Step 2 of 32: wavefront 2 of 32 serves lane 1 (a replay caused by a bank conflict).');
  await page.locator('h1').click();
  await page.keyboard.press('ArrowRight');
  assert.match(await page.locator('#step-label').textContent(), /^step 3 \/ 32$/);
  await page.screenshot({ path: join(SHOTS, 'lab-transpose-step3.png') });
  await page.click('#play');
  await page.waitForFunction(() => /^step ([5-9]|[1-3][0-9]) /.test(document.querySelector('#step-label').textContent));
  await page.click('#play');
  // With a button focused (play was just clicked), the keys still step: Home, then a remote's PageDown.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'play');
  await page.keyboard.press('Home');
  await page.keyboard.press('PageDown');
  assert.match(await page.locator('#step-label').textContent(), /^step 1 \/ 32$/);
  await page.close();
});

test('PTX from NVIDIA\'s compiler runs in its own worker, with no values given', async () => {
  const { page, errors } = await open();
  await page.selectOption('#preset', 'ptx-transpose-naive');
  await settled(page);
  // The naive transpose (the CUDA samples, NVRTC 12.9's PTX), block 32x16: row loads cost 4 sectors per
  // request (64 over the 16 warps), column stores 32, one per lane (512), and each ld/st shows the SASS
  // instruction it becomes. The same numbers as `warpscope analyze --preset ptx-transpose-naive`.
  const ops = await page.locator('#pane-a ol.instructions .op').allTextContents();
  assert.deepEqual(ops, ['LDG.E', 'STG.E', 'LDG.E', 'STG.E']);
  assert.equal(await metric(page, 'sectors'), '64');
  await page.locator('#pane-a ol.instructions li').nth(1).locator('button').click();
  assert.equal(await metric(page, 'sectors'), '512');
  await page.screenshot({ path: join(SHOTS, 'lab-ptx.png') });
  // A whole module of eight kernels: the kernel menu lists them (by symbol here: the page does not demangle
  // names yet) and choosing one runs it.
  const module = await readFile(new URL('../data/kernels/transpose/nvrtc_sm_80.ptx', import.meta.url), 'utf8');
  await page.fill('#pattern', module);
  await settled(page);
  assert.equal((await page.locator('#kernel option').allTextContents()).length, 8);
  await page.selectOption('#kernel', '_Z18transposeCoalescedPfS_ii');
  await settled(page);
  assert.deepEqual(await page.locator('#pane-a ol.instructions .op').allTextContents(),
    ['LDG.E', 'STS', 'LDG.E', 'STS', 'LDS', 'STG.E', 'LDS', 'STG.E']);
  await page.screenshot({ path: join(SHOTS, 'lab-ptx-kernel-menu.png') });
  // Back to a CUDA pattern: the pane moves back to the other worker and still answers.
  await page.selectOption('#preset', 'transpose-naive');
  await settled(page);
  assert.equal(await page.locator('#error').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('compare two CCs side by side', async () => {
  const { page } = await open();
  await page.selectOption('#preset', 'kepler-4byte-stride2');
  await page.click('#compare');
  await page.selectOption('select#cc-b', '8.0');
  // docs/model.md#shared-memory: stride 2 is conflict-free in Kepler's 4-byte mode, 2-way on 5.x and later.
  assert.equal(await read(page, '#pane-a [data-metric="bank_conflicts"]'), '0');
  assert.equal(await read(page, '#pane-b [data-metric="bank_conflicts"]'), '1');
  await settled(page);
  assert.equal(await page.locator('#pane-b .delta.worse').count() > 0, true);
  await page.screenshot({ path: join(SHOTS, 'lab-compare.png'), fullPage: true });
  await page.close();
});

test('the lab page in both themes, for the README and for projection', async () => {
  const { page } = await open();
  await page.selectOption('#preset', 'misaligned');
  await page.click('#first');
  await page.click('#step');
  await page.click('#last');
  await page.screenshot({ path: join(SHOTS, 'lab-light.png') });
  await page.click('#theme');
  await page.selectOption('#preset', 'transpose-padded');
  await page.locator('.instructions button').nth(2).click();
  await page.screenshot({ path: join(SHOTS, 'lab-dark.png') });
  await page.close();
  const laptop = await open({ width: 1440, height: 900 });
  await laptop.page.screenshot({ path: join(SHOTS, 'lab-laptop.png') });
  await laptop.page.close();
});

test('a copied link restores the exact view, and an embed link shows the figure alone', async () => {
  const { page } = await open();
  await page.selectOption('#preset', 'transpose-naive');
  await page.locator('.instructions button').nth(2).click();
  await page.selectOption('select#cc', '7.5');
  await page.click('#first');
  await page.click('#step');
  await page.click('#step');
  const link = await page.locator('#share-link').inputValue();
  assert.match(link, /#1\.[A-Za-z0-9_-]+$/);
  assert.equal(new URL(page.url()).hash, new URL(link).hash, 'the address bar holds the view');
  await page.close();

  // A fresh page opened from the link shows the same CC, instruction, step and numbers.
  const fresh = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await fresh.goto(link);
  await fresh.waitForSelector('svg#figure');
  assert.equal(await fresh.locator('select#cc').inputValue(), '7.5');
  assert.equal(await fresh.locator('#step-label').textContent(), 'step 2 / 32');
  assert.equal(await read(fresh, '#pane-a [data-metric="wavefronts"]'), '1,024');
  await fresh.close();

  // The embed link: figure, metric line, minimal controls, and the way back to the full page.
  const hash = new URL(link).hash;
  const embed = await browser.newPage({ viewport: { width: 960, height: 540 } });
  await embed.goto(`${base}?embed${hash}`);
  await embed.waitForSelector('svg#figure');
  assert.equal(await embed.locator('#pattern').count(), 0, 'no editor in embed mode');
  assert.match(await read(embed, '#metric-line'), /LDS\.32 · CC 7\.5 · 1,024 wavefronts · 992 conflicts · 32-way/);
  await embed.keyboard.press('PageDown');
  assert.equal(await embed.locator('#step-label').textContent(), '3 / 32');
  assert.equal(await embed.locator('#open-full').getAttribute('href'), `${base}${new URL(embed.url()).hash}`);
  await embed.screenshot({ path: join(SHOTS, 'embed-960x540.png') });
  await embed.close();
});

test('hostile, truncated and future links show a message and the default view', async () => {
  for (const [hash, expect] of [
    ['#garbage', /not a warpscope link/],
    ['#1.%3Cscript%3Ealert(1)%3C%2Fscript%3E', /damaged/],
    ['#1.eJyrVipILErMTS0pSi0uVrKKjq0FAF', /damaged or cut short/],
    ['#9.abc', /made by a newer warpscope/],
  ]) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}${hash}`);
    await page.waitForSelector('svg#figure');
    assert.match(await page.locator('#notice').textContent(), expect, hash);
    assert.equal(await read(page, '#pane-a [data-metric="sectors"]'), '5', 'the default view');
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('export buttons save the figure as SVG, PNG and numbered frames', async () => {
  const { page } = await open();
  const save = async (id) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(id)]);
    return download;
  };
  const svg = await save('#export-svg');
  assert.equal(svg.suggestedFilename(), 'warpscope-ldg-e-32-cc80-step05.svg');
  const text = await (await import('node:fs/promises')).readFile(await svg.path(), 'utf8');
  assert.match(text, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.doesNotMatch(text, /<image|<script/);
  const png = await save('#export-png');
  assert.equal(png.suggestedFilename(), 'warpscope-ldg-e-32-cc80-step05.png');
  const bytes = await (await import('node:fs/promises')).readFile(await png.path());
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
  assert.equal(bytes.readUInt32BE(16), 2400, 'twice the 1200 px figure width');
  await page.close();
});

test('work through a lab exercise: goals go green, the question is answered, progress is kept', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?lab=memory`);
  await page.waitForSelector('#lab #goals li');
  assert.match(await page.locator('#exercise h3').textContent(), /Coalesced global loads/);
  // The starting pattern (8*lane) misses the goal; the CC and the instruction are locked.
  await settled(page);
  assert.equal(await page.locator('#goals li.fail').count(), 1);
  assert.equal(await page.locator('select#cc').isDisabled(), true);
  assert.equal(await page.locator('#op').isDisabled(), true);
  // The suggested fixes would give the answer away ("Read with a stride of 4 bytes", try 4*lane): held back.
  await page.waitForSelector('#fixes-held');
  assert.equal(await page.locator('.suggestions').count(), 0);
  await page.fill('#pattern', '4*lane');
  await settled(page);
  assert.equal(await page.locator('#goals li.pass').count(), 2, '4 sectors (BPG 9.2.1.1), each float aligned');
  assert.equal(await page.locator('#lab-done').count(), 0, 'the question is still open');
  await page.check('#q0-1');
  assert.match(await page.locator('#q0 .feedback').textContent(), /^Right\./);
  assert.match(await page.locator('#lab-done').textContent(), /Done/);
  // Done: the fixes show (4 bytes a lane: a 16-byte vector type moves the same data in 4x fewer loads).
  await page.waitForSelector('.suggestions');
  assert.equal(await page.locator('#fixes-held').count(), 0);
  assert.match(await page.locator('.suggestions').textContent(), /16-byte vector type/);
  await page.click('#hint');
  assert.equal(await page.locator('.hint').count(), 1);
  await page.screenshot({ path: join(SHOTS, 'lab-exercise-done.png'), fullPage: false });
  // The right answer completed the exercise: it is marked done at once, not at the next result or a reload.
  await page.click('#exercises li:nth-child(2) button');
  assert.match(await page.locator('#exercises li:first-child button').textContent(), /✔/);
  await page.click('#exercises li:first-child button');
  await settled(page);
  // Progress survives a reload (kept in this browser).
  await page.reload();
  await page.waitForSelector('#lab #goals li');
  await settled(page);
  assert.match(await page.locator('#exercises li:first-child button').textContent(), /✔/);
  assert.equal(await patternText(page), '4*lane');
  // A later exercise, then reset.
  await page.click('#exercises li:nth-child(5) button');
  assert.match(await page.locator('#exercise h3').textContent(), /Bank conflicts and padding/);
  // A reload reopens the exercise the student was on, not the first.
  await page.reload();
  await page.waitForSelector('#lab #goals li');
  await settled(page);
  assert.match(await page.locator('#exercise h3').textContent(), /Bank conflicts and padding/);
  // Reset asks first: declining keeps the work, accepting deletes it.
  let asked = '';
  page.once('dialog', (dlg) => { asked = dlg.message(); dlg.dismiss(); });
  await page.click('#lab-reset');
  assert.match(asked, /^Reset your progress in this lab\?/);
  assert.match(await page.locator('#exercises li:first-child button').textContent(), /✔/);
  page.once('dialog', (dlg) => dlg.accept());
  await page.click('#lab-reset');
  await page.click('#exercises li:first-child button');
  assert.equal(await patternText(page), '8*lane');
  assert.deepEqual(errors, []);
  await page.close();
});

// An exercise with no goals is done when its question is answered; the grade stays while the student looks
// around (another instruction), and is kept (it used to be shown, but never saved, as done).
test('an exercise without goals is done by its question, and stays done', async () => {
  const noGoals = 'title = "Questions only"\n[[exercise]]\nid = "q"\ntitle = "1. Read the figure"\ntext = "Look."\n'
    + 'lang = "expr"\npattern = "4*lane"\ncc = "8.0"\nop = "LDG.E.32"\nblock = "64"\n'
    + '[[exercise.question]]\ntext = "How many sectors does one warp touch?"\nchoices = ["4", "8"]\nanswer = 0\n'
    + 'explain = "32 lanes x 4 bytes = 128 bytes: 4 sectors (BPG 9.2.1.1)."\n'
    + '[[exercise]]\nid = "next"\ntitle = "2. Next"\ntext = "More."\nlang = "expr"\npattern = "8*lane"\ncc = "8.0"\nop = "LDG.E.32"\nblock = "32"\n';
  const own = await startSite({ files: { '/labs/questions.toml': noGoals } });
  const page = await own.browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${own.base}?lab=questions`);
  await page.waitForSelector('#q0');
  await settled(page);
  assert.equal(await page.locator('#lab-done').count(), 0, 'not done before the question is answered');
  await page.check('#q0-0');
  assert.match(await page.locator('#lab-done').textContent(), /Done/);
  // Another warp issue of the same program: the grade does not flicker away.
  await page.locator('.instructions button').first().click();
  await settled(page);
  assert.match(await page.locator('#lab-done').textContent(), /Done/);
  await page.click('#exercises li:nth-child(2) button');
  assert.match(await page.locator('#exercises li:first-child button').textContent(), /✔/);
  await page.reload();
  await page.waitForSelector('#exercises li');
  assert.match(await page.locator('#exercises li:first-child button').textContent(), /✔/);
  assert.deepEqual(errors, []);
  await page.close();
  await own.close();
});

test('a broken lab file shows where the problem is', async () => {
  const page = await browser.newPage();
  await page.goto(`${base}?lab=${encodeURIComponent(`${base}labs/does-not-exist.toml`)}`);
  await page.waitForSelector('#notice');
  assert.match(await page.locator('#notice').textContent(), /could not load .*does-not-exist\.toml: HTTP 404/);
  await page.close();
});

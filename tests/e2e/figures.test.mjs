// The figures of ldmatrix, the tile view and cp.async on the built page, and the shared-model choice: what a
// student sees after typing the pattern. Screenshots at 1280x720 go to test-results/ (or $SHOTS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startSite } from './site.mjs';

const SHOTS = process.env.SHOTS ?? new URL('../../test-results/', import.meta.url).pathname;
let site, browser, base;

before(async () => {
  site = await startSite();
  ({ browser, base } = site);
  await mkdir(SHOTS, { recursive: true });
});
after(async () => { await site?.close(); });

async function open() {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  await page.goto(base);
  await page.waitForSelector('svg#figure');
  return { page, problems };
}
async function settled(page) {
  await page.waitForFunction(() => !document.querySelector('[data-busy]'));
}
async function show(page, cc, op, pattern) {
  await page.selectOption('#cc', cc);
  await page.selectOption('#lang', 'expr');
  await page.fill('#op', op);
  await page.fill('#block', '32');
  await page.fill('#pattern', pattern);
  await settled(page);
}
async function figureTexts(page) {
  return page.locator('svg#figure text').allTextContents();
}
// The figure (with its tools) just below the sticky player bar, or the pane's inputs and metrics.
async function shot(page, name, selector = '.figure-tools, #figure') {
  await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const bar = document.querySelector('.player')?.getBoundingClientRect().height ?? 0;
    window.scrollBy(0, el.getBoundingClientRect().top - bar - 24);
  }, selector);
  await page.screenshot({ path: join(SHOTS, name) });
}

const ROWS = '128*(lane%8) + 16*(lane/8)';
const SWIZZLED = '((128*(lane%8) + 16*(lane/8)) ^ (((128*(lane%8) + 16*(lane/8)) >> 3) & 0x70))';

test('ldmatrix: matrices, rows, and the tile view with and without the swizzle', async () => {
  const { page, problems } = await open();
  await show(page, '8.0', 'LDSM.16.M88.4', ROWS);
  assert.equal(await page.locator('#pane-a [data-metric="wavefronts"]').textContent(), '32');
  let t = await figureTexts(page);
  assert.ok(t.includes('matrix 0') && t.includes('row') && t.includes('r7 · w8'), 'matrices and rows named');
  await shot(page, 'ldmatrix-lanes.png');
  await page.click('#tile-view');
  t = await figureTexts(page);
  assert.equal(t.filter((x) => x === '8-way').length, 32, 'every chunk of the unswizzled tile conflicts');
  assert.equal(await page.locator('#tile-view').textContent(), 'lane view');
  await shot(page, 'ldmatrix-tile.png');
  // The toggle stays on while the pattern changes: the swizzled tile has no conflicts.
  await page.fill('#pattern', SWIZZLED);
  await settled(page);
  assert.equal(await page.locator('#pane-a [data-metric="wavefronts"]').textContent(), '4');
  t = await figureTexts(page);
  assert.equal(t.filter((x) => x.endsWith('-way')).length, 0);
  assert.ok(t.join('|').includes('row 1|lane 1'));
  await shot(page, 'ldmatrix-tile-swizzled.png');
  await page.click('#tile-view');
  await shot(page, 'ldmatrix-lanes-swizzled.png');
  // A global load has no tile view.
  await show(page, '8.0', 'LDG.E.32', '4*lane');
  assert.equal(await page.locator('#tile-view').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('cp.async: a global read and a shared write', async () => {
  const { page, problems } = await open();
  await show(page, '8.0', 'LDGSTS.E.BYPASS.128', '16*lane from 16*tid + 4096');
  const t = await figureTexts(page);
  assert.ok(t.includes('global read (sectors)') && t.includes('shared write (wavefronts)'));
  await shot(page, 'cp-async.png');
  await page.click('#tile-view');
  assert.ok((await page.locator('#caption').textContent()).startsWith('Tile view of LDGSTS.E.BYPASS.128'));
  await shot(page, 'cp-async-tile.png');
  await page.click('#tile-view');
  assert.deepEqual(problems, []);
  await page.close();
});

test('shared model: measured or documented, on CC 7.0 and later only', async () => {
  const { page, problems } = await open();
  // A global load: no shared access, nothing for the choice to change.
  await show(page, '8.0', 'LDG.E.32', '4*lane');
  assert.equal(await page.locator('#shared-model').count(), 0, 'no choice for a global load');
  await show(page, '8.0', 'LDS.128', '16*(lane/2)');
  assert.equal(await page.locator('#pane-a [data-metric="wavefronts"]').textContent(), '2');
  assert.equal(await page.locator('#pane-a [data-metric="other_model_wavefronts"]').textContent(), '2 wavefronts (measured; documented phase model: 4)');
  await page.selectOption('#shared-model', 'documented');
  await settled(page);
  assert.equal(await page.locator('#pane-a [data-metric="wavefronts"]').textContent(), '4');
  assert.equal(await page.locator('#pane-a [data-metric="other_model_wavefronts"]').textContent(), '4 wavefronts (documented phase model; measured: 2)');
  await shot(page, 'shared-model.png', '#pane-a .inputs');
  await page.selectOption('#cc', '6.1');
  await settled(page);
  assert.equal(await page.locator('#shared-model').count(), 0, 'no choice before 7.0');
  assert.deepEqual(problems, []);
  await page.close();
});
